"""Derived population risk against finite-d Monte Carlo (no asymptotic term: exact at finite d)."""

from hypothesis import given, settings
from scipy.stats import norm

from numerics import compiled, direct_risk_mc
from theory.models.marion2025 import MODEL, build
from tests.helpers import marion_params, q_of, unit_overlaps

Z = norm.isf(1e-4 / 2)  # per example; a false alarm every ~10^4 examples


@settings(max_examples=6)
@given(marion_params(max_d=24), unit_overlaps())
def test_derived_risk_matches_direct_monte_carlo(p, ov):
    theory = float(compiled(MODEL).risk(p, q_of(ov)))
    est = direct_risk_mc(MODEL, p, ov, n=60_000, seed=7)
    assert abs(theory - est.value) <= Z * est.stderr


def test_variant_without_closed_form_uses_expectation_nodes():
    """A tanh student: the engine keeps Gaussian-expectation nodes, evaluated by quadrature."""
    import sympy as sp
    model = build(activation=sp.tanh, name="marion-tanh")
    p = dict(d=10, L=3, lam=0.8, gamma=0.7, eps=0.2)
    ov = dict(kappa=0.6, nu=0.5, theta=0.1, eta=-0.2, rho=0.15)
    theory = float(compiled(model).risk(p, q_of(ov)))
    est = direct_risk_mc(model, p, ov, n=200_000, seed=3)
    assert abs(theory - est.value) <= Z * est.stderr
