"""Each Sagitova dynamics claim check refutes a deliberately wrong model or formula."""

import numpy as np
import sympy as sp

from numerics.reduced import HeadReduced
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import Activation
from verification import Context, get_claim, run_claim
from verification.claims.sagitova2026 import sec3_specialization as dyn

CTX = Context(profile="quick", seed=0)


def verdict(cid, **kw):
    entry, outcome = run_claim(get_claim(cid), CTX, **kw)
    assert outcome.verdict != "error", outcome.evidence.get("traceback")
    return outcome.verdict


class FastFlow(HeadReduced):
    """The m-equation 30% too fast: a wrong reduced ODE."""

    def rhs(self, y):
        d = super().rhs(y)
        d[:self.model.H * self.model.F] *= 1.3          # the m-block comes first
        return d


def test_fast_flow_changes_only_the_m_block():
    from theory.models.sagitova2026 import flipping_spike
    from theory.multihead import MultiHeadModel
    args = (MultiHeadModel(2, 4, 2, "softmax-v"), flipping_spike(1.0, 2.0))
    right, wrong = HeadReduced(*args, n=64), FastFlow(*args, n=64)
    y = right.pack({"m[0,0]": 0.4, "m[1,1]": 0.3, "r[0,0]": 0.2, "r[1,1]": 0.2, "b[0]": 0.1},
                   base=right.default_state())
    a, b = right.rhs(y), wrong.rhs(y)
    assert np.allclose(b[:4], 1.3 * a[:4]) and np.abs(a[:4]).max() > 1e-3
    assert np.array_equal(b[4:], a[4:])


def test_sgd_flow_claim_refutes_a_wrong_ode():
    assert verdict("sagitova2026:prop-iii2-sgd-flow", reduced_class=FastFlow, dims=[100, 200]) == "refuted"


def test_symmetric_manifold_claim_refutes_head_dependent_temperatures():
    hetero = Activation("softmax-heterogeneous", lambda s, v: [
        [sp.exp((1 + 0.4 * h) * x) / sum(sp.exp((1 + 0.4 * h) * y) for y in row) for x in row]
        for h, row in enumerate(s)])
    assert verdict("sagitova2026:symmetric-manifold", activations=[hetero]) == "refuted"


def test_unspecialized_claim_refutes_a_prior_without_mean():
    assert verdict("sagitova2026:prop-iii3-unspecialized",
                   prior=GaussianPrior([0.0, 0.0], np.diag([2.0, 1.0]))) == "refuted"


def _small_escape_runs():
    return dyn._escape_runs("quick", 0, dims=(1e2, 1e4, 1e6), seeds=6, sgd_dims=(100, 1000),
                            sgd_seeds=32)


def test_escape_claim_refutes_a_wrong_saddle_rate():
    runs = _small_escape_runs()
    lam = dyn.saddle_rate(dyn._escape_prior(), 2)[0]
    assert verdict("sagitova2026:prop-iii4-escape-logd", runs=runs) == "confirmed"
    assert verdict("sagitova2026:prop-iii4-escape-logd", runs=runs, rate=1.3 * lam) == "refuted"


def test_concentration_claim_refutes_a_spread_that_grows():
    runs = dict(_small_escape_runs())
    rng = np.random.default_rng(0)
    d = np.log(np.array(runs["dims"]))
    runs["ode"] = d[None, :] * (1 + rng.normal(0, 1, (40, 1)) * 0.05 * d[None, :])
    assert verdict("sagitova2026:conj-iii1-sharp-transition", runs=runs) == "refuted"


def test_sequential_claim_refutes_the_wrong_order():
    assert verdict("sagitova2026:result-iii1-sequential", nu=(3.0, 6.0), dims=(1e2, 1e3),
                   seeds=2, sgd_dims=[100]) == "refuted"


def test_integrate_until_batch_gives_the_numbers_of_the_full_integration():
    """The escape time without integrating past the hit (the batch's lockstep RK45, one row)
    equals the one from the full (or the chunked, stopped) scipy integration bit for bit: the
    speed-up changes no number."""
    from numerics.multihead import first_passage
    from theory.multihead import MultiHeadModel
    from verification.claims.sagitova2026 import _common as cm
    rm = cm._flow(MultiHeadModel(2, 4, 2, "softmax"), cm._escape_prior(), 2**10, 3)
    t_eval = np.linspace(0, 60, 601)
    y0 = cm.small_init(np.random.default_rng(1).standard_normal((2, 2)), 1e3)
    for chunk in (None, 100):
        stop = None if chunk is None else (lambda t, y: bool(np.linalg.norm(rm.unpack(y).m) >= 0.3))
        tr, states = cm._trajectory(rm, y0, t_eval, method="RK45", chunk=chunk, reached=stop)
        old = first_passage(tr.t, [np.linalg.norm(s.m) for s in states], 0.3)
        [(t, y)] = cm.integrate_until_batch(rm, [y0], t_eval, lambda y: np.linalg.norm(y[:4]) >= 0.3,
                                            chunk=chunk)
        assert np.array_equal(y, tr.y[:len(t)]) and np.array_equal(t, tr.t[:len(t)])
        assert cm.escape_time(rm, y0, t_eval, 0.3, chunk=chunk) == old
        assert np.isfinite(old) and t[-1] < 60
