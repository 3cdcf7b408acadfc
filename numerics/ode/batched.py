"""The lockstep RK45 behind ``numerics.ode.integrate`` for a batch of initial states: many
independent trajectories of one ODE, each by its own RK45, with the right-hand side evaluated
for all of them at once.

When one right-hand side evaluation costs about the same for one state as for several (the
multi-head flow's quasi-Monte Carlo expectation at a few thousand draws is dominated by the
per-call cost of its generated code), integrating K initial conditions one after another pays
that cost K times per stage. ``rk45_lockstep`` runs each trajectory with its own step-size
control, exactly the algorithm of ``scipy.integrate.RK45`` (Dormand–Prince 5(4), its initial
step, error norm, step factors and quartic dense output), and collects every trajectory's
pending stage into one call ``fun(Y)`` on the rows still running. No trajectory's step size
depends on another's: when ``fun`` computes each row on its own, a trajectory's numbers are
those of scipy's solver alone to the last bit; when its rounding depends on the batch (a
reduction over all rows' draws, as in ``ReducedFlow.rhs_batch``), they agree up to that
rounding, which can change as other rows stop. One deviation: a non-finite first derivative
ends the row (status 'nonfinite'), where scipy's solver would retry forever.

The output convention is that of ``integrate``'s one-state path: the states at the output times
``t_eval``, one solver per ``step`` output intervals (restarted from the state reached), ending
at the first output time where ``reached(t, y)`` holds. Each row ends with its own status.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import numpy as np
from scipy.integrate import RK45

from .base import Status

__all__ = ["rk45_lockstep"]

_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0        # scipy.integrate._ivp.rk
_ERROR_EXPONENT = -1.0 / (RK45.error_estimator_order + 1)

Request = tuple[float, np.ndarray]     # (t, y) whose derivative a trajectory needs


class _End(Exception):
    """A row's numerical ending other than completion (status, message)."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class _Event(Exception):
    pass


def _rms(x):
    return np.linalg.norm(x) / x.size ** 0.5          # numpy float: x/0 is inf, as in scipy


def _initial_step(t, y, f, t_bound, rtol, atol):
    """scipy's ``select_initial_step`` (Hairer, Nørsett & Wanner II.4, max_step = inf) as a
    generator: yields the one extra state it evaluates, returns the first step size."""
    scale = atol + np.abs(y) * rtol
    d0, d1 = _rms(y / scale), _rms(f / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, t_bound - t)
    f1 = yield t + h0, y + h0 * f
    d2 = _rms((f1 - f) / scale) / h0
    h1 = (max(1e-6, h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15
          else (0.01 / max(d1, d2)) ** (1 / (RK45.error_estimator_order + 1)))
    h_abs = min(100 * h0, h1, t_bound - t)
    if not np.isfinite(h_abs):          # a non-finite derivative: scipy's solver would loop forever
        raise _End(Status.NONFINITE, f"RK45: non-finite derivative near t = {t:.6g}")
    return h_abs


def _solve(y0: np.ndarray, t_eval: np.ndarray, step: int, rtol: float, atol: float, reached,
           ts: list, ys: list) -> Generator[Request, np.ndarray, Status]:
    """One trajectory: yields each (t, y) whose derivative it needs and receives it; appends
    the output times and states to ``ts``, ``ys``; returns COMPLETED or EVENT (other endings
    raise ``_End``). Per chunk of ``step`` output intervals, one scipy RK45 solver."""
    ts.append(float(t_eval[0]))
    ys.append(y0)
    if reached is not None and reached(float(t_eval[0]), y0):
        return Status.EVENT
    n_int = len(t_eval) - 1
    for start in range(0, n_int, step):
        seg = t_eval[start:min(start + step, n_int) + 1]
        hit = yield from _segment(ys[-1], seg, rtol, atol, reached, ts, ys)
        if hit:
            return Status.EVENT
    return Status.COMPLETED


def _rk_step(t, y, f, h_abs, t_bound, rtol, atol, K):
    """One accepted step of scipy's ``RungeKutta._step_impl`` (retrying smaller steps after a
    rejection; stages written to ``K``) as a generator: returns (t_new, y_new, f_new, next h)."""
    A, B, C, E = RK45.A, RK45.B, RK45.C, RK45.E
    min_step = 10 * np.abs(np.nextafter(t, np.inf) - t)
    h_abs = min_step if h_abs < min_step else h_abs
    rejected = False
    while True:
        if h_abs < min_step:
            raise _End(Status.SOLVER_FAILURE, f"RK45: required step size is less than spacing "
                                              f"between numbers near t = {t:.6g}")
        t_new = min(t + h_abs, t_bound)
        h = t_new - t
        h_abs = abs(h)
        K[0] = f
        for s, (a, c) in enumerate(zip(A[1:], C[1:], strict=True), start=1):
            K[s] = yield t + c * h, y + np.dot(K[:s].T, a[:s]) * h
        y_new = y + h * np.dot(K[:-1].T, B)
        f_new = yield t + h, y_new
        K[-1] = f_new
        scale = atol + np.maximum(np.abs(y), np.abs(y_new)) * rtol
        err = _rms(np.dot(K.T, E) * h / scale)
        if err < 1:
            factor = _MAX_FACTOR if err == 0 else min(_MAX_FACTOR, _SAFETY * err ** _ERROR_EXPONENT)
            return t_new, y_new, f_new, h_abs * (min(1.0, factor) if rejected else factor)
        h_abs *= max(_MIN_FACTOR, _SAFETY * err ** _ERROR_EXPONENT)
        rejected = True


def _segment(y, seg, rtol, atol, reached, ts, ys):
    """RK45 from ``y`` at seg[0] to seg[-1] (one scipy solver), appending the output times
    after seg[0] and their states (scipy's dense output) to ``ts``, ``ys``; returns True at the
    first output state where ``reached`` holds."""
    t, t_bound = float(seg[0]), float(seg[-1])
    f = yield t, y
    h_abs = yield from _initial_step(t, y, f, t_bound, rtol, atol)
    K = np.empty((RK45.n_stages + 1, y.size))
    i = 0
    while t != t_bound:
        t_old, y_old = t, y
        t, y, f, h_abs = yield from _rk_step(t, y, f, h_abs, t_bound, rtol, atol, K)
        i_new = int(np.searchsorted(seg, t, side="right"))
        if i_new > i:
            x = (seg[i:i_new] - t_old) / (t - t_old)             # scipy's RkDenseOutput
            Q = K.T.dot(RK45.P)
            block = ((t - t_old) * Q.dot(np.cumprod(np.tile(x, (Q.shape[1], 1)), axis=0))
                     + y_old[:, None]).T
            if _record(seg, i, block, reached, ts, ys):
                return True
            i = i_new
    return False


def _record(seg, i, block, reached, ts, ys):
    """Appends the dense-output states at seg[i:] (seg[0] is already recorded); True at the
    first where ``reached`` holds. A non-finite state ends the row (not recorded)."""
    for k in range(1 if i == 0 else 0, len(block)):
        if not np.all(np.isfinite(block[k])):
            raise _End(Status.NONFINITE, f"the state became non-finite near t = {seg[i + k]:.6g}")
        ts.append(float(seg[i + k]))
        ys.append(block[k])
        if reached is not None and reached(float(seg[i + k]), block[k]):
            return True
    return False


def rk45_lockstep(fun: Callable[[np.ndarray], np.ndarray], Y0: np.ndarray, t_eval: np.ndarray,
                  step: int, rtol: float, atol: float, reached=None, max_nfev: int | None = None):
    """Integrate dy/dt = f(y) from each row of ``Y0`` (K × P) over ``t_eval`` by RK45, every
    row with its own step-size control, ``fun(Y)`` (Y: k × P) evaluating f for the k rows that
    need a stage, all at once. Arguments are validated by ``integrate``. Returns K tuples
    (times, states, nfev, status, message); a row ends early at an event, a non-finite state or
    derivative, a failed step or past ``max_nfev`` evaluations, the others run on."""
    rtol = max(float(rtol), 100 * np.finfo(float).eps)                  # scipy's floor
    K_rows, P = Y0.shape
    ts: list = [[] for _ in range(K_rows)]
    ys: list = [[] for _ in range(K_rows)]
    nfev = [0] * K_rows
    ends: list = [None] * K_rows
    pending: dict[int, Request] = {}
    gens = [_solve(y.copy(), t_eval, step, rtol, atol, reached, ts[k], ys[k])
            for k, y in enumerate(Y0)]

    def advance(k, value):
        try:
            request = gens[k].send(value)
        except StopIteration as done:
            ends[k] = (done.value, "")
            pending.pop(k, None)
            return
        except _End as end:
            ends[k] = (end.status, end.message)
            pending.pop(k, None)
            return
        if max_nfev is not None and nfev[k] >= max_nfev:
            ends[k] = (Status.MAX_STEPS, f"RK45 exceeded {max_nfev} right-hand-side evaluations")
            pending.pop(k, None)
            return
        nfev[k] += 1
        pending[k] = request

    with np.errstate(all="ignore"):         # non-finite values end their rows below
        for k in range(K_rows):
            advance(k, None)
        while pending:
            rows = list(pending)
            F = _evaluate(fun, rows, np.stack([pending[k][1] for k in rows]), P, ends, pending)
            for k, f in zip(rows, F, strict=True):
                if f is not None:
                    advance(k, f)
    out = []
    for k in range(K_rows):
        status, message = ends[k]
        out.append((np.array(ts[k]), np.array(ys[k]), nfev[k], status, message))
    return out


def _evaluate(fun, rows, Y, P, ends, pending):
    """fun at the rows' pending states; when it raises FloatingPointError (a right-hand side
    that refuses a non-finite value), each row is evaluated alone and the ones that raise end
    'nonfinite' (None in the returned list)."""
    try:
        F = np.asarray(fun(Y), float)
    except FloatingPointError:
        F = []
        for k, y in zip(rows, Y, strict=True):
            try:
                F.append(np.asarray(fun(y[None, :]), float)[0])
            except FloatingPointError as exc:
                ends[k] = (Status.NONFINITE, f"the right-hand side raised near t = "
                                             f"{pending[k][0]:.6g}: {exc}")
                pending.pop(k)
                F.append(None)
        return F
    if F.shape != (len(rows), P):
        raise ValueError(f"rhs(Y) returned shape {F.shape}; expected {(len(rows), P)}")
    return list(F)
