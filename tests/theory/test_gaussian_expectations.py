"""The symbolic Gaussian-expectation layer (``theory.expect``) against quadrature and Monte
Carlo: closed forms, Stein's identity, Owen's T, ReLU closed forms and the nodes left where
there is none."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from numerics import generate
from theory import GaussianExpectation, GaussianLaw, expect
from theory.quadrature import evaluate

g1, g2, g3 = sp.symbols("g1 g2 g3", real=True)


def _law(mean, cov):
    return GaussianLaw((g1, g2, g3), sp.Matrix(mean), sp.Matrix(cov))


@st.composite
def laws(draw):
    A = np.array(draw(st.lists(st.floats(-1, 1), min_size=9, max_size=9))).reshape(3, 3)
    C = A @ A.T + 0.1 * np.eye(3)
    mu = draw(st.lists(st.floats(-1, 1), min_size=3, max_size=3))
    return np.array(mu), C


def _mc(f, mu, C, n=400_000, seed=0):
    z = np.random.default_rng(seed).multivariate_normal(mu, C, size=n)
    v = f(*z.T)
    return v.mean(), v.std() / np.sqrt(n)


INTEGRANDS = [g1**2 * g2, sp.erf(0.7 * g1 + 0.3 * g2), g2 * g3 * sp.erf(g1 - 0.5 * g3),
              sp.erf(0.5 * g1 + 0.2) ** 2 * g2**2, g1 * sp.exp(0.3 * g2),
              sp.erf(0.4 * g1) * sp.erf(0.6 * g2 - 0.1 * g3)]


@pytest.mark.parametrize("integrand", INTEGRANDS, ids=range(len(INTEGRANDS)))
@given(law=laws())
def test_expect_matches_monte_carlo(integrand, law):
    mu, C = law
    sym = expect(integrand, _law([sp.Float(x) for x in mu], sp.Matrix(C).applyfunc(sp.Float)))
    assert not sym.has(GaussianExpectation) or integrand.has(sp.erf)
    f = generate([], [sym])
    value = float(f()[0])
    mean, se = _mc(sp.lambdify((g1, g2, g3), integrand, "scipy"), mu, C)
    assert abs(value - mean) <= 5 * se + 1e-9


def test_stein_identity_symbolically():
    law = _law([0, 0, 0], sp.eye(3))
    a = sp.Symbol("a", positive=True)
    assert sp.simplify(expect(g1 * sp.erf(a * g1), law)
                       - expect(sp.diff(sp.erf(a * g1), g1), law)) == 0


def test_erf_square_is_owens_t_and_zero_mean_reduces_to_arcsin():
    b = sp.Symbol("b", positive=True)
    law = _law([0, 0, 0], sp.eye(3))
    e = expect(sp.erf(b * g1) ** 2, law)
    target = 2 / sp.pi * sp.asin(2 * b**2 / (1 + 2 * b**2))
    for bv in (0.1, 0.7, 2.5):
        assert float(e.subs(b, bv).evalf(30)) == pytest.approx(float(target.subs(b, bv)), rel=1e-20)


def test_integrand_of_no_linear_form_becomes_one_node_over_its_variables():
    """erf(g1·g2) is no function of one linear form: one node over (g1, g2), whose value
    matches quadrature (it raised NotImplementedError before issue 28)."""
    from scipy import integrate, special, stats
    mu, C = [0.4, -0.3], [[1.0, 0.3], [0.3, 0.8]]
    law = _law(mu + [0], [[1, 0.3, 0], [0.3, 0.8, 0], [0, 0, 1]])
    e = expect(sp.erf(g1 * g2), law)
    (node,) = e.atoms(GaussianExpectation)
    assert len(node.variables) == 2
    dens = stats.multivariate_normal(mu, C).pdf
    ref = integrate.dblquad(lambda y, x: special.erf(x * y) * dens([x, y]), -9, 9, -9, 9,
                            epsabs=1e-11)[0]
    assert evaluate(e, {}) == pytest.approx(ref, abs=1e-9)            # adaptive quadrature
    assert float(generate([], [e])()[0]) == pytest.approx(ref, abs=1e-4)   # Gauss–Hermite, 40²


# --- ReLU closed forms and conditioned quadrature ------------------------------------------
@settings(max_examples=6, deadline=None)
@given(m1=st.floats(-1, 1), m2=st.floats(-1, 1), s1=st.floats(0.3, 1.5), s2=st.floats(0.3, 1.5),
       c=st.floats(-0.9, 0.9), zero_mean=st.booleans())
def test_relu_expectations_match_monte_carlo(m1, m2, s1, s2, c, zero_mean):
    import numpy as np
    from theory.quadrature import evaluate
    from theory.special import Relu
    if zero_mean:
        m1 = m2 = 0.0
    g1, g2 = sp.symbols("g1 g2", real=True)
    cov = np.array([[s1**2, c * s1 * s2], [c * s1 * s2, s2**2]])
    law = GaussianLaw((g1, g2), sp.Matrix([m1, m2]), sp.Matrix(cov))
    rng = np.random.default_rng(0)
    X = rng.multivariate_normal([m1, m2], cov, size=200_000)
    r = np.maximum(X, 0)
    cases = [(Relu(g1), r[:, 0]), (Relu(g1) ** 2, r[:, 0] ** 2), (sp.Heaviside(g2), 1.0 * (X[:, 1] > 0)),
             (Relu(g1) * Relu(g2), r[:, 0] * r[:, 1]), (sp.Heaviside(g1) * Relu(g2), (X[:, 0] > 0) * r[:, 1]),
             (sp.Heaviside(g1) * sp.Heaviside(g2), 1.0 * (X[:, 0] > 0) * (X[:, 1] > 0))]
    for expr, sample in cases:
        value = evaluate(expect(expr, law), {})
        se = sample.std() / np.sqrt(sample.size)
        assert abs(value - sample.mean()) < 5 * se + 1e-9, (expr, value, sample.mean(), se)


def test_relu_pair_with_means_is_a_node_whose_quadrature_matches_mpmath():
    from theory.gaussian import GaussianExpectation
    from theory.quadrature import evaluate
    from theory.special import Relu
    g1, g2 = sp.symbols("g1 g2", real=True)
    law = GaussianLaw((g1, g2), sp.Matrix([0.3, -0.5]), sp.Matrix([[1.3, 0.4], [0.4, 0.7]]))
    value = expect(Relu(g1) * Relu(g2), law)
    assert value.has(GaussianExpectation)
    assert abs(evaluate(value, {}) - float(value.evalf(20))) < 1e-9
    # substituting zero means turns the node back into the arc-cosine closed form
    a = sp.Symbol("a", real=True)
    law_a = GaussianLaw((g1, g2), sp.Matrix([a, a]), sp.Matrix([[1, 0.5], [0.5, 1]]))
    assert not expect(Relu(g1) * Relu(g2), law_a).subs(a, 0).has(GaussianExpectation)
