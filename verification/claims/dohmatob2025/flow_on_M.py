"""Dynamics on M (spec: Props. 3, 5, 6): the derived overlap flow's structure, symbolic."""

from __future__ import annotations


from theory.models import dohmatob2025 as dm

from ...checks import bound, conclude, exact, identity
from ...domain import Integers
from ...simulations.dohmatob2025.common import float_setting_values
from ...simulations.dohmatob2025.flow_on_M import leaves_M, span_coefficients, two_d_flow
from ._common import (PARAMETERS, R0_UNSEEN, R_SYM, SYMMETRY_UNSEEN, TRANSITIONS, odd_term_mutations,
                      parse, per_link, rbar_mutations, rbar_mutations_missed)


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
SETTINGS = dict(domain=DOMAIN, reference=REFERENCE, points=POINTS,
                transitions=[{**t, "d": REFERENCE["d"]} for t in TRANSITIONS])
"""Where Props. 3, 5 and 6 are judged: their domain, reference, points and the settings either
side of the paper's transitions (at the reference d)."""


def _setting_words(vals):
    return ", ".join(f"{s}={float(v):g}" for s, v in zip(("α", "β", "γ", "d"), vals.values()))


def _item(link, risk, alpha, beta, gamma, d):
    """A setting's item: the link, the risk (None: the paper's R̄) and (α, β, γ, d)."""
    return {"link": link, "risk": risk, "alpha": alpha, "beta": beta, "gamma": gamma, "d": d}


def _shown(hit):
    """A nonzero value of ``simulations.flow_on_M.nonzero_at`` as text."""
    return f"{hit['value']:.4g}" if hit["number"] else hit["text"]


WITNESS_FLOOR = 1e-20
"""The size above which ``simulations.flow_on_M.nonzero_at`` shows an expression nonzero (its
value at a witness point, 30 digits): what vanishes at the setting within it is 0."""


def vanishing_leg(ctx, names, hit, name):
    """The expressions ``names`` (in the order the simulation tried them) vanish at the
    setting: ``hit`` is the first that does not (``simulations.flow_on_M.nonzero_at``: its
    value at a witness point; None when every one vanishes there). Those before it were shown
    to vanish (0), the hit has its witness value: ``checks.exact`` against 0 within
    ``WITNESS_FLOOR``. A hit without a number (no witness exceeded the floor, yet the
    expression does not simplify to 0) is judged by ``checks.identity``."""
    if hit is not None and not hit["number"]:
        return identity(ctx, [parse(hit["text"])], name=name, labels=[hit["name"]])
    tried = list(names) if hit is None else list(names)[:list(names).index(hit["name"]) + 1]
    values = [hit["value"] if hit is not None and k == hit["name"] else 0.0 for k in tried]
    return exact(ctx, values, [0.0] * len(values), atol=WITNESS_FLOOR, name=name,
                 labels=tried)


INVARIANCE_FAMILY = "dζ/dt, dη/dt, dρ/dt on M at the setting"
CLOSURE_FAMILY = "symbols among ζ, η, ρ of the flow restricted to M"
SPAN_FAMILY = "coefficients of v in ∇_u R and of u in ∇_v R at r = ρ = 0"


def _invariance_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """Prop. 5 at one setting (``simulations.leaves_M``): the off-M velocities vanish on M."""
    (sim,) = ctx.map(leaves_M, [_item(link, risk, alpha, beta, gamma, d)])
    evidence = {"link": link, "flow_off_M_on_M": sim["off_M"]}
    leaves = sim["leaves"]
    leg = vanishing_leg(ctx, sim["off_M"], leaves, INVARIANCE_FAMILY)
    how = "identically (symbolic)" if sim["identically"] else "at this setting"
    refuted = ""
    if leaves is not None:
        vals = float_setting_values(alpha, beta, gamma, d)
        k, witness = leaves["name"], leaves["witness"]
        where = ", ".join(f"{s}={x:g}" for s, x in witness.items())
        evidence["counterexample"] = {**{str(s): float(x) for s, x in vals.items()}, **witness,
                                      f"d{k}/dt": leaves["value"] if leaves["number"]
                                      else leaves["text"]}
        refuted = (f"{link}: d{k}/dt ≠ 0 on M, e.g. {_shown(leaves)} at "
                   f"{_setting_words(vals)}{', ' + where if where else ''}")
    return conclude({"M invariant leg": leg}, says={
        "confirmed": f"{link}: dζ/dt, dη/dt, dρ/dt vanish on M {how}", "refuted": refuted},
        evidence=evidence)


def _two_d_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """Prop. 6 at one setting: M invariant there (``simulations.leaves_M``) and the restricted
    flow (``simulations.two_d_flow``) closed on (µ, ν)."""
    item = _item(link, risk, alpha, beta, gamma, d)
    (invariance,) = ctx.map(leaves_M, [item])
    invariant = vanishing_leg(ctx, invariance["off_M"], invariance["leaves"], INVARIANCE_FAMILY)
    if invariant.decision == "refuted":         # no 2-D flow on M to restrict to
        return conclude({"M invariant leg": invariant},
                        says=f"{link}: M is not invariant, so no closed 2-D flow on it",
                        evidence={"link": link})
    (flow2,) = ctx.map(two_d_flow, [item])
    evidence = {"link": link, "state": flow2["state"], "rhs": flow2["rhs"],
                "rhs_latex": flow2["rhs_latex"]}
    closed = bound(ctx, [len(flow2["extra"])], upper=0, name=CLOSURE_FAMILY,
                   labels=["how many of ζ, η, ρ dµ/dt, dν/dt depend on"])
    return conclude({"M invariant leg": invariant, "closed on (µ, ν) leg": closed},
                    says={"refuted": f"{link}: the restricted flow still depends on "
                                     f"{flow2['extra']}",
                          "confirmed": f"{link}: on M the derived flow closes on (µ, ν): "
                                       "dµ/dt, dν/dt depend on µ, ν and the parameters only"},
                    evidence=evidence)


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


per_link("prop5-invariance", "Prop. 5",
          "The dynamics leave M = {{η = ζ = ρ = 0}} invariant; here σ = {link}.",
          _invariance_check, statistical=False,
          reading="dynamics = projected gradient flow on the paper's R̄ (Prop. 1), derived by "
                  "the engine's Gram-matrix chain rule; dζ/dt, dη/dt, dρ/dt on M simplified with "
                  "every parameter symbolic, then evaluated exactly at the setting (α, β, γ, d) "
                  "(a nonzero one shown at overlaps (µ, ν) = (0.5, 0.3), 30 digits).",
          mutations=_m_mutations,
          **SETTINGS)
per_link("prop6-2d-flow", "Prop. 6",
          "On M the flow reduces to the 2-D system in (µ, ν) obtained by restricting the "
          "overlap flow; here σ = {link}.", _two_d_check, statistical=False,
          reading="the restriction of the derived overlap flow to ζ = η = ρ = 0, a closed flow "
                  "on M only where M is invariant at the setting (α, β, γ, d) (Prop. 5's check).",
          mutations=_m_mutations,
          **SETTINGS)


def _gradient_span_check(ctx, link, alpha, beta, gamma, d, risk=None):
    """∇_u R = Σ_w ∂R/∂(uᵀw)·w over w ∈ {v, u*, v*} (Gram chain rule): it lies in span{u*, v*}
    iff the coefficient of v, ∂R/∂ρ, vanishes; likewise for ∇_v R (coefficient of u). Derived
    symbolically at r = 0, ρ = 0, with r kept as a free symbol in R̄, then evaluated exactly at
    the setting (α, β, γ, d) (``simulations.span_coefficients``)."""
    (sim,) = ctx.map(span_coefficients, [_item(link, risk, alpha, beta, gamma, d)])
    evidence = {"link": link, "coefficients_at_r0_rho0": sim["coefficients"]}
    hit = sim["hit"]
    leg = vanishing_leg(ctx, sim["coefficients"], hit, SPAN_FAMILY)
    refuted = ""
    if hit is not None:
        vals = float_setting_values(alpha, beta, gamma, d)
        k, shown = hit["name"], _shown(hit)
        where = "".join(f", {s}={x:g}" for s, x in hit["witness"].items())
        evidence["counterexample"] = {**{str(s): float(x) for s, x in vals.items()},
                                      **hit["witness"], k: shown}
        refuted = (f"{link}: {k} = {sim['coefficients'][k]} ≠ 0 at r = ρ = 0 "
                   f"(e.g. {shown} at {_setting_words(vals)}{where})")
    return conclude({"gradients in span{u*, v*} leg": leg}, says={
        "confirmed": f"{link}: at r = ρ = 0 both gradients have no component along the other "
                     "student vector: they lie in span{u*, v*}", "refuted": refuted},
        evidence=evidence)


per_link("prop3-gradient-span", "Prop. 3",
          "With r = 0 and ρ = 0, ∇_u R and ∇_v R lie in span{{u*, v*}}; here σ = {link}.",
          _gradient_span_check, statistical=False,
          reading="R = the paper's R̄ with r kept symbolic; gradients by the Gram-matrix chain "
                  "rule (their components along u* and v* are unconstrained); the coefficients "
                  "derived with every parameter symbolic, then evaluated exactly at the setting "
                  "(α, β, γ, d).",
          mutations=_span_mutations,
          **SETTINGS)


