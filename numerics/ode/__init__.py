"""ODE integration behind one front door, :func:`integrate` (one state or a batch, an optional
event, every ending a :class:`Status` on the returned :class:`Trajectory`); the schemes are data
(:data:`SCHEMES`): adaptive ``solve_ivp`` methods, a lockstep batch RK45, fixed-step RK4 and
Euler–Maruyama."""

from .base import ADAPTIVE, SCHEMES, STATUSES, STIFF, Scheme, Status, Trajectory
from .integrate import integrate

__all__ = ["Trajectory", "Status", "STATUSES", "Scheme", "SCHEMES", "ADAPTIVE", "STIFF",
           "integrate"]
