"""What a claim check gets from the runner: profile, seed, device, the claim's own α, the
ledger in which its checks record what they spend (``verification.checks``) and the mapper that
runs its simulations (``map``).

Plain data: nothing here knows where or how tasks run. The run's tasks (``verification.tasks``)
inject a mapper that makes each simulation a stored, reusable task of the run's engine, keyed
by the simulation's own code (``verification.simulations``), never by the judging code; without
one, the calls run one after the other in this process (``in_order``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .checks.contract import Ledger
from .domain import PROFILES
from .simulations.base import SimContext, derive_seed, is_seeded

__all__ = ["Context", "Mapper", "Tally", "in_order", "context_with", "PROFILES", "DEFAULT_ALPHA",
           "SimContext"]

DEFAULT_ALPHA = 1e-4
"""A claim's false-refutation probability unless it declares its own (``@claim(alpha=...)``)."""

_T = TypeVar("_T")

@dataclass
class Tally:
    """What a claim's run did with its simulations: how many it ``computed`` and ``reused`` from
    the store, and the code hash of each simulation module it ran ({module: hash}), against
    which its stored judgement is checked before it is reused."""

    computed: int = 0
    reused: int = 0
    code: dict = field(default_factory=dict)
    drew_seed: bool = False
    """Whether the run read its seed (``Context.seed``, ``claim_seed``, ``rng`` or a seeded
    simulation): a run that did not gives the same verdict at every seed."""

    def counts(self) -> dict[str, int]:
        return {"computed": self.computed, "reused": self.reused}


Mapper = Callable[[SimContext, Callable[[SimContext, Any], Any], Sequence[Any], Any,
                   Callable[[float], None], Tally], list]
"""``mapper(sim, fn, items, store, progress, tally) -> [fn(sim, item) for item in items]``: how
``Context.map`` runs its simulations (``sim``: what a simulation may depend on; ``store``: the
run's result store or None; ``progress(fraction)`` as the calls finish; ``tally``: what was
computed and reused)."""


def in_order(sim: SimContext, fn: Callable[[SimContext, Any], _T], items: Sequence[Any], store: Any,
             progress: Callable[[float], None], tally: Tally) -> list[_T]:
    """The calls one after the other in this process, nothing stored (a context without a
    result store: a notebook's, a test's)."""
    out = []
    for i, item in enumerate(items):
        out.append(fn(sim, item))
        tally.computed += 1
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
    setting: tuple = ()
    """The setting of the claim's domain being judged, as sorted (name, value) pairs (empty: a
    claim without coordinates); it is part of every seed ``claim_seed`` derives."""
    mapper: Mapper | None = field(default=None, compare=False, repr=False)
    """How ``map`` runs its simulations, set by the run's tasks
    (``verification.simtasks.map_subtasks``: each a stored task of the run's engine); None:
    ``in_order``."""
    tally: Tally = field(default_factory=Tally, compare=False, repr=False)
    """What this claim's run computed and reused of its simulations (shared by the contexts of
    its settings): a run that computed none was re-judged from stored simulations."""

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise ValueError(f"profile={self.profile!r}; allowed: {PROFILES}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha={self.alpha} must be in (0, 1)")
        if self.perturbation is not None:
            from .checks.contract import check_perturbation
            check_perturbation(self.perturbation)

    def __getattribute__(self, name: str) -> Any:
        if name == "seed":           # every way to the seed passes here: the run depends on it
            object.__getattribute__(self, "tally").drew_seed = True
        return object.__getattribute__(self, name)

    def pick(self, quick: _T, full: _T) -> _T:
        """``quick`` under the quick profile, ``full`` under the full one."""
        return quick if self.profile == "quick" else full

    def z(self, n_checks: int, name: str = "comparisons") -> float:
        """Two-sided Bonferroni z = Φ⁻¹(1 − α/(2n)) for a family of n = ``n_checks``
        comparisons of this claim at the claim's α (recorded in the ledger)."""
        return self.ledger.spend(name, max(1, int(n_checks)), self.alpha)

    def claim_seed(self, claim_id: str) -> int:
        """A seed per claim derived from the run seed (independent streams, reproducible; the
        same as a seeded simulation's ``SimContext.claim_seed``)."""
        return derive_seed(self.seed, claim_id, self.setting)

    def rng(self, claim_id: str) -> np.random.Generator:
        return np.random.default_rng(self.claim_seed(claim_id))

    def map(self, fn: Callable[[SimContext, Any], _T], items: Sequence[Any]) -> list[_T]:
        """``[fn(sim, item) for item in items]``: the claim's simulations, each a stored task of
        the run's engine (run by the injected ``mapper``; without one, one after the other
        here, nothing stored).

        ``fn`` is a module-level function (a simulation: ``verification.simulations``) of a
        ``SimContext`` (profile, device and, unless ``fn`` is declared
        ``simulation(seeded=False)``, the run's seed and the setting judged) and an item. Its
        result is stored under the content hash of ``fn``'s own module and what it imports,
        the item, the profile and device (and seed and setting when seeded), never under the
        claim's judging code: a changed judge re-judges stored simulations, and two claims
        asking for the same simulation share one result (on a cluster, one computation). An
        item is data (numbers, strings, lists, dicts), SymPy expressions and module-level
        functions or classes (keyed by their module's code); a simulation draws its random
        numbers from seeds derived from its item and the run seed (``sim.rng``), never from a
        shared stream, so the results do not depend on where or in what order they run. A
        deliberately wrong model (a mutation) that changes what is simulated must show in the
        items."""
        if self.mapper is None and self.store is not None:
            raise ValueError("Context.map: a context with a result store needs the mapper that "
                             "keys and stores its calls (mapper=verification.simtasks.map_subtasks)")
        seeded = is_seeded(fn)
        sim = SimContext(self.profile, self.seed if seeded else None, self.device,
                         self.setting if seeded else ())
        return (self.mapper or in_order)(sim, fn, items, self.store, self.tick, self.tally)

    def tick(self, fraction: float) -> None:
        """Report progress (clipped to [0, 1]) to the runner's progress bar, if any."""
        if self.progress is not None:
            self.progress(min(max(float(fraction), 0.0), 1.0))


def context_with(ctx: Context, **changes: Any) -> Context:
    """``dataclasses.replace(ctx, **changes)``, which copies every field, without counting the
    copy as reading the seed (``Tally.drew_seed``; the copy shares ``ctx``'s tally)."""
    drew = ctx.tally.drew_seed
    out = dataclasses.replace(ctx, **changes)
    ctx.tally.drew_seed = drew
    return out
