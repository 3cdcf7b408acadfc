"""Closed forms of the Gaussian layer for sines, cosines and exponentials (issue 28):
E sin(aZ + b) = sin(b)·e^{−a²/2}, E cos(aZ + b) = cos(b)·e^{−a²/2}, E exp(aZ + b) = e^{b + a²/2}
for Z standard normal, and the same through the mean and variance of the linear form under a
general Gaussian law (products of sines and cosines by product-to-sum, monomials by Stein's
identity), against adaptive quadrature (scipy, ~1e-12); and activations written as
compositions (softplus, sigmoid, GELU-like) recognised as functions of one linear form, their
nodes against quadrature."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st
from scipy import integrate, stats

from numerics import generate
from theory import GaussianExpectation, GaussianLaw, expect
from theory.quadrature import evaluate

Z = sp.Symbol("Z", real=True)
a, b = sp.symbols("a b", real=True)
g1, g2 = sp.symbols("g1 g2", real=True)
STANDARD = GaussianLaw((Z,), sp.Matrix([0]), sp.Matrix([[1]]))


def _quad1(f):
    """E f(Z), Z ~ N(0, 1), by adaptive quadrature."""
    return integrate.quad(lambda t: f(t) * stats.norm.pdf(t), -40, 40, epsabs=1e-13,
                          epsrel=1e-12, limit=400, points=[0])[0]


def test_the_closed_forms_symbolically():
    assert sp.simplify(expect(sp.sin(a * Z + b), STANDARD) - sp.sin(b) * sp.exp(-a**2 / 2)) == 0
    assert sp.simplify(expect(sp.cos(a * Z + b), STANDARD) - sp.cos(b) * sp.exp(-a**2 / 2)) == 0
    assert sp.simplify(expect(sp.exp(a * Z + b), STANDARD) - sp.exp(b + a**2 / 2)) == 0
    # Stein: E[Z sin(aZ + b)] = a·E cos(aZ + b)
    assert sp.simplify(expect(Z * sp.sin(a * Z + b), STANDARD)
                       - a * sp.cos(b) * sp.exp(-a**2 / 2)) == 0
    for e in (sp.sin(a * Z + b), sp.cos(a * Z + b), sp.exp(a * Z + b),
              sp.sin(Z) * sp.cos(a * Z + b), Z**2 * sp.cos(a * Z)):
        assert not expect(e, STANDARD).has(GaussianExpectation)


@given(st.floats(-3, 3), st.floats(-4, 4))
def test_sin_cos_exp_of_a_linear_form_match_quadrature(av, bv):
    for expr, f in ((sp.sin(a * Z + b), lambda t: np.sin(av * t + bv)),
                    (sp.cos(a * Z + b), lambda t: np.cos(av * t + bv)),
                    (sp.exp(a * Z + b), lambda t: np.exp(av * t + bv)),
                    (Z * sp.sin(a * Z + b), lambda t: t * np.sin(av * t + bv)),
                    (sp.sin(a * Z + b) ** 2, lambda t: np.sin(av * t + bv) ** 2),
                    (sp.sin(a * Z) * sp.cos(Z + b), lambda t: np.sin(av * t) * np.cos(t + bv))):
        closed = expect(expr, STANDARD)
        assert not closed.has(GaussianExpectation)
        value = float(closed.subs({a: av, b: bv}))
        assert value == pytest.approx(_quad1(f), rel=1e-9, abs=1e-11), expr


@st.composite
def laws(draw):
    """A 2-d Gaussian law N(μ, C) with C positive definite."""
    A = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4))).reshape(2, 2)
    C = A @ A.T + 0.05 * np.eye(2)
    mu = np.array(draw(st.lists(st.floats(-1, 1), min_size=2, max_size=2)))
    return mu, C


def _quad2(f, mu, C):
    """E f(g1, g2) under N(μ, C) by adaptive quadrature over ±9 standard deviations (slow:
    used once, to check the tensor rule below)."""
    dens = stats.multivariate_normal(mu, C).pdf
    s1, s2 = 9 * np.sqrt(np.diag(C))
    return integrate.dblquad(lambda y, x: f(x, y) * dens([x, y]), mu[0] - s1, mu[0] + s1,
                             mu[1] - s2, mu[1] + s2, epsabs=1e-12, epsrel=1e-11)[0]


def _hermite2(f, mu, C, n=120):
    """E f(g1, g2) under N(μ, C) by a 120² tensor Gauss–Hermite rule through the Cholesky
    factor: for the entire integrands here (sines, cosines, exponentials of moderate slope
    times polynomials) exact to rounding."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / w.sum()
    A = np.linalg.cholesky(C)
    z1, z2 = np.meshgrid(x, x, indexing="ij")
    g1v = mu[0] + A[0, 0] * z1
    g2v = mu[1] + A[1, 0] * z1 + A[1, 1] * z2
    return float((np.outer(w, w) * f(g1v, g2v)).sum())


TWO = [(sp.sin(0.7 * g1 - 1.2 * g2 + 0.4), lambda x, y: np.sin(0.7 * x - 1.2 * y + 0.4)),
       (sp.cos(g1 + 0.5 * g2), lambda x, y: np.cos(x + 0.5 * y)),
       (sp.exp(0.3 * g1 - 0.2 * g2 + 0.1), lambda x, y: np.exp(0.3 * x - 0.2 * y + 0.1)),
       (sp.sin(g1) * sp.cos(g2 - 0.3), lambda x, y: np.sin(x) * np.cos(y - 0.3)),
       (g2 * sp.sin(0.8 * g1 + 0.2), lambda x, y: y * np.sin(0.8 * x + 0.2)),
       (sp.exp(0.4 * g2) * sp.cos(g1), lambda x, y: np.exp(0.4 * y) * np.cos(x))]


def test_the_tensor_rule_matches_adaptive_quadrature():
    mu, C = np.array([0.3, -0.6]), np.array([[1.2, -0.5], [-0.5, 0.9]])
    for _, f in TWO:
        assert _hermite2(f, mu, C) == pytest.approx(_quad2(f, mu, C), rel=1e-9, abs=1e-11)


@pytest.mark.parametrize("expr, f", TWO, ids=range(len(TWO)))
@given(law=laws())
def test_under_a_general_gaussian_law(expr, f, law):
    mu, C = law
    closed = expect(expr, GaussianLaw((g1, g2), sp.Matrix(mu), sp.Matrix(C)))
    assert not closed.has(GaussianExpectation)
    assert float(closed) == pytest.approx(_hermite2(f, mu, C), rel=1e-10, abs=1e-12)


COMPOSITIONS = [
    ("softplus", lambda t: sp.log(1 + sp.exp(t)), lambda t: np.logaddexp(0, t)),
    ("sigmoid", lambda t: 1 / (1 + sp.exp(-t)), lambda t: 1 / (1 + np.exp(-t))),
    ("gelu", lambda t: t * (1 + sp.erf(t / sp.sqrt(2))) / 2,
     lambda t: t * (1 + __import__("scipy").special.erf(t / np.sqrt(2))) / 2),
    ("tanh", sp.tanh, np.tanh),
]


def _conditional_quad(f, mu, C):
    """(E[g2·f(0.9·g1 − 0.3)], E[f(0.9·g1 − 0.3)²]) under N(μ, C) by adaptive quadrature in
    g1, with E[g2 | g1] = μ2 + C21/C11·(g1 − μ1)."""
    s1 = np.sqrt(C[0, 0])
    dens = stats.norm(mu[0], s1).pdf
    cond = lambda x: mu[1] + C[1, 0] / C[0, 0] * (x - mu[0])  # noqa: E731
    q = lambda h: integrate.quad(lambda x: h(x) * dens(x), mu[0] - 12 * s1, mu[0] + 12 * s1,  # noqa: E731
                                 epsabs=1e-13, epsrel=1e-12, limit=400)[0]
    return (q(lambda x: cond(x) * f(0.9 * x - 0.3)), q(lambda x: f(0.9 * x - 0.3) ** 2))


@pytest.mark.parametrize("name, phi, f", COMPOSITIONS, ids=[c[0] for c in COMPOSITIONS])
@given(law=laws())
def test_activations_written_as_compositions(name, phi, f, law):
    """E[g2·φ(0.9·g1 − 0.3)] and E[φ(0.9·g1 − 0.3)²]: the composition is one factor of the
    linear form 0.9·g1 − 0.3 (so Stein's identity applies and every node is one-dimensional);
    the nodes by adaptive quadrature (``theory.gaussian.evaluate``) to ~1e-10, by the generated
    code's 40-point Gauss–Hermite rule to 1e-5 (tanh's poles near the real axis limit it)."""
    mu, C = law
    law_ = GaussianLaw((g1, g2), sp.Matrix(mu), sp.Matrix(C))
    refs = _conditional_quad(f, mu, C)
    for expr, ref in zip((g2 * phi(0.9 * g1 - 0.3), phi(0.9 * g1 - 0.3) ** 2), refs):
        e = expect(expr, law_)
        assert all(len(n.variables) == 1 for n in e.atoms(GaussianExpectation))
        assert evaluate(e, {}) == pytest.approx(ref, rel=1e-9, abs=1e-11)
        assert float(generate([], [e])()[0]) == pytest.approx(ref, rel=1e-5, abs=1e-8)
