"""``extrapolate``: a d → ∞ limit judged by its finite-size behaviour, not by one fixed correction.

Each column's values at growing d are fitted with every declared correction model (a line in
1/d, in 1/√d, a free power d^−p, a free rate e^{−c·d}, a plateau over the largest dimensions).
A model is admissible when its fit is good (χ²) and it predicts the largest dimension from the
others (leave-largest-out); among the admissible ones the limit is their Akaike-weighted
average and the spread of their limits a systematic added to the allowance, never dropped.
While a column is not confirmed, or its admissible models disagree by more than its
statistical error, larger dimensions are added (``grow``, doubling up to ``max_dim``), as
:func:`sequential` adds draws. A column is refuted only when every admissible model refutes it;
out of budget otherwise it is ``inconclusive``, saying what would decide."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import chi2 as _chi2, f as _f, norm, t as _t

from ..stats import finite
from .contract import Check, _check_resolve, _required, perturbed
from .estimate import estimate_vs_theory

__all__ = ["Correction", "CORRECTIONS", "extrapolate", "fit_correction"]

PROFILE_DELTA_CHI2 = 1.0
"""A free rate's (or exponent's) profile interval: the rates within this χ² of the best; the
half-range of their intercepts is added to the intercept's standard error."""


@dataclass(frozen=True)
class Correction:
    """A finite-size correction model y(d) ≈ a + Σ_k c_k·g_k(d; r): ``columns(d, fit_dims, r)``
    gives the g_k at ``d`` for a fit over ``fit_dims``; ``rates(fit_dims)`` the grid of a free
    nonlinear parameter r (None: none), profiled by χ²."""

    name: str
    columns: Callable[[np.ndarray, np.ndarray, float | None], np.ndarray]
    rates: Callable[[np.ndarray], np.ndarray] | None = None
    doc: str = ""
    variants: Callable[[np.ndarray], list[Correction]] | None = None
    """A family of models with different parameter counts (compared by AIC, not profiled)."""

    def expand(self, fit_dims: np.ndarray) -> list[Correction]:
        return [self] if self.variants is None else self.variants(fit_dims)

    def parameters(self, fit_dims: np.ndarray) -> int:
        """The number of fitted parameters: intercept, amplitudes and the free rate."""
        r = None if self.rates is None else float(self.rates(fit_dims)[0])
        return 1 + self.columns(fit_dims, fit_dims, r).shape[1] + (self.rates is not None)


def _power(p: float) -> Correction:
    return Correction(f"1/d^{p:g}" if p != 0.5 else "1/sqrt(d)",
                      lambda d, fd, r: (d ** -p)[:, None], doc=f"a + c·d^−{p:g}")


def _plateau(free: int) -> Correction:
    """a over every dimension but the ``free`` smallest fitted, which keep values of their own."""
    def columns(d, fit_dims, r):
        below = np.sort(fit_dims)[:free]
        return (d[:, None] == below[None, :]).astype(float)
    return Correction(f"plateau({free})", columns, doc=f"a beyond the {free} smallest d")


def _plateaus(fit_dims: np.ndarray) -> list[Correction]:
    # a tail of at least 2 dimensions: one to fit, one left out and predicted
    return [_plateau(j) for j in range(len(fit_dims) - 1)]


CORRECTIONS: dict[str, Correction] = {
    "1/d": _power(1.0),
    "1/sqrt(d)": _power(0.5),
    "1/d+1/d^2": Correction("1/d+1/d^2", lambda d, fd, r: np.stack([1 / d, d**-2.0], 1),
                            doc="a + c₁/d + c₂/d²"),
    "log(d)/d+1/d": Correction("log(d)/d+1/d", lambda d, fd, r: np.stack([np.log(d) / d, 1 / d], 1),
                               doc="a + c₁·log(d)/d + c₂/d (the REM's free-energy corrections)"),
    "d^-p": Correction("d^-p", lambda d, fd, p: (d ** -p)[:, None],
                       lambda fd: np.linspace(0.25, 3.0, 45), doc="a + c·d^−p, p ∈ [0.25, 3] free"),
    "exp(-c·d)": Correction(
        "exp(-c·d)", lambda d, fd, c: np.exp(-c * (d - fd.min()))[:, None],
        lambda fd: np.geomspace(0.5 / fd.max(), 20 / fd.min(), 60),
        doc="a + A·e^{−c·d}, c free (a REM's correction near its transition)"),
    "exp(-c·d)/sqrt(d)": Correction(
        "exp(-c·d)/sqrt(d)", lambda d, fd, c: (np.exp(-c * (d - fd.min())) / np.sqrt(d / fd.min()))[:, None],
        lambda fd: np.geomspace(0.5 / fd.max(), 20 / fd.min(), 60),
        doc="a + A·e^{−c·d}/√d, c free (a smeared transition: 1/√d below the scale 1/c)"),
    "plateau": Correction("plateau", lambda d, fd, r: np.zeros((len(d), 0)), variants=_plateaus,
                          doc="the correction has decayed: a over the largest t ≥ 2 dimensions, "
                              "free values below; one model per t"),
}
"""The correction models :func:`extrapolate` can compare, by name."""


def _wls(X: np.ndarray, y: np.ndarray, w: np.ndarray):
    cov = np.linalg.pinv(X.T @ (X * w[:, None]))
    coef = cov @ (X.T @ (w * y))
    return coef, cov, float(np.sum(w * (y - X @ coef) ** 2))


def _design(model: Correction, d: np.ndarray, fit_dims: np.ndarray, r) -> np.ndarray:
    return np.column_stack([np.ones_like(d), model.columns(d, fit_dims, r)])


def _profile(model: Correction, d: np.ndarray, y: np.ndarray, se: np.ndarray) -> list[tuple]:
    """(χ², rate, coef, cov) of the weighted fit at each rate of the model's grid (one fit
    without a free rate); rank-deficient designs left out."""
    w = 1.0 / np.maximum(se, 1e-300) ** 2
    fits = []
    for r in [None] if model.rates is None else list(model.rates(d)):
        X = _design(model, d, d, r)
        if np.linalg.matrix_rank(X) == X.shape[1]:
            coef, cov, chi2 = _wls(X, y, w)
            fits.append((chi2, r, coef, cov))
    return fits


def _best_and_half_range(fits: list[tuple], value) -> tuple[tuple, float]:
    """The best fit by χ² and half the range of ``value(fit)`` over the fits within
    ``PROFILE_DELTA_CHI2`` of it: a free rate's uncertainty, added to what it widens."""
    best = min(fits, key=lambda f: f[0])
    near = [value(f) for f in fits if f[0] <= best[0] + PROFILE_DELTA_CHI2]
    return best, (max(near) - min(near)) / 2


def fit_correction(model: Correction, dims: ArrayLike, y: ArrayLike, se: ArrayLike) -> dict | None:
    """Weighted least squares of ``y`` ± ``se`` at ``dims`` in ``model`` (its free rate profiled
    by χ²): {limit, stderr, chi2, parameters, rate, coef, cov}; None when the dimensions cannot
    identify the model (fewer than parameters + 1: no χ² test is left)."""
    d = np.asarray(dims, float)
    k = model.parameters(d)
    if len(d) < k + 1:
        return None
    fits = _profile(model, d, np.asarray(y, float), np.asarray(se, float))
    if not fits:
        return None
    (chi2, r, coef, cov), half = _best_and_half_range(fits, lambda f: f[2][0])
    se_a = math.sqrt(max(cov[0, 0], 0.0))
    return {"limit": float(coef[0]), "stderr": math.hypot(se_a, half), "chi2": chi2,
            "parameters": k, "rate": r, "coef": coef, "cov": cov}


def _leave_largest_out(model: Correction, d, y, se) -> float | None:
    """|y(d_max) − prediction from the other dimensions| in standard errors of the difference
    (None when the others cannot identify the model)."""
    order = np.argsort(d)
    d, y, se = d[order], y[order], se[order]
    if len(d) - 1 < model.parameters(d[:-1]):
        return None
    fits = _profile(model, d[:-1], y[:-1], se[:-1])
    if not fits:
        return None

    def at_largest(f):
        return _design(model, d[-1:], d[:-1], f[1])[0]
    best, half = _best_and_half_range(fits, lambda f: float(at_largest(f) @ f[2]))
    x = at_largest(best)
    pred, var = float(x @ best[2]), float(x @ best[3] @ x)
    return abs(y[-1] - pred) / math.sqrt(max(var, 0.0) + half**2 + se[-1] ** 2)


def _gof_p(chi2: float, residual_dof: int, dof: float | None) -> float:
    """The χ² test's p-value; with standard errors estimated on ``dof`` degrees of freedom,
    χ²/k against F(k, dof) (each residual's variance is estimated, not known)."""
    if dof is None or not math.isfinite(dof):
        return float(_chi2.sf(chi2, residual_dof))
    return float(_f.sf(chi2 / residual_dof, residual_dof, dof))


def _judge_models(models, d, y, se, level, dof=None):
    """Every model's fit, tests and Akaike weight for one column; the admissible ones'
    weighted limit, its standard error and the systematic (the weighted spread). ``dof``: the
    input standard errors' degrees of freedom (None: known), for the tests' quantiles."""
    z_llo = float(norm.isf(level / 2) if dof is None else _t.isf(level / 2, dof))
    rows = []
    for m in (v for model in models for v in model.expand(d)):
        f = fit_correction(m, d, y, se)
        if f is None:
            rows.append({"model": m.name, "admissible": False, "why": "not identifiable"})
            continue
        p = _gof_p(f["chi2"], len(d) - f["parameters"], dof)
        llo = _leave_largest_out(m, d, y, se)
        why = ("poor fit" if p < level else "misses the largest d" if llo is None or llo > z_llo
               else "")
        rows.append({"model": m.name, "limit": f["limit"], "stderr": f["stderr"],
                     "gof_p": p, "llo_pull": llo, "aic": f["chi2"] + 2 * f["parameters"],
                     "rate": f["rate"], "admissible": not why, "why": why})
    ok = [r for r in rows if r["admissible"]]
    if not ok:
        return rows, None
    w = np.array([math.exp(-(r["aic"] - min(q["aic"] for q in ok)) / 2) for r in ok])
    w /= w.sum()
    a = np.array([r["limit"] for r in ok])
    s = np.array([r["stderr"] for r in ok])
    for r, wk in zip(ok, w):
        r["weight"] = float(wk)
    mean = float(w @ a)
    return rows, (mean, float(math.sqrt(w @ s**2)), float(math.sqrt(w @ (a - mean) ** 2)))


def _check_corrections(corrections: Sequence[str], name: str) -> list[Correction]:
    unknown = [c for c in corrections if c not in CORRECTIONS]
    if unknown or not corrections:
        raise ValueError(f"{name}: corrections={list(corrections)!r}; allowed: a non-empty list "
                         f"of {sorted(CORRECTIONS)}")
    return [CORRECTIONS[c] for c in corrections]


def extrapolate(ctx, dims: ArrayLike, values: ArrayLike, stderrs: ArrayLike, theory: ArrayLike,
                corrections: Sequence[str] = ("1/d", "1/sqrt(d)", "exp(-c·d)", "plateau"),
                grow: Callable[[list[float]], tuple[ArrayLike, ArrayLike]] | None = None,
                max_dim: float | None = None, bias: ArrayLike = 0.0,
                name: str = "d → ∞ limit", scale: ArrayLike | None = None,
                labels: Sequence[str] | None = None, resolve: float | None = None,
                dof: float | None = None) -> Check:
    """The d → ∞ limit of ``values[i, m]`` (columns m, rows the dimensions ``dims``) against
    ``theory[m]``, judged by the finite-size behaviour (module docstring).

    corrections: the declared candidate models (names in :data:`CORRECTIONS`); grow(new_dims):
    (values, stderrs) at more dimensions, rows in the order given, called with 2·max(dims), until
    ``max_dim``, while a column is not confirmed or its models disagree by more than its
    statistical error (s > se): only a settled confirmation stops early, so a refutation is
    published at the largest d the budget allows. Each model's χ² and leave-largest-out tests
    run at the claim's own α (halved, Bonferroni over the columns): the true correction is
    dropped no more often than a true limit is refuted, and a wrong one kept can only keep a
    column from being refuted. bias, scale, labels, resolve: as :func:`estimate_vs_theory`
    (an array ``bias`` is read again after each ``grow``, which may raise it in place for the
    dimensions it adds).
    dof: the smallest degrees of freedom of the input standard errors (seeds − 1; None: known):
    the judgement's z is then the Student-t quantile, the leave-largest-out test's too, and the
    χ² test reads χ²/k against F(k, dof).

    Per column: the admissible models' Akaike-weighted limit ā ± se (the weighted se), the
    systematic s (their weighted spread) added to ``bias``; ``refuted`` only when every
    admissible model's own limit refutes on the same side; ``confirmed`` when |ā − θ| ≤ z·se + bias + s (the
    resolution then counts 2·s);
    otherwise ``inconclusive``, with what would decide (larger d beyond ``max_dim``)."""
    _check_resolve(resolve, name)
    models = _check_corrections(corrections, name)
    if grow is not None and (max_dim is None or not math.isfinite(max_dim)):
        raise ValueError(f"{name}: grow needs a finite max_dim (the largest d the budget allows)")
    dims = [float(x) for x in np.asarray(dims, float).ravel()]
    Y = np.asarray(values, float).reshape(len(dims), -1)
    SE = np.asarray(stderrs, float).reshape(Y.shape)
    theory = np.broadcast_to(np.atleast_1d(np.asarray(theory, float)), (Y.shape[1],))
    finite(np.asarray(dims), Y, SE, theory, what=name)
    if dof is not None and not (float(dof) > 0):
        raise ValueError(f"{name}: dof={dof!r}; allowed: degrees of freedom > 0 (None: known "
                         "standard errors)")
    level = ctx.alpha / (2 * Y.shape[1])
    z = float(norm.isf(level) if dof is None else _t.isf(level, dof))
    claimed = perturbed(ctx, theory, scale, family=name)
    bias_m = np.broadcast_to(np.asarray(bias, float), theory.shape)
    grown: list[float] = []
    while True:
        d = np.asarray(dims)
        judged = [_judge_models(models, d, Y[:, m], SE[:, m], level, dof)
                  for m in range(Y.shape[1])]
        unsettled = [m for m, (_, agg) in enumerate(judged) if agg is None or agg[2] > agg[1]]
        nxt = 2 * max(dims)
        # only a confirmation by models that agree stops early: a refutation is published at
        # the largest d allowed
        if grow is None or nxt > max_dim or (not unsettled and all(
                _confirms(agg, claimed[m], bias_m[m], z) for m, (_, agg) in enumerate(judged))):
            break
        y_new, se_new = (np.asarray(a, float).reshape(1, Y.shape[1]) for a in grow([nxt]))
        finite(y_new, se_new, what=f"{name}: grow({[nxt]})")
        dims.append(nxt)
        grown.append(nxt)
        Y, SE = np.vstack([Y, y_new]), np.vstack([SE, se_new])
    return _decide(ctx, judged, unsettled, theory, bias, np.asarray(dims), grown, models,
                   name=name, scale=scale, labels=labels, resolve=resolve, max_dim=max_dim,
                   dof=dof)


def _decide(ctx, judged, unsettled, theory, bias, dims, grown, models, *, name, scale, labels,
            resolve, max_dim, dof=None) -> Check:
    """The family's decision from each column's admissible models (``extrapolate``)."""
    n = len(judged)
    none = [m for m, (_, agg) in enumerate(judged) if agg is None]
    # a column without an admissible model is judged at its data's own scale and marked undecided
    est = np.array([0.0 if agg is None else agg[0] for _, agg in judged])
    se = np.array([np.inf if agg is None else agg[1] for _, agg in judged])
    syst = np.array([0.0 if agg is None else agg[2] for _, agg in judged])
    se_j = np.where(np.isfinite(se), se, 1.0)
    bias = np.broadcast_to(np.asarray(bias, float), (n,))
    check = estimate_vs_theory(ctx, np.where(np.isfinite(se), est, theory), se_j, theory,
                               bias + syst, name=name, scale=scale, labels=labels, dof=dof)
    ctx.ledger.families[-1] = _policy(ctx.ledger.families[-1], resolve)
    judged_theory = np.asarray(check.columns["theory"], float)
    undecided = np.zeros(n, bool)
    undecided[unsettled] = True         # the models' spread exceeds the statistical error
    undecided[none] = True
    every_model_refutes = np.array([_every_model_refutes(rows, judged_theory[m], bias[m], check.z)
                                    for m, (rows, _) in enumerate(judged)])
    refutes = ~check.ok & every_model_refutes
    confirms = np.array([_confirms(agg, judged_theory[m], bias[m], check.z)
                         for m, (_, agg) in enumerate(judged)])
    details = {"corrections": [m.name for m in models], "dims": dims.tolist(),
               "grown_dims": grown, "max_dim": max_dim, "limit": est.tolist(),
               "limit_stderr": np.where(np.isfinite(se), se, np.nan).tolist(),
               "systematic": syst.tolist(), "models": [rows for rows, _ in judged],
               "undecided_columns": np.flatnonzero(undecided).tolist(), **check.details}
    identified = np.ones(n, bool)
    identified[none] = False        # no admissible model: its estimate is a placeholder
    more = dict(columns={**check.columns, "systematic": syst, "undecided": undecided,
                         "identified": identified},
                labels=check.labels)
    if refutes.any():
        return ctx.ledger.record(Check("refuted", check.z, ~refutes, check.score,
                                       check.resolution, details, **more))
    if confirms.all():
        return _required(ctx, ctx.ledger.record(Check(
            "confirmed", check.z, check.ok, check.score, check.resolution, details, **more)),
            resolve, name)
    open_ = np.flatnonzero(~confirms & ~refutes).tolist()
    why = (f"no correction model in {details['corrections']} fits columns {none}" if none else
           f"columns {open_} are neither confirmed with the models' spread nor refuted by every "
           "admissible model")
    return ctx.ledger.record(Check(
        "inconclusive", check.z, check.ok | ~refutes, check.score, check.resolution, details,
        needs=f"{why} (d up to {dims.max():g}): larger d than {max_dim or dims.max():g}, "
              "or a correction model the theory derives", **more))


def _confirms(agg, theory, bias, z) -> bool:
    """Whether the admissible models' weighted limit lies within θ ± (z·se + bias + s)."""
    return agg is not None and abs(agg[0] - theory) <= z * agg[1] + bias + agg[2]


def _every_model_refutes(rows, theory, bias, z) -> bool:
    """Whether every admissible model's own limit lies beyond θ ± (z·se + bias) on one side."""
    sides = [np.sign(r["limit"] - theory) for r in rows if r["admissible"]
             and abs(r["limit"] - theory) > z * r["stderr"] + bias]
    admissible = sum(r["admissible"] for r in rows)
    return admissible > 0 and len(sides) == admissible and len(set(sides)) == 1


def _policy(family, resolve):
    return dataclasses.replace(family, policy="extrapolate", required=resolve)
