"""Many independent trajectories of one ODE, each by its own RK45, with the right-hand side
evaluated for all of them at once.

When one right-hand side evaluation costs about the same for one state as for several (the
multi-head flow's quasi-Monte Carlo expectation at a few thousand draws is dominated by the
per-call cost of its generated code), integrating K initial conditions one after another pays
that cost K times per stage. ``rk45_until_batch`` runs each trajectory with its own step-size
control, exactly the algorithm of ``scipy.integrate.RK45`` (Dormand–Prince 5(4), its initial
step, error norm, step factors and quartic dense output), and collects every trajectory's
pending stage into one call ``fun(t, Y)`` on the rows still running. No trajectory's step
size depends on another's: when ``fun`` computes each row on its own, a trajectory's numbers
are those of scipy's solver alone to the last bit; when its rounding depends on the batch (a
reduction over all rows' draws, as in ``ReducedFlow.rhs_batch``), they agree up to that
rounding, which can change as other rows stop. One deviation: a non-finite first derivative
raises here, where scipy's solver would retry forever.

The output convention is that of ``verification.claims.sagitova2026._common.integrate_until``:
the states at the output times ``t_eval``, one solver per ``chunk`` output intervals (restarted
from the state reached), ending at the first output time where ``reached(y)`` holds.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import numpy as np
from scipy.integrate import RK45

__all__ = ["rk45_until_batch"]

_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0        # scipy.integrate._ivp.rk
_ERROR_EXPONENT = -1.0 / (RK45.error_estimator_order + 1)
_EPS = np.finfo(float).eps

Request = tuple[float, np.ndarray]     # (t, y) whose derivative a trajectory needs


def _rms(x):
    return np.linalg.norm(x) / x.size ** 0.5          # numpy float: x/0 is inf, as in scipy


def _initial_step(t, y, f, t_bound, rtol, atol, name):
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
        raise RuntimeError(f"{name}: the flow's integration failed near t = {t:.6g} (non-finite "
                           "derivative)")
    return h_abs


def _solve(y0: np.ndarray, t_eval: np.ndarray, step: int, rtol: float, atol: float, reached,
           name: str) -> Generator[Request, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """One trajectory: yields each (t, y) whose derivative it needs and receives it; returns
    (output times, states). Per chunk of ``step`` output intervals, one scipy RK45 solver."""
    ts, ys = [float(t_eval[0])], [y0]
    if reached is not None and reached(y0):
        return np.array(ts), np.array(ys)
    n_int = len(t_eval) - 1
    for start in range(0, n_int, step):
        seg = t_eval[start:min(start + step, n_int) + 1]
        hit = yield from _segment(ys[-1], seg, rtol, atol, reached, name, ts, ys)
        if hit:
            break
    return np.array(ts), np.array(ys)


def _rk_step(t, y, f, h_abs, t_bound, rtol, atol, name, K):
    """One accepted step of scipy's ``RungeKutta._step_impl`` (retrying smaller steps after a
    rejection; stages written to ``K``) as a generator: returns (t_new, y_new, f_new, next h)."""
    A, B, C, E = RK45.A, RK45.B, RK45.C, RK45.E
    min_step = 10 * np.abs(np.nextafter(t, np.inf) - t)
    h_abs = min_step if h_abs < min_step else h_abs
    rejected = False
    while True:
        if h_abs < min_step:
            raise RuntimeError(f"{name}: the flow's integration failed near t = {t:.6g}")
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


def _segment(y, seg, rtol, atol, reached, name, ts, ys):
    """RK45 from ``y`` at seg[0] to seg[-1] (one scipy solver), appending the output times
    after seg[0] and their states (scipy's dense output) to ``ts``, ``ys``; returns True at the
    first output state where ``reached`` holds."""
    t, t_bound = float(seg[0]), float(seg[-1])
    f = yield t, y
    h_abs = yield from _initial_step(t, y, f, t_bound, rtol, atol, name)
    K = np.empty((RK45.n_stages + 1, y.size))
    i = 0
    while t != t_bound:
        t_old, y_old = t, y
        t, y, f, h_abs = yield from _rk_step(t, y, f, h_abs, t_bound, rtol, atol, name, K)
        i_new = int(np.searchsorted(seg, t, side="right"))
        if i_new > i:
            x = (seg[i:i_new] - t_old) / (t - t_old)             # scipy's RkDenseOutput
            Q = K.T.dot(RK45.P)
            block = ((t - t_old) * Q.dot(np.cumprod(np.tile(x, (Q.shape[1], 1)), axis=0))
                     + y_old[:, None]).T
            if _record(seg, i, block, reached, name, ts, ys):
                return True
            i = i_new
    return False


def _record(seg, i, block, reached, name, ts, ys):
    """Appends the dense-output states at seg[i:] (seg[0] is already recorded); True at the
    first where ``reached`` holds. A non-finite state raises."""
    for k in range(1 if i == 0 else 0, len(block)):
        if not np.all(np.isfinite(block[k])):
            raise FloatingPointError(f"{name}: the state became non-finite near t = {seg[i + k]:.6g}")
        ts.append(float(seg[i + k]))
        ys.append(block[k])
        if reached is not None and reached(block[k]):
            return True
    return False


def _check_options(Y0, t_eval, rtol, atol, chunk):
    """Validated (t_eval, Y0, rtol, atol, step count per chunk or None), before any evaluation;
    each error names the option and its allowed range."""
    if np.iscomplexobj(Y0):
        raise ValueError("Y0: initial states must be real")
    t_eval = np.asarray(t_eval, float)
    Y0 = np.asarray(Y0, float)
    if Y0.ndim != 2 or Y0.shape[0] < 1 or Y0.shape[1] < 1:
        raise ValueError(f"Y0 has shape {Y0.shape}; allowed: K × P initial states, K ≥ 1, P ≥ 1")
    if (t_eval.ndim != 1 or t_eval.size < 1 or not np.all(np.isfinite(t_eval))
            or np.any(np.diff(t_eval) <= 0)):
        raise ValueError("t_eval must be a non-empty, finite, strictly increasing 1-D array of "
                         "output times")
    if not np.all(np.isfinite(Y0)):
        raise ValueError("Y0: initial states must be finite")
    for label, value, low in (("rtol", rtol, "> 0"), ("atol", atol, "≥ 0")):
        ok = isinstance(value, (int, float, np.floating, np.integer)) and np.isfinite(value)
        if not ok or (value <= 0 if label == "rtol" else value < 0):
            raise ValueError(f"{label}={value!r}; allowed: a finite number {low}")
    if chunk is not None and not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
        raise ValueError(f"chunk={chunk!r}; allowed: a positive whole number of output intervals, "
                         "or None")
    return t_eval, Y0, max(float(rtol), 100 * _EPS), float(atol)        # rtol floor: scipy's


def rk45_until_batch(fun: Callable[[np.ndarray, np.ndarray], np.ndarray], Y0, t_eval,
                     reached: Callable[[np.ndarray], bool] | None = None, chunk: int | None = None,
                     rtol: float = 1e-6, atol: float = 1e-12, name: str = "ODE"):
    """Integrate dy/dt = f(t, y) from each row of ``Y0`` (K × P) over the output times
    ``t_eval`` by RK45, every row with its own step-size control, ``fun(t, Y)`` (t: k times,
    Y: k × P) evaluating f for the k rows that need a stage, all at once.

    Each row follows ``integrate_until``'s convention: the states at the output times, the
    solver restarted every ``chunk`` output intervals (None: one solver) from the state reached,
    ending at the first output time where ``reached(y)`` holds (None: never). Returns a list of
    K pairs (times, states). A failed step or a non-finite state raises, naming ``name``."""
    t_eval, Y0, rtol, atol = _check_options(Y0, t_eval, rtol, atol, chunk)
    step = max(len(t_eval) - 1, 1) if chunk is None else int(chunk)
    out: list = [None] * len(Y0)
    pending: dict[int, tuple] = {}
    gens = [_solve(y.copy(), t_eval, step, rtol, atol, reached, name) for y in Y0]

    def advance(k, value):
        try:
            pending[k] = gens[k].send(value)
        except StopIteration as done:
            out[k] = done.value
            pending.pop(k, None)
        except (RuntimeError, FloatingPointError) as exc:      # ours: say which trajectory failed
            if type(exc) not in (RuntimeError, FloatingPointError):
                raise                                           # a callback's own exception
            raise type(exc)(f"row {k} of Y0: {exc}") from exc

    with np.errstate(all="ignore"):         # a failed step or a non-finite state raises below
        for k in range(len(gens)):
            advance(k, None)
        while pending:
            rows = list(pending)
            T = np.array([pending[k][0] for k in rows])
            F = np.asarray(fun(T, np.stack([pending[k][1] for k in rows])), float)
            if F.shape != (len(rows), Y0.shape[1]):
                raise ValueError(f"fun(t, Y) returned shape {F.shape}; expected "
                                 f"{(len(rows), Y0.shape[1])}")
            for k, f in zip(rows, F, strict=True):
                advance(k, f)
    return out
