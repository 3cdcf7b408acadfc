"""What a simulation may depend on besides its item (``SimContext``), how its seeds derive from
the run's, and how a function declares that it draws no random numbers (``simulation``).

Imports nothing of the suite: the claim API (``verification.context``) builds on it, and every
simulation module imports it, so it is part of every simulation's code hash."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import hashlib
from typing import Any, TypeVar

import numpy as np

__all__ = ["SimContext", "SimulationMissing", "simulation", "is_seeded", "derive_seed",
           "setting_text"]

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable)


def setting_text(setting: Mapping[str, Any]) -> str:
    """A setting of a claim's domain as a short stable text (seeds, store keys, labels)."""
    return ",".join(f"{k}={_text(v)}" for k, v in sorted(setting.items()))


def _text(v: Any) -> str:
    return repr(round(v, 12)) if isinstance(v, float) else str(v)


def derive_seed(run_seed: int, name: str, setting: tuple = ()) -> int:
    """A 32-bit seed for the stream ``name`` from the run's seed and the setting judged
    (independent streams, reproducible wherever and in whatever order they are drawn)."""
    at = "" if not setting else "@" + setting_text(dict(setting))
    h = hashlib.sha256(f"{run_seed}:{name}{at}".encode()).digest()
    return int.from_bytes(h[:4], "little")


class SimulationMissing(BaseException):
    """A simulation a re-judging run needs is not in the store (``calibrate --rejudge``).

    A BaseException, like KeyboardInterrupt: a claim's own ``except Exception`` must not turn
    "not simulated yet" into a verdict; the claim's task catches it and reports the run as one
    that needs simulating."""

    def __init__(self, fn: str, item: Any):
        super().__init__(f"{fn} is not stored for item {item!r:.120}")
        self.fn, self.item = fn, item


@dataclass(frozen=True)
class SimContext:
    """The run's settings as a simulation sees them: ``profile`` (``pick``), ``device`` and, for
    a seeded simulation, the run's ``seed`` and the ``setting`` judged, from which its random
    streams derive (``rng``, ``claim_seed``). An unseeded simulation (``simulation(seeded=False)``)
    gets ``seed=None``: asking it for a stream is an error, since its stored result is shared by
    every seed."""

    profile: str = "quick"
    seed: int | None = 0
    device: str = "cpu"
    setting: tuple = ()

    def pick(self, quick: _T, full: _T) -> _T:
        """``quick`` under the quick profile, ``full`` under the full one."""
        return quick if self.profile == "quick" else full

    def claim_seed(self, name: str) -> int:
        """The seed of the stream ``name`` (``derive_seed``: the same as ``Context.claim_seed``)."""
        if self.seed is None:
            raise ValueError(f"claim_seed({name!r}): this simulation is declared unseeded "
                             "(simulation(seeded=False)); pass its seeds in the item, or declare "
                             "it seeded")
        return derive_seed(self.seed, name, self.setting)

    def rng(self, name: str) -> np.random.Generator:
        return np.random.default_rng(self.claim_seed(name))

    def tick(self, fraction: float) -> None:
        """Progress within one simulation is not reported: the mapper reports each one that
        finishes."""


def simulation(fn: _F | None = None, *, seeded: bool = True):
    """Declare a simulation (``@simulation`` or ``@simulation(seeded=False)``).

    seeded=False: the result depends on the item and the profile only (quadrature, an ODE, exact
    symbolic work, or random numbers whose seeds the item carries), so one stored result serves
    every run seed and every setting; its ``SimContext`` has no seed. Undeclared functions are
    seeded (the safe side: stored per seed and setting)."""
    def mark(f: _F) -> _F:
        f.__simulation_seeded__ = bool(seeded)
        return f
    return mark(fn) if fn is not None else mark


def is_seeded(fn: Callable) -> bool:
    """Whether ``fn``'s stored results are per run seed and setting (``simulation``)."""
    return bool(getattr(fn, "__simulation_seeded__", True))
