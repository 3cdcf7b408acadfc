"""Randomised quasi-Monte Carlo: R independent Owen-scrambled Sobol' sequences of 2^m points
mapped through Φ⁻¹; the standard error comes from the spread over the R replicates."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from .base import Estimate, ExpectationRule, Integrand, Nodes


@lru_cache(maxsize=32)
def _replicates(K, m, R, seed):
    out = []
    for r in range(R):
        u = qmc.Sobol(K, scramble=True, seed=np.random.default_rng([seed, r])).random_base2(m)
        out.append(ndtri(np.clip(u, 1e-16, 1 - 1e-16)).T)
    return np.stack(out)  # R × K × n


@dataclass(frozen=True)
class QuasiMonteCarlo(ExpectationRule):
    """``replicates`` scrambled Sobol' sequences of 2^m points each."""

    m: int = 12
    replicates: int = 8
    seed: int = 0
    deterministic = True

    def __post_init__(self):
        if self.replicates < 2:
            raise ValueError(f"QuasiMonteCarlo: replicates={self.replicates} must be >= 2 "
                             "(the standard error needs several scramblings)")
        if not 1 <= self.m <= 30:
            raise ValueError(f"QuasiMonteCarlo: m={self.m} must be in [1, 30] (2^m points)")

    def nodes(self, K: int) -> Nodes:
        Z = _replicates(K, self.m, self.replicates, self.seed)
        R, _, n = Z.shape
        return np.concatenate(list(Z), axis=1), np.full(R * n, 1.0 / (R * n))

    def companion(self) -> ExpectationRule:
        """The same rule on independent scramblings (seed + 1)."""
        return QuasiMonteCarlo(self.m, self.replicates, self.seed + 1)

    def expect(self, f: Integrand, K: int) -> Estimate:
        Z = _replicates(K, self.m, self.replicates, self.seed)
        means = np.stack([np.asarray(f(z)).mean(-1) for z in Z])
        return Estimate(means.mean(0), means.std(0, ddof=1) / np.sqrt(len(means)), dof=len(means) - 1)
