"""``limit``: the d → ∞ limit by a weighted fit in a finite-size basis, with its goodness of fit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import chi2 as _chi2

from ..stats import finite
from .contract import (Check, _check_resolve, _required)
from .estimate import estimate_vs_theory


FINITE_SIZE_TERMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "1/d": lambda d: 1 / d, "1/d^2": lambda d: d**-2.0, "log(d)/d": lambda d: np.log(d) / d,
    "1/sqrt(d)": lambda d: d**-0.5, "1/log(d)": lambda d: 1 / np.log(d),
    "x": lambda x: x, "x^2": lambda x: x**2}
"""Finite-size terms of :func:`limit`: functions of d, or of a finite-size variable x → 0."""


def _basis(dims: np.ndarray, terms: Sequence[str]) -> np.ndarray:
    unknown = [t for t in terms if t not in FINITE_SIZE_TERMS]
    if unknown:
        raise ValueError(f"finite-size terms {unknown}; allowed: {sorted(FINITE_SIZE_TERMS)}")
    return np.stack([np.ones_like(dims)] + [FINITE_SIZE_TERMS[t](dims) for t in terms], 1)


def limit(ctx, dims: ArrayLike, values: ArrayLike, stderrs: ArrayLike, theory: ArrayLike,
          terms: Sequence[str] = ("1/d",), gof_alpha: float = 0.01, bias: ArrayLike = 0.0,
          name: str = "d → ∞ limit", scale: ArrayLike | None = None,
          dof: float | None = None, labels: Sequence[str] | None = None,
          resolve: float | None = None) -> Check:
    """The d → ∞ limit of ``values[i, m]`` (columns m) against ``theory[m]``.

    ``dims`` are the dimensions d, or a finite-size variable x → 0 with the terms "x", "x^2".
    ``scale`` as in :func:`estimate_vs_theory`; ``dof``: the smallest degrees of freedom of the
    input standard errors (the intercept is judged at the t quantile with that many: its
    Satterthwaite dof is at least the smallest input's).

    Weighted least squares values ≈ a + Σ_k c_k·f_k(d) with the basis ``terms``; the χ² of the
    fit (known standard errors, dof = n − 1 − len(terms)) is tested at ``gof_alpha``
    (Bonferroni over the columns). A good fit's intercept is judged as an estimate:
    |a − θ| ≤ z·se_a + bias, se_a the fit's own, never inflated. A column with a poor fit decides
    nothing (with the wrong basis even the true limit can lie many error bars from the
    intercept); the others still do: ``refuted`` if any of them is, else ``inconclusive``
    (details ``poor_fit``) with what would decide: more dimensions or another basis.

    ``labels``: a name per column for the evidence's table, which lists each column's
    intercept as :func:`estimate_vs_theory` lists its comparisons, with its χ² p-value
    (``gof_p``) and whether its fit is poor (``poor_fit``). ``resolve``: as for
    :func:`estimate_vs_theory`."""
    _check_resolve(resolve, name)
    dims = np.asarray(dims, float)
    Y = np.asarray(values, float).reshape(len(dims), -1)
    SE = np.asarray(stderrs, float).reshape(Y.shape)
    theory = np.broadcast_to(np.atleast_1d(np.asarray(theory, float)), (Y.shape[1],))
    finite(dims, Y, SE, theory, what=name)
    X = _basis(dims, terms)
    fit_dof = len(dims) - X.shape[1]
    if fit_dof < 1:
        raise ValueError(f"{name}: {len(dims)} dimensions cannot test the fit of "
                         f"{X.shape[1]} coefficients; give at least {X.shape[1] + 1}")
    a, a_se, pvals, chi2s = (np.empty(Y.shape[1]) for _ in range(4))
    for m in range(Y.shape[1]):
        w = 1.0 / np.maximum(SE[:, m], 1e-300) ** 2
        cov = np.linalg.inv(X.T @ (X * w[:, None]))
        coef = cov @ (X.T @ (w * Y[:, m]))
        chi2s[m] = float(np.sum(w * (Y[:, m] - X @ coef) ** 2))
        a[m], a_se[m], pvals[m] = coef[0], math.sqrt(cov[0, 0]), _chi2.sf(chi2s[m], fit_dof)
    details = {"terms": list(terms), "limit": a.tolist(), "limit_stderr": a_se.tolist(),
               "gof_p": pvals.tolist(), "fit_dof": fit_dof}
    poor = pvals < gof_alpha / Y.shape[1]
    check = estimate_vs_theory(ctx, a, a_se, theory, bias, name=name, scale=scale, dof=dof,
                               labels=labels)
    details.update(check.details)
    details["poor_fit_columns"] = np.flatnonzero(poor).tolist()
    more = dict(columns={**check.columns, "gof_p": pvals, "poor_fit": poor}, labels=check.labels)
    ctx.ledger.families[-1] = dataclasses.replace(ctx.ledger.families[-1], policy="limit",
                                                  required=resolve)
    if not poor.any():
        return _required(ctx, ctx.ledger.record(Check(
            check.decision, check.z, check.ok, check.score, check.resolution, details, **more)),
            resolve, name)
    # A poor fit decides nothing for its column: with the wrong finite-size basis even the true
    # limit can lie many error bars (inflated or not) from the fitted intercept. The columns
    # with a good fit still decide: any of them refuted refutes.
    details["poor_fit"] = True
    if np.any(~check.ok & ~poor):
        return ctx.ledger.record(Check("refuted", check.z, check.ok | poor, check.score,
                                       check.resolution, details, **more))
    return ctx.ledger.record(Check(
        "inconclusive", check.z, check.ok, check.score, check.resolution, details,
        needs=f"the fit in {list(terms)} is poor for columns {np.flatnonzero(poor).tolist()} "
              f"(χ² p = {pvals.min():.2g} < {gof_alpha}): more dimensions, a larger d or "
              "another finite-size basis", **more))
