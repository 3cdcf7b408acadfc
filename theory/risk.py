"""Reduced population risk, derived from a model description.

For the single-location data law (Marion et al. 2025, Sec. 2) the tokens are independent
given the location J, so with ŷ = Σ_ℓ t(x_ℓ), y = s(x_J) + σ·ξ and E_s, E_n the expectations
over the signal and noise token laws,

    E(ŷ − y)² = E_s[t²] + (L−1)·E_n[t²] + 2(L−1)·E_s[t]·E_n[t] + (L−1)(L−2)·E_n[t]²
                − 2·(E_s[t·s] + (L−1)·E_n[t]·E_s[s]) + E_s[s²] + σ².

Each E is a Gaussian expectation over the token's projections on the model's vectors, whose
mean and covariance follow from the Gram matrix (``projection_law``), computed by
``theory.gaussian.expect``.
"""

from __future__ import annotations

import sympy as sp

from .gaussian import GaussianExpectation, GaussianLaw, expect
from .model import GaussianToken, Model, projection

__all__ = ["projection_law", "population_risk", "token_expectation"]


def _used_vectors(model: Model, *exprs):
    syms = set().union(*(sp.sympify(e).free_symbols for e in exprs))
    return tuple(n for n in model.vectors if projection(n) in syms)


def projection_law(model: Model, token: GaussianToken, names) -> GaussianLaw:
    """Law of (xᵀw)_{w in names} for x ~ N(Σ_a μ_a h_a, s²·I): mean_i = Σ_a μ_a·h_aᵀw_i,
    cov_ij = s²·w_iᵀw_j."""
    variables = tuple(projection(n) for n in names)
    mean = sp.Matrix([sum((c * model.inner(a, n) for a, c in token.mean.items()), sp.S.Zero)
                      for n in names])
    cov = sp.Matrix(len(names), len(names),
                    lambda i, j: token.scale**2 * model.inner(names[i], names[j]))
    return GaussianLaw(variables, mean, cov)


def token_expectation(model: Model, token: GaussianToken, expr) -> sp.Expr:
    names = _used_vectors(model, expr)
    return expect(expr, projection_law(model, token, names))


def population_risk(model: Model, simplify: bool = True) -> sp.Expr:
    """The reduced population risk E(ŷ − y)² − risk_offset in the order parameters."""
    t, s, data = model.student, model.label, model.data
    L = data.L
    Es = lambda e: token_expectation(model, data.signal, e)
    En = lambda e: token_expectation(model, data.noise, e)
    Et_s, Et_n = Es(t), En(t)
    risk = (Es(t**2) + (L - 1) * En(t**2) + 2 * (L - 1) * Et_s * Et_n
            + (L - 1) * (L - 2) * Et_n**2
            - 2 * (Es(t * s) + (L - 1) * Et_n * Es(s))
            + Es(s**2) + model.label_noise**2 - model.risk_offset)
    if simplify:
        risk = _tidy(risk)
    return risk


def _tidy(expr):
    """Cheap, safe simplification: collect powers and radicals without expanding special
    functions (full ``simplify`` is slow and can change branch choices)."""
    expr = sp.expand(expr, deep=False)
    expr = expr.replace(lambda e: isinstance(e, (sp.exp, sp.erf)),
                        lambda e: e.func(sp.factor(sp.cancel(e.args[0]))))
    expr = sp.powsimp(expr, combine="exp")
    exps = expr.atoms(sp.exp)
    nodes = expr.atoms(GaussianExpectation)
    if nodes:        # collect rewrites a node that holds a collected symbol: never inside one
        exps -= set().union(*(n.integrand.atoms(sp.exp) for n in nodes))
    return sp.collect(sp.factor_terms(expr), list(exps))
