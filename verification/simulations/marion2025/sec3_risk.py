"""What the claims on Marion et al.'s risk simulate: finite-d Monte Carlo and the derived risk
at overlap points (Thm 1), the best linear predictor against a formula (Prop. 3), the risk at
the oracle along d at 40 digits (Cor. 2)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from numerics import compiled, direct_risk_mc, reduced
from numerics.compiled import CompiledDerivation
from theory.linear import best_linear_risk, trivial_risk
from theory.models.marion2025 import L, d, eps, eta, gamma, kappa, lam, nu, rho, theta
from ..base import simulation
from .common import derivation_of, exact, high_precision, risk_of

__all__ = ["risk_mc", "risk_at_points", "linear_risk_vs_formula", "oracle_excess"]


@simulation(seeded=False)
def risk_mc(sim, item) -> dict:
    """Monte Carlo estimate of the risk in R^d at vectors realising ``item["overlaps"]``
    (``n_mc`` token sequences, seeded by ``item["seed"]``): {"value", "stderr"}."""
    est = direct_risk_mc(item["model"], item["params"], item["overlaps"], item["n_mc"],
                         seed=item["seed"], device=sim.device)
    return {"value": est.value, "stderr": est.stderr}


@simulation(seeded=False)
def risk_at_points(sim, item) -> dict:
    """The risk ``item["risk"]`` names (``common.risk_of``; None: the model's derived risk,
    through its reduced model) at each of ``item["overlaps"]``, at the parameters ``params``:
    {"value": floats, "quadrature_error": floats} (``CompiledDerivation.risk_estimate``:
    exactly 0 where the risk closes, as for erf attention)."""
    model, p = item["model"], item["params"]
    if item["risk"] is None:
        rm = reduced(model, p)
        done = [rm.compiled.risk_estimate(p, rm.check_state(rm.pack(ov)))
                for ov in item["overlaps"]]
    else:
        cm = compiled(model)
        cd = CompiledDerivation(derivation_of(model, item["risk"]), name=cm.name)
        done = [cd.risk_estimate(p, cm.q_vector(ov)) for ov in item["overlaps"]]
    return {"value": [float(e.value) for e in done],
            "quadrature_error": [float(e.quadrature_error) for e in done]}


def _number(x):
    return float(x) if x.is_number else str(x)


@simulation(seeded=False)
def linear_risk_vs_formula(sim, item) -> dict:
    """The derived best linear risk at L = ``item["L"]`` against ``item["formula"]`` (in L, γ, ε):
    their symbolic difference and its exact value at (γ, ε) (the decimals as rationals)
    ("row", "mismatch"); the derived trivial risk at (γ, ε) and the formula's limit L → ∞ there
    ("trivial_risk", "limit_of_formula", "limit_is_trivial")."""
    model, formula, Lv = item["model"], item["formula"], item["L"]
    vals = {gamma: exact(item["gamma"]), eps: exact(item["eps"])}
    derived = best_linear_risk(model, Lv)
    paper = formula.subs(L, Lv)
    at = sp.simplify((derived - paper).subs(vals))
    row = {"L": Lv, "derived": str(derived), "paper": str(paper),
           "difference": str(sp.simplify(derived - paper)), "difference_at_setting": str(at),
           "at": {"gamma": float(vals[gamma]), "eps": float(vals[eps]),
                  "derived": _number(derived.subs(vals)), "paper": _number(paper.subs(vals))}}
    trivial = trivial_risk(model).subs(vals)
    lim = sp.limit(formula.subs(vals), L, sp.oo)
    return {"row": row, "mismatch": bool(at != 0), "trivial_risk": str(trivial),
            "limit_of_formula": str(lim), "limit_is_trivial": bool(sp.simplify(lim - trivial) == 0)}


@simulation(seeded=False)
def oracle_excess(sim, item) -> np.ndarray:
    """The excess R − ε² at the oracle (κ, ν, θ, η, ρ) = (1, 1, 0, 0, 0) of the risk
    ``item["risk"]`` names, at 40 digits, at each d of ``item["dims"]`` with L the matching
    entry of ``item["Ls"]``, λ = log d/√d and the item's (γ, ε)."""
    R = risk_of(item["model"], item["risk"])
    Rk = R.subs({kappa: 1, nu: 1, theta: 0, eta: 0, rho: 0})
    excess = []
    for dv, Lv in zip(item["dims"], item["Ls"]):
        vals = {d: dv, L: Lv, lam: math.log(dv) / math.sqrt(dv), gamma: item["gamma"],
                eps: item["eps"]}
        excess.append(float(high_precision(Rk - eps**2, vals)))
    return np.array(excess)
