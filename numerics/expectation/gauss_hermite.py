"""Tensor-product Gauss–Hermite quadrature (probabilists' Hermite): exact for polynomials of
degree ≤ 2n − 1 in each variable; for few dimensions (n^K points)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
import itertools

import numpy as np

from .base import Estimate, ExpectationRule, Integrand, Nodes


@cache
def _rule(n: int, K: int):
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / np.sqrt(2 * np.pi)
    Z = np.array(list(itertools.product(x, repeat=K))).T.reshape(K, -1)
    W = np.prod(np.array(list(itertools.product(w, repeat=K))), axis=1)
    return Z, W


@dataclass(frozen=True)
class GaussHermite(ExpectationRule):
    """n-point rule per dimension (n^K points in all, at most ``max_points``)."""

    n: int = 40
    max_points: int = 2_000_000

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"GaussHermite: n={self.n} must be a positive integer")

    def nodes(self, K: int) -> Nodes:
        if self.n**K > self.max_points:
            raise ValueError(f"GaussHermite: {self.n}^{K} points exceed max_points="
                             f"{self.max_points}; use QuasiMonteCarlo for K={K} dimensions")
        return _rule(self.n, K)

    def expect(self, f: Integrand, K: int) -> Estimate:
        """The n-point value with its quadrature error estimated by the difference with the
        companion rule's (2n points; n/2 when (2n)^K points exceed ``max_points``)."""
        Z, W = self.nodes(K)
        value = np.asarray(f(Z)) @ W
        Zo, Wo = self.companion().nodes(K)
        return Estimate(value, 0.0, quadrature_error=np.abs(value - np.asarray(f(Zo)) @ Wo))

    def companion(self) -> ExpectationRule:
        return _Doubled(self)


@dataclass(frozen=True)
class _Doubled(ExpectationRule):
    """The 2n-point rule of an n-point one in each dimension K where (2n)^K points fit in
    ``max_points``, else the n/2-point rule (the error of the coarser of two rules bounds the
    finer one's)."""

    rule: GaussHermite

    def nodes(self, K: int) -> Nodes:
        n, cap = self.rule.n, self.rule.max_points
        return GaussHermite(2 * n if (2 * n) ** K <= cap else max(1, n // 2), cap).nodes(K)
