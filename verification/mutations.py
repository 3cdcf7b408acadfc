"""Formula mutations: deliberately wrong variants of a derived expression, used to show that a
claim check can fail (and, later, to measure a check's power as the share of mutants refuted)."""

from __future__ import annotations

import sympy as sp

__all__ = ["mutants", "flip_term_sign", "scale_term", "swap_symbol", "DEFAULT_SCALE"]

DEFAULT_SCALE = sp.Rational(11, 10)
"""The factor a scaled-term mutant multiplies its term by (a 10 % error)."""


def _terms(expr: sp.Expr) -> list[sp.Expr]:
    return list(sp.Add.make_args(sp.expand(expr, deep=False)))


def flip_term_sign(expr: sp.Expr, index: int) -> sp.Expr:
    """The expression with the sign of its index-th additive term flipped."""
    terms = _terms(expr)
    if not 0 <= index < len(terms):
        raise IndexError(f"index={index} outside the {len(terms)} terms")
    terms[index] = -terms[index]
    return sp.Add(*terms)


def scale_term(expr: sp.Expr, index: int, factor: sp.Expr = DEFAULT_SCALE) -> sp.Expr:
    """The expression with its index-th additive term multiplied by ``factor``."""
    terms = _terms(expr)
    if not 0 <= index < len(terms):
        raise IndexError(f"index={index} outside the {len(terms)} terms")
    terms[index] = factor * terms[index]
    return sp.Add(*terms)


def swap_symbol(expr: sp.Expr, old: sp.Basic, new: sp.Basic) -> sp.Expr:
    """The expression with every occurrence of ``old`` replaced by ``new`` (no re-evaluation
    beyond SymPy's automatic simplification)."""
    return expr.xreplace({old: new})


def mutants(expr: sp.Expr, factor: sp.Expr = DEFAULT_SCALE) -> list[tuple[str, sp.Expr]]:
    """Every single-term sign flip and scaling of ``expr``: [(description, mutant)]."""
    out = []
    for i, t in enumerate(_terms(expr)):
        out.append((f"flip sign of term {i}: {sp.sstr(t)[:60]}", flip_term_sign(expr, i)))
        out.append((f"scale term {i} by {factor}", scale_term(expr, i, factor)))
    return out
