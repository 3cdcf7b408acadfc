"""What a claim check gets from the runner: profile, seed, device, the claim's own α, the
ledger in which its checks record what they spend (``verification.checks``) and the mapper that
runs its ``map`` calls.

Plain data: nothing here knows where or how tasks run. The run's tasks (``verification.tasks``)
inject a mapper that makes each call a stored, reusable task of the run's engine; without one,
the calls run one after the other in this process (``in_order``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
import hashlib
from typing import Any, TypeVar

import numpy as np

from .checks.policies import Ledger
from .domain import PROFILES, setting_key

__all__ = ["Context", "Mapper", "in_order", "PROFILES", "DEFAULT_ALPHA"]

DEFAULT_ALPHA = 1e-4
"""A claim's false-refutation probability unless it declares its own (``@claim(alpha=...)``)."""

_T = TypeVar("_T")

Mapper = Callable[["Context", Callable[["Context", Any], Any], Sequence[Any], bool,
                   Callable[[float], None]], list]
"""``mapper(ctx, fn, items, shared, progress) -> [fn(ctx, item) for item in items]``: how
``Context.map`` runs its calls (``ctx`` is the caller's, stripped of progress bar, ledger and
perturbation; ``progress(fraction)`` as the calls finish; ``shared`` as for ``map``)."""


def in_order(ctx: Context, fn: Callable[[Context, Any], _T], items: Sequence[Any], shared: bool,
             progress: Callable[[float], None]) -> list[_T]:
    """The calls one after the other in this process, nothing stored (a context without a
    result store: a notebook's, a test's)."""
    out = []
    for i, item in enumerate(items):
        out.append(fn(ctx, item))
        progress((i + 1) / len(items))
    return out


@dataclass(frozen=True)
class Context:
    """The run's settings as one claim sees them (frozen: a claim cannot change the run).

    alpha: the claim's false-refutation probability per family of comparisons (Bonferroni over
    the claim's own comparisons only: a verdict does not depend on which other claims run).
    ledger: what the claim's checks spent, from which the runner states its contract."""

    profile: str = "quick"
    seed: int = 0
    device: str = "cpu"
    alpha: float = DEFAULT_ALPHA
    progress: Callable[[float], object] | None = None      # callable(fraction) or None
    ledger: Ledger = field(default_factory=Ledger, compare=False, repr=False)
    perturbation: tuple | None = None
    """Calibration only: a deliberate error the check library applies to the claimed side of
    every comparison (``verification.checks.PERTURBATIONS``); None in real runs."""
    store: Any = field(default=None, compare=False, repr=False)
    """The run's ``verification.store.ResultStore`` (None: nothing is stored)."""
    task_key: str | None = field(default=None, compare=False, repr=False)
    """The content hash of the claim's simulations (code, parameters, seed, profile, device,
    versions, mutation; not the perturbation, which only changes the judging): the prefix of
    every subtask key of ``map``."""
    setting: tuple = ()
    """The setting of the claim's domain being judged, as sorted (name, value) pairs (empty: a
    claim without coordinates); it is part of every seed ``claim_seed`` derives."""
    mapper: Mapper | None = field(default=None, compare=False, repr=False)
    """How ``map`` runs its calls, set by the run's tasks (``verification.tasks.map_subtasks``:
    each call a task of the run's engine, stored under ``task_key``); None: ``in_order``."""

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise ValueError(f"profile={self.profile!r}; allowed: {PROFILES}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha={self.alpha} must be in (0, 1)")
        if self.perturbation is not None:
            from .checks.policies import check_perturbation
            check_perturbation(self.perturbation)

    def pick(self, quick: _T, full: _T) -> _T:
        """``quick`` under the quick profile, ``full`` under the full one."""
        return quick if self.profile == "quick" else full

    def z(self, n_checks: int, name: str = "comparisons") -> float:
        """Two-sided Bonferroni z = Φ⁻¹(1 − α/(2n)) for a family of n = ``n_checks``
        comparisons of this claim at the claim's α (recorded in the ledger)."""
        return self.ledger.spend(name, max(1, int(n_checks)), self.alpha)

    def claim_seed(self, claim_id: str) -> int:
        """A seed per claim derived from the run seed (independent streams, reproducible)."""
        at = "" if not self.setting else "@" + setting_key(dict(self.setting))
        h = hashlib.sha256(f"{self.seed}:{claim_id}{at}".encode()).digest()
        return int.from_bytes(h[:4], "little")

    def rng(self, claim_id: str) -> np.random.Generator:
        return np.random.default_rng(self.claim_seed(claim_id))

    def map(self, fn: Callable[[Context, Any], _T], items: Sequence[Any],
            shared: bool = False) -> list[_T]:
        """``[fn(ctx, item) for item in items]``, each call a task of the run's engine (run by
        the injected ``mapper``; without one, one after the other here, nothing stored).

        In a run, on a dask.distributed worker the calls run as subtasks on the same cluster;
        elsewhere one after the other. Each result is stored under (``task_key``, fn, item)
        and reused by later runs, so an interrupted claim resumes from its finished items. ``fn`` is a
        module-level function that draws every random number from seeds derived from
        ``item`` and the run seed (never from a shared stream), so the results do not depend
        on the order or place the items run in; ``item`` is JSON-able (numbers, strings,
        lists, dicts). ``fn`` gets a context without progress bar or ledger: it simulates; the
        claim judges.

        shared: the results do not depend on the calling claim (simulations two claims share):
        keyed by ``fn``'s code, the item and the run's seed, profile and device only, so the
        second claim reuses the first's, and on a cluster the two ask for one computation."""
        if self.mapper is None and self.store is not None:
            raise ValueError("Context.map: a context with a result store needs the mapper that "
                             "keys and stores its calls (mapper=verification.tasks.map_subtasks)")
        plain = dataclasses.replace(self, progress=None, ledger=Ledger(), perturbation=None)
        return (self.mapper or in_order)(plain, fn, items, shared, self.tick)

    def tick(self, fraction: float) -> None:
        """Report progress (clipped to [0, 1]) to the runner's progress bar, if any."""
        if self.progress is not None:
            self.progress(min(max(float(fraction), 0.0), 1.0))
