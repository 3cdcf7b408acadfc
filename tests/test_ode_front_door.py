"""The one ODE front door ``numerics.ode.integrate``: every numerical ending is a status on the
result (never an exception), one state and a batch agree, adaptive schemes refuse noise, and
bad arguments raise ValueError naming the parameter."""

import numpy as np
import pytest

from numerics.ode import ADAPTIVE, SCHEMES, STATUSES, Status, Trajectory, integrate

T = np.linspace(0.0, 2.0, 21)


def test_completed_and_event_are_ok():
    tr = integrate(lambda y: -y, [1.0], T, method="RK45")
    assert isinstance(tr, Trajectory) and tr.status == Status.COMPLETED == "completed" and tr.ok
    assert np.allclose(tr.final, np.exp(-2.0), rtol=1e-6)
    ev = integrate(lambda y: -y, [1.0], T, method="RK45", reached=lambda t, y: y[0] < 0.5)
    assert ev.status == "event" and ev.ok and ev.y[-1, 0] < 0.5 <= ev.y[-2, 0]
    assert ev.t[-1] == pytest.approx(0.7)
    at0 = integrate(lambda y: -y, [1.0], T, reached=lambda t, y: True)
    assert at0.status == "event" and len(at0.t) == 1


@pytest.mark.parametrize("method, kw", [("RK45", {}), ("Radau", {}), ("rk4", {"dt": 0.01})])
def test_a_blow_up_is_a_nonfinite_status_not_an_exception(method, kw):
    with np.errstate(all="ignore"):                     # y' = y² blows up at t = 1
        tr = integrate(lambda y: y**2, [1.0], T, method=method, **kw)
    assert tr.status in ("nonfinite", "solver_failure") and not tr.ok
    assert np.all(np.isfinite(tr.y)) and tr.t[-1] <= 1.0 + 1e-9
    if method == "rk4":
        assert tr.status == "nonfinite"


def test_a_right_hand_side_that_raises_floating_point_error_ends_nonfinite():
    def rhs(y):
        if y[0] > 2.0:
            raise FloatingPointError("logits too large")
        return y
    tr = integrate(rhs, [1.0], T, method="RK45")
    assert tr.status == "nonfinite" and "logits too large" in tr.message and tr.t[-1] < np.log(2.0) + 0.1
    with pytest.raises(ZeroDivisionError):            # any other exception is the caller's bug
        integrate(lambda y: 1 // 0, [1.0], T, method="RK45")


def test_max_steps_and_solver_failure():
    tr = integrate(lambda y: -1e5 * y, [1.0], T, method="RK45", max_nfev=100)
    assert tr.status == "max_steps" and tr.nfev == 100 and not tr.ok and "100" in tr.message
    runs = integrate(lambda Y: -1e5 * Y, np.ones((2, 1)), T, method="RK45", max_nfev=100)
    assert [r.status for r in runs] == ["max_steps"] * 2
    with np.errstate(all="ignore"):                     # y' = y² by BDF: the step underflows at t = 1
        tr = integrate(lambda y: y**2, [1.0], T, method="BDF")
    assert tr.status == "solver_failure" and "step size" in tr.message and tr.t[-1] < 1.0
    assert set(STATUSES) == {"completed", "event", "nonfinite", "max_steps", "solver_failure"}


@pytest.mark.parametrize("method, kw", [("RK45", {}), ("Radau", {}), ("DOP853", {}),
                                        ("rk4", {"dt": 0.05})])
def test_one_state_and_a_batch_agree(method, kw):
    A = np.array([[-0.5, 1.0], [-1.0, -0.3]])
    rhs = lambda y: A @ y + 0.1 * np.sin(y)
    rows = lambda Y: Y @ A.T + 0.1 * np.sin(Y)
    jac = lambda y: A + 0.1 * np.diag(np.cos(y))
    jacs = lambda Y: np.array([jac(y) for y in Y])
    Y0 = np.random.default_rng(0).standard_normal((3, 2))
    event = lambda t, y: np.linalg.norm(y) < 0.4
    batch = integrate(rows, Y0, T, method=method, jac=jacs, reached=event, chunk=4, **kw)
    assert isinstance(batch, list) and len(batch) == 3
    for y0, tr in zip(Y0, batch, strict=True):
        one = integrate(rhs, y0, T, method=method, jac=jac, reached=event, chunk=4, **kw)
        assert one.status == tr.status and np.array_equal(one.t, tr.t)
        np.testing.assert_allclose(tr.y, one.y, rtol=1e-12, atol=1e-14)


def test_fallback_per_row_in_a_batch():
    rows = lambda Y: -1e5 * Y
    runs = integrate(rows, np.ones((2, 1)), [0.0, 1e-3, 1.0], method="RK45", fallback=("Radau",),
                     max_nfev=10_000, jac=lambda Y: np.full((len(Y), 1, 1), -1e5))
    assert all(r.ok and r.tried == ("RK45", "Radau") and r.method == "Radau" for r in runs)


def test_adaptive_schemes_are_for_deterministic_right_hand_sides_only():
    noise = lambda y: np.eye(1)
    for m in ADAPTIVE + ("rk4",):
        with pytest.raises(ValueError, match="method"):
            integrate(lambda y: -y, [0.0], T, method=m, dt=0.01, diffusion=noise, seed=0)
    with pytest.raises(ValueError, match="diffusion"):
        integrate(lambda y: -y, [0.0], T, method="euler_maruyama", dt=0.01, seed=0)
    with pytest.raises(ValueError, match="seed"):
        integrate(lambda y: -y, [0.0], T, method="euler_maruyama", dt=0.01, diffusion=noise)
    assert all(SCHEMES[m].adaptive and not SCHEMES[m].stochastic for m in ADAPTIVE)
    a = integrate(lambda y: -y, [0.0], T, method="euler_maruyama", dt=0.01, diffusion=noise, seed=3)
    b = integrate(lambda y: -y, [0.0], T, method="euler_maruyama", dt=0.01, diffusion=noise, seed=3)
    assert a.ok and np.array_equal(a.y, b.y) and np.std(a.y) > 0
    runs = integrate(lambda Y: -Y, np.zeros((2, 1)), T, method="euler_maruyama", dt=0.01,
                     diffusion=lambda Y: np.ones((len(Y), 1, 1)), seed=3)
    assert all(r.ok for r in runs) and not np.array_equal(runs[0].y, runs[1].y)


@pytest.mark.parametrize("kw, word", [
    ({"method": "Euler"}, "method"), ({"method": "rk4"}, "dt"), ({"max_nfev": 0}, "max_nfev"),
    ({"chunk": 0}, "chunk"), ({"rtol": 0.0}, "rtol"), ({"atol": -1.0}, "atol"),
    ({"names": ("a", "b")}, "names"), ({"fallback": ("nope",)}, "method")])
def test_bad_arguments_raise_value_error_naming_the_parameter(kw, word):
    with pytest.raises(ValueError, match=word):
        integrate(lambda y: -y, [1.0], T, **kw)


def test_bad_times_and_states():
    for bad in ([0.0], [1.0, 0.0], [0.0, np.nan]):
        with pytest.raises(ValueError, match="t_eval"):
            integrate(lambda y: -y, [1.0], bad)
    with pytest.raises(ValueError, match="y0"):
        integrate(lambda y: -y, [np.inf], T)
    with pytest.raises(ValueError, match="y0"):
        integrate(lambda y: -y, np.ones((2, 2, 2)), T)
