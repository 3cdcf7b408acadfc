"""What a claim's checks spend and decide, whatever the policy: the ledger (families of comparisons
at the claim's α, calibration's perturbations of the claimed side), the error contract, the
``Check`` every policy returns, and the arithmetic they share (critical values, resolutions, the
resolution a leg must reach)."""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import norm, t as _student_t

from ..domain import setting_key

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
            # a comparison whose value was not identified (``extrapolate`` with no admissible
            # correction model) has no pull: its se is recorded as 0
            known = np.broadcast_to(np.asarray(cols.get("identified", True), bool), (n,))
            for key in ("deviation", "se", "unit", "bias"):
                values = np.broadcast_to(np.asarray(cols.get(key, 0.0), float), (n,))
                if key == "se":
                    values = np.where(known, values, 0.0)
                values = [float(v) for v in values]
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
