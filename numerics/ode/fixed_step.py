"""Fixed-step schemes: RK4 for deterministic drifts at a prescribed step, Euler–Maruyama for
noisy right-hand sides dy = f(y)dt + g(y)dW (adaptive control is meaningless there). Both land
exactly on each output time, stop after the first non-finite state and return (times reached,
states, evaluations); ``numerics.ode.integrate`` turns that into a status."""

from __future__ import annotations

import numpy as np

__all__ = ["rk4_path", "euler_maruyama_path"]


def rk4_path(f, y0, t_eval, dt):
    """Classical RK4 for y' = f(t, y) at steps ≤ dt, landing exactly on each time of t_eval."""
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


def euler_maruyama_path(f, diffusion, y0, t_eval, dt, rng):
    """dy = f(t, y)dt + diffusion(y)·dW at steps ≤ dt, W a standard Brownian motion of the
    dimension of diffusion(y)'s last axis, increments drawn from ``rng``."""
    y = np.asarray(y0, float).copy()
    out, t, nfev = [y.copy()], t_eval[0], 0
    for t_next in t_eval[1:]:
        while t < t_next - 1e-12:
            h = min(dt, t_next - t)
            g = np.asarray(diffusion(y))
            y = y + h * f(t, y) + g @ rng.standard_normal(g.shape[-1]) * np.sqrt(h)
            t += h
            nfev += 1
        out.append(y.copy())
        if not np.all(np.isfinite(y)):
            break
    return t_eval[:len(out)], np.array(out), nfev
