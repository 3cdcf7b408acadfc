"""``sequential``: batches until an anytime-valid confidence sequence decides, or the budget is spent."""

from __future__ import annotations

from collections.abc import Callable
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import chi2 as _chi2

from ..stats import finite
from .contract import (Check, _perturbation, perturbed, _spend, Z95)


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
