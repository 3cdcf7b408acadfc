"""Plain Monte Carlo with an explicit seed; standard error = sample std / √n."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Estimate, ExpectationRule, Integrand, Nodes


@dataclass(frozen=True)
class MonteCarlo(ExpectationRule):
    """n i.i.d. draws from ``numpy.random.default_rng(seed)``."""

    n: int = 100_000
    seed: int = 0
    deterministic = False

    def __post_init__(self):
        if self.n < 2:
            raise ValueError(f"MonteCarlo: n={self.n} must be >= 2")

    def nodes(self, K: int) -> Nodes:
        Z = np.random.default_rng(self.seed).standard_normal((K, self.n))
        return Z, np.full(self.n, 1.0 / self.n)

    def companion(self) -> ExpectationRule:
        """The same rule on independent draws (seed + 1)."""
        return MonteCarlo(self.n, self.seed + 1)

    def expect(self, f: Integrand, K: int) -> Estimate:
        Z, _ = self.nodes(K)
        v = np.asarray(f(Z))
        return Estimate(v.mean(-1), v.std(-1, ddof=1) / np.sqrt(self.n), dof=self.n - 1)
