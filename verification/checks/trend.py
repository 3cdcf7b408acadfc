"""``trend``: the sign of a slope, refuted only on evidence of the opposite sign."""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import ArrayLike

from ..stats import finite
from .contract import (Check, _check_resolve, critical_value, _perturbation, _required, _spend)


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


def panel_trend(ctx, effects: ArrayLike, stderrs: ArrayLike, *, name: str, panel_name: str,
                sign: int = 1, labels: Sequence[str] | None = None) -> tuple[Check, int]:
    """The claimed sign of every effect of a panel (sign·e_i > 0 for all i), an
    intersection–union test: :func:`trend` on the smallest standardised effect e_i/se_i
    (confirmed there confirms all at α without a Bonferroni factor). A refutation at that
    single z selected the smallest of n, so it is judged again on the whole panel at the
    n-comparison z (:func:`bound` of sign·e_i against 0 with their standard errors, family
    ``panel_name``): refuted when some lies beyond 0 by more than z_n·se_i, else undecided.
    Under calibration's moved effect (``perturbed_effect``) the trend stands. An effect
    without sampling error counts as ±inf standard errors by its sign, 0 when it is 0.
    Returns (the check that decides, the index the trend judged)."""
    e = np.asarray(effects, float).ravel()
    se = np.asarray(stderrs, float).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        standardised = np.where(se > 0, sign * e / se,
                                np.where(e == 0, 0.0, np.sign(sign * e) * np.inf))
    i = int(np.argmin(standardised))
    check = trend(ctx, float(e[i]), float(se[i]), sign, name=name)
    if check.decision == "refuted" and "perturbed_effect" not in check.details:
        from .exact_kinds import bound
        check = bound(ctx, check.details["claimed_sign"] * e, lower=0.0, stderr=se,
                      name=panel_name, labels=labels)
    return check, i
