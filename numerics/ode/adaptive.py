"""Adaptive integration of deterministic right-hand sides (stiff-capable, analytic Jacobian),
raising on failure: a thin wrapper of :func:`numerics.ode.integrate` for callers that want an
exception rather than a status. Only for deterministic right-hand sides: noisy ones go to
``fixed_step``."""

from __future__ import annotations

from .base import Trajectory
from .integrate import STIFF, integrate

__all__ = ["integrate_adaptive", "STIFF"]


def integrate_adaptive(rhs, y0, t_eval, jac=None, method="Radau", rtol=1e-9, atol=1e-11) -> Trajectory:
    """Solve ẏ = rhs(y) from y(t_eval[0]) = y0, returning the state at every t in t_eval;
    raises RuntimeError (FloatingPointError for a non-finite state) when it cannot."""
    tr = integrate(rhs, y0, t_eval, jac=jac, method=method, rtol=rtol, atol=atol)
    if tr.status == "nonfinite":
        raise FloatingPointError(f"integrate_adaptive: {tr.message}")
    if not tr.ok:
        raise RuntimeError(f"integrate_adaptive ({method}) failed: {tr.message}")
    return tr
