"""Statistical decisions shared by the claim checks.

A Monte Carlo comparison passes when |theory − estimate| ≤ z·stderr + bias, with z
Bonferroni-corrected and an explicit finite-size term ``bias``. No verdict from a NaN."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["NaNInEvidence", "z_compare", "finite", "trend_to_zero", "extrapolate_to_zero"]


class NaNInEvidence(ValueError):
    """Raised instead of computing a verdict from a non-finite number."""


def finite(*arrays: ArrayLike, what: str = "value") -> None:
    """Raise :class:`NaNInEvidence` when any entry of ``arrays`` is NaN or infinite."""
    for a in arrays:
        if not np.all(np.isfinite(np.asarray(a, dtype=float))):
            raise NaNInEvidence(f"non-finite {what} in the evidence; no verdict computed")


def z_compare(theory: ArrayLike, estimate: ArrayLike, stderr: ArrayLike, z: float,
              bias: ArrayLike = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per-point pass flags and the normalised excess (|Δ| − bias)/stderr."""
    theory, estimate, stderr = (np.asarray(x, float) for x in (theory, estimate, stderr))
    bias = np.broadcast_to(np.asarray(bias, float), theory.shape)
    finite(theory, estimate, stderr, bias)
    diff = np.abs(theory - estimate)
    ok = diff <= z * stderr + bias
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(stderr > 0, (diff - bias) / stderr, np.where(diff > bias, np.inf, 0.0))
    return ok, score


def trend_to_zero(dims: ArrayLike, values: ArrayLike, stderrs: ArrayLike, z: float,
                  power: float = 0.5) -> dict[str, Any]:
    """Weighted least-squares fit values ≈ a + b·d^(−power): the asymptotic statement
    "values → 0 as d → ∞" predicts a = 0. Returns a, its standard error and b."""
    dims, values, stderrs = (np.asarray(x, float) for x in (dims, values, stderrs))
    finite(dims, values, stderrs)
    X = np.stack([np.ones_like(dims), dims ** (-power)], 1)
    w = 1.0 / np.maximum(stderrs, 1e-300) ** 2
    A = X.T @ (X * w[:, None])
    cov = np.linalg.inv(A)
    coef = cov @ (X.T @ (w * values))
    resid = values - X @ coef
    dof = max(len(values) - 2, 1)
    chi2 = float(np.sum(w * resid**2) / dof)
    cov = cov * max(chi2, 1.0)  # inflate when the model under-fits
    return {"a": float(coef[0]), "a_stderr": float(np.sqrt(cov[0, 0])), "b": float(coef[1]),
            "b_stderr": float(np.sqrt(cov[1, 1])), "chi2_per_dof": chi2}


def extrapolate_to_zero(x: ArrayLike, Y: ArrayLike, SE: ArrayLike,
                        degree: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise weighted polynomial fit Y[i, m] ≈ a[m] + b[m]·x[i] (+ c[m]·x[i]² for
    degree 2) with known standard errors SE: the value a at x = 0 (the d → ∞ limit when x is
    the finite-size parameter) and its standard error. Needs degree + 1 distinct x."""
    x, Y, SE = (np.asarray(v, float) for v in (x, Y, SE))
    finite(x, Y, SE)
    if len(np.unique(x)) < degree + 1:
        raise ValueError(f"extrapolate_to_zero needs at least {degree + 1} distinct x")
    X = np.stack([x**k for k in range(degree + 1)], 1)
    a = np.empty(Y.shape[1])
    se = np.empty(Y.shape[1])
    for m in range(Y.shape[1]):
        w = 1.0 / np.maximum(SE[:, m], 1e-12) ** 2
        cov = np.linalg.inv(X.T @ (X * w[:, None]))
        coef = cov @ (X.T @ (w * Y[:, m]))
        a[m], se[m] = coef[0], np.sqrt(cov[0, 0])
    return a, se
