"""Dynamics on M (spec: Props. 3, 5, 6): the derived overlap flow's structure, symbolic."""

from __future__ import annotations

import math

import sympy as sp

from theory.model import Param
from theory.models import dohmatob2025 as dm

from ...declare import Outcome
from ._common import R_SYM, _per_link, odd_term_mutations, reduced_model


# -------------------------------------------------------------------------------------------
def _invariance_check(ctx, link, risk=None):
    flow = reduced_model(link, risk).derivation.flow
    off = {str(q): sp.simplify(r.subs(dm.MANIFOLD)) for q, r in flow.as_dict().items()
           if q in dm.MANIFOLD}
    evidence = {"link": link, "flow_off_M_on_M": {k: str(v) for k, v in off.items()}}
    bad = {k: v for k, v in off.items() if v != 0}
    if not bad:
        return Outcome("confirmed", f"{link}: dζ/dt, dη/dt, dρ/dt vanish identically on M "
                       "(symbolic)", evidence)
    # a concrete point where the flow leaves M
    vals = {dm.alpha: 0.1, dm.beta: 1.0, dm.gamma: 0.6, dm.d: 100, dm.mu: 0.5, dm.nu: 0.3}
    k, v = next(iter(bad.items()))
    evidence["counterexample"] = {**{str(s): x for s, x in vals.items()},
                                  f"d{k}/dt": float(v.subs(vals))}
    return Outcome("refuted", f"{link}: d{k}/dt ≠ 0 on M, e.g. {float(v.subs(vals)):.4g} at "
                   "α=0.1, β=1, γ=0.6, d=100, µ=0.5, ν=0.3", evidence)


def _two_d_check(ctx, link, risk=None):
    reduced = reduced_model(link, risk)
    if any(sp.simplify(r.subs(dm.MANIFOLD)) != 0 for q, r in reduced.derivation.flow.as_dict().items()
           if q in dm.MANIFOLD):
        return Outcome("refuted", f"{link}: M is not invariant, so no closed 2-D flow on it",
                       {"link": link})
    flow2 = reduced.restrict(dm.MANIFOLD).derivation.flow
    extra = sorted(str(s) for r in flow2.rhs for s in r.free_symbols
                   if s in (dm.zeta, dm.eta, dm.rho))
    evidence = {"link": link, "state": [str(s) for s in flow2.state],
                "rhs": [str(r) for r in flow2.rhs],
                "rhs_latex": [sp.latex(r) for r in flow2.rhs]}
    if extra:
        return Outcome("refuted", f"{link}: the restricted flow still depends on {extra}", evidence)
    return Outcome("confirmed", f"{link}: on M the derived flow closes on (µ, ν): "
                   f"dµ/dt, dν/dt depend on µ, ν and the parameters only", evidence)


# Declared mutations: SYMMETRY_NOTE (a dropped/rescaled/flipped term of R̄ is invisible here);
# one odd term each: ζµ and ηµ move ζ, η off M, ρν moves ζ (through ∂R/∂ρ = ν along u*).
ODD_TERMS_M = {"ζ·µ": dm.zeta * dm.mu, "η·µ": dm.eta * dm.mu, "ρ·ν": dm.rho * dm.nu}
ODD_TERMS_RHO = {"ρ·µ": dm.rho * dm.mu, "ρ·ν": dm.rho * dm.nu, "γ²·ρ": dm.gamma**2 * dm.rho}


_per_link("prop5-invariance", "Prop. 5",
          "The dynamics leave M = {{η = ζ = ρ = 0}} invariant; here σ = {link}.",
          _invariance_check, statistical=False,
          reading="dynamics = projected gradient flow on the paper's R̄ (Prop. 1), derived by "
                  "the engine's Gram-matrix chain rule.",
          mutations=lambda link: odd_term_mutations(link, ODD_TERMS_M))
_per_link("prop6-2d-flow", "Prop. 6",
          "On M the flow reduces to the 2-D system in (µ, ν) obtained by restricting the "
          "overlap flow; here σ = {link}.", _two_d_check, statistical=False,
          mutations=lambda link: odd_term_mutations(link, ODD_TERMS_M))


def _gradient_span_check(ctx, link, risk=None):
    """∇_u R = Σ_w ∂R/∂(uᵀw)·w over w ∈ {v, u*, v*} (Gram chain rule): it lies in span{u*, v*}
    iff the coefficient of v, ∂R/∂ρ, vanishes; likewise for ∇_v R (coefficient of u). Checked
    symbolically at r = 0, ρ = 0, with r kept as a free symbol in R̄."""
    from theory.dynamics import vector_gradients
    r_sym = R_SYM
    r_param = Param(r_sym, 0, math.inf, open_high=True, doc="REM constant r, kept symbolic")
    reduced = reduced_model(link, dm.paper_risk(link, r=r_sym) if risk is None else risk, (r_param,))
    grads = vector_gradients(reduced.geometry, reduced.derivation.risk)
    at = {r_sym: 0, dm.rho: 0}
    coeffs = {"grad_u along v": sp.simplify(grads["u"]["v"].subs(at)),
              "grad_v along u": sp.simplify(grads["v"]["u"].subs(at))}
    evidence = {"link": link, "coefficients_at_r0_rho0": {k: str(v) for k, v in coeffs.items()}}
    bad = {k: v for k, v in coeffs.items() if v != 0}
    if bad:
        k, v = next(iter(bad.items()))
        return Outcome("refuted", f"{link}: {k} = {v} ≠ 0 at r = ρ = 0", evidence)
    return Outcome("confirmed", f"{link}: at r = ρ = 0 both gradients have no component along "
                   "the other student vector: they lie in span{u*, v*}", evidence)


_per_link("prop3-gradient-span", "Prop. 3",
          "With r = 0 and ρ = 0, ∇_u R and ∇_v R lie in span{{u*, v*}}; here σ = {link}.",
          _gradient_span_check, statistical=False,
          reading="R = the paper's R̄ with r kept symbolic; gradients by the Gram-matrix chain "
                  "rule (their components along u* and v* are unconstrained).",
          mutations=lambda link: odd_term_mutations(link, ODD_TERMS_RHO, r=R_SYM))


