"""What Marion et al.'s simulations share: exact numbers and high-precision evaluation, the
derived risk term by term (the terms declared mutations drop, scale or flip), and a risk named
by a light item (``MutatedRisk``) rather than passed as a derivation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from theory import OwensT, derive
from theory.derived import OverlapDerivation, memo_by_model
from theory.models.marion2025 import MODEL, L, d, eta, nu, rho, theta

__all__ = ["exact", "high_precision", "TERMS", "risk_terms", "risk_term", "mutated_risk",
           "mutated_derivation", "MutatedRisk", "risk_of", "derivation_of"]


def exact(v) -> sp.Expr:
    """A setting's value as an exact SymPy number (0.7 → 7/10: its decimal text, so that an
    exact check at a setting compares rationals, not binary floats)."""
    return sp.Integer(v) if float(v).is_integer() else sp.Rational(repr(float(v)))


def high_precision(expr, values: dict, dps=40):
    """High-precision value of a SymPy expression (mpmath through evalf)."""
    subs = {sym: sp.Float(v, dps) if not float(v).is_integer() else sp.Integer(int(v))
            for sym, v in values.items()}
    out = sp.N(expr.subs(subs), dps)
    if not out.is_number:
        raise ValueError(f"expression still has free symbols {out.free_symbols}")
    return out


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


@dataclass(frozen=True)
class MutatedRisk:
    """The model's derived risk with the term ``term`` (a key of ``TERMS``) multiplied by
    ``factor``: a deliberately wrong risk named by an item's data, derived where it is used."""

    term: str
    factor: int | float


def risk_of(model, risk=None) -> sp.Expr:
    """The risk an item names: None, the model's derived one; a ``MutatedRisk``, that term of it
    changed; a SymPy expression, itself."""
    if risk is None:
        return derive(model).risk
    if isinstance(risk, MutatedRisk):
        return mutated_risk(risk.term, risk.factor, model)
    return sp.sympify(risk)


@memo_by_model
def _mutated_derivation(model, term: str, factor) -> OverlapDerivation:
    return mutated_derivation(term, factor, model)


def derivation_of(model, risk=None):
    """Flow, Jacobian and Hessian of the risk an item names (``risk_of``); the model's and a
    ``MutatedRisk``'s kept once per process, so the settings of one claim share them."""
    if risk is None:
        return derive(model)
    if isinstance(risk, MutatedRisk):
        return _mutated_derivation(model, risk.term, risk.factor)
    return OverlapDerivation(model.geometry, sp.sympify(risk), model.params)
