"""ODE integration through ``numerics.ode.integrate``: every numerical ending is a status on the
result (never an exception), one state and a batch agree, adaptive schemes refuse noise, bad
arguments raise ValueError naming the parameter, a method over its budget falls back, adaptive
and fixed-step schemes agree with the exact solution, Euler–Maruyama has the right stationary
law, and a compiled model's overlap flow stays on the sphere."""

import math

import numpy as np
import pytest

from numerics import compiled
from numerics.ode import ADAPTIVE, SCHEMES, STATUSES, Status, Trajectory, integrate
from theory.models.marion2025 import MODEL
from tests.helpers import compiled_flow

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


# --- fallback and budget ----------------------------------------------------------------------
def test_integrate_falls_back_when_a_method_exceeds_its_budget():
    """y' = −10⁵·y is stiff: RK45 exceeds 10⁴ evaluations, Radau (with the Jacobian) finishes."""
    rhs = lambda y: -1e5 * y
    jac = lambda y: np.array([[-1e5]])
    tr = integrate(rhs, [1.0], [0, 1e-3, 1.0], jac=jac, method="RK45", fallback=("Radau",),
                   max_nfev=10_000)
    assert tr.ok and tr.status == "completed" and tr.method == "Radau"
    assert tr.tried == ("RK45", "Radau") and tr.nfev <= 10_000
    assert abs(tr.final[0]) < 1e-8


def test_integrate_reports_budget_and_nonfinite_instead_of_raising():
    tr = integrate(lambda y: -1e5 * y, [1.0], [0, 1.0], method="RK45", fallback=("RK23",),
                   max_nfev=500)
    assert tr.status == "max_steps" and not tr.ok and tr.tried == ("RK45", "RK23")
    assert "500" in tr.message
    with np.errstate(over="ignore", invalid="ignore"):   # y' = y² blows up at t = 1
        blow_up = integrate(lambda y: y**2, [1.0], np.linspace(0, 2, 21), method="rk4", dt=0.01)
    assert blow_up.status == "nonfinite" and not blow_up.ok
    assert np.all(np.isfinite(blow_up.y)) and blow_up.t[-1] < 1.5
    with pytest.raises(ValueError, match="max_nfev"):
        integrate(lambda y: -y, [1.0], [0, 1], max_nfev=0)


def test_integrate_falls_back_after_a_nonfinite_state():
    """RK4 at too large a step diverges on a stiff decay (state → inf); the fallback Radau
    integrates it. Before, integrate returned the non-finite attempt without trying it."""
    with np.errstate(over="ignore", invalid="ignore"):
        tr = integrate(lambda y: -1e4 * y, [1.0], np.linspace(0, 1, 11), method="rk4", dt=0.01,
                       fallback=("Radau",), jac=lambda y: np.array([[-1e4]]))
    assert tr.ok and tr.tried == ("rk4", "Radau") and abs(tr.final[0]) < 1e-8


def test_rk4_restarted_per_chunk_is_the_same_loop():
    """RK4 lands exactly on each output time, so restarting it per chunk changes no number."""
    A = np.array([[0.0, 1.0], [-1.0, 0.0]])
    t = np.linspace(0, 3, 7)
    a = integrate(lambda y: A @ y, [1.0, 0.0], t, method="rk4", dt=0.01)
    b = integrate(lambda y: A @ y, [1.0, 0.0], t, method="rk4", dt=0.01, chunk=2)
    np.testing.assert_array_equal(a.y, b.y)


# --- schemes against exact solutions, and a compiled model's flow ------------------------------
P = dict(d=64, L=3, lam=0.7, gamma=0.8, eps=0.3)
INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)


def test_adaptive_and_fixed_step_agree_on_linear_ode():
    A = np.array([[-1.0, 2.0], [-2.0, -1.0]])
    t = np.linspace(0, 3, 7)
    a = integrate(lambda y: A @ y, [1.0, 0.0], t, jac=lambda y: A)
    b = integrate(lambda y: A @ y, [1.0, 0.0], t, method="rk4", dt=1e-3)
    assert a.ok and b.ok and a.method == "Radau"
    from scipy.linalg import expm
    exact = np.array([expm(A * s) @ [1.0, 0.0] for s in t])
    np.testing.assert_allclose(a.y, exact, atol=1e-8)
    np.testing.assert_allclose(b.y, exact, atol=1e-10)


def test_euler_maruyama_ornstein_uhlenbeck_variance():
    t = np.linspace(0, 5, 6)
    ys = np.array([integrate(lambda y: -y, [0.0], t, method="euler_maruyama", dt=1e-2,
                             diffusion=lambda y: np.eye(1) * math.sqrt(2), seed=s).final[0]
                   for s in range(400)])
    # stationary variance 1 (up to O(dt)); 400 samples: se of the variance ≈ 0.07
    assert abs(ys.var() - 1.0) < 0.3


def test_flow_keeps_overlaps_inside_the_sphere():
    cm = compiled(MODEL)
    tr = compiled_flow(cm, P, cm.q_vector(INIT), np.linspace(0, 20, 11))
    assert np.all(np.abs(tr.y) <= 1 + 1e-9)
