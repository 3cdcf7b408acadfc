"""The expectation rules (``numerics.expectation``: closed form, Gauss–Hermite, quasi-Monte
Carlo, Monte Carlo) against closed forms, with honest error bars, and on the nodes the symbolic
layer leaves where there is no closed form."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st
from scipy.special import erf
from scipy.stats import t as t_dist

from numerics import generate
from numerics.expectation import ClosedForm, GaussHermite, MonteCarlo, QuasiMonteCarlo
from theory import GaussianExpectation, GaussianLaw, expect

z1, z2 = sp.symbols("z1 z2", real=True)
g1, g2, g3 = sp.symbols("g1 g2 g3", real=True)


@given(a=st.floats(-2, 2), b=st.floats(0.05, 2))
def test_rules_on_erf(a, b):
    exact = erf(a / np.sqrt(1 + 2 * b * b))
    f = lambda Z: erf(a + b * Z[0])
    gh = GaussHermite(60).expect(f, 1)  # its error estimate must bound the true error
    assert abs(gh.value - exact) <= gh.quadrature_error + 1e-12 and gh.quadrature_error < 1e-3
    assert gh.stderr == 0.0      # a deterministic rule: no standard error
    # QMC's error bar comes from 8 replicates: Student-t with 7 degrees of freedom
    for rule, k in ((QuasiMonteCarlo(12, 8, seed=3), t_dist.isf(1e-6, 7)),
                    (MonteCarlo(200_000, seed=4), 5.0)):
        est = rule.expect(f, 1)
        assert abs(est.value - exact) <= k * est.stderr + 1e-12
    cf = ClosedForm().expectation(sp.erf(a + b * z1), [z1])
    assert cf.value == pytest.approx(exact, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("rule", [GaussHermite(20), QuasiMonteCarlo(14, 8), MonteCarlo(500_000)])
def test_rules_on_two_dimensional_moments(rule):
    integrand = z1**2 * z2**2 + z1 * z2 + sp.exp(0.5 * z1)
    exact = 1 + np.exp(0.125)
    est = rule.expectation(integrand, [z1, z2])
    tol = 1e-10 if isinstance(rule, GaussHermite) else 5 * est.stderr
    assert abs(est.value - exact) <= tol


def test_rule_arguments_are_validated():
    with pytest.raises(ValueError, match="replicates"):
        QuasiMonteCarlo(replicates=1)
    with pytest.raises(ValueError, match="n="):
        MonteCarlo(n=1)
    with pytest.raises(ValueError, match="max_points"):
        GaussHermite(100, max_points=1000).nodes(3)


# --- the symbolic layer's nodes (no closed form) ------------------------------------------
def _law(mean, cov):
    return GaussianLaw((g1, g2, g3), sp.Matrix(mean), sp.Matrix(cov))


def _mc(f, mu, C, n=400_000, seed=0):
    z = np.random.default_rng(seed).multivariate_normal(mu, C, size=n)
    v = f(*z.T)
    return v.mean(), v.std() / np.sqrt(n)


def test_no_closed_form_gives_a_node_evaluated_by_every_rule():
    law = _law([0.2, 0, 0], sp.Matrix([[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1]]))
    e = expect(sp.tanh(g1) * g2, law)
    assert e.has(GaussianExpectation)
    ref = _mc(lambda x, y, z: np.tanh(x) * y, np.array([0.2, 0, 0]),
              np.array([[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1]]), n=2_000_000)
    for rule in (GaussHermite(40), QuasiMonteCarlo(12, 8), MonteCarlo(400_000, 1)):
        value = float(generate([], [e], rule=rule)()[0])
        assert abs(value - ref[0]) <= 5 * ref[1] + 2e-3, rule


def test_closed_form_rule_rejects_what_has_no_closed_form():
    z = sp.Symbol("z")
    with pytest.raises(ValueError, match="no closed form"):
        ClosedForm().expectation(sp.tanh(z), [z])
