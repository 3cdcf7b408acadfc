"""Common random numbers of the reduced multi-head flow and what is computed from per-draw
values: scrambled Sobol' (or pseudo-random) base points in four antithetic copies, estimates
with standard errors over the antithetic groups, and first-passage times of sampled paths."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

__all__ = ["FlowDraws", "draws_for", "mean_and_se", "first_passage"]


@dataclass(frozen=True)
class FlowDraws:
    """Common random numbers: θ (n, F), ζ (n, L, F), g (n, L, H); second half mirrors the first."""

    theta: np.ndarray
    zeta: np.ndarray
    g: np.ndarray

    @property
    def n(self) -> int:
        return self.theta.shape[0]


def draws_for(prior, L: int, H: int, n: int, seed, kind: str = "sobol") -> FlowDraws:
    """n (a multiple of 4) draws: n/4 scrambled-Sobol' (``kind='sobol'``) or pseudo-random base
    points, each in four antithetic copies (θ − Eθ, ζ) → ±(θ − Eθ, ζ) times g → ±g (θ mirrored
    only for priors symmetric about their mean): at m = 0 the logits do not depend on χ, so the
    estimated drift E[∂φ/∂s·χ] is exactly ∂φ/∂s·Eθ."""
    if not (isinstance(n, (int, np.integer)) and n >= 8 and n % 4 == 0):
        raise ValueError(f"n={n!r} must be a multiple of 4, ≥ 8")
    if kind not in ("sobol", "random"):
        raise ValueError(f"kind={kind!r}; allowed: 'sobol', 'random'")
    F, k = prior.F, prior.n_uniform
    dim = k + L * F + L * H
    q = n // 4
    if kind == "sobol":
        u = qmc.Sobol(dim, scramble=True, seed=np.random.default_rng(seed)).random(q)
    else:
        u = np.random.default_rng(seed).random((q, dim))
    theta = prior.quantile(u[:, :k])
    z = ndtri(np.clip(u[:, k:], 1e-16, 1 - 1e-16))
    zeta = z[:, :L * F].reshape(q, L, F)
    g = z[:, L * F:].reshape(q, L, H)
    mirrored = prior.reflect(theta)
    theta2 = theta if mirrored is None else mirrored
    return FlowDraws(np.concatenate([theta, theta2, theta, theta2]),
                     np.concatenate([zeta, -zeta, zeta, -zeta]),
                     np.concatenate([g, g, -g, -g]))


def mean_and_se(x) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error of per-draw values (first axis: draws in ``draws_for`` order)
    with each group of four antithetic copies averaged first (the group means are independent
    for pseudo-random draws; for Sobol' points the error is an upper estimate)."""
    x = np.asarray(x, float)
    q = x.shape[0] // 4
    groups = x[:4 * q].reshape(4, q, *x.shape[1:]).mean(0)
    return groups.mean(0), groups.std(0, ddof=1) / np.sqrt(q)


def first_passage(t, values, threshold: float) -> float:
    """First time a sampled path crosses ``threshold`` upwards, linearly interpolated between
    samples; nan when it never does."""
    values = np.asarray(values, float)
    above = np.flatnonzero(values >= threshold)
    if len(above) == 0:
        return float("nan")
    i = above[0]
    if i == 0:
        return float(t[0])
    v0, v1 = values[i - 1], values[i]
    return float(t[i - 1] + (threshold - v0) / (v1 - v0) * (t[i] - t[i - 1]))
