"""Batched trajectories (numerics.ode.batched, numerics.multihead.batched): each row is scipy's
RK45 on that row alone (to the last bit when the right-hand side is row-wise), and the batched
multi-head right-hand side is ReducedFlow.rhs row by row."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from numerics.multihead import HeadState, first_passage
from numerics.multihead.batched import integrate_batch, rhs_batch
from numerics.ode.batched import rk45_until_batch
from numerics.reduced import HeadReduced
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import MultiHeadModel
from verification.claims.sagitova2026._common import integrate_until


class _Toy:
    """A nonlinear test system in the interface ``integrate_until`` reads."""
    name = "toy"

    def __init__(self, A):
        self.A = A

    def rhs(self, y):
        return self.A @ y + 0.3 * np.sin(y)

    def check_state(self, y):
        return y

    def pack(self, y):
        return y

    def rows(self, t, Y):
        return np.array([self.rhs(y) for y in Y])


def _toy(seed, P=4):
    rng = np.random.default_rng(seed)
    return _Toy(0.5 * rng.standard_normal((P, P))), rng.standard_normal((5, P))


@given(seed=st.integers(0, 10_000), chunk=st.sampled_from([None, 1, 7, 40]),
       rtol=st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_each_row_is_scipys_rk45_alone_to_the_last_bit(seed, chunk, rtol):
    toy, Y0 = _toy(seed)
    t_eval = np.linspace(0.0, 8.0, 81)
    reached = lambda y: np.linalg.norm(y) > 6.0
    batch = rk45_until_batch(toy.rows, Y0, t_eval, reached=reached, chunk=chunk, rtol=rtol)
    for y0, (t, y) in zip(Y0, batch, strict=True):
        t_ref, y_ref = integrate_until(toy, y0, t_eval, reached, chunk=chunk, rtol=rtol)
        assert np.array_equal(t, t_ref) and np.array_equal(y, y_ref)


def test_without_stop_or_chunk_the_rows_are_solve_ivps_output():
    toy, Y0 = _toy(1)
    t_eval = np.linspace(0.0, 3.0, 31)
    batch = rk45_until_batch(toy.rows, Y0, t_eval, rtol=1e-7, atol=1e-10)
    for y0, (t, y) in zip(Y0, batch, strict=True):
        ref = solve_ivp(lambda t, y: toy.rhs(y), (0.0, 3.0), y0, t_eval=t_eval, rtol=1e-7, atol=1e-10)
        assert np.array_equal(t, ref.t) and np.array_equal(y, ref.y.T)


def test_a_row_does_not_depend_on_the_others_in_its_batch():
    toy, Y0 = _toy(2)
    t_eval = np.linspace(0.0, 5.0, 51)
    reached = lambda y: y[0] > 1.0
    together = rk45_until_batch(toy.rows, Y0, t_eval, reached=reached, chunk=9)
    for k in range(len(Y0)):
        t, y = rk45_until_batch(toy.rows, Y0[k:k + 1], t_eval, reached=reached, chunk=9)[0]
        assert np.array_equal(t, together[k][0]) and np.array_equal(y, together[k][1])
    assert len({len(t) for t, _ in together}) > 1          # rows stopped at different times


def test_failures_and_bad_options_are_named():
    toy, Y0 = _toy(4)
    t_eval = np.linspace(0.0, 1.0, 11)
    with pytest.raises(RuntimeError, match="toy-nan: the flow's integration failed"):
        rk45_until_batch(lambda t, Y: np.where(t[:, None] > 0.3, np.nan, 1.0) * np.ones_like(Y),
                         Y0, t_eval, name="toy-nan")
    with pytest.raises(FloatingPointError, match="toy-overflow: the state became non-finite"):
        rk45_until_batch(lambda t, Y: np.full_like(Y, 1e306), Y0, np.linspace(0.0, 1e3, 11),
                         name="toy-overflow")
    with pytest.raises(ValueError, match="returned shape"):
        rk45_until_batch(lambda t, Y: Y[:, :2], Y0, t_eval)
    for kwargs, word in (({"rtol": -1.0}, "rtol"), ({"atol": np.nan}, "atol"), ({"chunk": 0}, "chunk")):
        with pytest.raises(ValueError, match=word):
            rk45_until_batch(toy.rows, Y0, t_eval, **kwargs)
    with pytest.raises(ValueError, match="t_eval"):
        rk45_until_batch(toy.rows, Y0, t_eval[::-1])
    with pytest.raises(ValueError, match="Y0"):
        rk45_until_batch(toy.rows, Y0[0], t_eval)
    with pytest.raises(ValueError, match="finite"):
        rk45_until_batch(toy.rows, np.full_like(Y0, np.nan), t_eval)


def _states(rng, H, F, k=4):
    out = []
    for _ in range(k):
        A = 0.3 * rng.standard_normal((H, H))
        out.append(HeadState.make(0.5 * rng.standard_normal((H, F)), A @ A.T,
                                  0.3 * rng.standard_normal(H), 0.3 * rng.standard_normal(H)).pack())
    return np.array(out)


@pytest.mark.parametrize("H, activation, kappa, backend", [
    (2, "softmax", 0.0, "torch"), (2, "softmax-v", 0.3, "torch"),
    (3, "softmax-1", 0.5, "numpy"), (2, "b-softmax", 0.25, "torch")])
def test_rhs_batch_is_the_flows_rhs_row_by_row(H, activation, kappa, backend):
    model = MultiHeadModel(H, 3, 2, activation)
    rm = HeadReduced(model, GaussianPrior([0.3, -0.2], np.diag([2.0, 1.0])), n=256, seed=5,
                     sgd_noise=kappa, backend=backend)
    Y = _states(np.random.default_rng(H), H, 2)
    rows = np.array([rm.flow.rhs(y) for y in Y])
    assert np.allclose(rhs_batch(rm.flow, Y), rows, rtol=1e-12, atol=1e-14)
    assert np.allclose(rhs_batch(rm.flow, Y[1:2])[0], rows[1], rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="coordinates per state"):
        rhs_batch(rm.flow, Y[:, :-1])


def test_integrate_batch_gives_the_escape_times_of_one_by_one_integration():
    model = MultiHeadModel(2, 4, 2, "softmax")
    rm = HeadReduced(model, GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5])), n=512, seed=7)
    from verification.claims.sagitova2026._common import _small_init
    rng = np.random.default_rng(0)
    Y0 = np.array([rm.pack(_small_init(rng.standard_normal((2, 2)), D)) for D in (1e2, 1e4, 1e6)])
    t_eval = np.linspace(0.0, 60.0, 601)
    norm = lambda y: float(np.linalg.norm(y[:4]))
    escaped = lambda y: norm(y) >= 0.3
    batch = integrate_batch(rm.flow, Y0, t_eval, escaped, chunk=100, rtol=1e-4)
    for y0, (t, y) in zip(Y0, batch, strict=True):
        t_ref, y_ref = integrate_until(rm, y0, t_eval, escaped, chunk=100, rtol=1e-4)
        assert len(t) == len(t_ref) and np.allclose(y, y_ref, rtol=1e-8, atol=1e-12)
        tau, tau_ref = (first_passage(s, [norm(v) for v in z], 0.3) for s, z in ((t, y), (t_ref, y_ref)))
        assert np.isfinite(tau) and abs(tau - tau_ref) < 1e-8
