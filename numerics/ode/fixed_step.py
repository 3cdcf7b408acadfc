"""Fixed-step schemes: RK4 for deterministic drifts at a prescribed step, Euler–Maruyama for
noisy right-hand sides dy = f(y)dt + g(y)dW (adaptive control is meaningless there)."""

from __future__ import annotations

import numpy as np

from .base import Trajectory, check_finite


def _grid(t_eval, dt):
    t_eval = np.asarray(t_eval, float)
    if dt <= 0:
        raise ValueError(f"dt={dt} must be > 0")
    return t_eval


def rk4_path(f, y0, t_eval, dt):
    """Classical RK4 for y' = f(t, y) at steps ≤ dt, landing exactly on each time of t_eval;
    stops after the first non-finite state. Returns (times reached, states, evaluations). The
    one RK4 loop of the suite (``integrate(method='rk4')`` and ``integrate_rk4`` use it)."""
    y = np.asarray(y0, float).copy()
    out, t, nfev = [y.copy()], t_eval[0], 0
    for t_next in t_eval[1:]:
        while t < t_next - 1e-12 * max(1.0, abs(t_next)):
            h = min(dt, t_next - t)
            k1 = f(t, y)
            k2 = f(t, y + h / 2 * k1)
            k3 = f(t, y + h / 2 * k2)
            k4 = f(t, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t += h
            nfev += 4
        out.append(y.copy())
        if not np.all(np.isfinite(y)):
            break
    return t_eval[:len(out)], np.array(out), nfev


def integrate_rk4(rhs, y0, t_eval, dt):
    """RK4 for y' = rhs(y) at steps ≤ dt; FloatingPointError if the state becomes non-finite
    (``numerics.ode.integrate(method='rk4')`` reports that in its status instead)."""
    t_eval = _grid(t_eval, dt)
    t, Y, nfev = rk4_path(lambda t, y: rhs(y), y0, t_eval, dt)
    check_finite(Y[-1], "integrate_rk4")
    return Trajectory(t, Y, nfev, 0, "rk4")


def integrate_euler_maruyama(drift, diffusion, y0, t_eval, dt, seed):
    """dy = drift(y)dt + diffusion(y)·dW with W a standard Brownian motion of the dimension
    of diffusion(y)'s last axis; explicit seed."""
    t_eval = _grid(t_eval, dt)
    rng = np.random.default_rng(seed)
    y = np.asarray(y0, float).copy()
    out, t, nfev = [y.copy()], t_eval[0], 0
    for t_next in t_eval[1:]:
        while t < t_next - 1e-12:
            h = min(dt, t_next - t)
            g = np.asarray(diffusion(y))
            y = y + h * drift(y) + g @ rng.standard_normal(g.shape[-1]) * np.sqrt(h)
            t += h
            nfev += 1
        check_finite(y, "integrate_euler_maruyama")
        out.append(y.copy())
    return Trajectory(t_eval, np.array(out), nfev, 0, "euler-maruyama")
