"""Dynamics on M (spec: Props. 3, 5, 6): the derived overlap flow's structure, symbolic."""

from __future__ import annotations

import functools
import math

import sympy as sp

from theory.model import Param
from theory.models import dohmatob2025 as dm

from ...declare import Outcome
from ...domain import Integers
from ._common import (PARAMETERS, R0_UNSEEN, R_SYM, SYMMETRY_UNSEEN, _per_link, flow_on_M_2d,
                      odd_term_mutations, rbar_mutations, rbar_mutations_missed, reduced_model)


# -------------------------------------------------------------------------------------------
DOMAIN = {**PARAMETERS, "d": Integers(1, 1000, log=True)}
"""(α, β, γ, d): the model's parameters. Props. 3, 5 and 6 are identities of the derived flow
at every parameter value: the symbolic result is evaluated exactly at the setting."""
REFERENCE = {"alpha": 0.1, "beta": 1.0, "gamma": 0.6, "d": 100}
"""The first setting of the stationary-point claims, at d = 100 (where the checks quote a
counterexample); the profiles judge it alone."""

POINTS = [REFERENCE, {"alpha": 0.37, "beta": 0.53, "gamma": 0.41, "d": 37},
          {"alpha": 0.13, "beta": 2.3, "gamma": 0.77, "d": 11}]
"""The reference and two generic settings, one per REM phase (high temperature: β < √(2α);
frozen: β > √(2α)): an identity judged at one setting could be blind to a term that vanishes
there (a factor β − 1 at β = 1) or to the other phase's branch of ψ and r."""

WITNESSES = ((sp.Rational(1, 2), sp.Rational(3, 10), sp.Rational(1, 5), sp.Rational(1, 7)),
             (sp.Rational(-1, 3), sp.Rational(7, 10), sp.Rational(-1, 4), sp.Rational(2, 9)),
             (sp.Rational(1, 5), sp.Rational(-3, 5), sp.Rational(1, 3), sp.Rational(-1, 6)))
"""Overlap values (in the order µ, ν, ζ, η of the symbols left) at which a nonzero expression
is shown nonzero."""


def _values(alpha, beta, gamma, d):
    """The setting as exact SymPy values (a float's shortest decimal, read exactly)."""
    return {dm.alpha: sp.Rational(str(alpha)), dm.beta: sp.Rational(str(beta)),
            dm.gamma: sp.Rational(str(gamma)), dm.d: sp.Integer(int(d))}


def _setting_words(vals):
    return ", ".join(f"{s}={float(v):g}" for s, v in zip(("α", "β", "γ", "d"), vals.values()))


def _nonzero_at(expr, vals):
    """None where the symbolic ``expr`` vanishes identically in the overlaps at the setting
    ``vals``; else (overlaps, value) of a witness: the first point of ``WITNESSES`` where its
    value at 30 digits exceeds 1e-20 in size (the expression itself when none does, and it does
    not simplify to 0)."""
    if expr == 0:
        return None
    at = expr.subs(vals)
    order = [s for s in (dm.mu, dm.nu, dm.zeta, dm.eta) if s in at.free_symbols]
    for w in WITNESSES:
        point = dict(zip(order, w))
        value = sp.N(at.subs(point), 30)
        if value.is_number and abs(value) > 1e-20:
            return {str(k): float(v) for k, v in point.items()}, value
    return None if sp.simplify(at) == 0 else ({}, at)


@functools.cache
def _off_M(link, risk=None):
    """dζ/dt, dη/dt, dρ/dt of the derived overlap flow on M, simplified (all parameters
    symbolic)."""
    flow = reduced_model(link, risk).derivation.flow
    return {str(q): sp.simplify(r.subs(dm.MANIFOLD)) for q, r in flow.as_dict().items()
            if q in dm.MANIFOLD}


def _leaves_M(link, risk, vals):
    """(name, witness, value) of the first off-M velocity not vanishing on M at the setting;
    None where M is invariant there."""
    for k, v in _off_M(link, risk).items():
        hit = _nonzero_at(v, vals)
        if hit is not None:
            return k, *hit
    return None


def _invariance_check(ctx, link, alpha, beta, gamma, d, risk=None):
    vals = _values(alpha, beta, gamma, d)
    off = _off_M(link, risk)
    evidence = {"link": link, "flow_off_M_on_M": {k: str(v) for k, v in off.items()}}
    leaves = _leaves_M(link, risk, vals)
    if leaves is None:
        how = "identically (symbolic)" if all(v == 0 for v in off.values()) else "at this setting"
        return Outcome("confirmed", f"{link}: dζ/dt, dη/dt, dρ/dt vanish on M {how}", evidence)
    k, witness, value = leaves
    where = ", ".join(f"{s}={x:g}" for s, x in witness.items())
    evidence["counterexample"] = {**{str(s): float(x) for s, x in vals.items()}, **witness,
                                  f"d{k}/dt": float(value) if value.is_number else str(value)}
    shown = f"{float(value):.4g}" if value.is_number else str(value)
    return Outcome("refuted", f"{link}: d{k}/dt ≠ 0 on M, e.g. {shown} at "
                   f"{_setting_words(vals)}{', ' + where if where else ''}", evidence)


def _two_d_check(ctx, link, alpha, beta, gamma, d, risk=None):
    vals = _values(alpha, beta, gamma, d)
    if _leaves_M(link, risk, vals) is not None:
        return Outcome("refuted", f"{link}: M is not invariant, so no closed 2-D flow on it",
                       {"link": link})
    flow2 = flow_on_M_2d(link, risk)
    extra = sorted(str(s) for r in flow2.rhs for s in r.subs(vals).free_symbols
                   if s in (dm.zeta, dm.eta, dm.rho))
    evidence = {"link": link, "state": [str(s) for s in flow2.state],
                "rhs": [str(r) for r in flow2.rhs],
                "rhs_latex": [sp.latex(r) for r in flow2.rhs]}
    if extra:
        return Outcome("refuted", f"{link}: the restricted flow still depends on {extra}", evidence)
    return Outcome("confirmed", f"{link}: on M the derived flow closes on (µ, ν): "
                   f"dµ/dt, dν/dt depend on µ, ν and the parameters only", evidence)


# Declared mutations: one odd term each (ζµ and ηµ move ζ, η off M, ρν moves ζ through
# ∂R/∂ρ = ν along u*), and R̄'s term mutations, missed where the check cannot see them.
ODD_TERMS_M = {"ζ·µ": dm.zeta * dm.mu, "η·µ": dm.eta * dm.mu, "ρ·ν": dm.rho * dm.nu}
ODD_TERMS_RHO = {"ρ·µ": dm.rho * dm.mu, "ρ·ν": dm.rho * dm.nu, "γ²·ρ": dm.gamma**2 * dm.rho}
EVEN_LINKS = ("linear", "quadratic")
"""Links for which every term of R̄ is even in (ζ, ρ) jointly (``SYMMETRY_UNSEEN``)."""


def _m_mutations(link):
    """Props. 5 and 6: the odd terms, and R̄'s term mutations (missed for an even link; for
    ReLU M is not invariant under R̄ itself, and stays so under each)."""
    terms = (rbar_mutations_missed(link, SYMMETRY_UNSEEN) if link in EVEN_LINKS
             else rbar_mutations(link))
    return {**odd_term_mutations(link, ODD_TERMS_M), **terms}


def _span_mutations(link):
    """Prop. 3: the odd terms in ρ, and R̄'s term mutations (missed at every link)."""
    return {**odd_term_mutations(link, ODD_TERMS_RHO, r=R_SYM),
            **rbar_mutations_missed(link, R0_UNSEEN, r=R_SYM)}


_per_link("prop5-invariance", "Prop. 5",
          "The dynamics leave M = {{η = ζ = ρ = 0}} invariant; here σ = {link}.",
          _invariance_check, statistical=False,
          reading="dynamics = projected gradient flow on the paper's R̄ (Prop. 1), derived by "
                  "the engine's Gram-matrix chain rule; dζ/dt, dη/dt, dρ/dt on M simplified with "
                  "every parameter symbolic, then evaluated exactly at the setting (α, β, γ, d) "
                  "(a nonzero one shown at overlaps (µ, ν) = (0.5, 0.3), 30 digits).",
          mutations=_m_mutations,
          domain=DOMAIN, reference=REFERENCE, points=POINTS)
_per_link("prop6-2d-flow", "Prop. 6",
          "On M the flow reduces to the 2-D system in (µ, ν) obtained by restricting the "
          "overlap flow; here σ = {link}.", _two_d_check, statistical=False,
          reading="the restriction of the derived overlap flow to ζ = η = ρ = 0, a closed flow "
                  "on M only where M is invariant at the setting (α, β, γ, d) (Prop. 5's check).",
          mutations=_m_mutations,
          domain=DOMAIN, reference=REFERENCE, points=POINTS)


@functools.cache
def _span_coefficients(link, risk=None):
    """The coefficients of v in ∇_u R and of u in ∇_v R at r = 0, ρ = 0, simplified (all
    parameters symbolic, r a free symbol of R̄ set to 0)."""
    from theory.dynamics import vector_gradients
    r_sym = R_SYM
    r_param = Param(r_sym, 0, math.inf, open_high=True, doc="REM constant r, kept symbolic")
    reduced = reduced_model(link, dm.paper_risk(link, r=r_sym) if risk is None else risk, (r_param,))
    grads = vector_gradients(reduced.geometry, reduced.derivation.risk)
    at = {r_sym: 0, dm.rho: 0}
    return {"grad_u along v": sp.simplify(grads["u"]["v"].subs(at)),
            "grad_v along u": sp.simplify(grads["v"]["u"].subs(at))}


def _gradient_span_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """∇_u R = Σ_w ∂R/∂(uᵀw)·w over w ∈ {v, u*, v*} (Gram chain rule): it lies in span{u*, v*}
    iff the coefficient of v, ∂R/∂ρ, vanishes; likewise for ∇_v R (coefficient of u). Derived
    symbolically at r = 0, ρ = 0, with r kept as a free symbol in R̄, then evaluated exactly at
    the setting (α, β, γ, d)."""
    vals = _values(alpha, beta, gamma, d)
    coeffs = _span_coefficients(link, risk)
    evidence = {"link": link, "coefficients_at_r0_rho0": {k: str(v) for k, v in coeffs.items()}}
    for k, v in coeffs.items():
        hit = _nonzero_at(v, vals)
        if hit is not None:
            witness, value = hit
            where = "".join(f", {s}={x:g}" for s, x in witness.items())
            shown = f"{float(value):.4g}" if value.is_number else str(value)
            evidence["counterexample"] = {**{str(s): float(x) for s, x in vals.items()},
                                          **witness, k: shown}
            return Outcome("refuted", f"{link}: {k} = {v} ≠ 0 at r = ρ = 0 (e.g. {shown} at "
                           f"{_setting_words(vals)}{where})", evidence)
    return Outcome("confirmed", f"{link}: at r = ρ = 0 both gradients have no component along "
                   "the other student vector: they lie in span{u*, v*}", evidence)


_per_link("prop3-gradient-span", "Prop. 3",
          "With r = 0 and ρ = 0, ∇_u R and ∇_v R lie in span{{u*, v*}}; here σ = {link}.",
          _gradient_span_check, statistical=False,
          reading="R = the paper's R̄ with r kept symbolic; gradients by the Gram-matrix chain "
                  "rule (their components along u* and v* are unconstrained); the coefficients "
                  "derived with every parameter symbolic, then evaluated exactly at the setting "
                  "(α, β, γ, d).",
          mutations=_span_mutations,
          domain=DOMAIN, reference=REFERENCE, points=POINTS)


