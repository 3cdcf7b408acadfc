"""verification.checks.sgd_vs_flow: SGD against its reduced flow on one time axis. It confirms the
true flow and refutes a deliberately wrong one (γ = 1.0 instead of 0.8) at one d and over several
d; bad input is a ValueError naming the parameter."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from numerics import reduced
from numerics.sgd import SimulationConfig, simulate
from theory.models.marion2025 import MODEL
from verification import Context, sgd_vs_flow
from verification.checks import FlowComparison, Tracks, sgd_states

P = dict(L=3, lam=0.7, gamma=0.8, eps=0.3)
INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)


def _run(d, batch, seed=1, seeds=32):
    lr = 0.5 / d
    steps = int(round(2.0 / lr))
    cfg = SimulationConfig(lr=lr, steps=steps, seeds=seeds, batch=batch, record_every=steps // 4,
                           n_test=0, init=INIT, seed=seed, dtype="float32")
    return simulate(MODEL, {"d": d, **P}, cfg)


@pytest.fixture(scope="module")
def one_d():
    return _run(25, 32)


@pytest.fixture(scope="module")
def over_d():
    """Marion's design: lr = 0.5/d, batch ⌈d/8⌉, so the SGD-noise strength x = lr·d/batch → 0."""
    dims = [25, 50, 100, 200]
    runs = {d: _run(d, math.ceil(d / 8)) for d in dims}
    return runs, [0.5 / math.ceil(d / 8) for d in dims]


def test_one_d_confirms_the_true_flow_and_refutes_a_wrong_gamma(one_d):
    true = sgd_vs_flow(0.05, one_d, reduced(MODEL, {"d": 25, **P}), INIT, bias=1 / 25)
    assert isinstance(true, FlowComparison)
    assert true.decision == "confirmed", true.check.evidence()
    assert true.names == ("kappa", "nu", "theta", "eta", "rho")
    np.testing.assert_allclose(true.t, np.linspace(0, 2, 5))          # t = step·lr
    assert true.sgd_mean.shape == true.flow.shape == (1, 5, 5)
    np.testing.assert_allclose(true.flow[0, 0], list(INIT.values()))
    wrong = sgd_vs_flow(0.05, one_d, reduced(MODEL, {"d": 25, **P, "gamma": 1.0}), INIT,
                        bias=1 / 25)
    assert wrong.decision == "refuted", wrong.check.evidence()
    assert wrong.worst()["state"] in true.names


def test_a_dropped_term_is_refuted(one_d):
    no_label = MODEL.perturbed(label=0, name="marion-no-label")
    cmp = sgd_vs_flow(0.05, one_d, reduced(no_label, {"d": 25, **P}), INIT, bias=1 / 25)
    assert cmp.decision == "refuted"


def test_limit_over_d_confirms_the_true_flow_and_refutes_a_wrong_gamma(over_d):
    runs, x = over_d
    ctx = Context()
    true = sgd_vs_flow(ctx, runs, lambda d: reduced(MODEL, {"d": d, **P}), INIT, x=x,
                       over_dims="limit", terms=("x", "x^2"))
    assert true.decision == "confirmed", true.check.evidence()
    assert true.dims == (25, 50, 100, 200) and true.sgd_mean.shape == (4, 5, 5)
    assert ctx.ledger.contract().comparisons == 4 * 5               # records after t = 0 × states
    fams = ctx.ledger.contract().families                  # one family per state, each resolved
    assert [f.name for f in fams] == [f"SGD seed mean − flow: {n}" for n in true.names]
    assert all(f.comparisons == 4 and f.policy == "limit" for f in fams)
    assert true.check.resolution == max(f.resolution for f in fams)
    wrong = sgd_vs_flow(0.05, runs, lambda d: reduced(MODEL, {"d": d, **P, "gamma": 1.0}), INIT,
                        x=x, over_dims="limit", terms=("x", "x^2"))
    assert wrong.decision == "refuted"


def test_names_select_states_and_the_figure_draws(one_d):
    cmp = sgd_vs_flow(0.05, one_d, reduced(MODEL, {"d": 25, **P}), INIT, names=["kappa", "nu"],
                      bias=1 / 25)
    assert cmp.names == ("kappa", "nu") and cmp.flow.shape == (1, 5, 2)
    assert cmp.check.details["n"] == 4 * 2
    fig = cmp.figure()
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) >= 2
    assert set(cmp.arrays()) == {"t", "sgd_mean", "sgd_stderr", "flow"}
    assert cmp.evidence()["names"] == ["kappa", "nu"]


def test_sgd_states_pack_the_multihead_order_parameters():
    from numerics.multihead import HeadState, head_state_names
    from numerics.sgd import SGDResult
    rng = np.random.default_rng(0)
    m, r = rng.normal(size=(3, 2, 2, 2)), rng.normal(size=(3, 2, 2, 2))
    r = r + r.transpose(0, 1, 3, 2)
    b, v = rng.normal(size=(3, 2, 2)), rng.normal(size=(3, 2, 2))
    res = SGDResult(np.arange(3.0), {"m": m, "r": r, "b": b, "v": v}, None, ("m", "r", "b", "v"))
    packed = sgd_states(res, head_state_names(2, 2))
    want = HeadState(m[1, 0], r[1, 0], b[1, 0], v[1, 0]).pack()
    np.testing.assert_allclose(packed[1, 0], want)


# --- bad input ---------------------------------------------------------------------------------
def test_unknown_state_names_name_the_parameter(one_d):
    with pytest.raises(ValueError, match=r"names: \['zeta'\] are not states of the flow; allowed"):
        sgd_vs_flow(0.05, one_d, reduced(MODEL, {"d": 25, **P}), INIT, names=["kappa", "zeta"])


def test_a_record_without_the_flows_states_names_sgd(one_d):
    renamed = dataclasses.replace(one_d, names=("k", "nu", "theta", "eta", "rho"),
                                  state={("k" if n == "kappa" else n): a
                                         for n, a in one_d.state.items()})
    with pytest.raises(ValueError, match=r"sgd: the SGD record has no state \['kappa'\]"):
        sgd_vs_flow(0.05, renamed, reduced(MODEL, {"d": 25, **P}), INIT)


@pytest.mark.parametrize("times", [[0.0, 0.5, 0.5, 1.5, 2.0], [0.0, 1.0, 0.5, 1.5, 2.0],
                                   [0.0, 0.5, np.nan, 1.5, 2.0]])
def test_non_increasing_times_name_sgd(one_d, times):
    bad = dataclasses.replace(one_d, t=np.array(times))
    with pytest.raises(ValueError, match="sgd: record times must be finite and strictly increasing"):
        sgd_vs_flow(0.05, bad, reduced(MODEL, {"d": 25, **P}), INIT)


def test_dimensions_with_different_record_times_name_sgd(one_d):
    other = dataclasses.replace(one_d, t=one_d.t * 1.1)
    runs = {25: one_d, 50: other, 100: one_d}
    with pytest.raises(ValueError, match="sgd: the record times at d = 50 differ"):
        sgd_vs_flow(0.05, runs, lambda d: reduced(MODEL, {"d": 25, **P}), INIT)


def test_each_dimension_is_compared_at_its_own_record_times():
    """With over_dims="each", dimensions whose step does not divide the horizon alike (a whole
    number of steps at a fixed κ) keep their own record times: each is compared with the flow
    at those times (a true flow confirmed, the labels name them); a different number of records
    is an error naming sgd."""
    def at(d, steps):
        cfg = SimulationConfig(lr=0.5 / d, steps=steps, seeds=32, batch=32,
                               record_every=steps // 4, n_test=0, init=INIT, seed=3,
                               dtype="float32")
        return simulate(MODEL, {"d": d, **P}, cfg)
    runs = {25: at(25, 100), 40: at(40, 164)}                  # t ends at 2.0 and 2.05
    flow = lambda d: reduced(MODEL, {"d": d, **P})          # noqa: E731
    cmp = sgd_vs_flow(0.05, runs, flow, INIT, bias=np.array([1 / 25, 1 / 40])[:, None, None],
                      over_dims="each")
    assert cmp.decision == "confirmed", cmp.check.evidence()
    labels = [row[1] for leg in cmp.legs.values()
              for row in leg.evidence()["comparisons"]["rows"]]
    assert any("d=40, t=2.05" in lab for lab in labels) and any("d=25, t=2 " in lab + " "
                                                               for lab in labels)
    short = {25: runs[25], 40: dataclasses.replace(runs[40], t=runs[40].t[:-1])}
    with pytest.raises(ValueError, match="sgd: 4 records at d = 40, 5 at the first"):
        sgd_vs_flow(0.05, short, flow, INIT, over_dims="each")


def test_bad_alpha_x_and_one_seed(one_d):
    rm = reduced(MODEL, {"d": 25, **P})
    with pytest.raises(ValueError, match="ctx_or_alpha=1.5"):
        sgd_vs_flow(1.5, one_d, rm, INIT)
    with pytest.raises(ValueError, match="ctx_or_alpha='x'"):
        sgd_vs_flow("x", one_d, rm, INIT)
    with pytest.raises(ValueError, match="x: 2 values for 3 dimensions"):
        sgd_vs_flow(0.05, {25: one_d, 26: one_d, 27: one_d}, rm, INIT, x=[1, 2])
    single = dataclasses.replace(one_d, state={k: a[:, :1] for k, a in one_d.state.items()})
    with pytest.raises(ValueError, match="sgd: 1 seed"):
        sgd_vs_flow(0.05, single, rm, INIT)


# --- multi-head: τ = γ·step and κ = γD/N_b -------------------------------------------------------
def test_multihead_flow_at_the_simulations_kappa_and_a_too_fast_m_equation(one_d):
    from numerics.multihead import HeadState
    from numerics.reduced import HeadReduced
    from theory.models.sagitova2026 import flipping_spike
    from theory.multihead import MultiHeadModel

    class FastM(HeadReduced):
        def rhs(self, y):
            out = super().rhs(y)
            out[:self.model.H * self.model.F] *= 1.3
            return out

    md, prior = MultiHeadModel(2, 3, 2, "softmax"), flipping_spike(1.0, 2.0)
    start = HeadState.make([[0.4, 0.1], [-0.2, 0.3]], 0.2 * np.eye(2), [0.1, -0.1], [0.0, 0.0])
    D, batch = 100, 8
    lr = 0.25 * batch / D
    steps = int(round(2.0 / lr))
    cfg = SimulationConfig(lr=lr, steps=steps, batch=batch, seeds=16, seed=1,
                           record_every=steps // 4, init=start)
    res = simulate(md, {"D": D, "prior": prior}, cfg)
    flow = HeadReduced(md, prior, n=2**12, seed=0)                   # κ = 0: set from the result
    true = sgd_vs_flow(0.05, res, flow, start, bias=1 / D)
    assert true.kappa == pytest.approx(0.25) and true.decision == "confirmed"
    assert true.names[0] == "m[0,0]" and true.flow.shape == (1, 5, len(flow.state_names))
    fast = sgd_vs_flow(0.05, res, FastM(md, prior, n=2**12, seed=0), start, bias=1 / D)
    assert fast.decision == "refuted"
    noisy = dataclasses.replace(one_d, extras={**one_d.extras, "sgd_noise": 0.25})
    with pytest.raises(ValueError, match="flow: a multi-head simulation .*κ = γD/N_b = 0.25"):
        sgd_vs_flow(0.05, noisy, reduced(MODEL, {"d": 25, **P}), INIT)
    with pytest.raises(ValueError, match="sgd: the SGD record has no state"):
        sgd_vs_flow(0.05, res, reduced(MODEL, {"d": 25, **P}), INIT)


def test_bias_per_state_and_a_bad_bias_shape(one_d):
    rm = reduced(MODEL, {"d": 25, **P})
    per_state = sgd_vs_flow(0.05, one_d, rm, INIT, bias=[0.04, 0.04, 0.04, 0.04, 0.04])
    assert per_state.decision == "confirmed"
    assert per_state.check.details["worst_bias"] == pytest.approx(0.04)
    with pytest.raises(ValueError, match=r"bias: shape \(3,\); allowed"):
        sgd_vs_flow(0.05, one_d, rm, INIT, bias=[0.1, 0.1, 0.1])


# --- over several dimensions: extrapolate (default), each, grow; stored flows; families ---------
def test_extrapolate_over_d_confirms_the_true_flow_and_refutes_a_wrong_gamma(over_d):
    runs, x = over_d
    ctx = Context()
    true = sgd_vs_flow(ctx, runs, lambda d: reduced(MODEL, {"d": d, **P}), INIT, x=x)
    assert true.decision == "confirmed", true.check.evidence()
    fams = ctx.ledger.contract().families
    assert all(f.policy == "extrapolate" for f in fams) and len(fams) == 5
    assert set(true.legs) == {"kappa", "nu", "theta", "eta", "rho"}
    assert true.check.details["dof_min"] == 31                     # seeds − 1: Student t
    wrong = sgd_vs_flow(0.05, runs, lambda d: reduced(MODEL, {"d": d, **P, "gamma": 1.0}), INIT,
                        x=x)
    assert wrong.decision == "refuted"


def test_a_stored_flow_and_tracks_judge_as_the_model_does(one_d):
    rm = reduced(MODEL, {"d": 25, **P})
    by_model = sgd_vs_flow(0.05, one_d, rm, INIT, bias=1 / 25)
    names = rm.state_names
    stored = rm.integrate(INIT, one_d.t).y                          # [record, state]
    tracks = Tracks(one_d.t, sgd_states(one_d, names), names)
    by_values = sgd_vs_flow(0.05, tracks, stored, names=names, bias=1 / 25)
    assert by_values.decision == by_model.decision == "confirmed"
    np.testing.assert_allclose(by_values.deviation, by_model.deviation, atol=1e-6)
    wrong = rm.integrate(INIT, 1.25 * one_d.t).y                    # the flow 1.25× too fast
    assert sgd_vs_flow(0.05, tracks, wrong, names=names, bias=1 / 25).decision == "refuted"


def test_each_dimension_with_its_allowance_and_families_by_mapping(over_d):
    runs, x = over_d
    dims = list(runs)
    flows = {d: reduced(MODEL, {"d": d, **P}) for d in dims}
    allow = 3 * np.array(x)[:, None, None]   # the O(x) SGD-noise drift, [dim, record − 1, state]
    ctx = Context()
    fam = {"kappa": "norms", "nu": "norms", "theta": "overlaps", "eta": "overlaps",
           "rho": "overlaps"}
    cmp = sgd_vs_flow(ctx, runs, flows, INIT, bias=allow, over_dims="each", families=fam)
    assert cmp.decision == "confirmed", cmp.check.evidence()
    assert set(cmp.legs) == {"norms", "overlaps"}
    assert ctx.ledger.contract().comparisons == len(dims) * 4 * 5
    assert [f.comparisons for f in ctx.ledger.contract().families] == [len(dims) * 4 * 2,
                                                                       len(dims) * 4 * 3]
    wrong = {d: reduced(MODEL, {"d": d, **P, "gamma": 1.0}) for d in dims}
    assert sgd_vs_flow(0.05, runs, wrong, INIT, bias=allow, over_dims="each").decision == "refuted"


def test_grow_adds_a_dimension_once_for_every_family(over_d):
    runs, _ = over_d
    asked = []

    def grow(d):
        asked.append(d)
        return runs[d], reduced(MODEL, {"d": d, **P, "gamma": 1.0})
    first = {d: runs[d] for d in (25, 50, 100)}
    # a wrong flow is never confirmed: every family asks for d = 200 (simulated once), and the
    # refutation is published at the largest d allowed
    cmp = sgd_vs_flow(0.05, first, lambda d: reduced(MODEL, {"d": d, **P, "gamma": 1.0}), INIT,
                      grow=grow, max_dim=200)
    assert asked == [200] and cmp.dims == (25, 50, 100, 200)
    assert cmp.sgd_mean.shape[0] == 4 and cmp.decision == "refuted"


def test_bad_options_name_the_parameter(one_d, over_d):
    runs, x = over_d
    rm = reduced(MODEL, {"d": 25, **P})
    with pytest.raises(ValueError, match="over_dims='every'; allowed"):
        sgd_vs_flow(0.05, runs, lambda d: rm, INIT, over_dims="every")
    with pytest.raises(ValueError, match="terms: a fixed basis is judged only with over_dims='limit'"):
        sgd_vs_flow(0.05, runs, lambda d: rm, INIT, terms=("1/d",))
    with pytest.raises(ValueError, match="grow: larger dimensions are added only"):
        sgd_vs_flow(0.05, runs, lambda d: rm, INIT, x=x, grow=lambda d: None, max_dim=400)
    stored = rm.integrate(INIT, one_d.t).y
    with pytest.raises(ValueError, match="names: a flow given as values"):
        sgd_vs_flow(0.05, one_d, stored)
    with pytest.raises(ValueError, match="init: a flow given as values"):
        sgd_vs_flow(0.05, one_d, stored, INIT, names=rm.state_names)
    with pytest.raises(ValueError, match=r"flow: shape \(5, 4\)"):
        sgd_vs_flow(0.05, one_d, stored[:, :4], names=rm.state_names)
    with pytest.raises(ValueError, match="families: no family for the state 'nu'"):
        sgd_vs_flow(0.05, one_d, rm, INIT, families={"kappa": "a"})
    with pytest.raises(ValueError, match=r"Tracks.states: shape"):
        Tracks(one_d.t, np.zeros((5, 3)), ("kappa",))
