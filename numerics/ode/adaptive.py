"""Adaptive integration of deterministic right-hand sides (stiff-capable, analytic Jacobian).

Wraps ``scipy.integrate.solve_ivp``; Radau/BDF/LSODA use the symbolic Jacobian when given.
Only for deterministic right-hand sides: noisy ones go to ``fixed_step``."""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from .base import Trajectory, check_finite

STIFF = ("Radau", "BDF", "LSODA")


def integrate_adaptive(rhs, y0, t_eval, jac=None, method="Radau", rtol=1e-9, atol=1e-11):
    """Solve ẏ = rhs(y) from y(t_eval[0]) = y0, returning the state at every t in t_eval."""
    t_eval = np.asarray(t_eval, float)
    if t_eval.ndim != 1 or len(t_eval) < 2 or np.any(np.diff(t_eval) <= 0):
        raise ValueError("t_eval must be an increasing 1-D array of at least two times")
    kwargs = {"jac": (lambda t, y: jac(y))} if (jac is not None and method in STIFF) else {}
    sol = solve_ivp(lambda t, y: rhs(y), (t_eval[0], t_eval[-1]), np.asarray(y0, float),
                    method=method, t_eval=t_eval, rtol=rtol, atol=atol, **kwargs)
    if not sol.success:
        raise RuntimeError(f"integrate_adaptive ({method}) failed: {sol.message}")
    y = sol.y.T
    check_finite(y, "integrate_adaptive")
    return Trajectory(sol.t, y, sol.nfev, getattr(sol, "njev", 0), method)
