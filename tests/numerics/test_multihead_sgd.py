"""Multi-head online SGD: the Gram-matrix simulator equals the direct D-dimensional one in law
(means and standard deviations of every order parameter after 1, 20 and 200 steps), a
fixed-seed regression pin, and bad configurations are rejected."""

import numpy as np
import pytest

from numerics.multihead import HeadState
from numerics.sgd import SimulationConfig, simulate
from theory.models.sagitova2026 import GaussianPrior, flipping_spike
from theory.multihead import MultiHeadModel
from tests.helpers import same_law


@pytest.mark.parametrize("H, act, batch, init", [
    (2, "softmax-v", 1, "state"), (2, "softmax-v", 4, "small"), (1, "softmax", 1, "small"),
    (2, "b-softmax", 3, "state")])
def test_gram_simulator_equals_direct_in_law(H, act, batch, init):
    md = MultiHeadModel(H, 3, 2, act)
    prior = flipping_spike(1.0, 2.0)
    st = HeadState.make(np.array([[0.4, 0.1], [-0.2, 0.3]])[:H], 0.2 * np.eye(H),
                        [0.1, -0.1][:H], [0.2, 0.0][:H])
    cfg = SimulationConfig(lr=0.4 * batch / 150, steps=200, batch=batch, seeds=1000, seed=11,
                           record_every=1, init=st if init == "state" else 0.3, device="cpu")
    params = {"D": 150, "prior": prior}
    a = simulate(md, params, cfg)
    b = simulate(md, params, SimulationConfig(**{**cfg.__dict__, "seed": 12}), "gram")
    worst, z = same_law(a, b, [1, 20, 200])
    assert worst < z, (worst, z)


def test_gram_simulator_regression_pin():
    md = MultiHeadModel(2, 3, 2, "softmax-v")
    cfg = SimulationConfig(lr=0.01, steps=50, batch=2, seeds=2, seed=5, record_every=50,
                           init=0.1, device="cpu")
    prior = GaussianPrior([0.5, 0.0], np.diag([2.0, 1.0]))
    res = simulate(md, {"D": 1000, "prior": prior}, cfg, "gram")
    got = np.concatenate([res["m"][-1].ravel(), res["b"][-1].ravel()])
    np.testing.assert_allclose(got, PIN, rtol=1e-9, atol=1e-12)


def test_gram_cost_does_not_need_d_dimensional_vectors():
    md = MultiHeadModel(2, 3, 2, "softmax")
    cfg = SimulationConfig(lr=1e-9, steps=3, batch=2, seeds=4, seed=0, record_every=1,
                           init=0.1, device="cpu")
    res = simulate(md, {"D": 10**9, "prior": flipping_spike(1.0, 1.0)}, cfg, "gram")
    assert np.all(np.isfinite(res["m"])) and abs(res["r"][0, 0, 0, 0] - 0.01) < 1e-5


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_bad_parameters_are_rejected_before_the_first_step(method):
    md = MultiHeadModel(3, 3, 2)
    cfg = SimulationConfig(lr=0.1, steps=1, device="cpu")
    spike = flipping_spike(1.0, 1.0)
    for params, match in (({"D": 5, "prior": spike}, r"D=5; allowed: an integer ≥ F \+ 1 \+ H = 6"),
                          ({"D": 0, "prior": spike}, "D=0"), ({"D": 50.0, "prior": spike}, "D=50.0"),
                          ({"D": 50}, r"params: \['D'\]; allowed: a dict with exactly D"),
                          ({"D": 50, "prior": spike, "d": 3}, "params: .*allowed"),
                          ({"D": 50, "prior": GaussianPrior([0.0], [[1.0]])}, "F=1 features")):
        with pytest.raises(ValueError, match=match):
            simulate(md, params, cfg, method)


def test_the_config_is_keyword_only_and_the_kind_checks_init():
    with pytest.raises(TypeError):
        SimulationConfig(0.1, 1)                                      # keywords only
    with pytest.raises(ValueError, match="lr="):
        SimulationConfig(lr=0.0, steps=1)
    with pytest.raises(ValueError, match=r"n_test=-1; allowed: an integer ≥ 0"):
        SimulationConfig(lr=0.1, steps=1, n_test=-1)
    md, params = MultiHeadModel(2, 3, 2), {"D": 10, "prior": flipping_spike(1.0, 1.0)}
    for bad in (-0.5, "0.5", True, float("nan"), {"m": 0.1}):
        with pytest.raises(ValueError, match=r"init=.*; allowed: a HeadState or σ₀ ≥ 0"):
            simulate(md, params, SimulationConfig(lr=0.1, steps=1, init=bad, device="cpu"))


def test_the_result_records_the_sgd_noise_strength_of_the_reduced_flow():
    """κ = γD/N_b, which the reduced flow's SGD-noise term needs (``sgd_vs_flow`` reads it)."""
    md, prior = MultiHeadModel(2, 3, 2), flipping_spike(1.0, 1.0)
    cfg = SimulationConfig(lr=0.02, steps=1, batch=4, seeds=2, device="cpu")
    for method in ("direct", "gram"):
        res = simulate(md, {"D": 100, "prior": prior}, cfg, method)
        assert res.extras["sgd_noise"] == pytest.approx(0.5)


def test_result_names_time_axis_head_state_and_until():
    """Both simulators: m, r, b, v on τ = step·γ, a HeadState per record and seed, and the
    early stop seeing the named order parameters."""
    md = MultiHeadModel(2, 3, 2, "softmax-v")
    st = HeadState.make([[0.4, 0.1], [-0.2, 0.3]], 0.2 * np.eye(2), [0.1, -0.1], [0.2, 0.0])
    cfg = SimulationConfig(lr=0.05, steps=10, seeds=2, record_every=2, init=st, device="cpu")
    for method in ("direct", "gram"):
        seen = []

        def second_record(state, seen=seen):
            seen.append(state["m"].shape)
            return len(seen) == 2
        res = simulate(md, {"D": 40, "prior": flipping_spike(1.0, 2.0)}, cfg, method,
                       until=second_record)
        assert res.names == ("m", "r", "b", "v") and res.loss is None
        np.testing.assert_allclose(res.t, [0.0, 0.1, 0.2])
        assert seen == [(2, 2, 2)] * 2 and res.extras["steps_done"] == 4
        h = res.head_state(0, 1)
        np.testing.assert_allclose(h.m, st.m, atol=1e-12)
        np.testing.assert_allclose(h.r, st.r, atol=1e-12)
        np.testing.assert_allclose(res.head_state(2, 0).b, res["b"][2, 0])
        assert res.mean("r").shape == (3, 2, 2)
        with pytest.raises(ValueError, match="scalar"):
            res.stacked()


PIN = np.array([0.00513074267797593, -0.0253463903232431, 0.00959053916494935,
                -0.0234450553165482, 0.06950053499124291, 0.03155417870470668,
                0.06798877294218157, 0.03352945599146001, 0.00637041725027927,
                0.00612325620571706, 0.0079382399100888, 0.00842029653988945])


def test_tracked_test_loss_matches_the_reduced_loss_at_the_state():
    """Test loss of both simulators = reduced loss at the recorded order parameters (the keys'
    value components are zero at a HeadState start, so the reduced formula is exact)."""
    from numerics.multihead import ReducedFlow
    md = MultiHeadModel(2, 4, 2, "softmax-1", delta=0.2)
    prior = flipping_spike(1.0, 2.0)
    st = HeadState.make([[0.8, 0.3], [-0.5, 0.6]], 0.1 * np.eye(2), [0.2, -0.1])
    cfg = SimulationConfig(lr=1e-9, steps=1, seeds=8, seed=3, init=st, device="cpu", n_test=20_000)
    red, red_se = ReducedFlow(md, prior, n=2**15, seed=0, kind="random").loss(st)
    for method in ("direct", "gram"):
        res = simulate(md, {"D": 300, "prior": prior}, cfg, method)
        est = res.loss[0]
        se = est.std(ddof=1) / np.sqrt(len(est))
        assert abs(est.mean() - red) <= 5 * np.hypot(se, red_se), (method, est.mean(), red)


@pytest.mark.slow
def test_gram_equals_direct_in_law_larger_comparison():
    md = MultiHeadModel(3, 4, 2, "softmax-v")
    prior = GaussianPrior([0.5, 0.0], np.diag([2.0, 1.0]))
    cfg = SimulationConfig(lr=0.5 * 4 / 2000, steps=400, batch=4, seeds=3000, seed=21,
                           record_every=1, init=0.3, device="cpu")
    params = {"D": 2000, "prior": prior}
    a = simulate(md, params, cfg)
    b = simulate(md, params, SimulationConfig(**{**cfg.__dict__, "seed": 22}), "gram")
    worst, z = same_law(a, b, [1, 20, 200, 400])
    assert worst < z, (worst, z)


@pytest.mark.gpu
def test_multihead_simulators_on_cuda_agree_with_cpu_in_law():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    md = MultiHeadModel(2, 3, 2, "softmax-1")
    prior = flipping_spike(1.0, 2.0)
    base = dict(lr=0.4 * 2 / 500, steps=100, batch=2, seeds=2000, record_every=1, init=0.3)
    params = {"D": 500, "prior": prior}
    for method in ("direct", "gram"):
        cpu = simulate(md, params, SimulationConfig(**base, seed=1, device="cpu"), method)
        gpu = simulate(md, params, SimulationConfig(**base, seed=2, device="cuda"), method)
        worst, z = same_law(cpu, gpu, [1, 50, 100])
        assert worst < z, (method, worst, z)
