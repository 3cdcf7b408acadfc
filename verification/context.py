"""What a claim check gets from the runner: profile, seed, device, and the run's z."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import hashlib
from typing import TypeVar

import numpy as np
from scipy.stats import norm

__all__ = ["Context", "PROFILES"]

PROFILES = ("quick", "full")

_T = TypeVar("_T")


@dataclass(frozen=True)
class Context:
    """The run's settings as one claim sees them (frozen: a claim cannot change the run)."""

    profile: str = "quick"
    seed: int = 0
    device: str = "cpu"
    alpha: float = 1e-3          # family-wise error rate of a whole run
    n_claims: int = 1            # statistical claims in the run (Bonferroni over claims)
    progress: Callable[[float], object] | None = None      # callable(fraction) or None

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise ValueError(f"profile={self.profile!r}; allowed: {PROFILES}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha={self.alpha} must be in (0, 1)")

    def pick(self, quick: _T, full: _T) -> _T:
        """``quick`` under the quick profile, ``full`` under the full one."""
        return quick if self.profile == "quick" else full

    def z(self, n_checks: int) -> float:
        """Two-sided Bonferroni z for ``n_checks`` comparisons in this claim, the run's α
        shared over its statistical claims."""
        n = max(1, int(n_checks)) * max(1, self.n_claims)
        return float(norm.isf(self.alpha / (2 * n)))

    def claim_seed(self, claim_id: str) -> int:
        """A seed per claim derived from the run seed (independent streams, reproducible)."""
        h = hashlib.sha256(f"{self.seed}:{claim_id}".encode()).digest()
        return int.from_bytes(h[:4], "little")

    def rng(self, claim_id: str) -> np.random.Generator:
        return np.random.default_rng(self.claim_seed(claim_id))

    def tick(self, fraction: float) -> None:
        """Report progress (clipped to [0, 1]) to the runner's progress bar, if any."""
        if self.progress is not None:
            self.progress(min(max(float(fraction), 0.0), 1.0))
