"""The policies of the check library (``verification.checks``): one per kind of comparison."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import chi2 as _chi2, norm, t as _student_t

from ..domain import setting_key
from ..stats import finite, z_compare

__all__ = ["Z95", "PERTURBATIONS", "check_perturbation", "perturbed", "Contract", "Family",
           "Ledger", "Check", "OutsideRealisableSet", "critical_value", "welch_dof",
           "estimate_vs_theory", "limit",
           "FINITE_SIZE_TERMS", "trend", "sequential", "confidence_sequence_radius", "exact",
           "realisable", "combine", "legs_summary", "MAX_EVIDENCE_ROWS"]

Z95 = float(norm.isf(0.05))
"""One-sided 95 % quantile: the power term of the resolution."""

DECISIONS = ("confirmed", "refuted", "inconclusive")
PERTURBATIONS = ("relative", "sign")


def check_perturbation(p: tuple) -> None:
    """ValueError unless ``p`` is ("sign",), or ("relative", δ[, family[, reference]]) with
    finite δ ≠ 0, family a family's name (None: every family) and reference a finite effect
    > 0 (the true size of a direction's effect, for :func:`trend` and a directional
    :func:`sequential`). δ and reference may be given per setting of the claim's domain, as
    ((setting key, value), ...): a setting not listed is not perturbed. With "finest" only the
    comparison with the smallest relative resolution moves (the one the family's resolution is
    the resolution of; calibration's power runs)."""
    def scalar(x, positive=False):
        return (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                and (x > 0 if positive else x != 0))

    def number(x, positive=False):       # one value, or one per setting: ((key, value), ...)
        if isinstance(x, (tuple, list)):
            return bool(x) and all(isinstance(kv, (tuple, list)) and len(kv) == 2
                                   and isinstance(kv[0], str) and scalar(kv[1], positive)
                                   for kv in x)
        return scalar(x, positive)
    ok = (isinstance(p, tuple) and p and p[0] in PERTURBATIONS
          and ((p[0] == "sign" and len(p) == 1)
               or (p[0] == "relative" and 2 <= len(p) <= 5 and number(p[1])
                   and (len(p) < 3 or p[2] is None or isinstance(p[2], str))
                   and (len(p) < 4 or p[3] is None or number(p[3], positive=True))
                   and (len(p) < 5 or p[4] in (None, "finest")))))
    if not ok:
        raise ValueError(f"perturbation={p!r}; allowed: ('sign',), or ('relative', δ[, family"
                         "[, reference[, 'finest']]]) with finite δ ≠ 0, a family name (or "
                         "None), a finite reference > 0 (or None), and 'finest' to move only "
                         "the comparison of the family's resolution")


def _perturbation(ctx, family: str) -> tuple | None:
    """The calibration perturbation of ``ctx`` if it acts on ``family`` (every family when it
    names none) at the setting judged, its per-setting values resolved to that setting's."""
    p = getattr(ctx, "perturbation", None)
    if p is None or (p[0] == "relative" and len(p) >= 3 and p[2] is not None and p[2] != family):
        return None
    if p[0] == "relative":
        key = setting_of(ctx)
        p = tuple(dict((k, v) for k, v in x).get(key) if isinstance(x, (tuple, list)) else x
                  for x in p)
        if p[1] is None:
            return None
    return p


def setting_of(ctx) -> str:
    """The key of the setting of the claim's domain ``ctx`` judges ("" for none)."""
    setting = getattr(ctx, "setting", ())
    return setting_key(dict(setting)) if setting else ""


def _spend(ctx, name: str, comparisons: int, **kw) -> float:
    """``ctx.ledger.spend`` at the claim's α, recording the setting judged."""
    return ctx.ledger.spend(name, comparisons, ctx.alpha, setting=setting_of(ctx), **kw)


def perturbed(ctx, theory: np.ndarray, scale: ArrayLike | None = None,
              family: str | None = None, finest: int | None = None) -> np.ndarray:
    """The claimed values of ``family`` under the calibration perturbation of ``ctx``
    (unchanged without one, or when it names another family): ``("relative", δ, ...)``:
    θ + δ·s·sgn θ (sgn 0 = +1), s = |``scale``| or |θ| by default, only at index ``finest``
    when the perturbation says "finest"; ``("sign",)``: −θ. Marks
    ``ctx.ledger.perturbation_applied`` when a value moved."""
    p = _perturbation(ctx, family)
    if p is None:
        return theory
    theory = np.asarray(theory, float)
    if p[0] == "sign":
        out = -theory
    else:
        s = np.abs(theory) if scale is None else np.abs(np.broadcast_to(np.asarray(scale, float),
                                                                          theory.shape))
        step = p[1] * s * np.where(theory < 0, -1.0, 1.0)
        if len(p) >= 5 and p[4] == "finest" and finest is not None:
            step = np.where(np.arange(theory.size).reshape(theory.shape) == finest, step, 0.0)
        out = theory + step
    if np.any(out != theory) and getattr(ctx, "ledger", None) is not None:
        ctx.ledger.perturbation_applied = True
    return out


# --- the contract ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """One family of comparisons judged together at Bonferroni z."""

    name: str
    comparisons: int
    alpha: float
    resolution: float | None
    exact: bool = False
    """An exact (symbolic or high-precision) family: α = 0 and no resolution, by design."""
    policy: str = ""
    """The policy that judged it (``estimate_vs_theory``, ``limit``, ``trend``, ...)."""
    required: float | None = None
    """The resolution the family must reach to show what the claim says (``resolve``); a
    family that passes without reaching it is undecided, never confirmed."""
    setting: str = ""
    """The key of the setting of the claim's domain it was spent at ("" for none); merged
    families (``Contract.families``) span their settings and name none."""


@dataclass(frozen=True)
class Contract:
    """A verdict's error contract (see the module docstring): the claim's totals, and each
    family of comparisons (one per checked quantity, by name; a family spent at several
    settings of the claim's domain is one, its α and comparisons summed, its resolution the
    coarsest)."""

    alpha: float
    resolution: float | None
    comparisons: int
    families: tuple[Family, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "resolution": self.resolution,
                "comparisons": self.comparisons,
                "families": [{"name": f.name, "alpha": f.alpha, "resolution": f.resolution,
                              "comparisons": f.comparisons, "exact": f.exact,
                              "policy": f.policy, "required": f.required}
                             for f in self.families]}


def _coarsest(res: list[float | None]) -> float | None:
    """The largest resolution (inf when any is not finite; None when none is stated)."""
    stated = [r for r in res if r is not None]
    if not stated:
        return None
    finite_res = [r for r in stated if math.isfinite(r)]
    return max(finite_res) if len(finite_res) == len(stated) else math.inf


def merged_families(families: Sequence[Family]) -> tuple[Family, ...]:
    """The families by name, in the order first spent (``Contract.families``)."""
    out: dict[str, Family] = {}
    for f in families:
        g = out.get(f.name)
        if g is None:
            out[f.name] = dataclasses.replace(f, setting="")
        else:
            required = [r for r in (g.required, f.required) if r is not None]
            out[f.name] = Family(f.name, g.comparisons + f.comparisons, g.alpha + f.alpha,
                                 _coarsest([g.resolution, f.resolution]), g.exact and f.exact,
                                 g.policy or f.policy, min(required) if required else None)
    return tuple(out.values())


@dataclass
class Ledger:
    """What one claim's checks spent: the families of comparisons and their resolutions."""

    families: list[Family] = field(default_factory=list)
    perturbation_applied: bool = False
    """Whether a calibration perturbation moved any claimed value (see ``perturbed``)."""
    checks: dict[int, Check] = field(default_factory=dict, compare=False, repr=False)
    """The decision of each family (by its index in ``families``), as the policy returned it:
    its per-comparison columns go to the claim's report.npz (``arrays``)."""

    def spend(self, name: str, comparisons: int, alpha: float,
              resolution: float | None = None, exact: bool = False, policy: str = "",
              required: float | None = None, setting: str = "") -> float:
        """Record a family of ``comparisons`` at the claim's α; its two-sided Bonferroni z
        (``exact``: an exact family, α = 0 and no resolution; z is then inf). ``policy``: the
        policy judging it; ``required``: the resolution it must reach (``resolve``)."""
        n = int(comparisons)
        if n < 1:
            raise ValueError(f"comparisons={comparisons!r}; allowed: an integer ≥ 1")
        if exact:
            self.families.append(Family(name, n, 0.0, None, True, policy, setting=setting))
            return math.inf
        self.families.append(Family(name, n, float(alpha), resolution, False, policy, required,
                                    setting))
        return float(critical_value(alpha, n)[0])

    def set_resolution(self, resolution: float | None) -> None:
        """The resolution of the family spent last (computed after its z was known)."""
        if not self.families:
            raise ValueError("no family spent yet")
        self.families[-1] = dataclasses.replace(self.families[-1], resolution=resolution)

    def record(self, check: Check) -> Check:
        """Keep ``check`` as the decision of the family spent last (a policy built on another,
        as ``limit`` on ``estimate_vs_theory``, replaces that one's); returns it."""
        if self.families:
            self.checks[len(self.families) - 1] = check
        return check

    def family_data(self) -> dict[str, dict[str, Any]]:
        """Per family (by name, over every setting; an exact one marked ``exact``, its unit the
        tolerance), what calibration reads from a run: ``deviation`` (estimate − claimed value
        as judged; for a direction, the effect sign·slope, and ``direction`` is set), ``se``,
        ``bias`` and ``unit`` (the absolute resolution of each comparison:
        (z + z₀.₉₅)·se + 2·bias), the family's ``policy``, and ``settings``: the same per
        setting of the domain (by key), with its ``resolution``."""
        out: dict[str, dict[str, Any]] = {}
        for k, check in sorted(self.checks.items()):
            fam, cols = self.families[k], check.columns
            if "deviation" not in cols:
                continue
            d = out.setdefault(fam.name, {"policy": fam.policy, "deviation": [], "se": [],
                                          "unit": [], "bias": []})
            if fam.exact:                # no pulls or power; a mutation's size in tolerances
                d["exact"] = True
            if "claimed_sign" in cols:
                d["direction"] = True
            if fam.policy == "sequential":           # how far the sequence went
                d["samples"] = d.get("samples", 0) + int(check.details["n"])
                d["budget"] = d.get("budget", 0) + int(check.details["budget"])
            n = check.score.size
            at = d.setdefault("settings", {}).setdefault(
                fam.setting, {"deviation": [], "se": [], "unit": [], "bias": [],
                              "resolution": fam.resolution})
            if fam.resolution is not None and at["resolution"] is not None:
                at["resolution"] = min(at["resolution"], fam.resolution)   # any point refutes
            for key in ("deviation", "se", "unit", "bias"):
                values = [float(v) for v in np.broadcast_to(np.asarray(cols.get(key, 0.0), float),
                                                            (n,))]
                d[key].extend(values)
                at[key].extend(values)
        return out

    def unresolved(self) -> list[str]:
        """The families that state no resolution although they are statistical."""
        return [f.name for f in self.families if f.resolution is None and not f.exact]

    def arrays(self) -> dict[str, np.ndarray]:
        """Every recorded check's full per-comparison columns (``Check.arrays``) for the claim's
        report.npz: ``checks/<k>/<column>`` and ``checks/<k>/family`` (the family's name), k the
        family's index in the order the claim spent them."""
        out: dict[str, np.ndarray] = {}
        for k, check in sorted(self.checks.items()):
            out[f"checks/{k}/family"] = np.asarray(self.families[k].name)
            out.update({f"checks/{k}/{col}": v for col, v in check.arrays().items()})
        return out

    def contract(self) -> Contract:
        """The claim's contract: α summed over families, the coarsest family resolution, and
        the total number of comparisons; exact (α = 0, resolution None) with no family."""
        if not self.families:
            return Contract(0.0, None, 0)
        alpha = min(1.0, sum(f.alpha for f in self.families))
        resolution = _coarsest([f.resolution for f in self.families])
        return Contract(alpha, resolution, sum(f.comparisons for f in self.families),
                        merged_families(self.families))


# --- results ---------------------------------------------------------------------------------
MAX_EVIDENCE_ROWS = 200
"""At most this many comparisons are listed in a check's evidence (``Check.comparisons``): all of
them up to it, else the worst ones; the full columns are in the claim's report.npz."""


@dataclass(frozen=True)
class Check:
    """A policy's decision and what it rests on.

    decision: 'confirmed', 'refuted' or 'inconclusive'; z: the family's critical value (the
    Bonferroni z, or its Student-t counterpart for standard errors with few dof; the largest
    over the comparisons when their dof differ; 1 for :func:`exact`, whose score is |Δ|/tolerance);
    ok: per comparison pass flags; score: per comparison (|Δ| − bias)/se; resolution: as in
    the contract; details: JSON-able numbers for the evidence; needs: for 'inconclusive', what
    would decide; columns: what each comparison compared, {column: array with one entry per
    comparison} (estimate, theory, se, bias, ...; the policy's own), listed with the score and
    the pass flag by ``comparisons()``; labels: a name per comparison (None: by index)."""

    decision: str
    z: float
    ok: np.ndarray
    score: np.ndarray
    resolution: float | None
    details: dict = field(default_factory=dict)
    needs: str = ""
    columns: dict = field(default_factory=dict)
    labels: tuple | None = None

    @property
    def passed(self) -> bool:
        return self.decision == "confirmed"

    def evidence(self) -> dict[str, Any]:
        """JSON-able evidence: decision, z, resolution, the worst score, the policy's details
        (the worst comparison's numbers) and ``comparisons``, every comparison in a table
        (``comparisons()``)."""
        out = {"decision": self.decision, "z": self.z, "resolution": self.resolution,
               "worst_score": float(np.max(self.score)) if self.score.size else None,
               **self.details}
        if self.needs:
            out["needs"] = self.needs
        if self.score.size:
            out["comparisons"] = self.comparisons()
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """The full per-comparison columns: ``index``, ``label`` (when named), the policy's
        columns, ``score``, ``passed`` (the claim's report.npz gets them through the ledger)."""
        n = self.score.size
        out: dict[str, np.ndarray] = {"index": np.arange(n)}
        if self.labels is not None:
            out["label"] = np.asarray([str(x) for x in self.labels])
        for k, v in self.columns.items():
            out[k] = np.broadcast_to(np.asarray(v), (n,)).copy()
        out["score"] = np.asarray(self.score, float)
        out["passed"] = np.asarray(self.ok, bool)
        return out

    def comparisons(self, limit: int = MAX_EVIDENCE_ROWS) -> dict[str, Any]:
        """Every comparison as one row of ``columns`` (index, [label], the policy's columns,
        score, passed): all of them when there are at most ``limit``, else the ``limit`` worst
        (largest ``ratio`` where the policy gives one, else largest score), worst first; ``count``
        is the number of comparisons, ``shown`` says which rows are listed."""
        cols = self.arrays()
        n = self.score.size
        if n <= limit:
            rows, shown = np.arange(n), "all"
        else:
            rank = np.nan_to_num(np.asarray(cols.get("ratio", cols["score"]), float),
                                 nan=np.inf, posinf=np.inf)
            rows = np.argsort(-rank, kind="stable")[:limit]
            shown = (f"the {limit} worst of {n} by {'ratio' if 'ratio' in cols else 'score'}, "
                     "worst first (all in report.npz)")
        names = list(cols)
        table = [[_plain(cols[c][i]) for c in names] for i in rows]
        return {"columns": names, "rows": table, "count": int(n), "shown": shown}


def _plain(x: Any) -> Any:
    """A numpy scalar as the Python number, bool or str it is."""
    return x.item() if isinstance(x, np.generic) else x


def combine(checks: Sequence[Check]) -> str:
    """A claim's verdict from its legs: 'refuted' if any check is, 'confirmed' if all are,
    else 'inconclusive' (a leg that is undecided, e.g. one that passes without the resolution
    it must reach, makes the claim undecided on it; :func:`legs_summary` says which)."""
    decisions = [c.decision for c in checks]
    if "refuted" in decisions:
        return "refuted"
    return "confirmed" if decisions and all(d == "confirmed" for d in decisions) else "inconclusive"


def _resolution(se: np.ndarray, bias: np.ndarray, theory: np.ndarray, z: ArrayLike,
                power: ArrayLike = Z95) -> float:
    """min over points of ((z + power)·se + 2·bias)/|θ| (inf where θ = 0 everywhere): a
    systematic error anywhere within ±bias is allowed for (see the module's docstring)."""
    scale = np.abs(theory)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(scale > 0, ((np.asarray(z) + np.asarray(power)) * se + 2 * bias) / scale,
                     np.inf)
    return float(np.min(r)) if r.size else math.inf


def critical_value(alpha: float, comparisons: int, dof: ArrayLike | None = None,
                   what: str = "dof") -> tuple[np.ndarray, np.ndarray]:
    """The two-sided Bonferroni critical value for ``comparisons`` at ``alpha`` and the 95 %
    power term: normal (Φ⁻¹(1 − α/(2n)), z₀.₉₅) without ``dof``; Student t with ``dof``
    degrees of freedom (per comparison, broadcast; ``inf`` = normal) when the standard errors
    are estimated from dof + 1 replicates, the power term then being p with
    P(T′_dof(ncp = t + p) > t) = 95 % (non-central t: a deviation of (t + p)·σ is refuted with
    probability 95 % although the standard error it is judged with is random). Returns arrays
    shaped like ``dof`` (0-d without)."""
    tail = alpha / (2 * int(comparisons))
    if dof is None:
        return np.asarray(float(norm.isf(tail))), np.asarray(Z95)
    d = np.asarray(dof, float)
    if np.any(np.isnan(d)) or np.any(d <= 0):
        raise ValueError(f"{what}={dof!r}; allowed: degrees of freedom > 0 (inf: normal)")
    small = np.isfinite(d)
    dd = np.where(small, d, 1.0)
    crit = np.where(small, _student_t.isf(tail, dd), norm.isf(tail))
    power = np.vectorize(_nct_power_term)(crit, d)
    return crit, power


def _nct_power_term(crit: float, dof: float) -> float:
    """p ≥ 0 with P(T′ > crit) = 0.95 for T′ non-central t with ``dof`` and ncp = crit + p
    (z₀.₉₅ for dof = inf)."""
    if not math.isfinite(dof):
        return Z95
    from scipy.optimize import brentq
    from scipy.stats import nct

    def short(ncp):
        return float(nct.sf(crit, dof, ncp)) - 0.95
    hi = crit + Z95
    while short(hi) < 0:
        hi *= 2
    return float(brentq(short, crit, hi, xtol=1e-10 * max(1.0, crit))) - crit


def welch_dof(stderrs: Sequence[float], dofs: Sequence[float]) -> float:
    """Welch–Satterthwaite degrees of freedom of √(Σ se_i²), a sum of independent variance
    estimates with dofs ν_i: (Σ se_i²)² / Σ (se_i⁴/ν_i) (∞ terms contribute nothing; a zero
    total gives ∞). At least min ν_i, at most Σ ν_i."""
    v = np.asarray(stderrs, float) ** 2
    nu = np.asarray(dofs, float)
    if v.shape != nu.shape or np.any(~(nu > 0)):
        raise ValueError(f"dofs={list(dofs)}; allowed: one dof > 0 per standard error")
    den = float(np.sum(np.where(np.isfinite(nu), v**2 / np.where(np.isfinite(nu), nu, 1.0), 0.0)))
    return math.inf if den == 0 else float(np.sum(v) ** 2 / den)


# --- policies --------------------------------------------------------------------------------
def estimate_vs_theory(ctx, estimate: ArrayLike, stderr: ArrayLike, theory: ArrayLike,
                       bias: ArrayLike = 0.0, name: str = "estimate vs theory",
                       scale: ArrayLike | None = None, dof: ArrayLike | None = None,
                       labels: Sequence[str] | None = None,
                       resolve: float | None = None) -> Check:
    """Each estimate against its theory value: |Δ| ≤ z·se + bias with z Bonferroni over the
    points at the claim's α. ``confirmed`` when every point passes, else ``refuted``.
    ``scale``: the magnitude the resolution is relative to (default |theory|; give it when the
    claimed value is 0, e.g. a deviation that should vanish, relative to the quantity).
    ``dof``: the degrees of freedom of each standard error (replicates − 1; None: known or
    from so many samples that the normal quantile holds); z is then the Student-t quantile.
    ``labels``: a name per comparison for the evidence's table (default: by index).
    ``resolve``: the resolution this family must reach to show what the claim says (e.g. the
    relative gap between the claimed value and the alternative the claim rules out): passing
    with a coarser resolution is ``inconclusive`` (:func:`combine` then makes the claim
    undecided on this leg), never ``confirmed``.

    One call is one family: give each checked quantity (a loss, an overlap, a slope) its own
    call and name, so that its resolution is its own (a family's resolution is the smallest
    over its points).

    The evidence lists every comparison (``Check.comparisons``): estimate, theory (as judged:
    perturbed under calibration), se, bias, z, ratio = |Δ|/(z·se + bias) (≤ 1 passes), score =
    (|Δ| − bias)/se and passed."""
    _check_resolve(resolve, name)
    theory = np.atleast_1d(np.asarray(theory, float))
    estimate = np.broadcast_to(np.asarray(estimate, float), theory.shape)
    se = np.broadcast_to(np.asarray(stderr, float), theory.shape)
    bias = np.broadcast_to(np.asarray(bias, float), theory.shape)
    finite(theory, estimate, se, bias, what=name)
    if np.any(se < 0) or np.any(bias < 0):
        raise ValueError(f"{name}: standard errors and bias must be ≥ 0")
    crit, power = critical_value(ctx.alpha, theory.size, None if dof is None else
                                 np.broadcast_to(np.asarray(dof, float), theory.shape),
                                 what=f"{name}: dof")
    scale = None if scale is None else np.broadcast_to(np.asarray(scale, float), theory.shape)
    finest = _finest(se, bias, theory if scale is None else scale, crit, power)
    theory = perturbed(ctx, theory, scale, family=name, finest=finest)
    _spend(ctx, name, theory.size, policy="estimate_vs_theory", required=resolve)
    ok, score = z_compare(theory, estimate, se, crit, bias)
    res = _resolution(se, bias, theory if scale is None else scale, crit, power)
    ctx.ledger.set_resolution(res)
    worst = int(np.argmax(score - crit))
    details = {"n": int(theory.size), "worst_index": worst,
               "worst_delta": float(estimate[worst] - theory[worst]),
               "worst_stderr": float(se[worst]), "worst_bias": float(bias[worst])}
    if dof is not None:
        details["dof_min"] = float(np.min(dof))
        details["critical"] = np.broadcast_to(crit, theory.shape).tolist()  # per comparison
    crit_each = np.broadcast_to(crit, theory.shape)
    allowance = crit_each * se + bias
    diff = np.abs(estimate - theory)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(allowance > 0, diff / allowance, np.where(diff > 0, np.inf, 0.0))
    columns = {"estimate": estimate, "theory": theory, "se": se, "bias": bias, "z": crit_each,
               "ratio": ratio, "deviation": estimate - theory,
               "unit": (crit_each + np.broadcast_to(power, theory.shape)) * se + 2 * bias}
    check = ctx.ledger.record(Check("confirmed" if ok.all() else "refuted", float(np.max(crit)),
                                    ok, score, res, details, columns=columns,
                                    labels=_labels(labels, theory.size, name)))
    return _required(ctx, check, resolve, name)


def _finest(se, bias, ref, crit, power) -> int:
    """The index of the comparison with the smallest relative resolution (``_resolution``)."""
    scale = np.abs(np.asarray(ref, float)).ravel()
    unit = (np.broadcast_to(np.asarray(crit) + np.asarray(power), np.shape(se)) * se
            + 2 * bias).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, unit / scale, np.inf)
    return int(np.argmin(rel))


def _check_resolve(resolve: float | None, name: str) -> None:
    if resolve is not None and not (isinstance(resolve, (int, float)) and not isinstance(
            resolve, bool) and math.isfinite(resolve) and resolve > 0):
        raise ValueError(f"{name}: resolve={resolve!r}; allowed: a finite relative deviation "
                         "> 0, or None")


def _required(ctx, check: Check, resolve: float | None, name: str) -> Check:
    """``check``, undecided when it passed without reaching the resolution ``resolve`` it must
    reach to show what the claim says. A refutation stands: it is evidence however coarse."""
    res = check.resolution
    if resolve is None or check.decision != "confirmed" or (res is not None and res <= resolve):
        return check
    bias_part = _bias_floor(check)
    more = (f"its bias allowance alone resolves {_pct(bias_part)}: more samples cannot reach "
            "it; a smaller finite-size allowance (larger d) can" if bias_part >= resolve else
            f"about {(res / resolve) ** 2:.2g}× the samples" if res is not None
            and math.isfinite(res) else "a resolution it does not have")
    return ctx.ledger.record(dataclasses.replace(
        check, decision="inconclusive", details={**check.details, "required_resolution": resolve},
        needs=f"{name} passes but resolves {_pct(res)}; it must resolve {_pct(resolve)} to "
              f"show the claim: {more}"))


def _bias_floor(check: Check) -> float:
    """The part of a check's resolution its bias allowance sets (2·bias/scale at its finest
    comparison); 0 without one."""
    cols = check.columns
    if "bias" not in cols or "unit" not in cols or "deviation" not in cols:
        return 0.0
    bias = np.atleast_1d(np.asarray(cols["bias"], float))
    unit = np.atleast_1d(np.asarray(cols["unit"], float))
    if check.resolution is None or not math.isfinite(check.resolution) or check.resolution <= 0:
        return 0.0
    i = int(np.argmin(unit))
    return float(2 * bias[i] / unit[i] * check.resolution) if unit[i] > 0 else 0.0


def _pct(r: float | None) -> str:
    return "nothing" if r is None or not math.isfinite(r) else f"{100 * r:.3g} %"


def legs_summary(checks: Sequence[Check], names: Sequence[str]) -> str:
    """One line on the legs of a claim's verdict (:func:`combine`): each leg's decision and
    resolution, and for an undecided leg what it resolves and must, e.g. "ODE leg confirmed
    (resolves 0.5 %); SGD leg undecided: resolves 90 %, must resolve 20 %"."""
    if len(checks) != len(names):
        raise ValueError(f"names: {len(names)} for {len(checks)} checks; give one per leg")
    parts = []
    for c, n in zip(checks, names):
        word = {"confirmed": "confirmed", "refuted": "refuted"}.get(c.decision, "undecided")
        req = c.details.get("required_resolution")
        if c.decision == "inconclusive" and req is not None:
            parts.append(f"{n} {word}: resolves {_pct(c.resolution)}, must resolve {_pct(req)}")
        else:
            parts.append(f"{n} {word} (resolves {_pct(c.resolution)})")
    return "; ".join(parts)


def _labels(labels: Sequence[str] | None, n: int, name: str) -> tuple | None:
    if labels is None:
        return None
    out = tuple(str(x) for x in np.asarray(labels, dtype=object).ravel())
    if len(out) != n:
        raise ValueError(f"{name}: {len(out)} labels for {n} comparisons; give one per comparison")
    return out


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


def trend(ctx, slope: float, stderr: float, sign: int, name: str = "trend",
          dof: float | None = None, resolve: float | None = None) -> Check:
    """The sign of an estimated slope (sign = +1: the claim says it grows; −1: decreases).

    ``confirmed`` when sign·slope > z·se, ``refuted`` when sign·slope < −z·se (evidence of the
    opposite trend), else ``inconclusive``: the standard error that would decide is
    |slope|/z. ``dof``: the standard error's degrees of freedom (e.g. draws − 1 for a mean
    over draws); z is then the Student-t quantile. ``resolve``: as for
    :func:`estimate_vs_theory`, relative to |slope|.

    Resolution: (z + power)·se/|slope|, the smallest effect (relative to the one seen) that is
    confirmed with probability ≥ 95 %. Under calibration a sign flip reverses the claimed
    direction; ``("relative", δ, name, m)`` (m: the true effect sign·slope, from runs under the
    true model) judges the claim "the effect is m(1 + δ)" instead, |sign·slope − m(1 + δ)| ≤
    z·se, so that a claimed slope moved by k resolutions is refuted as often as the
    resolution says (about 95 % at k = 1)."""
    if sign not in (1, -1):
        raise ValueError(f"sign={sign!r}; allowed: 1 or -1")
    _check_resolve(resolve, name)
    p = _perturbation(ctx, name)
    if p is not None and p[0] == "sign":
        sign = -sign
        ctx.ledger.perturbation_applied = True
    finite([slope, stderr], what=name)
    if stderr < 0:
        raise ValueError(f"{name}: stderr={stderr} must be ≥ 0")
    crit, power = critical_value(ctx.alpha, 1, dof, what=f"{name}: dof")
    z, power = float(crit), float(power)
    _spend(ctx, name, 1, policy="trend", required=resolve)
    s = sign * slope
    res = (z + power) * stderr / abs(slope) if slope != 0 else math.inf
    ctx.ledger.set_resolution(res)
    score = np.array([-s / stderr if stderr > 0 else (-math.inf if s > 0 else math.inf)])
    details = {"slope": float(slope), "slope_stderr": float(stderr), "claimed_sign": sign,
               **({"dof": float(dof)} if dof is not None else {})}
    columns = {"slope": float(slope), "se": float(stderr), "claimed_sign": sign, "z": z,
               "deviation": s, "unit": (z + power) * stderr}
    if p is not None and p[0] == "relative" and len(p) >= 4 and p[3] is not None:
        # the claim moved to "the effect is m(1 + δ)": judged as an estimate against it
        claimed = p[3] * (1 + p[1])
        ctx.ledger.perturbation_applied = True
        ok = abs(s - claimed) <= z * stderr
        details["perturbed_effect"] = claimed
        return ctx.ledger.record(Check("confirmed" if ok else "refuted", z, np.array([ok]),
                                       np.array([abs(s - claimed) / max(stderr, 1e-300)]), res,
                                       details, columns=columns))
    if s > z * stderr:
        return _required(ctx, ctx.ledger.record(Check(
            "confirmed", z, np.array([True]), score, res, details, columns=columns)),
            resolve, name)
    if s < -z * stderr:
        return ctx.ledger.record(Check("refuted", z, np.array([False]), score, res, details,
                                       columns=columns))
    more = ("more replicates (the t quantile falls with them too)" if dof is not None
            and math.isfinite(dof) and dof < 30 else
            f"about {(stderr * z / max(abs(slope), 1e-300)) ** 2:.1f}× the samples")
    needs = f"a standard error below {abs(slope) / z:.3g} (now {stderr:.3g}): {more}, or a wider range"
    return ctx.ledger.record(Check("inconclusive", z, np.array([False]), score, res, details,
                                   needs=needs, columns=columns))


def sigma_upper_bound(sigma: float, n: int, alpha: float) -> float:
    """σ̂·√((n − 1)/χ²_{n−1}(α)): exceeded by the true σ of n Gaussian samples with
    probability α."""
    return sigma * math.sqrt((n - 1) / float(_chi2.ppf(alpha, n - 1)))


def confidence_sequence_radius(n: np.ndarray | int, sigma: float, alpha: float,
                               rho: float | None = None) -> np.ndarray:
    """Radius of the two-sided normal-mixture confidence sequence for a running mean of n
    observations of standard deviation σ (Robbins): with V = nσ²,
    P(∃n: |S_n − nμ| ≥ √((V + ρ)(2 log(1/α) + log((V + ρ)/ρ)))) ≤ α (Ville's inequality for the
    mixture martingale; exact for Gaussian increments, asymptotically valid by the
    time-uniform CLT otherwise). ρ defaults to σ²·n₀ with n₀ = 16 (tightest near 16 samples)."""
    n = np.asarray(n, float)
    rho = sigma**2 * 16 if rho is None else rho
    V = n * sigma**2
    return np.sqrt((V + rho) * (2 * math.log(1 / alpha) + np.log((V + rho) / rho))) / n


def sequential(ctx, draw: Callable[[int, int], ArrayLike], theory: float = 0.0,
               tolerance: float | None = None, bias: float = 0.0, batch: int = 256,
               budget: int = 2**16, min_batches: int = 2, name: str = "sequential",
               sign: int | None = None) -> Check:
    """Add batches of samples (``draw(k, size)``: the k-th batch of ``size`` samples,
    independent of the others) until the anytime-valid confidence sequence for their mean
    decides, or the ``budget`` of samples is spent (``inconclusive``, saying how far it was).
    σ is not taken at its estimate: a plug-in σ̂ from few samples makes the sequence
    anti-conservative (at 8 Gaussian samples the first look alone errs 10⁵× more often than
    with σ known). Half of α goes to an upper confidence bound for σ at every look
    (χ² with n − 1 dof, Gaussian samples; Bonferroni over the budget's looks), the other half
    to the sequence run with that bound. Nothing is decided before ``min_batches``.

    Two kinds of claim:

    - a value (``sign=None``): ``refuted`` when the sequence excludes θ ± bias; ``confirmed``
      when it lies inside θ ± (``tolerance`` + bias), i.e. any deviation beyond the
      tolerance is excluded;
    - a direction (``sign`` = ±1: the mean lies above θ for +1, below for −1; no tolerance):
      ``confirmed`` when the sequence lies beyond θ + bias on the claimed side, ``refuted``
      when it lies beyond θ − bias on the other side (evidence of the opposite direction).
      Under calibration, as for :func:`trend`.

    A map (``python -m verification map``) judges each setting with its own sequence, so a
    setting far from the boundary stops after ``min_batches`` while one near it draws up to
    the budget. ``draw`` may run its batch on the engine (``ctx.map``: stored, reused after an
    interruption)."""
    _check_sequential(name, sign, tolerance, batch, budget, min_batches, bias)
    _spend(ctx, name, 1, policy="sequential")
    theory, sign, moved_effect = _perturbed_claim(ctx, name, theory, sign)
    xs: list[np.ndarray] = []
    looks = budget // batch
    while True:
        x = np.asarray(draw(len(xs), batch), float).ravel()
        if x.size != batch:
            raise ValueError(f"{name}: draw({len(xs)}, {batch}) gave {x.size} samples")
        finite(x, what=name)
        xs.append(x)
        allx = np.concatenate(xs)
        n, mean, sigma = allx.size, float(allx.mean()), float(allx.std(ddof=1))
        sigma_up = sigma_upper_bound(sigma, n, ctx.alpha / (2 * looks))
        radius = float(confidence_sequence_radius(n, max(sigma_up, 1e-300), ctx.alpha / 2))
        effect = mean - theory if sign is None else sign * (mean - theory)
        decided = _sequential_decision(effect, radius, bias, tolerance, sign)
        spent = n + batch > budget
        if (decided is not None and len(xs) >= min_batches) or spent:
            break
    se = sigma / math.sqrt(n)
    # refuted with probability ≥ 95 % at this n: the radius, the mean's own 95 % noise and
    # a systematic error within ±bias on top of the allowance
    ref = abs(theory) if sign is None else abs(effect)
    unit = radius + Z95 * se + 2 * bias
    res = unit / ref if ref != 0 else math.inf
    ctx.ledger.set_resolution(res)
    details = {"n": n, "mean": mean, "sigma": sigma, "sigma_upper": sigma_up, "radius": radius,
               "batches": len(xs),
               "budget": budget, **({"claimed_sign": sign} if sign is not None else {})}
    columns = {"mean": mean, "theory": theory, "radius": radius, "bias": float(bias), "n": n,
               "se": se, "deviation": effect, "unit": unit,
               **({"tolerance": float(tolerance)} if sign is None else {"claimed_sign": sign})}
    score = np.array([(abs(effect) - bias) / radius if radius > 0 else math.inf])
    if moved_effect is not None:
        # judged where the unperturbed sequence stopped, against the moved effect
        details["perturbed_effect"] = moved_effect
        decided = "refuted" if abs(effect - moved_effect) > radius + bias else "confirmed"
    if decided is None or (len(xs) < min_batches and moved_effect is None):
        target = (f"below {tolerance + bias - abs(effect):.3g}" if sign is None
                  else f"below |mean − θ| − bias = {max(abs(effect) - bias, 0):.3g}")
        return ctx.ledger.record(Check(
            "inconclusive", radius, np.array([False]), score, res, details,
            needs=f"the sample budget {budget} is spent: a larger budget (the radius "
                  f"{radius:.3g} must fall {target})", columns=columns))
    return ctx.ledger.record(Check(decided, radius, np.array([decided == "confirmed"]), score,
                                   res, details, columns=columns))


def _check_sequential(name, sign, tolerance, batch, budget, min_batches, bias) -> None:
    if sign not in (None, 1, -1):
        raise ValueError(f"{name}: sign={sign!r}; allowed: None (a value), 1 or -1 (a direction)")
    if sign is None and not (tolerance is not None and tolerance > 0):
        raise ValueError(f"{name}: tolerance={tolerance!r}; allowed: > 0 (a value claim)")
    if sign is not None and tolerance is not None:
        raise ValueError(f"{name}: tolerance={tolerance!r} with sign={sign}; a direction has no "
                         "tolerance (give None)")
    if not (batch >= 2 and budget >= batch and min_batches >= 1 and bias >= 0):
        raise ValueError(f"{name}: batch ≥ 2, budget ≥ batch, min_batches ≥ 1, bias ≥ 0 are "
                         f"needed (got {batch}, {budget}, {min_batches}, {bias})")


def _perturbed_claim(ctx, name: str, theory: float, sign: int | None):
    """(θ, sign, moved effect or None) as judged under the calibration perturbation."""
    p = _perturbation(ctx, name)
    if sign is None:
        return float(perturbed(ctx, np.array(float(theory)), family=name)), None, None
    if p is not None and p[0] == "sign":
        ctx.ledger.perturbation_applied = True
        return float(theory), -sign, None
    if p is not None and len(p) >= 4 and p[3] is not None:
        ctx.ledger.perturbation_applied = True
        return float(theory), sign, p[3] * (1 + p[1])   # the claim: "the effect is m(1 + δ)"
    return float(theory), sign, None


def _sequential_decision(effect: float, radius: float, bias: float, tolerance: float | None,
                         sign: int | None) -> str | None:
    """What the confidence sequence decides now (None: go on)."""
    if sign is None:
        if abs(effect) > radius + bias:
            return "refuted"
        return "confirmed" if abs(effect) + radius <= tolerance + bias else None
    if effect - radius > bias:
        return "confirmed"
    return "refuted" if effect + radius < -bias else None


def exact(ctx, computed: ArrayLike | Sequence[Any], claimed: ArrayLike | Sequence[Any], *,
          rtol: float = 0.0, atol: float = 0.0, name: str = "exact",
          scale: ArrayLike | None = None, labels: Sequence[str] | None = None) -> Check:
    """Values computed exactly or to high precision (SymPy, mpmath, quadrature to a stated
    accuracy) against the claimed ones, with a numerical tolerance the caller states:
    |computed − claimed| ≤ atol + rtol·s for every value, s = |``scale``| or |claimed| (the
    claimed value before any calibration perturbation). ``confirmed`` when every value is
    within it, else ``refuted``; never ``inconclusive``. A non-finite value raises
    ``NaNInEvidence`` (the runner's ``error``), a complex one ValueError.

    rtol, atol: finite, ≥ 0, not both 0 (give the accuracy the values are computed to, e.g.
    atol=1e-12 for double precision, 1e-30 for mpmath at 50 digits). Values may be numbers,
    numpy arrays or sequences of SymPy/mpmath numbers: the difference is taken in their own
    arithmetic before it is rounded to a float, so a tolerance below double precision is
    honoured. The family is exact in the contract: α = 0, resolution None, its comparisons
    counted (``Ledger.spend(..., exact=True)``). Calibration's perturbations act on the claimed
    values as in the other policies (``perturbed``; then they are compared as floats).
    Check: z = 1 and score = |Δ|/tolerance (≤ 1 passes; inf for a deviation where the tolerance
    is 0); the evidence lists every value (computed, claimed, delta = |Δ|, tolerance, score,
    passed)."""
    for what, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name}: {what}={v!r}; allowed: a finite number ≥ 0")
    if rtol == 0 and atol == 0:
        raise ValueError(f"{name}: rtol = atol = 0; state the numerical tolerance the values "
                         "are computed to (rtol, atol or both > 0)")
    claimed_v = _values(claimed, name, "claimed")
    computed_v = _values(computed, name, "computed")
    if computed_v.size == 1 and claimed_v.size > 1:
        computed_v = np.repeat(computed_v, claimed_v.size)
    if computed_v.size != claimed_v.size:
        raise ValueError(f"{name}: {computed_v.size} computed values for {claimed_v.size} "
                         "claimed ones; give one per claimed value")
    theory = np.array([float(v) for v in claimed_v])
    estimate = np.array([float(v) for v in computed_v])
    finite(theory, estimate, what=name)
    ref = np.abs(theory) if scale is None else np.abs(np.broadcast_to(
        np.asarray(scale, float), theory.shape))
    finite(ref, what=f"{name}: scale")
    moved = perturbed(ctx, theory, None if scale is None else ref)
    if moved is not theory:                              # under calibration: floats
        claimed_v = np.array(moved, dtype=object)
    n = theory.size
    ctx.ledger.spend(name, n, 0.0, exact=True, policy="exact", setting=setting_of(ctx))
    delta = np.array([_abs_difference(c, t) for c, t in zip(computed_v, claimed_v)])
    finite(delta, what=name)
    tol = atol + rtol * ref
    ok = delta <= tol
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(tol > 0, delta / tol, np.where(delta > 0, np.inf, 0.0))
    worst = int(np.argmax(score))
    details = {"n": int(n), "rtol": float(rtol), "atol": float(atol), "worst_index": worst,
               "worst_delta": float(delta[worst]), "worst_tolerance": float(tol[worst])}
    columns = {"computed": estimate, "claimed": np.asarray(moved, float), "delta": delta,
               "tolerance": tol, "deviation": estimate - np.asarray(moved, float), "unit": tol,
               "se": 0.0}
    return ctx.ledger.record(Check("confirmed" if ok.all() else "refuted", 1.0, ok, score, None,
                                   details, columns=columns, labels=_labels(labels, n, name)))


def _values(x: Any, name: str, what: str) -> np.ndarray:
    """``x`` flattened to a 1-d object array of Python/SymPy/mpmath numbers (numpy scalars as
    Python ones, so that mixed arithmetic stays in the exact type)."""
    arr = np.asarray(x, dtype=object).ravel()
    out = np.empty(arr.size, dtype=object)
    for i, v in enumerate(arr):
        v = v.item() if isinstance(v, np.generic) else v
        try:
            float(v)                         # a non-finite value is left to ``finite``
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: {what} value #{i} = {v!r} is not a real number "
                             f"({exc})") from None
        out[i] = v
    return out


def _abs_difference(a: Any, b: Any) -> float:
    """|a − b| in the values' own arithmetic (exact for SymPy rationals, at mpmath's working
    precision), then as a float."""
    try:
        return float(abs(a - b))
    except (TypeError, ValueError):
        return abs(float(a) - float(b))


# --- validity guards -------------------------------------------------------------------------
class OutsideRealisableSet(ValueError):
    """A state a verdict would rest on is not realisable; the runner gives ``error``."""


def realisable(states: ArrayLike | Sequence[Any], check: Callable[[Any], object],
               what: str = "state") -> None:
    """Apply ``check`` (e.g. ``ReducedModel.check_state``, ``Geometry.check_overlaps``) to each
    state; raise :class:`OutsideRealisableSet` naming ``what`` and the first failure."""
    for i, s in enumerate(states):
        try:
            check(s)
        except ValueError as exc:
            raise OutsideRealisableSet(f"{what} #{i} is not realisable: {exc}") from None
