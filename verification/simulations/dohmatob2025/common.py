"""What Dohmatob's simulations share: the reduced model (R̄ and its flow), R̄ as a float
function, exact settings as items carry them, the flow on M and its exact stationary points.

The derivations here are pure functions of a link and a risk, memoised in the process (the
settings of a claim, and Props. 5–10, share them); what is simulated with them is stored by
``Context.map``."""

from __future__ import annotations

import functools

import sympy as sp

from numerics.codegen import generate
from numerics.reduced import OverlapReduced
from numerics.reduced.registry import dohmatob_reduced
from theory.gaussian import GaussianExpectation
from theory.quadrature import Integrated, evaluate, integrate
from theory.model import Param
from theory.models import dohmatob2025 as dm
from theory.models.dohmatob2025 import PAPER_PSI, alpha, beta
from theory.stationary import classify_exact, stationary_points_exact

__all__ = ["reduced_model", "rbar", "numeric_risk", "numeric_risk_estimate", "BOX", "exact_text",
           "exact_values", "setting_values", "setting_text", "flow_on_M_2d", "off_manifold",
           "computed_stationary", "stationary_points_uncached", "mp_str", "float_setting_values"]


@functools.cache
def _paper_reduced(link) -> OverlapReduced:
    return dohmatob_reduced(link)


def reduced_model(link, risk: sp.Expr | None = None,
                  extra_params: tuple[Param, ...] = ()) -> OverlapReduced:
    """Dohmatob's reduced model (``numerics.reduced``, the model the CLI shows): the overlap
    flow of R̄ with link σ (Prop. 1), or of ``risk`` in its place (a deliberately wrong formula).
    Parameters stay unbound: the simulations substitute exact values into its derivations. The
    paper's R̄ is integrated once per link (cached)."""
    if risk is None and not extra_params:
        return _paper_reduced(link)
    return dohmatob_reduced(link, risk, extra_params=extra_params)


def rbar(link) -> sp.Expr:
    """R̄ of Prop. 1 for link σ: the reduced model's risk."""
    return reduced_model(link).derivation.risk


_SYMS = (dm.alpha, dm.beta, dm.gamma, dm.d, dm.mu, dm.nu, dm.zeta, dm.eta, dm.rho)


def numeric_risk(expr):
    """R(α, β, γ, d, µ, ν, ζ, η, ρ) as a float function: generated code when closed-form,
    else with the remaining Gaussian-expectation nodes integrated by adaptive quadrature."""
    if not expr.has(GaussianExpectation):
        fn = generate(_SYMS, [expr])
        return lambda *x: fn(*x)[0]
    return lambda *x: evaluate(expr, dict(zip(_SYMS, x)))


def numeric_risk_estimate(expr):
    """``numeric_risk`` with its quadrature error: a function of the same arguments returning
    ``theory.quadrature.Integrated`` (value, error), the error exactly 0 when closed-form."""
    if not expr.has(GaussianExpectation):
        fn = generate(_SYMS, [expr])
        return lambda *x: Integrated(float(fn(*x)[0]), 0.0)
    return lambda *x: integrate(expr, dict(zip(_SYMS, x)))


# -------------------------------------------------------------------------------------------
# Exact settings: an item carries (α, β, γ) as the text of exact numbers ("1/10")

BOX = ((-1, 1), (-1, 1))


def exact_text(setting: dict) -> dict:
    """An exact setting {"alpha", "beta", "gamma"} (SymPy numbers) as an item holds it."""
    return {k: str(v) for k, v in setting.items()}


def exact_values(text: dict) -> dict:
    """``exact_text``'s inverse: the setting as exact SymPy numbers."""
    return {k: sp.Rational(v) for k, v in text.items()}


def setting_values(setting, dv):
    """{α, β, γ, d: exact values} of an exact setting at dimension ``dv``."""
    return {dm.alpha: setting["alpha"], dm.beta: setting["beta"], dm.gamma: setting["gamma"],
            dm.d: sp.Integer(dv)}


def float_setting_values(alpha_, beta_, gamma_, d_):
    """A setting of floats as exact SymPy values (a float's shortest decimal, read exactly)."""
    return {dm.alpha: sp.Rational(str(alpha_)), dm.beta: sp.Rational(str(beta_)),
            dm.gamma: sp.Rational(str(gamma_)), dm.d: sp.Integer(int(d_))}


def setting_text(setting):
    """An exact setting as floats, with ψ and c = √(1 − γ²) (evidence)."""
    a, b, g = (setting[k] for k in ("alpha", "beta", "gamma"))
    psi = PAPER_PSI.subs({alpha: a, beta: b})
    return {"alpha": float(a), "beta": float(b), "gamma": float(g),
            "psi": float(psi), "c": float(sp.sqrt(1 - g**2))}


# -------------------------------------------------------------------------------------------
# The flow on M (Props. 5–10)

@functools.cache
def flow_on_M_2d(link, risk=None):
    """The 2-D flow on M: the reduced model restricted to ζ = η = ρ = 0 (Prop. 6)."""
    return reduced_model(link, risk).restrict(dm.MANIFOLD).derivation.flow


@functools.cache
def off_manifold(link, risk=None) -> dict:
    """dζ/dt, dη/dt, dρ/dt of the derived overlap flow on M, simplified (all parameters
    symbolic): M is invariant (Prop. 5) iff every one is 0."""
    flow = reduced_model(link, risk).derivation.flow
    return {str(q): sp.simplify(r.subs(dm.MANIFOLD)) for q, r in flow.as_dict().items()
            if q in dm.MANIFOLD}


_STATIONARY_CACHE: dict = {}


def computed_stationary(flow2, setting, dv):
    """Stationary points of the derived 2-D flow on M at one (setting, d), each classified
    (memoised on the flow's expressions: a simulation that needs them again in this process
    does not solve again)."""
    key = (flow2.rhs, tuple(sorted((k, str(v)) for k, v in setting.items())), dv)
    if key not in _STATIONARY_CACHE:
        _STATIONARY_CACHE[key] = stationary_points_uncached(flow2, setting, dv)
    return _STATIONARY_CACHE[key]


def stationary_points_uncached(flow2, setting, dv):
    """(found, unresolved, curves) of ``flow2`` at one (setting, d), each point classified, as
    data (numbers and text); not memoised."""
    vals = setting_values(setting, dv)
    rhs = [r.subs(vals) for r in flow2.rhs]
    points, unresolved, curves = stationary_points_exact(rhs, (dm.mu, dm.nu), BOX)
    out = []
    for pt in points:
        c = classify_exact(rhs, (dm.mu, dm.nu), pt, BOX)
        out.append({"mu": float(pt[0]), "nu": float(pt[1]), "exact": [str(x) for x in pt],
                    "eigenvalues": [mp_str(v) for v in c.eigenvalues],
                    "exact_zero_eigenvalue": list(c.exact_zero), "class": c.kind})
    return out, [(str(f), str(g)) for f, g in unresolved], [list(map(str, c)) for c in curves]


def mp_str(v):
    """An mpmath or SymPy number as 6-digit text ("0" for an exact zero)."""
    return sp.sstr(sp.N(sp.sympify(str(v)), 6)) if v != 0 else "0"
