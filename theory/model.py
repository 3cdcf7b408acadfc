"""Declarative model descriptions.

A model says *what* is learned, never *how* its risk looks. It has two parts:

* a :class:`Geometry`: the hidden (teacher) vectors, the trainable vectors with their
  constraint sets, and the names of the order parameters (their inner products). The overlap
  flow of any risk written in these order parameters follows from the geometry alone
  (``theory.dynamics.overlap_flow``), e.g. Dohmatob's R̄, which is stated in overlaps directly;
* the data model of a :class:`Model`: the law of the tokens, the student and the label as
  expressions in the tokens' projections, and the loss, from which the reduced risk is derived.

Everything else (reduced risk, overlap flow, stationary points, generated code, simulators) is
derived from these.

Conventions (spec README): the population risk is E(y − ŷ)² without a ½; hidden vectors are
orthonormal; trainable vectors on the sphere have unit norm.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import sympy as sp

__all__ = ["Param", "Vector", "Geometry", "GaussianToken", "SingleLocation", "Model", "projection",
           "check_params"]


def projection(name: str) -> sp.Symbol:
    """The symbol standing for a token's projection xᵀw on the vector named ``name``."""
    return sp.Symbol(f"x_{name}", real=True)


@dataclass(frozen=True)
class Param:
    """A hyper-parameter with its allowed range (closed unless ``open_low``/``open_high``)."""

    symbol: sp.Symbol
    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False
    integer: bool = False
    doc: str = ""

    @property
    def name(self) -> str:
        return self.symbol.name

    def describe(self) -> str:
        lo = "(" if self.open_low else "["
        hi = ")" if self.open_high else "]"
        kind = "integer" if self.integer else "real"
        return f"{kind} in {lo}{self.low}, {self.high}{hi}"

    def check(self, value: object) -> float:
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"parameter {self.name}={value!r} is not a number; "
                             f"allowed: {self.describe()}") from None
        bad = (not math.isfinite(v) and not (v == self.high == math.inf)) \
            or v < self.low or v > self.high \
            or (self.open_low and v == self.low) or (self.open_high and v == self.high) \
            or (self.integer and (not math.isfinite(v) or v != round(v)))
        if bad:
            raise ValueError(f"parameter {self.name}={value!r} is out of range; "
                             f"allowed: {self.describe()}")
        return v


@dataclass(frozen=True)
class Vector:
    """A trainable vector; ``constraint`` is 'sphere' (unit norm, projected flow) or 'free'."""

    name: str
    constraint: str = "sphere"

    def __post_init__(self) -> None:
        if self.constraint not in ("sphere", "free"):
            raise ValueError(f"Vector {self.name}: constraint must be 'sphere' or 'free', "
                             f"got {self.constraint!r}")


@dataclass(frozen=True)
class Geometry:
    """The Gram-matrix structure of a model: hidden (teacher) vectors, trainable vectors and the
    order parameters naming their inner products.

    hidden:    names of the hidden vectors (orthonormal, fixed);
    trainable: the trainable :class:`Vector` s (unit norm on the sphere, or free);
    overlaps:  {(a, b): symbol} for each inner product aᵀb that is an order parameter; a free
               vector's squared norm is the entry (w, w).

    ``inner(a, b)`` is the symbol of aᵀb or its constant value (1 on the diagonal for unit
    vectors, 0 between hidden vectors); ``gram()`` is the Gram matrix of ``vectors``.
    """

    hidden: tuple[str, ...]
    trainable: tuple[Vector, ...]
    overlaps: Mapping[tuple[str, str], sp.Symbol]
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(self.hidden))
        object.__setattr__(self, "trainable", tuple(self.trainable))
        known = set(self.vectors)
        for (a, b), sym in self.overlaps.items():
            if a not in known or b not in known:
                raise ValueError(f"{self._label}overlap {sym} names the pair ({a}, {b}); allowed "
                                 f"vector names: {list(self.vectors)}")
            if a in self.hidden and b in self.hidden:
                raise ValueError(f"{self._label}overlap {sym} pairs two hidden vectors ({a}, {b}); "
                                 "hidden vectors are orthonormal, so it is not an order parameter")

    @property
    def _label(self) -> str:
        return f"{self.name}: " if self.name else ""

    # --- lookup ---------------------------------------------------------------------------
    @property
    def vectors(self) -> tuple[str, ...]:
        """Names of all vectors: the trainable ones first, then the hidden ones."""
        return tuple(v.name for v in self.trainable) + tuple(self.hidden)

    @property
    def order_parameters(self) -> tuple[sp.Symbol, ...]:
        return tuple(self.overlaps[k] for k in self.overlaps)

    def trainable_vector(self, name: str) -> Vector:
        for v in self.trainable:
            if v.name == name:
                return v
        raise KeyError(name)

    def is_unit(self, name: str) -> bool:
        """Whether the vector ``name`` has unit norm (hidden, or trainable on the sphere)."""
        return name in self.hidden or self.trainable_vector(name).constraint == "sphere"

    def inner(self, a: str, b: str) -> sp.Expr:
        """wᵀw′ for two vector names, as an order parameter or a constant."""
        if a == b and self.is_unit(a):
            return sp.S.One
        if a in self.hidden and b in self.hidden:
            return sp.S.Zero
        for key in ((a, b), (b, a)):
            if key in self.overlaps:
                return self.overlaps[key]
        raise KeyError(f"{self._label}no order parameter for the pair ({a}, {b})")

    def gram(self) -> sp.Matrix:
        names = self.vectors
        return sp.Matrix(len(names), len(names), lambda i, j: self.inner(names[i], names[j]))

    # --- validation at the boundary ------------------------------------------------------
    def check_overlaps(self, values: Mapping[str, float], tol: float = 1e-10) -> dict[str, float]:
        """The order parameters as floats, checked: each finite, overlaps of unit vectors in
        [−1, 1], and the Gram matrix PSD (realisable by vectors). A ValueError names the order
        parameter and its allowed range, or the order parameters of the smallest set of vectors
        whose Gram matrix is not PSD."""
        out = {}
        for (a, b), sym in self.overlaps.items():
            if sym.name not in values:
                raise ValueError(f"{self._label}missing order parameter {sym.name}; known: "
                                 f"{[s.name for s in self.order_parameters]}")
            unit = self.is_unit(a) and self.is_unit(b)
            allowed = "real in [-1, 1] (overlap of unit vectors)" if unit else "finite real"
            try:
                v = float(values[sym.name])
            except (TypeError, ValueError):
                raise ValueError(f"order parameter {sym.name}={values[sym.name]!r} is not a number; "
                                 f"allowed: {allowed}") from None
            if not math.isfinite(v) or (unit and abs(v) > 1 + tol):
                raise ValueError(f"order parameter {sym.name}={values[sym.name]!r} is out of "
                                 f"range; allowed: {allowed}")
            out[sym.name] = v
        self._check_gram(out)
        return out

    def _check_gram(self, values: Mapping[str, float]) -> None:
        """PSD Gram matrix, else a ValueError naming the order parameters of the smallest set of
        vectors whose Gram matrix already has a negative eigenvalue."""
        G = self.gram_values(values)
        lam_min = np.linalg.eigvalsh(G).min()
        if lam_min >= -1e-9:
            return
        names = self.vectors
        for size in range(2, len(names) + 1):
            for idx in itertools.combinations(range(len(names)), size):
                sub = np.linalg.eigvalsh(G[np.ix_(idx, idx)]).min()
                if sub < -1e-9:
                    involved = {f"{s.name}={values[s.name]:.6g}" for (a, b), s in self.overlaps.items()
                                if names.index(a) in idx and names.index(b) in idx}
                    raise ValueError(
                        f"{self._label}order parameters {', '.join(sorted(involved))} are not "
                        f"realisable by vectors: the Gram matrix of {[names[i] for i in idx]} has "
                        f"eigenvalue {sub:.3g} < 0; allowed: overlaps whose Gram matrix is PSD")
        raise ValueError(f"{self._label}overlaps are not realisable by vectors: their Gram "
                         f"matrix has eigenvalue {lam_min:.3g} < 0 (must be PSD)")

    def gram_values(self, values: Mapping[str, float]) -> np.ndarray:
        """The Gram matrix of ``vectors`` at numerical order parameters {name: value}."""
        subs = {s: float(values[s.name]) for s in self.order_parameters}
        return np.array(self.gram().subs(subs), dtype=float)


@dataclass(frozen=True)
class GaussianToken:
    """x ~ N(Σ_a mean[a]·h_a, scale²·I_d) with h_a the hidden vectors."""

    mean: Mapping[str, sp.Expr] = field(default_factory=dict)
    scale: sp.Expr = sp.S.One


@dataclass(frozen=True)
class SingleLocation:
    """L independent tokens; one, at a uniform hidden location J, follows ``signal``, the
    L − 1 others follow ``noise`` (Marion et al. 2025, Sec. 2)."""

    L: sp.Expr
    signal: GaussianToken
    noise: GaussianToken




_GEOMETRY_FIELDS = ("hidden", "trainable", "overlaps")


@dataclass(frozen=True, init=False)
class Model:
    """A declarative attention model: a :class:`Geometry` and a data model.

    geometry: hidden and trainable vectors and the order parameters (see :class:`Geometry`);
              ``hidden``, ``trainable``, ``overlaps`` and the geometry's methods are also
              attributes of the model, and the three may be given instead of ``geometry``.
    student:  per-token expression t(xᵀw, ...) in projection symbols; ŷ = Σ_ℓ t(x_ℓ).
    label:    y = s(x_J) + label_noise·ξ with s an expression in the signal token's projections.
    """

    name: str
    geometry: Geometry
    params: tuple[Param, ...]
    data: SingleLocation
    student: sp.Expr
    label: sp.Expr
    label_noise: sp.Expr = sp.S.Zero
    risk_offset: sp.Expr = sp.S.Zero
    dimension: sp.Symbol | None = None
    citation: str = ""

    def __init__(self, name: str, geometry: Geometry | None = None, params: tuple[Param, ...] = (),
                 data: SingleLocation | None = None, student: sp.Expr = sp.S.Zero,
                 label: sp.Expr = sp.S.Zero, label_noise: sp.Expr = sp.S.Zero,
                 risk_offset: sp.Expr = sp.S.Zero, dimension: sp.Symbol | None = None,
                 citation: str = "", **parts) -> None:
        unknown = set(parts) - set(_GEOMETRY_FIELDS)
        if unknown:
            raise TypeError(f"Model: unexpected argument(s) {sorted(unknown)}")
        if geometry is None:
            missing = [k for k in _GEOMETRY_FIELDS if k not in parts]
            if missing:
                raise ValueError(f"Model {name}: give geometry= or all of {list(_GEOMETRY_FIELDS)} "
                                 f"(missing {missing})")
            geometry = Geometry(name=name, **parts)
        elif parts:                          # e.g. perturbed(hidden=...): replace those parts
            geometry = replace(geometry, **parts)
        values = dict(name=name, geometry=geometry, params=tuple(params), data=data,
                      student=student, label=label, label_noise=label_noise,
                      risk_offset=risk_offset, dimension=dimension, citation=citation)
        for key, value in values.items():
            object.__setattr__(self, key, value)

    derivation_class: ClassVar[type]
    """The class of its derivations, ``theory.Derived``, set where that class is defined
    (``theory.derived`` imports this module, so this module cannot import it)."""

    def derivation(self):
        """Everything SymPy derives from this model, a ``theory.Derived`` (use
        ``theory.derive(model)``, which keeps it once per model): the protocol every
        declaration derives through."""
        return self.derivation_class(self)

    # --- the geometry's attributes, delegated ---------------------------------------------
    @property
    def hidden(self) -> tuple[str, ...]:
        return self.geometry.hidden

    @property
    def trainable(self) -> tuple[Vector, ...]:
        return self.geometry.trainable

    @property
    def overlaps(self) -> Mapping[tuple[str, str], sp.Symbol]:
        return self.geometry.overlaps

    @property
    def vectors(self) -> tuple[str, ...]:
        return self.geometry.vectors

    @property
    def order_parameters(self) -> tuple[sp.Symbol, ...]:
        return self.geometry.order_parameters

    def trainable_vector(self, name: str) -> Vector:
        return self.geometry.trainable_vector(name)

    def inner(self, a: str, b: str) -> sp.Expr:
        return self.geometry.inner(a, b)

    def gram(self) -> sp.Matrix:
        return self.geometry.gram()

    def check_overlaps(self, values: Mapping[str, float], tol: float = 1e-10) -> dict[str, float]:
        return self.geometry.check_overlaps(values, tol)

    # --- parameters -----------------------------------------------------------------------
    @property
    def param_symbols(self) -> tuple[sp.Symbol, ...]:
        return tuple(p.symbol for p in self.params)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name}: no parameter {name!r}; known: "
                       f"{[p.name for p in self.params]}")

    def check_params(self, values: Mapping[str, float]) -> dict[str, float]:
        """The parameters as floats, each checked against its :class:`Param` range."""
        return check_params(self.params, values, self.name)

    def perturbed(self, **changes) -> Model:
        """A copy with some fields replaced: used to feed claim checks deliberately wrong models."""
        return replace(self, **changes)


GREEK_ALIASES = {"lambda": "lam", "λ": "lam", "epsilon": "eps", "ε": "eps", "varepsilon": "eps",
                 "γ": "gamma", "κ": "kappa", "ν": "nu", "θ": "theta", "η": "eta", "ρ": "rho",
                 "μ": "mu", "ζ": "zeta", "α": "alpha", "β": "beta", "δ": "delta", "Δ": "delta",
                 "τ": "tau"}
"""Names (and Greek letters) a user may type for a parameter spelled otherwise in the code."""


_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
          "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi",
          "chi", "psi", "omega"}


def suggest(name: str, known) -> str:
    """' (did you mean 'lam' (λ)?)' when ``name`` is an alias or a near miss of a known name."""
    import difflib
    known = list(known)
    alias = GREEK_ALIASES.get(name) or GREEK_ALIASES.get(name.lower())
    if alias in known:
        hits = [alias]
    elif name.lower() in _GREEK:       # 'zeta' is not a typo of 'eta'
        hits = []
    else:
        hits = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    if not hits:
        return ""
    letter = {v: k for k, v in GREEK_ALIASES.items() if len(k) == 1}.get(hits[0])
    return f" (did you mean {hits[0]!r}{f' ({letter})' if letter else ''}?)"


def by_name(fixed: Mapping, symbols, owner: str = "") -> dict:
    """``fixed`` with its keys (names, or Symbols matched by name whatever their assumptions)
    replaced by the matching symbol of ``symbols``; a ValueError names every unknown key."""
    table = {q.name: q for q in symbols}
    out, unknown = {}, []
    for key, value in fixed.items():
        name = key.name if isinstance(key, sp.Symbol) else str(key)
        if name in table:
            out[table[name]] = sp.sympify(value)
        else:
            unknown.append(name)
    if unknown:
        label = f"{owner}: " if owner else ""
        raise ValueError(f"{label}cannot fix unknown symbol(s) {unknown}"
                         + "".join(suggest(u, table) for u in unknown) + f"; allowed: {sorted(table)}")
    return out


def check_params(params: tuple[Param, ...], values: Mapping[str, float], owner: str = "") -> dict[str, float]:
    """{name: float} for ``params``, each value checked against its range; missing or unknown
    names raise a ValueError listing the allowed names and ranges."""
    label = f"{owner}: " if owner else ""
    unknown = sorted(set(values) - {p.name for p in params})
    if unknown:
        raise ValueError(f"{label}unknown parameter(s) {unknown}"
                         + "".join(suggest(u, [p.name for p in params]) for u in unknown)
                         + f"; known: {[p.name for p in params]}")
    missing = [p for p in params if p.name not in values]
    if missing:
        raise ValueError(f"{label}missing parameter(s) "
                         + ", ".join(f"{p.name} ({p.describe()})" for p in missing))
    return {p.name: p.check(values[p.name]) for p in params}
