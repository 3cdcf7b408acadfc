"""One entry point for every ODE integration in the suite.

``integrate`` picks the method (adaptive ``solve_ivp`` methods for deterministic right-hand
sides, fixed-step RK4 at a prescribed ``dt``), enforces a budget of right-hand-side
evaluations, falls back to other methods when one fails, exceeds the budget or reaches a
non-finite state, stops early on a user predicate, and returns a :class:`Trajectory` that
says how it ended instead of raising.
Noisy right-hand sides (Euler–Maruyama) stay in ``fixed_step``: adaptive control is
meaningless there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from .base import Trajectory
from .fixed_step import rk4_path

__all__ = ["integrate", "ADAPTIVE", "STIFF"]

ADAPTIVE = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
STIFF = ("Radau", "BDF", "LSODA")


class _OverBudget(Exception):
    pass


def _check_times(t_eval) -> np.ndarray:
    t_eval = np.asarray(t_eval, float)
    if t_eval.ndim != 1 or len(t_eval) < 2 or np.any(np.diff(t_eval) <= 0) \
            or not np.all(np.isfinite(t_eval)):
        raise ValueError("t_eval must be an increasing, finite 1-D array of at least two times")
    return t_eval


def _one_segment(rhs, jac, y0, t_eval, method, rtol, atol, dt, counter, budget):
    """Integrate over t_eval with one method; returns (t, y, njev, status, message)."""

    def f(t, y):
        counter[0] += 1
        if budget is not None and counter[0] > budget:
            raise _OverBudget
        return rhs(y)

    if method == "rk4":
        t, y, _ = rk4_path(f, y0, t_eval, dt)
        return t, y, 0, "completed", ""
    kwargs = {"jac": (lambda t, y: jac(y))} if (jac is not None and method in STIFF) else {}
    with np.errstate(all="ignore"):
        sol = solve_ivp(f, (t_eval[0], t_eval[-1]), y0, method=method, t_eval=t_eval,
                        rtol=rtol, atol=atol, **kwargs)
    status = "completed" if sol.success else "failed"
    return sol.t, sol.y.T, int(getattr(sol, "njev", 0) or 0), status, sol.message


def _first_nonfinite(y) -> int | None:
    bad = np.flatnonzero(~np.all(np.isfinite(y), axis=1))
    return int(bad[0]) if len(bad) else None


def integrate(rhs: Callable, y0, t_eval, *, jac: Callable | None = None, method: str = "Radau",
              fallback: Sequence[str] = (), rtol: float = 1e-9, atol: float = 1e-11,
              max_nfev: int | None = None, dt: float | None = None,
              stop: Callable | None = None, chunk: int | None = None,
              names: Sequence[str] = ()) -> Trajectory:
    """Solve ẏ = rhs(y), y(t_eval[0]) = y0, and return the state at every time of ``t_eval``.

    method:   one of ``ADAPTIVE`` (scipy's ``solve_ivp``; Radau/BDF/LSODA use ``jac``) or
              'rk4' (fixed step ``dt``). Adaptive methods are for deterministic right-hand
              sides only.
    fallback: methods tried in turn, from the start, when ``method`` fails, exceeds the
              budget or reaches a non-finite state (e.g. ``method='LSODA',
              fallback=('BDF', 'Radau')``); the last one's result is returned if none succeeds.
    max_nfev: budget of right-hand-side evaluations per method (None: unlimited).
    stop:     predicate ``stop(t, y) -> bool`` evaluated at the output times; the integration
              ends at the first output time where it holds (status 'stopped').
    chunk:    with ``stop``, the number of output intervals integrated per solver call (the
              predicate is checked after each call; default: all of them at once).
    names:    labels of y's coordinates, kept on the result.

    Never raises for a failing solver: the result's ``status`` says how it ended ('completed',
    'stopped', 'budget', 'failed', 'nonfinite'), ``message`` why, and ``tried`` which methods
    ran. Bad arguments raise ``ValueError`` before any work.
    """
    t_eval = _check_times(t_eval)
    y0 = np.asarray(y0, float).ravel()
    methods = (method, *fallback)
    for m in methods:
        if m not in ADAPTIVE and m != "rk4":
            raise ValueError(f"method={m!r}; allowed: {ADAPTIVE + ('rk4',)}")
    if "rk4" in methods and not (dt is not None and np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt={dt!r} must be > 0 for method 'rk4'")
    if max_nfev is not None and not (isinstance(max_nfev, (int, np.integer)) and max_nfev > 0):
        raise ValueError(f"max_nfev={max_nfev!r} must be a positive integer or None")
    if chunk is not None and not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
        raise ValueError(f"chunk={chunk!r} must be an integer ≥ 1")
    if not np.all(np.isfinite(y0)):
        raise ValueError("y0 must be finite")
    names = tuple(names)
    if names and len(names) != y0.size:
        raise ValueError(f"names has {len(names)} entries, the state {y0.size}")

    tried, last = [], None
    for m in methods:
        tried.append(m)
        result = _integrate_with(rhs, jac, y0, t_eval, m, rtol, atol, dt, max_nfev, stop, chunk)
        result = Trajectory(*result, names=names, tried=tuple(tried))
        if result.status in ("completed", "stopped"):
            return result
        last = result
    return last


def _integrate_with(rhs, jac, y0, t_eval, method, rtol, atol, dt, budget, stop, chunk):
    counter = [0]
    n_int = len(t_eval) - 1
    step = n_int if (stop is None or chunk is None) else int(chunk)
    ts, ys, njev, start, y = [t_eval[:1]], [y0[None, :]], 0, 0, y0
    status, message = "completed", ""
    if stop is not None and stop(t_eval[0], y0):
        return t_eval[:1], y0[None, :], 0, 0, method, "stopped", "stop predicate held at t0"
    while start < n_int:
        end = min(start + step, n_int)
        seg = t_eval[start:end + 1]
        try:
            t, yy, nj, status, message = _one_segment(rhs, jac, y, seg, method, rtol, atol, dt,
                                                      counter, budget)
        except _OverBudget:
            status, message = "budget", f"{method} exceeded {budget} right-hand-side evaluations"
            break
        njev += nj
        bad = _first_nonfinite(yy)
        if bad is not None:
            ts.append(t[1:bad])
            ys.append(yy[1:bad])
            status, message = "nonfinite", f"the state became non-finite near t = {t[bad]:.6g}"
            break
        ts.append(t[1:])
        ys.append(yy[1:])
        if status != "completed":
            break
        if stop is not None:
            hit = next((i for i in range(1, len(t)) if stop(t[i], yy[i])), None)
            if hit is not None:
                ts[-1], ys[-1] = t[1:hit + 1], yy[1:hit + 1]
                status, message = "stopped", f"stop predicate held at t = {t[hit]:.6g}"
                break
        start, y = end, yy[-1]
    return (np.concatenate(ts), np.concatenate(ys), counter[0], njev, method, status, message)
