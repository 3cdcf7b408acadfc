"""Exact judgements beyond a value and its tolerance (α = 0, like :func:`exact`): an identity
SymPy proves (``identity``), the sign of exactly computed values (``signs``), and a value
against a bound (``bound``: exact, or at the claim's α when the values carry standard errors)."""

from __future__ import annotations

from collections.abc import Sequence
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
import sympy as sp

from ..stats import finite
from .contract import Check, _labels, _spend, critical_value, perturbed, setting_of


def identity(ctx, differences: Sequence[Any], *, name: str = "identity",
             labels: Sequence[str] | None = None) -> Check:
    """Each of ``differences`` (SymPy expressions: derived − claimed) is identically 0.

    ``confirmed`` when SymPy proves every one 0 (``simplify`` to 0, else ``equals(0)``),
    ``refuted`` when it proves one non-zero, else ``inconclusive`` (SymPy could not decide:
    what would decide is a proof or a counterexample at a point). An exact family: α = 0,
    resolution None. Calibration's perturbations do not apply (there is no claimed number to
    move; a wrong formula is a declared mutation). Columns: ``proven`` (1 zero, 0 undecided,
    −1 non-zero) and ``deviation`` (0, or 1 where it is not proven zero), ``unit`` 1."""
    exprs = [sp.sympify(e) for e in differences]
    if not exprs:
        raise ValueError(f"{name}: differences is empty; give at least one expression")
    ctx.ledger.spend(name, len(exprs), 0.0, exact=True, policy="identity",
                     setting=setting_of(ctx))
    proven = np.array([_proven_zero(e) for e in exprs], int)
    residual = [str(sp.simplify(e)) if p != 1 else "0" for e, p in zip(exprs, proven)]
    ok = proven == 1
    decision = ("refuted" if np.any(proven == -1) else "confirmed" if ok.all()
                else "inconclusive")
    score = np.where(ok, 0.0, np.where(proven == -1, np.inf, 1.0))
    worst = int(np.argmax(score))
    details = {"n": len(exprs), "worst_index": worst, "worst_residual": residual[worst]}
    needs = ("" if decision != "inconclusive" else
             f"SymPy cannot decide whether {residual[worst]} is 0: a proof, or a point where "
             "it is not 0, would decide")
    columns = {"residual": np.array(residual, dtype=str), "proven": proven,
               "deviation": (~ok).astype(float), "unit": 1.0, "se": 0.0}
    return ctx.ledger.record(Check(decision, 1.0, ok, score, None, details, needs=needs,
                                   columns=columns, labels=_labels(labels, len(exprs), name)))


def _proven_zero(expr: sp.Expr) -> int:
    """1: ``expr`` is 0; −1: it is not; 0: SymPy cannot tell."""
    if expr == 0 or sp.simplify(expr) == 0:
        return 1
    verdict = expr.equals(0)
    return 0 if verdict is None else (1 if verdict else -1)


def signs(ctx, values: ArrayLike, claimed: ArrayLike, *, atol: float,
          name: str = "signs", labels: Sequence[str] | None = None) -> Check:
    """Values computed exactly or to a stated accuracy ``atol`` have the claimed signs
    (+1, −1; 0: the value is 0 within ``atol``). ``refuted`` when a value lies beyond ``atol``
    on the other side of 0 (or away from 0 where 0 is claimed); ``inconclusive`` when a value
    claimed non-zero lies within ±``atol`` (degenerate at the working accuracy: more digits
    would decide); else ``confirmed``. An exact family: α = 0, resolution None. A sign flip
    under calibration negates the claimed signs. Columns: value, claimed_sign,
    ``deviation`` = how far the value lies on the wrong side (−sign·value; |value| where 0 is
    claimed), ``unit`` = atol."""
    if not (isinstance(atol, (int, float)) and math.isfinite(atol) and atol > 0):
        raise ValueError(f"{name}: atol={atol!r}; allowed: a finite number > 0 (the accuracy "
                         "the values are computed to)")
    v = np.asarray(values, float).ravel()
    s = np.asarray(claimed, float).ravel()
    if s.size == 1 and v.size > 1:
        s = np.repeat(s, v.size)
    if s.size != v.size or not np.all(np.isin(s, (-1.0, 0.0, 1.0))):
        raise ValueError(f"{name}: claimed={np.asarray(claimed).tolist()!r}; allowed: one of "
                         "+1, 0, −1 per value")
    finite(v, what=name)
    s = np.asarray(perturbed(ctx, s, np.ones_like(s)) if _sign_flip(ctx) else s, float)
    ctx.ledger.spend(name, v.size, 0.0, exact=True, policy="signs", setting=setting_of(ctx))
    wrong = np.where(s == 0, np.abs(v), -s * v)          # > atol: refuted
    degenerate = (s != 0) & (np.abs(v) <= atol)
    ok = (wrong <= atol) & ~degenerate
    decision = ("refuted" if np.any(wrong > atol) else "inconclusive" if degenerate.any()
                else "confirmed")
    score = wrong / atol
    worst = int(np.argmax(np.where(degenerate & (decision == "inconclusive"), np.inf, score)))
    details = {"n": int(v.size), "atol": float(atol), "worst_index": worst,
               "worst_value": float(v[worst]), "worst_claimed_sign": int(s[worst])}
    needs = ("" if decision != "inconclusive" else
             f"value #{worst} = {v[worst]:.3g} is 0 within the accuracy {atol:g}: more digits "
             "would decide its sign")
    columns = {"value": v, "claimed_sign": s, "deviation": wrong, "unit": float(atol),
               "se": 0.0}
    return ctx.ledger.record(Check(decision, 1.0, ok, score, None, details, needs=needs,
                                   columns=columns, labels=_labels(labels, v.size, name)))


def _sign_flip(ctx) -> bool:
    p = getattr(ctx, "perturbation", None)
    return p is not None and p[0] == "sign"


def bound(ctx, values: ArrayLike, *, upper: ArrayLike | None = None,
          lower: ArrayLike | None = None, stderr: ArrayLike | None = None,
          atol: float = 0.0, dof: float | None = None, strict: bool = False,
          refutes: bool | ArrayLike = True, confirms: bool | ArrayLike = True,
          needs: str = "", name: str = "bound",
          labels: Sequence[str] | None = None) -> Check:
    """Values against a claimed bound: lower ≤ value ≤ upper (either side may be absent).

    Exact values (``stderr`` None): ``refuted`` when a value lies beyond a bound by more than
    ``atol`` (the accuracy it is computed to; ``strict``: by ``atol`` or more, so that with
    atol = 0 a value on the bound fails: lower < value < upper), else ``confirmed``; α = 0.
    ``refutes=False`` makes the bound a goal rather than the claim: a value beyond it leaves
    the leg ``inconclusive`` (``needs``: what would decide) instead of refuting it, e.g. "the
    runs reached the limit" where more steps would decide. ``refutes`` and ``confirms`` may
    also be given per value: a value that is only a bound on the quantity (a censored
    measurement) supports one decision, e.g. a lower bound on a quantity claimed ≥ 0 can
    confirm but not refute; the leg is refuted where a value that may refute is beyond its
    bound, confirmed where every value is inside and may confirm, else inconclusive. Estimates with
    standard errors: the family is judged at the claim's α with Bonferroni z over the values
    (Student t with ``dof``): ``refuted`` when a value exceeds a bound by more than z·se,
    ``confirmed`` when every value is inside by more than z·se, else ``inconclusive`` (the
    standard error that would decide). Its resolution is (z + z₀.₉₅)·se/|bound| at the value
    nearest its bound (/|value| for a bound of 0, as for a trend's sign). Calibration moves
    the bound (each side is the claimed value; its sign flip negates a bound and keeps its
    side).
    Columns: value, bound, side (+1 upper, −1 lower), ``deviation`` = side·(value − bound)
    (> 0: outside), se, ``unit``."""
    _check_bound_options(name, upper, lower, atol, stderr, strict)
    v = np.asarray(values, float).ravel()
    finite(v, what=name)
    se = np.zeros_like(v) if stderr is None else np.broadcast_to(
        np.asarray(stderr, float), v.shape).ravel()
    finite(se, what=f"{name}: stderr")
    if np.any(se < 0):
        raise ValueError(f"{name}: stderr has a negative value; allowed: standard errors ≥ 0")
    if upper is not None and lower is not None and (np.ndim(refutes) or np.ndim(confirms)):
        raise ValueError(f"{name}: refutes/confirms per value are for a one-sided bound (a "
                         "value bounded on one side supports opposite decisions on the two "
                         "sides); give upper or lower")
    side, b, x, s = _bound_sides(ctx, v, se, upper, lower, name)
    n = x.size
    may_refute = np.tile(_per_value(refutes, v.shape, name, "refutes"), n // v.size)
    may_confirm = np.tile(_per_value(confirms, v.shape, name, "confirms"), n // v.size)
    outside = side * (x - b)
    if stderr is None:
        ctx.ledger.spend(name, n, 0.0, exact=True, policy="bound", setting=setting_of(ctx))
        ok = outside < atol if strict else outside <= atol
        score = outside / atol if atol > 0 else np.where(ok, 0.0, np.inf)
        z, res, unit = 1.0, None, atol
        beyond = ~ok
    else:
        crit, power = critical_value(ctx.alpha, n, dof, what=f"{name}: dof")
        z = float(crit)
        _spend(ctx, name, n, policy="bound")
        unit = (z + float(power)) * s
        with np.errstate(divide="ignore", invalid="ignore"):
            ref = np.where(np.abs(b) > 0, np.abs(b), np.abs(x))    # a bound of 0: as a trend
            rel = np.where(ref > 0, unit / ref, np.inf)
            score = np.where(s > 0, outside / s, np.sign(outside) * np.inf)
        score = np.nan_to_num(score, nan=0.0, posinf=np.inf, neginf=-np.inf)   # on the bound
        res = float(np.min(rel))
        ctx.ledger.set_resolution(res)
        ok = score < -z
        beyond = score > z
    worst = int(np.argmax(score))
    decision = ("refuted" if np.any(beyond & may_refute) else
                "confirmed" if ok.all() and may_confirm.all() else "inconclusive")
    if decision == "inconclusive" and not needs:
        if np.any(beyond):
            i = int(np.argmax(np.where(beyond, score, -np.inf)))
            needs = (f"value #{i % v.size} = {x[i]:.4g} lies beyond its bound {b[i]:.4g}, "
                     "which this leg does not refute on")
        elif ok.all():
            i = int(np.argmin(may_confirm))
            needs = (f"value #{i % v.size} = {x[i]:.4g} is inside its bound {b[i]:.4g}, which "
                     "it does not confirm on")
        else:
            needs = (f"value #{worst % v.size} = {x[worst]:.4g} ± {s[worst]:.2g} is "
                     f"within {z:.2f} se of its bound {b[worst]:.4g}: a standard "
                     f"error below {abs(outside[worst]) / z:.3g} would decide")
    needs = needs if decision == "inconclusive" else ""
    details = {"n": int(n), "worst_index": worst, "worst_value": float(x[worst]),
               "worst_bound": float(b[worst]), "worst_side": "upper" if side[worst] > 0
               else "lower", **({"atol": float(atol), "strict": bool(strict)}
                                if stderr is None else {}),
               **({} if may_refute.all() else {"refutes": may_refute[:v.size].tolist()
                                                if not np.isscalar(refutes) else False}),
               **({} if may_confirm.all() else {"confirms": may_confirm[:v.size].tolist()})}
    columns = {"value": x, "bound": b, "side": side, "deviation": outside, "se": s,
               "unit": unit}
    lab = None if labels is None else list(labels) * (x.size // v.size)
    return ctx.ledger.record(Check(decision, z, ok, np.asarray(score, float), res, details,
                                   needs=needs, columns=columns, labels=_labels(lab, n, name)))


def _per_value(flag, shape, name: str, what: str) -> np.ndarray:
    """``refutes``/``confirms``: one bool, or one per value."""
    a = np.asarray(flag)
    if a.dtype != bool:
        raise ValueError(f"{name}: {what}={flag!r}; allowed: True, False or one bool per value")
    if a.ndim and a.size != int(np.prod(shape)):
        raise ValueError(f"{name}: {what} has {a.size} entries for {int(np.prod(shape))} values; "
                         "allowed: one bool, or one per value")
    return np.broadcast_to(a.ravel() if a.ndim else a, (int(np.prod(shape)),)).copy()


def _check_bound_options(name, upper, lower, atol, stderr, strict) -> None:
    if upper is None and lower is None:
        raise ValueError(f"{name}: give upper, lower or both")
    if isinstance(atol, bool) or not isinstance(atol, (int, float, np.integer, np.floating)) \
            or not math.isfinite(atol) or atol < 0:
        raise ValueError(f"{name}: atol={atol!r}; allowed: a finite number ≥ 0")
    if stderr is not None and (strict or atol):
        raise ValueError(f"{name}: strict and atol are for exact values; with stderr the "
                         "comparison is at z·se")


def _bound_sides(ctx, v, se, upper, lower, name):
    """(side, bound, value, se) of every comparison, upper sides first: side +1 for
    value ≤ bound, −1 for value ≥ bound; each bound as calibration moves it (``perturbed``: a
    sign flip negates it, as every policy's claimed values; a bound of 0 stays)."""
    sides, bounds = [], []
    for side, b in ((1, upper), (-1, lower)):
        if b is None:
            continue
        b = np.broadcast_to(np.asarray(b, float), v.shape).ravel()
        finite(b, what=f"{name}: bound")
        sides.append(np.full(v.shape, side))
        bounds.append(np.asarray(perturbed(ctx, b, family=name), float))
    k = len(sides)
    return (np.concatenate(sides), np.concatenate(bounds), np.tile(v, k), np.tile(se, k))


def not_judged(ctx, name: str, why: str) -> Check:
    """A leg the claim cannot judge at this setting (e.g. a comparison that would compare a
    quantity with itself): ``inconclusive`` with ``why`` as what would decide. No comparison is
    spent; the verdict it contributes can only be ``inconclusive``."""
    if not why:
        raise ValueError(f"{name}: why is empty; say what would decide")
    return Check("inconclusive", 1.0, np.zeros(0, bool), np.zeros(0), None,
                 {"not_judged": True}, needs=why)
