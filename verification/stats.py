"""Statistical decisions shared by the claim checks.

A Monte Carlo comparison passes when |theory − estimate| ≤ z·stderr + bias, with z
Bonferroni-corrected and an explicit finite-size term ``bias``. No verdict from a NaN. The
policies built on these (limits, trends, sequential sampling) are in ``verification.checks``."""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike

__all__ = ["NaNInEvidence", "z_compare", "finite", "weighted_slope"]


class NaNInEvidence(ValueError):
    """Raised instead of computing a verdict from a non-finite number."""


def finite(*arrays: ArrayLike, what: str = "value") -> None:
    """Raise :class:`NaNInEvidence` when any entry of ``arrays`` is NaN or infinite."""
    for a in arrays:
        if not np.all(np.isfinite(np.asarray(a, dtype=float))):
            raise NaNInEvidence(f"non-finite {what} in the evidence; no verdict computed")


def z_compare(theory: ArrayLike, estimate: ArrayLike, stderr: ArrayLike, z: ArrayLike,
              bias: ArrayLike = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per-point pass flags, |Δ| ≤ z·stderr + bias (z one value or one per point), and the
    normalised excess (|Δ| − bias)/stderr."""
    theory, estimate, stderr = (np.asarray(x, float) for x in (theory, estimate, stderr))
    bias = np.broadcast_to(np.asarray(bias, float), theory.shape)
    finite(theory, estimate, stderr, bias)
    diff = np.abs(theory - estimate)
    ok = diff <= z * stderr + bias
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(stderr > 0, (diff - bias) / stderr, np.where(diff > bias, np.inf, 0.0))
    return ok, score


def weighted_slope(x: ArrayLike, y: ArrayLike, stderr: ArrayLike) -> tuple[float, float]:
    """The slope of y against x by weighted least squares (weights 1/stderr²) and its standard
    error: the estimator behind a :func:`verification.checks.trend` on a fitted slope."""
    x, y, se = (np.asarray(a, float).ravel() for a in (x, y, stderr))
    finite(x, y, se, what="weighted_slope")
    if len(x) < 2 or not (len(x) == len(y) == len(se)) or np.any(se <= 0):
        raise ValueError(f"weighted_slope: needs ≥ 2 points with x, y and stderr > 0 of one "
                         f"length; got {len(x)}, {len(y)}, {len(se)}")
    w = 1 / se**2
    X = np.stack([np.ones_like(x), x], 1)
    cov = np.linalg.inv(X.T @ (X * w[:, None]))
    return float((cov @ (X.T @ (w * y)))[1]), float(np.sqrt(cov[1, 1]))
