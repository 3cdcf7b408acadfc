"""Closed form: the symbolic layer's exact Gaussian integration, evaluated at the values."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from theory.gaussian import GaussianExpectation, GaussianLaw, expect
from .base import Estimate, ExpectationEngine


@dataclass(frozen=True)
class ClosedForm(ExpectationEngine):
    def nodes(self, K):
        raise NotImplementedError("ClosedForm has no nodes: it integrates symbolically")

    def expect(self, f, K):
        raise NotImplementedError("ClosedForm integrates SymPy integrands only; use expectation()")

    def expectation(self, integrand, zs, values=None):
        law = GaussianLaw(tuple(zs), sp.zeros(len(zs), 1), sp.eye(len(zs)))
        result = expect(integrand, law)
        if result.has(GaussianExpectation):
            raise ValueError(f"ClosedForm: no closed form for E[{integrand}]")
        value = complex(sp.N(result.subs(values or {}), 17))
        return Estimate(np.float64(value.real), 0.0)
