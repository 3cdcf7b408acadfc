"""``exact``: exact and high-precision values against the claimed ones within a stated tolerance (α = 0)."""

from __future__ import annotations

from collections.abc import Sequence
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..stats import finite
from .contract import (Check, _labels, perturbed, setting_of)


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
