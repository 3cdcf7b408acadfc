"""The one entry point for every ODE integration in the suite: :func:`integrate`.

One initial state (1-D ``y0``) gives a :class:`Trajectory`; a batch (2-D ``y0``, a leading batch
axis, a vectorised right-hand side) gives a list of them, one per row. Every numerical ending
is a status on the result (``Status``: completed, event, nonfinite, max_steps, solver_failure),
never an exception; bad arguments raise ``ValueError`` naming the parameter, before any work.

Schemes are data (``SCHEMES`` in ``base``): scipy's adaptive ``solve_ivp`` methods for
deterministic right-hand sides (Radau/BDF/LSODA with the Jacobian), fixed-step RK4 at a
prescribed ``dt``, and Euler–Maruyama for noisy ones (``diffusion``; adaptive control is
meaningless there, so adaptive methods refuse a diffusion). A batch integrated by RK45 runs
in lockstep (``batched.rk45_lockstep``: every row its own scipy RK45, the pending stages of all
rows in one right-hand-side call); other methods integrate a batch row by row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from .base import ADAPTIVE, SCHEMES, STIFF, Status, Trajectory
from .batched import rk45_lockstep
from .fixed_step import euler_maruyama_path, rk4_path

__all__ = ["integrate", "ADAPTIVE", "STIFF"]


class _OverBudget(Exception):
    pass


class _RhsNonfinite(Exception):
    pass


def integrate(rhs: Callable, y0, t_eval, *, jac: Callable | None = None, method: str = "Radau",
              fallback: Sequence[str] = (), rtol: float = 1e-9, atol: float = 1e-11,
              max_nfev: int | None = None, dt: float | None = None,
              diffusion: Callable | None = None, seed=None,
              reached: Callable | None = None, chunk: int | None = None,
              names: Sequence[str] = ()) -> Trajectory | list[Trajectory]:
    """Solve ẏ = rhs(y) (or dy = rhs(y)dt + diffusion(y)dW), y(t_eval[0]) = y0, and return the
    state at every time of ``t_eval``.

    y0:        one state (1-D: returns a Trajectory) or a batch (2-D, K × P: returns K
               Trajectories); for a batch, ``rhs`` (and ``jac``, ``diffusion``) take and return
               the leading batch axis: rhs(Y) is K × P for Y of K × P.
    method:    a scheme of ``SCHEMES``: 'RK45', 'RK23', 'DOP853', 'Radau', 'BDF', 'LSODA'
               (adaptive, deterministic only; the stiff ones use ``jac``), 'rk4' (step
               ``dt``) or 'euler_maruyama' (step ``dt``, ``diffusion`` and ``seed`` required).
    fallback:  methods tried in turn, from the start, when ``method`` does not end 'completed'
               or 'event' (e.g. ``method='LSODA', fallback=('BDF', 'Radau')``); the last
               one's result is returned if none succeeds.
    max_nfev:  budget of right-hand-side evaluations per method and row (None: unlimited).
    reached:   event predicate ``reached(t, y) -> bool`` evaluated at the output times (t0
               included); the integration ends at the first output time where it holds
               (status 'event').
    chunk:     the number of output intervals per solver call: the solver restarts from the
               state reached every ``chunk`` intervals (default: one call for all of them).
    names:     labels of y's coordinates, kept on the result.

    A right-hand side that raises ``FloatingPointError`` or returns NaN/inf ends the run
    'nonfinite' (t and y keep the finite states before). ``message`` says why a run ended and
    ``tried`` which methods ran.
    """
    t_eval = _check_times(t_eval)
    y0 = _check_state(y0)
    methods = _check_methods(method, fallback, dt, diffusion, seed)
    if max_nfev is not None and not (isinstance(max_nfev, (int, np.integer)) and max_nfev > 0):
        raise ValueError(f"max_nfev={max_nfev!r} must be a positive integer or None")
    if chunk is not None and not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
        raise ValueError(f"chunk={chunk!r} must be an integer ≥ 1 or None")
    for label, value, positive in (("rtol", rtol, True), ("atol", atol, False)):
        good = isinstance(value, (int, float, np.floating, np.integer)) and np.isfinite(value)
        if not good or (value <= 0 if positive else value < 0):
            raise ValueError(f"{label}={value!r}; allowed: a finite number {'> 0' if positive else '≥ 0'}")
    names = tuple(names)
    if names and len(names) != y0.shape[-1]:
        raise ValueError(f"names has {len(names)} entries, the state {y0.shape[-1]}")
    opts = dict(jac=jac, rtol=rtol, atol=atol, dt=dt, diffusion=diffusion, budget=max_nfev,
                reached=reached, step=len(t_eval) - 1 if chunk is None else int(chunk))
    if y0.ndim == 1:
        return _single(rhs, y0, t_eval, methods, names, seed, opts)
    return _batch(rhs, y0, t_eval, methods, names, seed, opts)


# --- arguments ------------------------------------------------------------------------------
def _check_times(t_eval) -> np.ndarray:
    t_eval = np.asarray(t_eval, float)
    if t_eval.ndim != 1 or len(t_eval) < 2 or np.any(np.diff(t_eval) <= 0) \
            or not np.all(np.isfinite(t_eval)):
        raise ValueError("t_eval must be an increasing, finite 1-D array of at least two times")
    return t_eval


def _check_state(y0) -> np.ndarray:
    if np.iscomplexobj(y0):
        raise ValueError("y0: initial states must be real")
    y0 = np.asarray(y0, float)
    if y0.ndim == 0:
        y0 = y0.reshape(1)
    if y0.ndim > 2 or y0.size == 0 or y0.shape[-1] < 1:
        raise ValueError(f"y0 has shape {y0.shape}; allowed: one state (P,) or a batch (K, P), "
                         "K ≥ 1, P ≥ 1")
    if not np.all(np.isfinite(y0)):
        raise ValueError("y0 must be finite")
    return y0


def _check_methods(method, fallback, dt, diffusion, seed) -> tuple[str, ...]:
    methods = (method, *fallback)
    for m in methods:
        if m not in SCHEMES:
            raise ValueError(f"method={m!r}; allowed: {tuple(SCHEMES)}")
        scheme = SCHEMES[m]
        if diffusion is not None and not scheme.stochastic:
            raise ValueError(f"method={m!r} is for deterministic right-hand sides; with a "
                             f"diffusion use a stochastic fixed-step scheme: "
                             f"{tuple(n for n, s in SCHEMES.items() if s.stochastic)}")
        if diffusion is None and scheme.stochastic:
            raise ValueError(f"diffusion=None: method {m!r} needs diffusion(y)")
        if scheme.stochastic and seed is None:
            raise ValueError(f"seed=None: method {m!r} draws noise and needs an explicit seed")
        if scheme.needs_dt and not (dt is not None and np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt={dt!r} must be > 0 for method {m!r}")
    return methods


# --- one state ------------------------------------------------------------------------------
def _single(rhs, y0, t_eval, methods, names, seed, opts) -> Trajectory:
    tried, last = [], None
    for m in methods:
        tried.append(m)
        rng = np.random.default_rng(seed) if SCHEMES[m].stochastic else None
        t, y, nfev, njev, status, message = _run(rhs, y0, t_eval, m, rng, **opts)
        last = Trajectory(t, y, nfev, njev, m, status, message, names=names, tried=tuple(tried))
        if last.ok:
            return last
    return last


def _first_nonfinite(y) -> int | None:
    bad = np.flatnonzero(~np.all(np.isfinite(y), axis=1))
    return int(bad[0]) if len(bad) else None


def _run(rhs, y0, t_eval, method, rng, *, jac, rtol, atol, dt, diffusion, budget, reached, step):
    """One method over t_eval, ``step`` output intervals per solver call; returns
    (t, y, nfev, njev, status, message)."""
    counter = [0]

    def f(t, y):
        if budget is not None and counter[0] >= budget:
            raise _OverBudget
        counter[0] += 1
        try:
            return rhs(y)
        except FloatingPointError as exc:
            raise _RhsNonfinite(str(exc)) from None

    n_int = len(t_eval) - 1
    ts, ys, njev, start, y = [t_eval[:1]], [y0[None, :]], 0, 0, y0
    status, message = Status.COMPLETED, ""
    if reached is not None and reached(t_eval[0], y0):
        return t_eval[:1], y0[None, :], 0, 0, Status.EVENT, "the event held at t0"
    while start < n_int:
        end = min(start + step, n_int)
        seg = t_eval[start:end + 1]
        try:
            t, yy, nj, status, message = _segment(f, jac, y, seg, method, rtol, atol, dt,
                                                  diffusion, rng)
        except _OverBudget:
            status = Status.MAX_STEPS
            message = f"{method} exceeded {budget} right-hand-side evaluations"
            break
        except _RhsNonfinite as exc:
            status = Status.NONFINITE
            message = f"{method}: the right-hand side raised: {exc}"
            break
        njev += nj
        keep, status, message = _ending(t, yy, status, message, reached)
        ts.append(t[1:keep])
        ys.append(yy[1:keep])
        if status != Status.COMPLETED:
            break
        start, y = end, yy[-1]
    return np.concatenate(ts), np.concatenate(ys), counter[0], njev, status, message


def _ending(t, yy, status, message, reached):
    """How many of a segment's outputs to keep (the first, its start, is already recorded) and
    the status: cut before the first non-finite state, after the first where the event holds."""
    bad = _first_nonfinite(yy)
    if bad is not None:
        return bad, Status.NONFINITE, f"the state became non-finite near t = {t[bad]:.6g}"
    if status == Status.COMPLETED and reached is not None:
        hit = next((i for i in range(1, len(t)) if reached(t[i], yy[i])), None)
        if hit is not None:
            return hit + 1, Status.EVENT, f"the event held at t = {t[hit]:.6g}"
    return len(t), status, message


def _segment(f, jac, y0, seg, method, rtol, atol, dt, diffusion, rng):
    """One solver call over the output times ``seg``; returns (t, y, njev, status, message)."""
    if method == "rk4":
        t, y, _ = rk4_path(f, y0, seg, dt)
        return t, y, 0, Status.COMPLETED, ""
    if method == "euler_maruyama":
        t, y, _ = euler_maruyama_path(f, diffusion, y0, seg, dt, rng)
        return t, y, 0, Status.COMPLETED, ""
    kwargs = {"jac": (lambda t, y: jac(y))} if (jac is not None and method in STIFF) else {}
    with np.errstate(all="ignore"):
        sol = solve_ivp(f, (seg[0], seg[-1]), y0, method=method, t_eval=seg,
                        rtol=rtol, atol=atol, **kwargs)
    status = Status.COMPLETED if sol.success else Status.SOLVER_FAILURE
    return sol.t, sol.y.T, int(getattr(sol, "njev", 0) or 0), status, sol.message


# --- a batch --------------------------------------------------------------------------------
def _batch(rhs, Y0, t_eval, methods, names, seed, opts) -> list[Trajectory]:
    """Each row of Y0 integrated with the first method, the rows that did not end ok retried
    with the next one; RK45 in lockstep (all rows' stages in one rhs call), the others row by
    row through the one-state path."""
    K = len(Y0)
    seeds = (np.random.SeedSequence(seed).spawn(K) if any(SCHEMES[m].stochastic for m in methods)
             else [None] * K)
    out: list = [None] * K
    tried: list = [[] for _ in range(K)]
    todo = list(range(K))
    for m in methods:
        for k in todo:
            tried[k].append(m)
        if SCHEMES[m].lockstep:
            runs = rk45_lockstep(rhs, Y0[todo], t_eval, opts["step"], opts["rtol"], opts["atol"],
                                 opts["reached"], opts["budget"])
            for k, (t, y, nfev, status, message) in zip(todo, runs, strict=True):
                out[k] = Trajectory(t, y, nfev, 0, m, status, message, names=names,
                                    tried=tuple(tried[k]))
        else:
            row = _row_functions(opts)
            for k in todo:
                rng = np.random.default_rng(seeds[k]) if SCHEMES[m].stochastic else None
                t, y, nfev, njev, status, message = _run(
                    lambda y: np.asarray(rhs(y[None, :]), float)[0], Y0[k], t_eval, m, rng, **row)
                out[k] = Trajectory(t, y, nfev, njev, m, status, message, names=names,
                                    tried=tuple(tried[k]))
        todo = [k for k in todo if not out[k].ok]
        if not todo:
            break
    return out


def _row_functions(opts) -> dict:
    """The options with the batch functions (jac, diffusion) applied to one row."""
    row = dict(opts)
    for key in ("jac", "diffusion"):
        fn = opts[key]
        if fn is not None:
            row[key] = (lambda g: lambda y: np.asarray(g(y[None, :]))[0])(fn)
    return row
