"""Common pieces of the ODE integrators."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Trajectory", "check_finite"]


@dataclass(frozen=True)
class Trajectory:
    """y[i] is the state at t[i]; ``nfev`` counts right-hand-side evaluations."""

    t: np.ndarray
    y: np.ndarray
    nfev: int = 0
    njev: int = 0
    method: str = ""

    @property
    def final(self) -> np.ndarray:
        return self.y[-1]


def check_finite(y, where: str):
    if not np.all(np.isfinite(y)):
        raise FloatingPointError(f"{where}: the state became non-finite (NaN or inf)")
