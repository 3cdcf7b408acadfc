"""Common pieces of the ODE integrators."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Trajectory", "check_finite", "STATUSES"]

STATUSES = ("completed", "stopped", "budget", "failed", "nonfinite")


@dataclass(frozen=True)
class Trajectory:
    """y[i] is the state at t[i]; ``nfev`` counts right-hand-side evaluations.

    ``status`` says how the integration ended: 'completed' (reached the last requested time),
    'stopped' (the ``stop`` predicate fired; t ends at that output time), 'budget' (every
    method ran out of right-hand-side evaluations), 'failed' (the solver gave up) or
    'nonfinite' (the state became NaN/inf). Only 'completed' and 'stopped' are usable results;
    in the other cases t and y hold what was computed before the end. ``names`` label the
    state's coordinates; ``tried`` lists the methods attempted, the last one being ``method``.
    """

    t: np.ndarray
    y: np.ndarray
    nfev: int = 0
    njev: int = 0
    method: str = ""
    status: str = "completed"
    message: str = ""
    names: tuple = ()
    tried: tuple = ()

    @property
    def final(self) -> np.ndarray:
        return self.y[-1]

    @property
    def ok(self) -> bool:
        return self.status in ("completed", "stopped")

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


def check_finite(y, where: str):
    if not np.all(np.isfinite(y)):
        raise FloatingPointError(f"{where}: the state became non-finite (NaN or inf)")
