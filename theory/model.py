"""Declarative model descriptions.

A model says *what* is learned, never *how* its risk looks: the hidden (teacher) vectors,
the trainable vectors and their constraint sets, the law of the tokens, the student and the
label as expressions in the tokens' projections, and the loss. Everything else (reduced risk,
overlap flow, stationary points, generated code, simulators) is derived from this.

Conventions (spec README): the population risk is E(y − ŷ)² without a ½; hidden vectors are
orthonormal; trainable vectors on the sphere have unit norm.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import math
from collections.abc import Mapping

import numpy as np
import sympy as sp

__all__ = ["Param", "Vector", "GaussianToken", "SingleLocation", "Model", "projection"]


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

    def check(self, value) -> float:
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"parameter {self.name}={value!r} is not a number; "
                             f"allowed: {self.describe()}") from None
        bad = (not math.isfinite(v) and not (v == self.high == math.inf)) \
            or v < self.low or v > self.high \
            or (self.open_low and v == self.low) or (self.open_high and v == self.high) \
            or (self.integer and v != round(v))
        if bad:
            raise ValueError(f"parameter {self.name}={value!r} is out of range; "
                             f"allowed: {self.describe()}")
        return v


@dataclass(frozen=True)
class Vector:
    """A trainable vector; ``constraint`` is 'sphere' (unit norm, projected flow) or 'free'."""

    name: str
    constraint: str = "sphere"

    def __post_init__(self):
        if self.constraint not in ("sphere", "free"):
            raise ValueError(f"Vector {self.name}: constraint must be 'sphere' or 'free', "
                             f"got {self.constraint!r}")


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


@dataclass(frozen=True)
class Model:
    """A declarative attention model.

    student:  per-token expression t(xᵀw, ...) in projection symbols; ŷ = Σ_ℓ t(x_ℓ).
    label:    y = s(x_J) + label_noise·ξ with s an expression in the signal token's projections.
    overlaps: names of the order parameters, keyed by the pair of vector names.
    """

    name: str
    hidden: tuple
    trainable: tuple
    overlaps: Mapping[tuple, sp.Symbol]
    params: tuple
    data: SingleLocation
    student: sp.Expr
    label: sp.Expr
    label_noise: sp.Expr = sp.S.Zero
    risk_offset: sp.Expr = sp.S.Zero
    dimension: sp.Symbol | None = None
    citation: str = ""

    # --- lookup ---------------------------------------------------------------------------
    @property
    def vectors(self) -> tuple:
        return tuple(v.name for v in self.trainable) + tuple(self.hidden)

    @property
    def order_parameters(self) -> tuple:
        return tuple(self.overlaps[k] for k in self.overlaps)

    @property
    def param_symbols(self) -> tuple:
        return tuple(p.symbol for p in self.params)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name}: no parameter {name!r}; known: "
                       f"{[p.name for p in self.params]}")

    def trainable_vector(self, name: str) -> Vector:
        for v in self.trainable:
            if v.name == name:
                return v
        raise KeyError(name)

    def inner(self, a: str, b: str) -> sp.Expr:
        """wᵀw′ for two vector names, as an order parameter or a constant."""
        if a == b:
            if a in self.hidden or self.trainable_vector(a).constraint == "sphere":
                return sp.S.One
        if a in self.hidden and b in self.hidden:
            return sp.S.Zero
        for key in ((a, b), (b, a)):
            if key in self.overlaps:
                return self.overlaps[key]
        raise KeyError(f"{self.name}: no order parameter for the pair ({a}, {b})")

    def gram(self) -> sp.Matrix:
        names = self.vectors
        return sp.Matrix(len(names), len(names), lambda i, j: self.inner(names[i], names[j]))

    # --- validation at the boundary ------------------------------------------------------
    def check_params(self, values: Mapping[str, float]) -> dict:
        missing = [p.name for p in self.params if p.name not in values]
        if missing:
            raise ValueError(f"{self.name}: missing parameter(s) {missing}")
        unknown = set(values) - {p.name for p in self.params}
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {sorted(unknown)}; known: "
                             f"{[p.name for p in self.params]}")
        return {p.name: p.check(values[p.name]) for p in self.params}

    def check_overlaps(self, values: Mapping[str, float], tol: float = 1e-10) -> dict:
        out = {}
        for (a, b), sym in self.overlaps.items():
            if sym.name not in values:
                raise ValueError(f"{self.name}: missing order parameter {sym.name}")
            v = float(values[sym.name])
            sphere = all(n in self.hidden or self.trainable_vector(n).constraint == "sphere"
                         for n in (a, b))
            if not math.isfinite(v) or (sphere and abs(v) > 1 + tol):
                raise ValueError(f"order parameter {sym.name}={values[sym.name]!r} is out of "
                                 "range; allowed: real in [-1, 1] (overlap of unit vectors)")
            out[sym.name] = v
        G = np.array(self.gram().subs({self.overlaps[k]: out[self.overlaps[k].name]
                                       for k in self.overlaps}), dtype=float)
        lam_min = np.linalg.eigvalsh(G).min()
        if lam_min < -1e-9:
            raise ValueError(f"{self.name}: overlaps {out} are not realisable by vectors: their "
                             f"Gram matrix has eigenvalue {lam_min:.3g} < 0 (must be PSD)")
        return out

    def perturbed(self, **changes) -> Model:
        """A copy with some fields replaced: used to feed claim checks deliberately wrong models."""
        return replace(self, **changes)
