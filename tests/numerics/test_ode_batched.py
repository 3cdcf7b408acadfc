"""Batched trajectories (``numerics.ode.integrate`` on a batch: the lockstep RK45 of
numerics.ode.batched): each row is scipy's RK45 on that row alone (to the last bit when the
right-hand side is row-wise), each row ends with its own status, the batched multi-head
right-hand side is ReducedFlow.rhs row by row, and a batch of the multi-head flow gives the
escape times of one-by-one integration."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from numerics.multihead import HeadState, first_passage
from numerics.ode import integrate
from numerics.reduced import HeadReduced
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import MultiHeadModel


class _Toy:
    """A nonlinear test system: ``rhs`` at one state, ``rows`` at a batch."""

    def __init__(self, A):
        self.A = A

    def rhs(self, y):
        return self.A @ y + 0.3 * np.sin(y)

    def rows(self, Y):
        return np.array([self.rhs(y) for y in Y])


def _toy(seed, P=4):
    rng = np.random.default_rng(seed)
    return _Toy(0.5 * rng.standard_normal((P, P))), rng.standard_normal((5, P))


def _event(reached):
    return None if reached is None else (lambda t, y: reached(y))


def _batch(rows, Y0, t_eval, reached=None, chunk=None, rtol=1e-6, atol=1e-12, **kw):
    """(t, y) pairs of the batch, every row checked to end ok."""
    runs = integrate(rows, Y0, t_eval, method="RK45", rtol=rtol, atol=atol, reached=_event(reached),
                     chunk=chunk, **kw)
    assert all(tr.ok for tr in runs)
    return [(tr.t, tr.y) for tr in runs]


def _alone(rhs, y0, t_eval, reached=None, chunk=None, rtol=1e-6, atol=1e-12):
    """scipy's RK45 (``solve_ivp``, one call per chunk) from one state: the reference."""
    tr = integrate(rhs, y0, t_eval, method="RK45", rtol=rtol, atol=atol, reached=_event(reached),
                   chunk=chunk)
    assert tr.ok
    return tr.t, tr.y


@given(seed=st.integers(0, 10_000), chunk=st.sampled_from([None, 1, 7, 40, 1000]),
       rtol=st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_each_row_is_scipys_rk45_alone_to_the_last_bit(seed, chunk, rtol):
    toy, Y0 = _toy(seed)
    t_eval = np.linspace(0.0, 8.0, 81)
    reached = lambda y: np.linalg.norm(y) > 6.0
    batch = _batch(toy.rows, Y0, t_eval, reached=reached, chunk=chunk, rtol=rtol)
    for y0, (t, y) in zip(Y0, batch, strict=True):
        t_ref, y_ref = _alone(toy.rhs, y0, t_eval, reached, chunk=chunk, rtol=rtol)
        assert np.array_equal(t, t_ref) and np.array_equal(y, y_ref)


@pytest.mark.filterwarnings("ignore:At least one element of `rtol` is too small")
@pytest.mark.parametrize("case", ["reached at t0", "rtol below the floor", "zero derivative",
                                  "span shorter than the first step", "stop at a chunk boundary"])
def test_edge_cases_are_scipys_too(case):
    toy, Y0 = _toy(5)
    t_eval, reached, rtol, rows, chunk = np.linspace(0.0, 4.0, 41), None, 1e-6, toy.rows, 10
    rhs = toy.rhs
    if case == "reached at t0":
        reached = lambda y: y[0] > Y0[2, 0] - 1e-12          # rows ≥ y0[2] in coordinate 0 stop at once
    elif case == "rtol below the floor":
        rtol = 1e-17
    elif case == "zero derivative":
        rows, rhs = (lambda Y: np.zeros_like(Y)), (lambda y: np.zeros_like(y))
    elif case == "span shorter than the first step":
        t_eval = np.linspace(5.0, 5.0 + 1e-9, 4)
    else:
        first = _batch(rows, Y0, t_eval, chunk=chunk)[0][1]
        reached = lambda y: np.array_equal(y, first[chunk])  # row 0 stops exactly at t_eval[chunk]
    batch = _batch(rows, Y0, t_eval, reached=reached, chunk=chunk, rtol=rtol)
    for y0, (t, y) in zip(Y0, batch, strict=True):
        t_ref, y_ref = _alone(rhs, y0, t_eval, reached, chunk=chunk, rtol=rtol)
        assert np.array_equal(t, t_ref) and np.array_equal(y, y_ref)
    if case == "reached at t0":
        assert sum(len(t) == 1 for t, _ in batch) == int(np.sum(Y0[:, 0] > Y0[2, 0] - 1e-12)) >= 1
    if case == "stop at a chunk boundary":
        assert len(batch[0][0]) == chunk + 1


def test_without_stop_or_chunk_the_rows_are_solve_ivps_output():
    toy, Y0 = _toy(1)
    t_eval = np.linspace(0.0, 3.0, 31)
    batch = _batch(toy.rows, Y0, t_eval, rtol=1e-7, atol=1e-10)
    for y0, (t, y) in zip(Y0, batch, strict=True):
        ref = solve_ivp(lambda t, y: toy.rhs(y), (0.0, 3.0), y0, t_eval=t_eval, rtol=1e-7, atol=1e-10)
        assert np.array_equal(t, ref.t) and np.array_equal(y, ref.y.T)


def test_a_row_does_not_depend_on_the_others_in_its_batch():
    toy, Y0 = _toy(2)
    t_eval = np.linspace(0.0, 5.0, 51)
    reached = lambda y: y[0] > 1.0
    together = _batch(toy.rows, Y0, t_eval, reached=reached, chunk=9)
    for k in range(len(Y0)):
        t, y = _batch(toy.rows, Y0[k:k + 1], t_eval, reached=reached, chunk=9)[0]
        assert np.array_equal(t, together[k][0]) and np.array_equal(y, together[k][1])
    assert len({len(t) for t, _ in together}) > 1          # rows stopped at different times


def test_numerical_endings_are_statuses_per_row_and_bad_options_are_named():
    toy, Y0 = _toy(4)
    t_eval = np.linspace(0.0, 1.0, 11)
    rk45 = lambda rows, Y, t=t_eval, **kw: integrate(rows, Y, t, method="RK45", **kw)
    runs = rk45(lambda Y: np.full_like(Y, np.nan), Y0)
    assert all(tr.status == "nonfinite" and not tr.ok and len(tr.t) == 1 for tr in runs)
    runs = rk45(lambda Y: np.full_like(Y, 1e306), Y0, np.linspace(0.0, 1e3, 11))
    assert all(tr.status == "nonfinite" and np.all(np.isfinite(tr.y)) for tr in runs)
    # one row blows up (the right-hand side refuses it and raises), the others run on
    def growth(Y):
        if np.any(Y > 5.0):
            raise FloatingPointError("too large")
        return Y.copy()
    runs = rk45(growth, np.array([[0.1], [2.0], [0.2]]))
    assert runs[1].status == "nonfinite" and "too large" in runs[1].message
    assert runs[1].t[-1] < 1.0 and runs[0].ok and runs[2].ok
    assert np.array_equal(runs[2].y, integrate(growth, [0.2], t_eval, method="RK45").y)
    runs = rk45(toy.rows, Y0, max_nfev=20)
    assert all(tr.status == "max_steps" and tr.nfev == 20 for tr in runs)
    with pytest.raises(ValueError, match="returned shape"):
        rk45(lambda Y: Y[:, :2], Y0)
    for kwargs, word in (({"rtol": -1.0}, "rtol"), ({"atol": np.nan}, "atol"), ({"chunk": 0}, "chunk")):
        with pytest.raises(ValueError, match=word):
            rk45(toy.rows, Y0, **kwargs)
    with pytest.raises(ValueError, match="t_eval"):
        rk45(toy.rows, Y0, t_eval[::-1])
    with pytest.raises(ValueError, match="t_eval"):
        rk45(toy.rows, Y0, t_eval[:1])
    with pytest.raises(ValueError, match="y0"):
        rk45(toy.rows, Y0[None], t_eval)
    with pytest.raises(ValueError, match="finite"):
        rk45(toy.rows, np.full_like(Y0, np.nan), t_eval)
    for bad in ([0.0, np.nan, 1.0], [0.0, 1.0, np.inf]):
        with pytest.raises(ValueError, match="t_eval"):
            rk45(toy.rows, Y0, bad)
    for kwargs, word in (({"rtol": None}, "rtol"), ({"atol": [1e-9] * 4}, "atol"), ({"chunk": 2.5}, "chunk")):
        with pytest.raises(ValueError, match=word):
            rk45(toy.rows, Y0, **kwargs)
    with pytest.raises(ValueError, match="real"):
        rk45(toy.rows, Y0 + 0j, t_eval)
    with pytest.raises(ValueError, match="P ≥ 1"):
        rk45(toy.rows, np.zeros((3, 0)), t_eval)


def test_a_failing_row_fails_where_scipy_alone_fails():
    toy, Y0 = _toy(6)
    t_eval = np.linspace(0.0, 2.0, 21)
    nan_late = lambda y: np.full_like(y, np.nan) if np.linalg.norm(y) > 1.5 else toy.rhs(y)
    row = next(k for k in range(len(Y0)) if np.linalg.norm(Y0[k]) <= 1.5)
    alone = integrate(nan_late, Y0[row], t_eval, method="RK45", rtol=1e-6, atol=1e-12)
    batch = integrate(lambda Y: np.array([nan_late(y) for y in Y]), Y0[row:row + 1], t_eval,
                      method="RK45", rtol=1e-6, atol=1e-12)[0]
    assert not alone.ok and not batch.ok
    assert batch.t[-1] <= alone.t[-1] and np.array_equal(batch.y, alone.y[:len(batch.t)])


def _states(rng, H, F, k=4):
    out = []
    for _ in range(k):
        A = 0.3 * rng.standard_normal((H, H))
        out.append(HeadState.make(0.5 * rng.standard_normal((H, F)), A @ A.T,
                                  0.3 * rng.standard_normal(H), 0.3 * rng.standard_normal(H)).pack())
    return np.array(out)


@pytest.mark.parametrize("H, activation, kappa, backend", [
    (2, "softmax", 0.0, "torch"), (2, "softmax-v", 0.3, "torch"), (1, "softmax", 0.1, "numpy"),
    (3, "softmax-1", 0.5, "numpy"), (2, "b-softmax", 0.25, "torch")])
def test_rhs_batch_is_the_per_draw_flow_row_by_row(H, activation, kappa, backend):
    """The batched right-hand side (means in the backend) against the per-draw integrands'
    means (``derivative_draws``: means in numpy, one state at a time), and ``rhs`` at one state."""
    model = MultiHeadModel(H, 3, 2, activation)
    rm = HeadReduced(model, GaussianPrior([0.3, -0.2], np.diag([2.0, 1.0])), n=256, seed=5,
                     sgd_noise=kappa, backend=backend)
    Y = _states(np.random.default_rng(H), H, 2)
    rows = np.array([rm.flow.derivative_draws(HeadState.unpack(y, H, 2)).mean(0) for y in Y])
    assert np.allclose(rm.flow.rhs_batch(Y), rows, rtol=1e-12, atol=1e-14)
    assert np.allclose(rm.flow.rhs_batch(Y[1:2])[0], rows[1], rtol=1e-12, atol=1e-14)
    assert np.allclose(rm.flow.rhs(Y[2]), rows[2], rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="coordinates"):
        rm.flow.rhs_batch(Y[:, :-1])


@pytest.mark.parametrize("r", [np.zeros((2, 2)), np.diag([0.3, 0.0]), np.full((2, 2), 0.2),
                               np.diag([0.3, -1e-13]), 0.3 * np.eye(2)])
def test_rhs_batch_at_singular_and_edge_r_is_the_flows(r):
    model = MultiHeadModel(2, 3, 2, "softmax-v")
    rm = HeadReduced(model, GaussianPrior([0.3, -0.2], np.diag([2.0, 1.0])), n=256, seed=5)
    st_ = HeadState(np.array([[0.2, -0.1], [0.4, 0.3]]), r, np.array([0.1, -0.2]), np.array([0.3, 0.0]))
    Y = np.array([st_.pack(), st_.pack() * 0.5])
    rows = np.array([rm.flow.derivative_draws(HeadState.unpack(y, 2, 2)).mean(0) for y in Y])
    assert np.allclose(rm.flow.rhs_batch(Y), rows, rtol=1e-12, atol=1e-14)
    huge = Y.copy()
    huge[:, :4] = 1e4                                         # logits overflow: an error, not a number
    with pytest.raises(FloatingPointError, match="non-finite"):
        rm.flow.rhs_batch(huge)


def test_rhs_does_not_depend_on_the_eigenbasis_of_r():
    """ω = g Rᵀ with the symmetric root: at repeated eigenvalues of r (every small
    initialisation starts at r = σ₀²I) LAPACK's eigenbasis jumps under a 1e-13 change of r;
    U√Λ would follow it (the estimate moved by 4e-3), the symmetric root does not."""
    model = MultiHeadModel(2, 4, 2, "softmax")
    rm = HeadReduced(model, GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5])), n=512, seed=2)
    m = np.array([[0.3, -0.1], [0.05, 0.2]])
    base = HeadState.make(m, 0.3 * np.eye(2)).pack()
    want = rm.flow.rhs(base)
    for eps in (1e-13, -1e-13):
        r = 0.3 * np.eye(2) + eps * np.array([[0.0, 1.0], [1.0, 0.0]])
        got = rm.flow.rhs(HeadState.make(m, r).pack())
        assert np.allclose(got, want, rtol=0, atol=1e-10)
    r = np.array([[0.5, 0.2], [0.2, 0.3]])
    R = HeadState.make(m, r).residual_root()
    assert np.allclose(R, R.T) and np.allclose(R @ R.T, r)
    # the one root that turns with r: R(QrQᵀ) = Q R(r) Qᵀ for every rotation Q (U√Λ does not)
    for angle in (0.3, 1.1, 2.5):
        Q = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        turned = HeadState.make(m, Q @ r @ Q.T).residual_root()
        assert np.allclose(turned, Q @ R @ Q.T, atol=1e-12)


def test_the_reduced_models_integration_checks_the_initial_states():
    """Initial states are checked realisable before any step (``ReducedModel.integrate``: one
    row of a batch as a state on its own)."""
    model = MultiHeadModel(2, 3, 2, "softmax")
    rm = HeadReduced(model, GaussianPrior([0.0, 0.0], np.diag([2.0, 1.0])), n=128, seed=1)
    good = HeadState.make(np.full((2, 2), 0.1), 0.01 * np.eye(2)).pack()
    bad = good.copy()
    bad[4] = -0.5                                             # r[0,0] < 0: not a Gram matrix
    with pytest.raises(ValueError, match="r"):
        rm.integrate(bad, [0.0, 1.0])
    with pytest.raises(ValueError, match="coordinates"):
        rm.integrate(good[:-1], [0.0, 1.0])


def _small_init(rng, D, sigma0=0.02):
    """Keys ~ N(0, σ₀²I/D) (the Sagitova claims' initialisation): m = σ₀g/√D, r = σ₀²I, packed."""
    return HeadState.make(sigma0 * rng.standard_normal((2, 2)) / np.sqrt(D), sigma0**2 * np.eye(2)).pack()


def test_the_batch_gives_the_escape_times_of_one_by_one_integration():
    model = MultiHeadModel(2, 4, 2, "softmax")
    rm = HeadReduced(model, GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5])), n=512, seed=7)
    rng = np.random.default_rng(0)
    Y0 = np.array([_small_init(rng, D) for D in (1e2, 1e4, 1e6)])
    t_eval = np.linspace(0.0, 60.0, 601)
    norm = lambda y: float(np.linalg.norm(y[:4]))
    escaped = lambda y: norm(y) >= 0.3
    batch = integrate(rm.flow.rhs_batch, Y0, t_eval, method="RK45", rtol=1e-4, atol=1e-12,
                      reached=lambda t, y: escaped(y), chunk=100)
    assert all(tr.ok for tr in batch)
    for y0, tr in zip(Y0, batch, strict=True):
        t, y = tr.t, tr.y
        ref = rm.integrate(y0, t_eval, method="RK45", rtol=1e-4, atol=1e-12, chunk=100,
                           reached=lambda t, y: escaped(y))
        t_ref, y_ref = ref.t, ref.y
        assert ref.status == "event"
        assert len(t) == len(t_ref) and np.allclose(y, y_ref, rtol=1e-8, atol=1e-12)
        tau, tau_ref = (first_passage(s, [norm(v) for v in z], 0.3) for s, z in ((t, y), (t_ref, y_ref)))
        assert np.isfinite(tau) and abs(tau - tau_ref) < 1e-8


def test_a_batch_row_of_the_multihead_flow_is_its_whole_integration_to_the_last_bit():
    """The escape time without integrating past the hit (the batch's lockstep RK45, one row)
    equals the one from the full (or the chunked, stopped) scipy integration bit for bit: the
    speed-up changes no number."""
    model = MultiHeadModel(2, 4, 2, "softmax")
    rm = HeadReduced(model, GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5])), n=2**10, seed=3,
                     backend="torch")
    t_eval = np.linspace(0, 60, 601)
    y0 = _small_init(np.random.default_rng(1), 1e3)
    norm = lambda y: float(np.linalg.norm(y[:4]))
    for chunk in (None, 100):
        stop = None if chunk is None else (lambda t, y: bool(np.linalg.norm(rm.unpack(y).m) >= 0.3))
        tr = rm.integrate(y0, t_eval, method="RK45", rtol=1e-6, atol=1e-12, chunk=chunk, reached=stop)
        assert tr.ok, tr.message
        old = first_passage(tr.t, [np.linalg.norm(s.m) for s in rm.states(tr)], 0.3)
        runs = integrate(rm.flow.rhs_batch, y0[None], t_eval, method="RK45", rtol=1e-6, atol=1e-12,
                         reached=lambda t, y: norm(y) >= 0.3, chunk=chunk)
        [row] = runs
        assert row.ok, row.message
        t, y = row.t, row.y
        assert np.array_equal(y, tr.y[:len(t)]) and np.array_equal(t, tr.t[:len(t)])
        assert first_passage(t, [norm(v) for v in y], 0.3) == old
        assert np.isfinite(old) and t[-1] < 60
