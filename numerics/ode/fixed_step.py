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


def integrate_rk4(rhs, y0, t_eval, dt):
    t_eval = _grid(t_eval, dt)
    y = np.asarray(y0, float).copy()
    out, t, nfev = [y.copy()], t_eval[0], 0
    for t_next in t_eval[1:]:
        while t < t_next - 1e-12:
            h = min(dt, t_next - t)
            k1 = rhs(y)
            k2 = rhs(y + h / 2 * k1)
            k3 = rhs(y + h / 2 * k2)
            k4 = rhs(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t += h
            nfev += 4
        check_finite(y, "integrate_rk4")
        out.append(y.copy())
    return Trajectory(t_eval, np.array(out), nfev, 0, "rk4")


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
