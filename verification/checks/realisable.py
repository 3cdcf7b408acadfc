"""``realisable``: the states a verdict rests on are realisable, else ``OutsideRealisableSet`` (the
claim's error, never a verdict)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from numpy.typing import ArrayLike



class OutsideRealisableSet(ValueError):
    """A state a verdict would rest on is not realisable; the runner gives ``error``."""


def realisable(states: ArrayLike | Sequence[Any], check: Callable[[Any], object],
               what: str = "state") -> None:
    """Apply ``check`` (e.g. ``ReducedModel.check_state``, ``Geometry.check_overlaps``) to each
    state; raise :class:`OutsideRealisableSet` naming ``what`` and the first failure."""
    for i, s in enumerate(states):
        try:
            check(s)
        except ValueError as exc:
            raise OutsideRealisableSet(f"{what} #{i} is not realisable: {exc}") from None
