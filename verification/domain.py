"""A claim's parameter domain: what its statement quantifies over (α, β, a link, L, λ, …).

A claim declares ``@claim(..., domain={...}, reference={...}, points={...})``; its check then
takes one setting's values as keyword arguments (as ``pytest.mark.parametrize`` passes them) and
returns the Outcome at that setting. Coordinates:

- ``(lo, hi)`` with float ends, or ``Interval(lo, hi, log=True)``: a real range;
- ``(lo, hi)`` with int ends, or ``Integers(lo, hi, log=...)``: whole numbers (d, L, H, F);
- ``[a, b, …]`` or ``Choice(a, b, …)``: a finite set (a link, an activation, a convention);

and ``where``: predicates over the whole setting (L ≥ 2, a phase condition), each a function of
the coordinates' names returning a bool. ``reference`` is the simplest setting (default: each
range's lower end, each choice's first), where counterexamples are shrunk to.

The quick and full profiles are named point sets of the domain (``points``); ``map`` samples the
rest (``verification.mapping``). This module imports nothing of the suite."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import inspect
import itertools
import math
from typing import Any

from .simulations.base import setting_text

__all__ = ["Interval", "Integers", "Choice", "Domain", "as_domain", "setting_key", "PROFILES"]

PROFILES = ("quick", "full")
"""The run profiles: each a named point set of every claim's domain."""


@dataclass(frozen=True)
class Interval:
    """Real numbers in [lo, hi] (``log``: sampled and bisected on a log scale; lo > 0)."""

    lo: float
    hi: float
    log: bool = False

    def __post_init__(self):
        lo, hi = float(self.lo), float(self.hi)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"Interval({self.lo!r}, {self.hi!r}): allowed: finite lo < hi")
        if self.log and lo <= 0:
            raise ValueError(f"Interval({self.lo!r}, {self.hi!r}, log=True): allowed: 0 < lo")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    ranged = True

    def describe(self) -> str:
        return f"[{self.lo:g}, {self.hi:g}]" + (" (log)" if self.log else "")

    def to_json(self) -> dict:
        return {"kind": "real", "lo": self.lo, "hi": self.hi, "log": self.log}

    def contains(self, v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and self.lo <= v <= self.hi

    def cast(self, v: Any) -> float:
        return float(v)

    def to_unit(self, v: float) -> float:
        if self.log:
            return (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return (v - self.lo) / (self.hi - self.lo)

    def from_unit(self, u: float) -> float:
        u = min(max(float(u), 0.0), 1.0)
        if self.log:
            return float(math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo))))
        return float(self.lo + u * (self.hi - self.lo))


@dataclass(frozen=True)
class Integers(Interval):
    """Whole numbers in [lo, hi] (``log``: on a log scale, for dimensions)."""

    def __post_init__(self):
        for end in (self.lo, self.hi):
            if isinstance(end, bool) or float(end) != int(end):
                raise ValueError(f"Integers({self.lo!r}, {self.hi!r}): allowed: integer ends")
        super().__post_init__()

    def describe(self) -> str:
        return f"{{{int(self.lo)}, …, {int(self.hi)}}}" + (" (log)" if self.log else "")

    def to_json(self) -> dict:
        return {"kind": "integer", "lo": int(self.lo), "hi": int(self.hi), "log": self.log}

    def contains(self, v: Any) -> bool:
        return (isinstance(v, (int, float)) and not isinstance(v, bool) and float(v) == int(v)
                and self.lo <= v <= self.hi)

    def cast(self, v: Any) -> int:
        return int(v)

    def from_unit(self, u: float) -> int:
        return int(round(super().from_unit(u)))


@dataclass(frozen=True)
class Choice:
    """One of finitely many values (JSON scalars: strings, numbers, booleans)."""

    options: tuple

    def __init__(self, *options: Any):
        if len(options) == 1 and isinstance(options[0], (list, tuple)):
            options = tuple(options[0])
        if not options or len(set(map(repr, options))) != len(options):
            raise ValueError(f"Choice{options!r}: allowed: one or more distinct values")
        if not all(isinstance(o, (str, int, float, bool)) for o in options):
            raise ValueError(f"Choice{options!r}: allowed: strings, numbers or booleans")
        object.__setattr__(self, "options", tuple(options))

    ranged = False

    def describe(self) -> str:
        return "{" + ", ".join(map(str, self.options)) + "}"

    def to_json(self) -> dict:
        return {"kind": "choice", "options": list(self.options)}

    def contains(self, v: Any) -> bool:
        return any(v == o and type(v) is type(o) for o in self.options)

    def cast(self, v: Any) -> Any:
        return v


Coordinate = Interval | Integers | Choice


def _coordinate(name: str, spec: Any) -> Coordinate:
    if isinstance(spec, (Interval, Choice)):
        return spec
    if isinstance(spec, list):
        return Choice(*spec)
    if isinstance(spec, tuple) and len(spec) == 2:
        lo, hi = spec
        if all(isinstance(e, int) and not isinstance(e, bool) for e in spec):
            return Integers(lo, hi)
        if all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in spec):
            return Interval(lo, hi)
    raise ValueError(f"domain[{name!r}] = {spec!r}; allowed: (lo, hi), Interval(lo, hi, log=...), "
                     "Integers(lo, hi), or a list of choices")


def setting_key(setting: Mapping[str, Any]) -> str:
    """A setting as a short stable text (seeds, store keys, labels)."""
    return setting_text(setting)


class Domain:
    """The coordinates a claim's statement quantifies over, the constraints between them, and the
    simplest setting (``reference``). ``where``: predicates called with the setting's values as
    keyword arguments (each may take only the names it needs)."""

    def __init__(self, coordinates: Mapping[str, Any],
                 where: Mapping[str, Callable[..., bool]] | Callable[..., bool]
                 | Sequence[Callable[..., bool]] = (),
                 reference: Mapping[str, Any] | None = None,
                 description: str = ""):
        for name in coordinates:
            if not (isinstance(name, str) and name.isidentifier()):
                raise ValueError(f"domain coordinate {name!r}; allowed: a Python identifier")
        self.coordinates: dict[str, Coordinate] = {k: _coordinate(k, v)
                                                   for k, v in coordinates.items()}
        self.where = _constraints(where)
        self.description = description
        ref = {k: (c.options[0] if isinstance(c, Choice) else c.cast(c.lo))
               for k, c in self.coordinates.items()}
        ref.update(reference or {})
        self.reference = self.validate(ref, what="reference")

    # --- what a setting is ---------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.coordinates)

    @property
    def ranged(self) -> tuple[str, ...]:
        return tuple(k for k, c in self.coordinates.items() if c.ranged)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(k for k, c in self.coordinates.items() if not c.ranged)

    def __len__(self) -> int:
        return len(self.coordinates)

    def satisfies(self, setting: Mapping[str, Any]) -> bool:
        """Whether ``setting`` meets every ``where`` constraint."""
        return all(bool(_call(pred, setting)) for _, pred in self.where)

    def validate(self, setting: Mapping[str, Any], what: str = "setting") -> dict[str, Any]:
        """``setting`` with each value cast to its coordinate's type; ValueError naming the
        coordinate and its allowed range (a missing or unknown name, a value outside, a broken
        constraint)."""
        if not isinstance(setting, Mapping):
            raise ValueError(f"{what}={setting!r}; allowed: a mapping of {list(self.names)}")
        unknown = sorted(set(setting) - set(self.coordinates))
        if unknown:
            raise ValueError(f"{what}: unknown coordinate(s) {unknown}; allowed: {list(self.names)}")
        missing = [k for k in self.coordinates if k not in setting]
        if missing:
            raise ValueError(f"{what}: missing coordinate(s) {missing}")
        out = {}
        for k, c in self.coordinates.items():
            v = setting[k]
            if isinstance(v, float) and not math.isfinite(v) or not c.contains(v):
                raise ValueError(f"{what}: {k}={v!r}; allowed: {c.describe()}")
            out[k] = c.cast(v)
        for name, pred in self.where:
            if not _call(pred, out):
                raise ValueError(f"{what} {setting_key(out)} breaks the domain's constraint "
                                 f"{name!r}")
        return out

    # --- geometry of the ranged coordinates --------------------------------------------------
    def to_unit(self, setting: Mapping[str, Any]) -> list[float]:
        return [self.coordinates[k].to_unit(setting[k]) for k in self.ranged]

    def from_unit(self, u: Sequence[float], choices: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: self.coordinates[k].from_unit(x) for k, x in zip(self.ranged, u, strict=True)}
        out.update({k: choices[k] for k in self.choices})
        return {k: out[k] for k in self.names}

    def choice_sets(self) -> list[dict[str, Any]]:
        """Every combination of the choices (one empty combination without choices)."""
        opts = [self.coordinates[k].options for k in self.choices]
        return [dict(zip(self.choices, combo)) for combo in itertools.product(*opts)]

    def distance(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
        """The largest per-coordinate distance in units of each range (a differing choice: 1)."""
        d = [abs(x - y) for x, y in zip(self.to_unit(a), self.to_unit(b))]
        d += [float(a[k] != b[k]) for k in self.choices]
        return max(d, default=0.0)

    def sample(self, n: int, seed: int, paired: bool = True) -> list[dict[str, Any]]:
        """``n`` settings: scrambled Sobol points over the ranges, those breaking a constraint
        skipped. paired: the same points for every combination of choices, ⌈n/combinations⌉
        of them (a map's panels compare the choices at the same points); False: the k-th point
        with the k-th combination in turn, so that n settings cover n points of the ranges
        (a calibration's coverage)."""
        if n < 1:
            raise ValueError(f"points={n!r}; allowed: an integer ≥ 1")
        combos = self.choice_sets()
        per = max(1, math.ceil(n / len(combos))) if paired else n
        if not self.ranged:
            pts = [self.from_unit([], c) for c in combos]
            return [p for p in pts if self.satisfies(p)][:n]
        import warnings

        from scipy.stats import qmc
        sobol = qmc.Sobol(len(self.ranged), scramble=True, seed=seed)
        out: list[dict] = []
        drawn = 0
        for m in range(max(1, math.ceil(math.log2(per))), 30):
            with warnings.catch_warnings():     # a power of two per draw keeps the balance
                warnings.simplefilter("ignore", UserWarning)
                block = sobol.random(2 ** m - drawn) if drawn else sobol.random(2 ** m)
            pairs = ([(u, c) for u in block for c in combos] if paired else
                     [(u, combos[(drawn + i) % len(combos)]) for i, u in enumerate(block)])
            drawn = 2 ** m
            out += [s for s in (self.from_unit(u, c) for u, c in pairs) if self.satisfies(s)]
            if len(out) >= n or drawn >= 64 * per:
                break
        if not out:
            raise ValueError("no sampled setting meets the domain's constraints "
                             f"{[name for name, _ in self.where]}")
        return out[:n]

    def to_json(self) -> dict:
        return {"coordinates": {k: c.to_json() for k, c in self.coordinates.items()},
                "where": [name for name, _ in self.where], "reference": self.reference,
                "description": self.description}

    def describe(self) -> str:
        parts = [f"{k} ∈ {c.describe()}" for k, c in self.coordinates.items()]
        parts += [name for name, _ in self.where]
        return ", ".join(parts) if parts else "a single setting"


def _call(pred: Callable[..., bool], setting: Mapping[str, Any]) -> bool:
    params = inspect.signature(pred).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return pred(**setting)
    return pred(**{k: v for k, v in setting.items() if k in params})


def _constraints(where: Any) -> tuple[tuple[str, Callable[..., bool]], ...]:
    """``where`` as (description, predicate) pairs: a mapping {description: predicate}, one
    predicate or a sequence of them (described by their docstring's first line or name)."""
    if isinstance(where, Mapping):
        pairs = list(where.items())
    elif isinstance(where, (list, tuple)) and all(isinstance(w, tuple) for w in where):
        pairs = list(where)           # (description, predicate) pairs, as Domain.where holds
    else:
        preds = [where] if callable(where) else list(where)
        pairs = [(_name(p), p) for p in preds]
    for name, pred in pairs:
        if not callable(pred):
            raise ValueError(f"domain constraint {name!r}={pred!r}; allowed: a function of the "
                             "coordinates returning a bool")
    return tuple((str(n), p) for n, p in pairs)


def _name(pred: Callable) -> str:
    doc = (getattr(pred, "__doc__", None) or "").strip().splitlines()
    return doc[0] if doc else getattr(pred, "__name__", "constraint")


def as_domain(domain: Domain | Mapping[str, Any] | None, reference: Mapping[str, Any] | None,
              where: Any = ()) -> Domain:
    """A claim's declared domain (a Domain, or its coordinates as a mapping); None: no
    coordinate (the statement is checked at one setting, the empty one)."""
    if isinstance(domain, Domain):
        extra = _constraints(where)
        if reference or extra:
            return Domain(domain.coordinates, list(domain.where) + list(extra),
                          {**domain.reference, **(reference or {})}, domain.description)
        return domain
    return Domain(domain or {}, where, reference)
