"""Dynamics on M (spec: Props. 3, 5, 6): the derived overlap flow's structure, symbolic."""

from __future__ import annotations

from theory.models import dohmatob2025 as dm

from ...declare import Outcome
from ...domain import Integers
from ...simulations.dohmatob2025.common import float_setting_values
from ...simulations.dohmatob2025.flow_on_M import leaves_M, span_coefficients, two_d_flow
from ._common import (PARAMETERS, R0_UNSEEN, R_SYM, SYMMETRY_UNSEEN, _per_link,
                      odd_term_mutations, rbar_mutations, rbar_mutations_missed)


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


def _setting_words(vals):
    return ", ".join(f"{s}={float(v):g}" for s, v in zip(("α", "β", "γ", "d"), vals.values()))


def _item(link, risk, alpha, beta, gamma, d):
    """A setting's item: the link, the risk (None: the paper's R̄) and (α, β, γ, d)."""
    return {"link": link, "risk": risk, "alpha": alpha, "beta": beta, "gamma": gamma, "d": d}


def _shown(hit):
    """A nonzero value of ``simulations.flow_on_M.nonzero_at`` as text."""
    return f"{hit['value']:.4g}" if hit["number"] else hit["text"]


def _invariance_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """Prop. 5 at one setting (``simulations.leaves_M``): the off-M velocities vanish on M."""
    (sim,) = ctx.map(leaves_M, [_item(link, risk, alpha, beta, gamma, d)])
    evidence = {"link": link, "flow_off_M_on_M": sim["off_M"]}
    leaves = sim["leaves"]
    if leaves is None:
        how = "identically (symbolic)" if sim["identically"] else "at this setting"
        return Outcome("confirmed", f"{link}: dζ/dt, dη/dt, dρ/dt vanish on M {how}", evidence)
    vals = float_setting_values(alpha, beta, gamma, d)
    k, witness = leaves["name"], leaves["witness"]
    where = ", ".join(f"{s}={x:g}" for s, x in witness.items())
    evidence["counterexample"] = {**{str(s): float(x) for s, x in vals.items()}, **witness,
                                  f"d{k}/dt": leaves["value"] if leaves["number"] else leaves["text"]}
    return Outcome("refuted", f"{link}: d{k}/dt ≠ 0 on M, e.g. {_shown(leaves)} at "
                   f"{_setting_words(vals)}{', ' + where if where else ''}", evidence)


def _two_d_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """Prop. 6 at one setting: M invariant there (``simulations.leaves_M``) and the restricted
    flow (``simulations.two_d_flow``) closed on (µ, ν)."""
    item = _item(link, risk, alpha, beta, gamma, d)
    (invariance,) = ctx.map(leaves_M, [item])
    if invariance["leaves"] is not None:
        return Outcome("refuted", f"{link}: M is not invariant, so no closed 2-D flow on it",
                       {"link": link})
    (flow2,) = ctx.map(two_d_flow, [item])
    evidence = {"link": link, "state": flow2["state"], "rhs": flow2["rhs"],
                "rhs_latex": flow2["rhs_latex"]}
    if flow2["extra"]:
        return Outcome("refuted", f"{link}: the restricted flow still depends on {flow2['extra']}",
                       evidence)
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


def _gradient_span_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """∇_u R = Σ_w ∂R/∂(uᵀw)·w over w ∈ {v, u*, v*} (Gram chain rule): it lies in span{u*, v*}
    iff the coefficient of v, ∂R/∂ρ, vanishes; likewise for ∇_v R (coefficient of u). Derived
    symbolically at r = 0, ρ = 0, with r kept as a free symbol in R̄, then evaluated exactly at
    the setting (α, β, γ, d) (``simulations.span_coefficients``)."""
    (sim,) = ctx.map(span_coefficients, [_item(link, risk, alpha, beta, gamma, d)])
    evidence = {"link": link, "coefficients_at_r0_rho0": sim["coefficients"]}
    hit = sim["hit"]
    if hit is not None:
        vals = float_setting_values(alpha, beta, gamma, d)
        k, shown = hit["name"], _shown(hit)
        where = "".join(f", {s}={x:g}" for s, x in hit["witness"].items())
        evidence["counterexample"] = {**{str(s): float(x) for s, x in vals.items()},
                                      **hit["witness"], k: shown}
        return Outcome("refuted", f"{link}: {k} = {sim['coefficients'][k]} ≠ 0 at r = ρ = 0 "
                       f"(e.g. {shown} at {_setting_words(vals)}{where})", evidence)
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


