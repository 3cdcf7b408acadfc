"""Owen's T in the symbolic layer (``theory.OwensT``): its derivatives are exact and its
special values are SymPy's. (Its generated torch code: tests/numerics/test_codegen.py.)"""

import mpmath
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from theory import OwensT
from theory.special import owens_t_mpmath

h, a = sp.symbols("h a", real=True)


@given(st.floats(-3, 3), st.floats(0.05, 1.0))
def test_symbolic_derivatives_match_numerical(hv, av):
    along = {h: (lambda t: owens_t_mpmath(t, av), hv), a: (lambda t: owens_t_mpmath(hv, t), av)}
    for var, (section, at) in along.items():
        exact = float(sp.diff(OwensT(h, a), var).subs({h: hv, a: av}).evalf(25))
        num = float(mpmath.diff(section, at))
        assert exact == pytest.approx(num, rel=1e-9, abs=1e-12)


def test_special_values():
    assert OwensT(h, 0) == 0
    assert OwensT(0, a) == sp.atan(a) / (2 * sp.pi)
    assert OwensT(-h, a) == OwensT(h, a)
