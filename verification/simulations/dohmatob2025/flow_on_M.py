"""What Dohmatob's structural claims on M compute (``verification/claims/dohmatob2025/
flow_on_M.py`` judges): the derived overlap flow's velocities off M on M (Prop. 5), its
restriction to M (Prop. 6) and the gradients' span coefficients at r = ρ = 0 (Prop. 3), each
simplified with every parameter symbolic and then evaluated exactly at a setting.

An item names the link (a built-in name or a ``Link``), the risk (None: the paper's R̄; else a
deliberately wrong formula, the model simulated) and the setting (α, β, γ, d) as floats."""

from __future__ import annotations

import functools
import math

import sympy as sp

from theory.model import Param
from theory.models import dohmatob2025 as dm

from ..base import simulation
from .common import flow_on_M_2d, float_setting_values, off_manifold, reduced_model

__all__ = ["R_SYM", "WITNESSES", "nonzero_at", "leaves_M", "m_invariant", "two_d_flow",
           "span_coefficients"]

R_SYM = sp.Symbol("r", nonnegative=True)
"""The REM constant r kept symbolic (Prop. 3 evaluates the gradients at r = 0)."""

WITNESSES = ((sp.Rational(1, 2), sp.Rational(3, 10), sp.Rational(1, 5), sp.Rational(1, 7)),
             (sp.Rational(-1, 3), sp.Rational(7, 10), sp.Rational(-1, 4), sp.Rational(2, 9)),
             (sp.Rational(1, 5), sp.Rational(-3, 5), sp.Rational(1, 3), sp.Rational(-1, 6)))
"""Overlap values (in the order µ, ν, ζ, η of the symbols left) at which a nonzero expression
is shown nonzero."""


def _values(item):
    return float_setting_values(item["alpha"], item["beta"], item["gamma"], item["d"])


def nonzero_at(expr, vals):
    """None where the symbolic ``expr`` vanishes identically in the overlaps at the setting
    ``vals``; else {"witness", "number", "value", "text"}: the first point of ``WITNESSES``
    where its value at 30 digits exceeds 1e-20 in size (the expression itself when none does,
    and it does not simplify to 0), the value as a float where it is a number, and as text."""
    if expr == 0:
        return None
    at = expr.subs(vals)
    order = [s for s in (dm.mu, dm.nu, dm.zeta, dm.eta) if s in at.free_symbols]
    for w in WITNESSES:
        point = dict(zip(order, w))
        value = sp.N(at.subs(point), 30)
        if value.is_number and abs(value) > 1e-20:
            return _witness({str(k): float(v) for k, v in point.items()}, value)
    return None if sp.simplify(at) == 0 else _witness({}, at)


def _witness(point, value):
    number = bool(value.is_number)
    return {"witness": point, "number": number, "value": float(value) if number else None,
            "text": str(value)}


def _leaves(link, risk, vals):
    for k, v in off_manifold(link, risk).items():
        hit = nonzero_at(v, vals)
        if hit is not None:
            return {"name": k, **hit}
    return None


@simulation(seeded=False)
def leaves_M(sim, item):
    """Prop. 5 at one setting: the off-M velocities on M (text), whether they vanish
    identically, and the first that does not vanish at the setting ("leaves": its name and
    witness; None where M is invariant there)."""
    off = off_manifold(item["link"], item["risk"])
    return {"off_M": {k: str(v) for k, v in off.items()},
            "identically": all(v == 0 for v in off.values()),
            "leaves": _leaves(item["link"], item["risk"], _values(item))}


@simulation(seeded=False)
def m_invariant(sim, item):
    """Whether dζ/dt, dη/dt, dρ/dt of the full overlap flow vanish identically on M (Prop. 5):
    only then is the 2-D restriction (Prop. 6) the flow on M. Item: link and risk."""
    return all(v == 0 for v in off_manifold(item["link"], item["risk"]).values())


@simulation(seeded=False)
def two_d_flow(sim, item):
    """Prop. 6 at one setting: the derived flow restricted to M (state, right-hand sides as
    text and LaTeX) and the symbols among ζ, η, ρ it still depends on there."""
    flow2 = flow_on_M_2d(item["link"], item["risk"])
    vals = _values(item)
    extra = sorted(str(s) for r in flow2.rhs for s in r.subs(vals).free_symbols
                   if s in (dm.zeta, dm.eta, dm.rho))
    return {"state": [str(s) for s in flow2.state], "rhs": [str(r) for r in flow2.rhs],
            "rhs_latex": [sp.latex(r) for r in flow2.rhs], "extra": extra}


@functools.cache
def _span_coefficients(link, risk=None):
    """The coefficients of v in ∇_u R and of u in ∇_v R at r = 0, ρ = 0, simplified (all
    parameters symbolic, r a free symbol of R̄ set to 0)."""
    from theory.dynamics import vector_gradients
    r_param = Param(R_SYM, 0, math.inf, open_high=True, doc="REM constant r, kept symbolic")
    reduced = reduced_model(link, dm.paper_risk(link, r=R_SYM) if risk is None else risk,
                            (r_param,))
    grads = vector_gradients(reduced.geometry, reduced.derivation.risk)
    at = {R_SYM: 0, dm.rho: 0}
    return {"grad_u along v": sp.simplify(grads["u"]["v"].subs(at)),
            "grad_v along u": sp.simplify(grads["v"]["u"].subs(at))}


@simulation(seeded=False)
def span_coefficients(sim, item):
    """Prop. 3 at one setting: the span coefficients (text) and the first that does not vanish
    at the setting ("hit": its name and witness; None where both vanish)."""
    coeffs = _span_coefficients(item["link"], item["risk"])
    vals = _values(item)
    hit = None
    for k, v in coeffs.items():
        found = nonzero_at(v, vals)
        if found is not None:
            hit = {"name": k, **found}
            break
    return {"coefficients": {k: str(v) for k, v in coeffs.items()}, "hit": hit}
