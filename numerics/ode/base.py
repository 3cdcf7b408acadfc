"""Common pieces of the ODE integrators: the result (:class:`Trajectory`), how it ended
(:class:`Status`) and the registry of schemes (:data:`SCHEMES`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

__all__ = ["Trajectory", "Status", "STATUSES", "Scheme", "SCHEMES", "ADAPTIVE", "STIFF"]


class Status(StrEnum):
    """How an integration ended (a ``str``: compares equal to its value).

    completed:      reached the last requested time;
    event:          the ``reached`` predicate held at an output time (t ends there);
    nonfinite:      the state (or the right-hand side) became NaN/inf, a blow-up;
    max_steps:      the budget of right-hand-side evaluations (``max_nfev``) ran out;
    solver_failure: the solver gave up (step size underflow, failed Newton iterations, ...).
    """

    COMPLETED = "completed"
    EVENT = "event"
    NONFINITE = "nonfinite"
    MAX_STEPS = "max_steps"
    SOLVER_FAILURE = "solver_failure"


STATUSES = tuple(s.value for s in Status)


@dataclass(frozen=True)
class Scheme:
    """One integration scheme, as data: ``adaptive`` (step-size control, scipy's ``solve_ivp``;
    deterministic right-hand sides only), ``stiff`` (uses the Jacobian), ``stochastic`` (needs
    a diffusion: dy = f(y)dt + g(y)dW), ``needs_dt`` (a fixed step), ``lockstep`` (a batch is
    integrated row by row with every pending stage in one vectorised right-hand-side call)."""

    name: str
    adaptive: bool
    stiff: bool = False
    stochastic: bool = False
    needs_dt: bool = False
    lockstep: bool = False


SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("RK45", adaptive=True, lockstep=True),
    Scheme("RK23", adaptive=True),
    Scheme("DOP853", adaptive=True),
    Scheme("Radau", adaptive=True, stiff=True),
    Scheme("BDF", adaptive=True, stiff=True),
    Scheme("LSODA", adaptive=True, stiff=True),
    Scheme("rk4", adaptive=False, needs_dt=True),
    Scheme("euler_maruyama", adaptive=False, stochastic=True, needs_dt=True),
)}
ADAPTIVE = tuple(n for n, s in SCHEMES.items() if s.adaptive)
STIFF = tuple(n for n, s in SCHEMES.items() if s.stiff)


@dataclass(frozen=True)
class Trajectory:
    """y[i] is the state at t[i]; ``nfev`` counts right-hand-side evaluations.

    ``status`` (a :class:`Status`) says how the integration ended and ``message`` why. Only
    'completed' and 'event' are usable results (``ok``); in the other cases t and y hold the
    finite states computed before the end. ``names`` label the state's coordinates; ``tried``
    lists the methods attempted, the last one being ``method``.
    """

    t: np.ndarray
    y: np.ndarray
    nfev: int = 0
    njev: int = 0
    method: str = ""
    status: Status = Status.COMPLETED
    message: str = ""
    names: tuple = ()
    tried: tuple = ()

    @property
    def final(self) -> np.ndarray:
        return self.y[-1]

    @property
    def ok(self) -> bool:
        return self.status in (Status.COMPLETED, Status.EVENT)

    def column(self, name: str) -> np.ndarray:
        """The trajectory of the coordinate called ``name``."""
        if name not in self.names:
            raise KeyError(f"no state coordinate {name!r}; known: {list(self.names)}")
        return self.y[:, self.names.index(name)]

    def as_dict(self) -> dict:
        """{name: trajectory} for the named coordinates, plus 't'."""
        out = {"t": self.t}
        out.update({n: self.y[:, i] for i, n in enumerate(self.names)})
        return out
