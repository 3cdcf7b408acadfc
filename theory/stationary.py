"""Stationary points, Jacobians, Hessians and their eigen-classification."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy import optimize

__all__ = ["hessian", "classify", "StationaryPoint", "find_stationary_points"]

CLASSES = ("sink", "source", "saddle", "degenerate")


def hessian(expr, variables) -> sp.Matrix:
    return sp.hessian(expr, list(variables))


def classify(eigenvalues, tol: float = 1e-9) -> str:
    """Class of a stationary point of ẋ = f(x) from the eigenvalues of ∂f/∂x:
    sink (all Re < −tol), source (all Re > tol), saddle (both signs), degenerate (some |Re| ≤ tol)."""
    re = np.real(np.asarray(eigenvalues, dtype=complex))
    if np.any(np.isnan(re)):
        raise ValueError("classify: eigenvalues contain NaN")
    if np.any(np.abs(re) <= tol):
        return "degenerate"
    if np.all(re < 0):
        return "sink"
    if np.all(re > 0):
        return "source"
    return "saddle"


@dataclass(frozen=True)
class StationaryPoint:
    x: tuple
    eigenvalues: tuple
    kind: str
    residual: float


def find_stationary_points(rhs, jac, box, n_starts=64, seed=0, tol=1e-10, merge=1e-6,
                           eig_tol=1e-9):
    """Zeros of ``rhs`` in the box [(lo, hi), ...] by Newton-type root finding (with the
    analytic ``jac``) from scrambled-Sobol starting points; duplicates merged, each classified."""
    from scipy.stats import qmc

    lo = np.array([b[0] for b in box], float)
    hi = np.array([b[1] for b in box], float)
    starts = qmc.scale(qmc.Sobol(len(box), seed=seed).random(n_starts), lo, hi)
    found = []
    for x0 in starts:
        try:
            sol = optimize.root(lambda x: np.asarray(rhs(x), float), x0,
                                jac=lambda x: np.asarray(jac(x), float), method="hybr")
        except (ValueError, np.linalg.LinAlgError):
            continue
        x = sol.x
        if not np.all(np.isfinite(x)) or np.any(x < lo - 1e-9) or np.any(x > hi + 1e-9):
            continue
        res = float(np.max(np.abs(rhs(x))))
        if res > tol:
            continue
        if any(np.max(np.abs(x - p.x)) < merge for p in found):
            continue
        eig = np.linalg.eigvals(np.asarray(jac(x), float))
        found.append(StationaryPoint(tuple(x), tuple(eig), classify(eig, eig_tol), res))
    return sorted(found, key=lambda p: p.x)
