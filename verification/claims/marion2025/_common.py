"""Helpers shared by the Marion et al. claim modules: the settings, high-precision evaluation,
realisable overlaps, and the paper's risk term by term (for declared mutations)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp

from theory import OwensT, derive
from theory.derived import OverlapDerivation
from theory.models.marion2025 import MODEL, L, d, eta, nu, rho, theta
from ...domain import Domain, Integers, Interval

PAPER = "marion2025"
MANIFOLD = {theta: 0, eta: 0, rho: 0}     # M = {θ = η = ρ = 0}
OVERLAP_NAMES = ("kappa", "nu", "theta", "eta", "rho")

# (d, L, λ, γ, ε) spread over the domain: small and large d, L, λ, γ
SETTINGS = [(8, 2, 0.5, 0.5, 0.1), (16, 3, 1.0, 1.0, 0.3), (32, 5, 0.3, 0.7, 0.0),
            (12, 4, 2.0, 1.5, 0.5), (24, 2, 0.8, 0.3, 0.2), (10, 6, 0.4, 1.2, 0.1),
            (40, 3, 0.25, 0.9, 0.2), (6, 3, 1.5, 0.6, 0.4)]


DOMAIN = Domain({"d": Integers(4, 64, log=True), "L": Integers(2, 8),
                 "lam": Interval(0.1, 3.0, log=True), "gamma": Interval(0.1, 2.0),
                 "eps": Interval(0.0, 1.0)})
"""(d, L, λ, γ, ε): the model's parameters, over which Marion et al.'s statements quantify."""


def sub_domain(*names: str, **coordinates) -> Domain:
    """``coordinates`` of a claim's own (first), then the coordinates ``names`` of ``DOMAIN``: a
    statement over some of the model's parameters, the others swept inside a setting or not
    entering it."""
    return Domain({**coordinates, **{k: DOMAIN.coordinates[k] for k in names}})


def _params(s):
    """A tuple (d, L, λ, γ, ε) of ``SETTINGS`` as a setting of ``DOMAIN``."""
    return dict(zip(("d", "L", "lam", "gamma", "eps"), s))


def _exact(v) -> sp.Expr:
    """A setting's value as an exact SymPy number (0.7 → 7/10: its decimal text, so that an
    exact check at a setting compares rationals, not binary floats)."""
    return sp.Integer(v) if float(v).is_integer() else sp.Rational(repr(float(v)))


def _hp(expr, values: dict, dps=40):
    """High-precision value of a SymPy expression (mpmath through evalf)."""
    subs = {sym: sp.Float(v, dps) if not float(v).is_integer() else sp.Integer(int(v))
            for sym, v in values.items()}
    out = sp.N(expr.subs(subs), dps)
    if not out.is_number:
        raise ValueError(f"expression still has free symbols {out.free_symbols}")
    return out


def _random_overlaps(rng, on_manifold: bool) -> dict:
    """Overlaps of unit vectors k, v with k* = e1, v* = e2 (realisable by construction)."""
    if on_manifold:
        kap, n = rng.uniform(-1, 1, 2)
        return dict(kappa=kap, nu=n, theta=0.0, eta=0.0, rho=0.0)
    k = rng.standard_normal(4) + rng.uniform(-2, 2) * np.eye(4)[0]
    v = rng.standard_normal(4) + rng.uniform(-2, 2) * np.eye(4)[1]
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    return dict(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=k @ v)


# --- the derived risk term by term: the terms that declared mutations drop, scale or flip ---

def _is_owens(t) -> bool:
    return any(isinstance(f, OwensT) for f in t.atoms(sp.Function))


TERMS: dict[str, Callable[[sp.Expr], bool]] = {
    # −2γ²ν·erf(λ√(d/2)κ/√(1+2λ²γ²)): the label–prediction cross term of the signal token
    "signal cross term -2γ²ν·erf": lambda t: t.has(nu) and not t.has(theta, eta, rho),
    # γ²(1 − 8T(·)): the signal token's own E[erf²·(x·v)²] at θ = 0
    "signal term γ²(1−8T)": lambda t: _is_owens(t) and not t.has(theta, eta, rho),
    # (L−1)(1 − 4·atan(1/√(1+4λ²))/π + …): the noise tokens' own terms
    "noise-token term (L−1)(…)": lambda t: t.has(L) and t.has(sp.atan),
    # 4λ²ρ²(L−1)(L−2)/(π(2λ²+1)): cross terms between distinct noise tokens
    "noise cross term (L−1)(L−2)": lambda t: t.has(L, rho) and not t.has(d, sp.atan, theta),
}


def risk_terms(model=MODEL) -> tuple[sp.Expr, ...]:
    """The additive terms of the derived risk (one level of expansion)."""
    return sp.Add.make_args(sp.expand(derive(model).risk, deep=False))


def risk_term(name: str, model=MODEL) -> sp.Expr:
    """The one term of the derived risk that ``TERMS[name]`` selects."""
    hits = [t for t in risk_terms(model) if TERMS[name](t)]
    if len(hits) != 1:
        raise LookupError(f"risk term {name!r} matches {len(hits)} terms, expected 1")
    return hits[0]


def mutated_risk(name: str, factor, model=MODEL) -> sp.Expr:
    """The derived risk with the term ``name`` multiplied by ``factor`` (0: dropped, −1: sign
    flipped, 11/10: a 10 % wrong factor)."""
    t = risk_term(name, model)
    return derive(model).risk - t + sp.nsimplify(factor) * t


def mutated_derivation(name: str, factor, model=MODEL) -> OverlapDerivation:
    """Flow, Jacobian and Hessian derived from ``mutated_risk`` (same geometry, parameters)."""
    return OverlapDerivation(model.geometry, mutated_risk(name, factor, model), model.params)
