"""Stationary points in the symbolic layer (``theory.stationary``): classification by the
Jacobian's eigenvalues, stationary points found in a box, exact root finding of one-variable
factors and root refinement to 30 digits."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from theory import classify, find_stationary_points
from theory.stationary import factor_roots, factors, refine_root, roots_1d


def test_classify_and_find_stationary_points():
    assert classify([-1, -2]) == "sink" and classify([1, 2]) == "source"
    assert classify([-1, 2]) == "saddle" and classify([0.0, -1]) == "degenerate"
    rhs = lambda x: np.array([x[0] - x[0] ** 3, -x[1]])
    jac = lambda x: np.array([[1 - 3 * x[0] ** 2, 0], [0, -1]])
    pts = find_stationary_points(rhs, jac, [(-2, 2), (-2, 2)])
    kinds = {round(p.x[0]): p.kind for p in pts}
    assert kinds == {-1: "sink", 0: "saddle", 1: "sink"}


# --- exact root finding and refinement ------------------------------------------------------
def test_roots_1d_finds_simple_and_double_roots():
    x = sp.Symbol("x", real=True)
    f = x**2 * (x - sp.Rational(1, 3)) * (x + sp.Rational(5, 7))
    roots = roots_1d(f, x, -1, 1, dps=50, grid=2000)
    assert len(roots) == 3
    with mpmath.workdps(50):
        expected = [mpmath.mpf(-5) / 7, 0, mpmath.mpf(1) / 3]
        assert all(abs(r - e) < mpmath.mpf(10) ** -40 for r, e in zip(roots, expected))
    with pytest.raises(ValueError, match="lo < hi"):
        roots_1d(f, x, 1, -1)


def test_factor_roots_solves_each_factor():
    x = sp.Symbol("x", real=True)
    expr = (sp.exp(x) - 2) * (x - sp.Rational(1, 2)) / (x + 2)
    fs, den = factors(expr)
    assert len(fs) == 2 and sp.simplify(den / (x + 2)).is_number
    roots = sorted(float(r) for r in factor_roots(expr, x, -1, 1))
    assert roots == pytest.approx([0.5, np.log(2)], abs=1e-15)


def test_refine_root_reaches_1e_30_and_reports_failure():
    x, y = sp.symbols("x y", real=True)
    root = refine_root([x**2 + y**2 - 2, x - y**3], [x, y], [1.1, 0.9], dps=40, tol=1e-30)
    assert root.converged and root.residual < 1e-30
    with mpmath.workdps(40):
        assert abs(root.x[0] - 1) < mpmath.mpf(10) ** -30 and abs(root.x[1] - 1) < mpmath.mpf(10) ** -30
    bad = refine_root([x**2 + 1], [x], [0.5])          # no real root: Newton cannot converge
    assert not bad.converged and np.isnan(bad.residual) and bad.message
    with pytest.raises(ValueError, match="agree"):
        refine_root([x], [x, y], [0.0, 0.0])
