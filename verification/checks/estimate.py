"""``estimate_vs_theory``: each estimate against its theory value, |Δ| ≤ z·se + bias."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..stats import finite, z_compare
from .contract import (Check, _check_resolve, _finest, _labels, _required, _resolution, _spend,
                       critical_value, perturbed)


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
