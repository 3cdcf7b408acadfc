"""What Dohmatob's risk claims simulate (``verification/claims/dohmatob2025/risk.py`` judges):
the e^{αd}-token Monte Carlo risk, R̄ at given points, the symbolic identities of Cor. 1 and
Prop. 2, σ̄_γ(1), and the phase diagram's Monte Carlo grid."""

from __future__ import annotations

import functools

import sympy as sp

from theory.models import dohmatob2025 as dm

from ..base import simulation
from .common import numeric_risk_estimate, rbar

__all__ = ["risk_mc", "risk_piece", "rbar_values", "cor1_difference", "oracle_identity",
           "sigma_bar", "sigma_bar_expr", "phase_row"]


def risk_mc(sim, link, *args, quadrature_error=True, **kw):
    """The e^{αd}-token risk Monte Carlo in torch on the run's device (numerics.rem_torch):
    an ``Estimate``, with the bulk rule's quadrature error unless ``quadrature_error`` is off."""
    import torch

    from numerics.rem_torch import softmax_risk_mc_torch
    if isinstance(link, str):
        tl = {"linear": lambda t: t, "quadratic": lambda t: t**2, "relu": torch.relu}[link]
    else:                              # a user's link (``link_variants``): σ as generated torch code
        tl = _torch_link(link)
    return softmax_risk_mc_torch(tl, *args, device=sim.device, quadrature_error=quadrature_error,
                                 **kw)


@functools.cache
def _torch_link(link):
    from numerics.codegen import generate
    t = sp.Symbol("t", real=True)
    fn = generate([t], [dm.as_link(link)(t)], backend="torch")
    return lambda x: fn(x)[0] + 0 * x        # + 0·x: a constant σ still broadcasts


@simulation(seeded=False)
def risk_piece(sim, item):
    """One Monte Carlo risk [mean, stderr, the bulk rule's quadrature error] at e^{αd} tokens:
    link, (α, β, γ, d), overlaps, sample size, top-k and seed all in ``item``."""
    est = risk_mc(sim, item["link"], item["alpha"], item["beta"], item["gamma"], item["d"],
                  item["overlaps"], item["n"], seed=item["seed"], top_k=item["top_k"])
    return [float(est.value), float(est.stderr), float(est.quadrature_error)]


@simulation(seeded=False)
def rbar_values(sim, item):
    """R̄ (``item["formula"]``; None: Prop. 1's for ``item["link"]``) at each argument tuple
    (α, β, γ, d, µ, ν, ζ, η, ρ) of ``item["at"]``: {"value": floats, "quadrature_error":
    floats} (generated code, error 0, or adaptive quadrature with its estimated error where
    Gaussian-expectation nodes remain)."""
    formula = rbar(item["link"]) if item["formula"] is None else item["formula"]
    risk = numeric_risk_estimate(formula)
    done = [risk(*x) for x in item["at"]]
    return {"value": [float(v) for v, _ in done], "quadrature_error": [float(e) for _, e in done]}


@functools.cache
def _cor1_difference(formula):
    """Prop. 1's R̄ at σ(t) = t minus ``formula``, simplified in all symbols (memoised: the
    settings share it)."""
    return sp.simplify(rbar("linear") - formula)


@simulation(seeded=False)
def cor1_difference(sim, item):
    """Cor. 1 against Prop. 1's R̄ at σ(t) = t: the difference simplified in all symbols and at
    the setting's exact values ``item["at"]`` ({name: exact text}); where it does not vanish
    there, both sides' values at ``item["overlaps"]`` as well. ``item["formula"]``: None for
    the paper's Cor. 1."""
    formula = dm.paper_cor1_linear() if item["formula"] is None else item["formula"]
    prop1 = rbar("linear")
    diff = _cor1_difference(formula)
    at = {getattr(dm, k): sp.Rational(v) for k, v in item["at"].items()}
    diff_at = sp.simplify(diff.subs(at))
    out = {"prop1_linear": str(prop1), "cor1": str(formula), "difference": str(diff),
           "difference_at_setting": str(diff_at), "zero_at_setting": bool(diff_at == 0),
           "identically": bool(diff == 0)}
    if diff_at != 0:
        vals = {**at, **{getattr(dm, k): v for k, v in item["overlaps"].items()}}
        out["values"] = {"prop1": float(prop1.subs(vals)), "cor1": float(formula.subs(vals))}
    return out


@simulation(seeded=False)
def oracle_identity(sim, item):
    """Prop. 1's R̄ at the oracle (µ = ν = 1, ζ = ρ = 0) minus ``item["formula"]`` (None: the
    paper's (1 − p(1))²·σ̄_γ(1)), simplified: {"identity": its text, "zero": whether it is 0}."""
    link = item["link"]
    formula = dm.paper_oracle_risk(link) if item["formula"] is None else item["formula"]
    identity = _oracle_identity(link, formula)
    return {"identity": str(identity), "zero": bool(identity == 0)}


@functools.cache
def _oracle_identity(link, formula):
    prop1_at_oracle = rbar(link).subs({dm.mu: 1, dm.nu: 1, dm.zeta: 0, dm.rho: 0})
    return sp.simplify(prop1_at_oracle - formula)


@functools.cache
def sigma_bar_expr(link):
    """σ̄_γ(1) as an expression in γ (memoised per link)."""
    return dm.dual_kernel(link, 1)


@simulation(seeded=False)
def sigma_bar(sim, item):
    """σ̄_γ(1) for ``item["link"]`` at each γ of ``item["gammas"]``, as floats."""
    expr = sigma_bar_expr(item["link"])
    return [float(expr.subs(dm.gamma, g)) for g in item["gammas"]]


@simulation(seeded=False)
def phase_row(sim, item):
    """One row of the phase diagram: Monte Carlo R(u*, v*) [mean, stderr] at α = ``item
    ["alpha"]`` for each γ of ``item["gammas"]``, each with its seed of ``item["seeds"]``."""
    out = []
    for g_, seed in zip(item["gammas"], item["seeds"]):
        m, s_ = risk_mc(sim, item["link"], item["alpha"], item["beta"], g_, item["d"],
                        item["overlaps"], item["n"], seed=seed, top_k=item["top_k"],
                        quadrature_error=False)          # a figure's dots, not judged
        out.append([float(m), float(s_)])
    return out
