"""Boundaries a paper states over a claim's domain (a phase transition, a learnability
condition), declared as data: the zero set of a SymPy expression in the claim's coordinates,
named after the paper's statement (``@claim(boundaries=[PaperBoundary(...)])``). A map draws
each one on its panels beside the boundary it found, so where the check's verdict changes can be
read against where the paper says something changes.

The expression is the theory module's own (``theory.models``), never retyped: the boundary is
what the paper states, drawn, not something the suite judges."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
from typing import Any

__all__ = ["PaperBoundary", "validate_boundaries"]

CROSSING_SAMPLE = 256
"""Settings of the domain at which a declared boundary's function must change sign (it has to
cross the domain to be drawn on it)."""


@dataclass(frozen=True)
class PaperBoundary:
    """``statement``: the paper's statement of the boundary (e.g. "β = β_c = √(2α)");
    ``expression``: a SymPy expression zero on the boundary, of the ``coordinates`` it names
    ({domain coordinate: the expression's symbol}); ``where``: what changes across it."""

    statement: str
    expression: Any
    coordinates: Mapping[str, Any]
    where: str = ""
    _fn: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        import sympy as sp
        if not (isinstance(self.statement, str) and self.statement.strip()):
            raise ValueError(f"PaperBoundary statement={self.statement!r}; allowed: the paper's "
                             "statement of the boundary, a non-empty text")
        if not isinstance(self.expression, sp.Expr):
            raise ValueError(f"PaperBoundary {self.statement!r}: expression="
                             f"{self.expression!r}; allowed: a SymPy expression zero on the "
                             "boundary")
        if not (isinstance(self.coordinates, Mapping) and self.coordinates
                and all(isinstance(s, sp.Symbol) for s in self.coordinates.values())):
            raise ValueError(f"PaperBoundary {self.statement!r}: coordinates="
                             f"{self.coordinates!r}; allowed: a non-empty mapping of domain "
                             "coordinates to the expression's SymPy symbols")
        unnamed = sorted(map(str, self.expression.free_symbols - set(self.coordinates.values())))
        if unnamed:
            raise ValueError(f"PaperBoundary {self.statement!r}: the expression's symbol(s) "
                             f"{unnamed} are not mapped to a coordinate; allowed: "
                             f"{sorted(map(str, self.coordinates.values()))}")
        names, symbols = zip(*self.coordinates.items())
        object.__setattr__(self, "_fn", (names, sp.lambdify(symbols, self.expression, "numpy")))

    def __call__(self, **values: Any):
        """The function at the coordinates' values (floats or numpy arrays, broadcast)."""
        import numpy as np
        names, fn = self._fn
        missing = [k for k in names if k not in values]
        if missing:
            raise ValueError(f"PaperBoundary {self.statement!r}: missing coordinate(s) {missing}")
        with np.errstate(all="ignore"):
            out = fn(*(np.asarray(values[k], dtype=float) for k in names))
        return np.broadcast_to(np.asarray(out, dtype=float),
                               np.broadcast(*(np.asarray(values[k]) for k in names)).shape)

    def to_json(self) -> dict:
        """What map.json records of it (for the reader; a map never reads it back)."""
        return {"statement": self.statement, "where": self.where,
                "expression": str(self.expression), "coordinates": sorted(self.coordinates)}


def validate_boundaries(domain, boundaries) -> tuple[PaperBoundary, ...]:
    """``boundaries`` checked against ``domain``: each a :class:`PaperBoundary` over ranged
    coordinates of the domain, finite at the reference, and changing sign over
    ``CROSSING_SAMPLE`` settings of the domain (its zero set crosses it); ValueError naming the
    boundary and what is wrong."""
    out = []
    for b in boundaries:
        if not isinstance(b, PaperBoundary):
            raise ValueError(f"boundaries: {b!r}; allowed: PaperBoundary(statement, expression, "
                             "coordinates)")
        bad = sorted(k for k in b.coordinates if k not in domain.ranged)
        if bad:
            raise ValueError(f"boundary {b.statement!r}: coordinate(s) {bad} are not ranged "
                             f"coordinates of the domain; allowed: {list(domain.ranged)}")
        at_ref = float(b(**{k: domain.reference[k] for k in b.coordinates}))
        if not math.isfinite(at_ref):
            raise ValueError(f"boundary {b.statement!r}: its function is {at_ref} at the "
                             "reference; allowed: finite and real over the domain")
        settings = domain.sample(CROSSING_SAMPLE, 0)
        values = [float(b(**{k: s[k] for k in b.coordinates})) for s in settings]
        finite = [v for v in values if math.isfinite(v)]
        if not (any(v < 0 for v in finite) and any(v > 0 for v in finite)):
            raise ValueError(f"boundary {b.statement!r}: its function keeps one sign over "
                             f"{len(settings)} settings of the domain; allowed: a boundary that "
                             "crosses the domain")
        out.append(b)
    statements = [b.statement for b in out]
    if len(set(statements)) != len(statements):
        raise ValueError(f"boundaries: statements {statements} repeat; allowed: one each")
    return tuple(out)
