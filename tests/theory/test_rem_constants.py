"""The random-energy model's derived constants (``theory.rem``): ψ and r are the known ones,
satisfy their identities and are continuous at β_c. (Sampling: tests/numerics/test_rem_sampling.py.)"""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from theory.rem import alpha, beta, rem_constants

C = rem_constants()


def test_derived_constants_are_the_known_ones():
    bc = sp.sqrt(2 * alpha)
    assert sp.simplify(C["beta_c"] - bc) == 0
    for b in (sp.Rational(1, 3) * bc, 2 * bc):
        below = b.subs(alpha, 1) <= bc.subs(alpha, 1)
        psi = C["psi"].subs(beta, b)
        expected = alpha / b + b / 2 if below else bc
        assert sp.simplify(psi - expected) == 0


@given(a=st.floats(0.01, 3), b=st.floats(0.01, 5))
def test_identities(a, b):
    psi = sp.lambdify((alpha, beta), C["psi"])
    r = sp.lambdify((alpha, beta), C["r"])
    assert psi(a, b) >= np.sqrt(2 * a) - 1e-12                   # ψ ≥ √(2α)
    h = 1e-6 * max(b, 1)
    dbpsi = ((b + h) * psi(a, b + h) - (b - h) * psi(a, b - h)) / (2 * h)
    if abs(b - np.sqrt(2 * a)) > 2 * h:
        assert r(a, b) == pytest.approx(dbpsi, rel=1e-6, abs=1e-8)  # r = ∂(βψ)/∂β


@given(a=st.floats(0.01, 3))
def test_continuity_of_psi_and_its_derivative_at_beta_c(a):
    bc = np.sqrt(2 * a)
    psi = sp.lambdify((alpha, beta), C["psi"])
    r = sp.lambdify((alpha, beta), C["r"])
    eps = 1e-9
    assert psi(a, bc - eps) == pytest.approx(psi(a, bc + eps), abs=1e-7)
    assert r(a, bc - eps) == pytest.approx(r(a, bc + eps), abs=1e-7)
