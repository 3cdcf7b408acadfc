"""Each expectation engine against closed forms, with honest error bars."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st
from scipy.special import erf
from scipy.stats import t as t_dist

from numerics.expectation import ClosedForm, GaussHermite, MonteCarlo, QuasiMonteCarlo

z1, z2 = sp.symbols("z1 z2", real=True)


@given(a=st.floats(-2, 2), b=st.floats(0.05, 2))
def test_engines_on_erf(a, b):
    exact = erf(a / np.sqrt(1 + 2 * b * b))
    f = lambda Z: erf(a + b * Z[0])
    gh = GaussHermite(60).expect(f, 1)  # its error estimate must bound the true error
    assert abs(gh.value - exact) <= gh.stderr + 1e-12 and gh.stderr < 1e-3
    # QMC's error bar comes from 8 replicates: Student-t with 7 degrees of freedom
    for eng, k in ((QuasiMonteCarlo(12, 8, seed=3), t_dist.isf(1e-6, 7)),
                   (MonteCarlo(200_000, seed=4), 5.0)):
        est = eng.expect(f, 1)
        assert abs(est.value - exact) <= k * est.stderr + 1e-12
    cf = ClosedForm().expectation(sp.erf(a + b * z1), [z1])
    assert cf.value == pytest.approx(exact, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("engine", [GaussHermite(20), QuasiMonteCarlo(14, 8), MonteCarlo(500_000)])
def test_engines_on_two_dimensional_moments(engine):
    integrand = z1**2 * z2**2 + z1 * z2 + sp.exp(0.5 * z1)
    exact = 1 + np.exp(0.125)
    est = engine.expectation(integrand, [z1, z2])
    tol = 1e-10 if isinstance(engine, GaussHermite) else 5 * est.stderr
    assert abs(est.value - exact) <= tol


def test_engine_arguments_are_validated():
    with pytest.raises(ValueError, match="replicates"):
        QuasiMonteCarlo(replicates=1)
    with pytest.raises(ValueError, match="n="):
        MonteCarlo(n=1)
    with pytest.raises(ValueError, match="max_points"):
        GaussHermite(100, max_points=1000).nodes(3)
