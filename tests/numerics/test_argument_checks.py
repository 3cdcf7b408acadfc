"""Bad input to the numerical layer's entry points (the compiled model ``numerics.compiled``,
the direct Monte Carlo ``numerics.direct_risk_mc``) is rejected at the boundary with a message
naming the parameter and its range."""

import numpy as np
import pytest

from numerics import compiled, direct_risk_mc
from theory.models.marion2025 import MODEL

GOOD = dict(d=10, L=3, lam=0.5, gamma=0.8, eps=0.1)
OV = dict(kappa=0.2, nu=0.1, theta=0.0, eta=0.0, rho=0.0)


@pytest.mark.parametrize("name,value,fragment", [
    ("d", -5, "parameter d=-5 is out of range"), ("d", 2.5, "integer"),
    ("gamma", 0.0, "parameter gamma=0.0 is out of range; allowed: real in (0"),
    ("lam", -1.0, "lam"), ("eps", float("nan"), "eps"), ("L", 0, "L=0"),
    ("gamma", "abc", "not a number")])
def test_bad_parameters(name, value, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        compiled(MODEL).risk({**GOOD, name: value}, np.zeros(5))


def test_overlaps_outside_unit_interval_and_unrealisable_gram():
    with pytest.raises(ValueError, match=r"kappa=1.5 is out of range; allowed: real in \[-1, 1\]"):
        compiled(MODEL).q_vector({**OV, "kappa": 1.5})
    with pytest.raises(ValueError, match="not realisable"):
        compiled(MODEL).q_vector(dict(kappa=0.9, nu=0.9, theta=0.9, eta=0.9, rho=-0.9))


def test_monte_carlo_rejects_tiny_dimension_and_sample_count():
    with pytest.raises(ValueError, match="dimension d=2"):
        direct_risk_mc(MODEL, {**GOOD, "d": 2}, OV, n=10, seed=0)
    with pytest.raises(ValueError, match="n=1"):
        direct_risk_mc(MODEL, GOOD, OV, n=1, seed=0)
