"""Closed form: the symbolic layer's exact Gaussian integration, evaluated at the values."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from theory.gaussian import GaussianExpectation, GaussianLaw, expect
from collections.abc import Mapping, Sequence

from .base import Estimate, ExpectationRule, Integrand, Nodes


@dataclass(frozen=True)
class ClosedForm(ExpectationRule):
    """Exact symbolic integration (``theory.gaussian.expect``); no nodes, no error."""

    def nodes(self, K: int) -> Nodes:
        raise NotImplementedError("ClosedForm has no nodes: it integrates symbolically")

    def expect(self, f: Integrand, K: int) -> Estimate:
        raise NotImplementedError("ClosedForm integrates SymPy integrands only; use expectation()")

    def expectation(self, integrand: sp.Expr, zs: Sequence[sp.Symbol],
                    values: Mapping[sp.Basic, float] | None = None) -> Estimate:
        law = GaussianLaw(tuple(zs), sp.zeros(len(zs), 1), sp.eye(len(zs)))
        result = expect(integrand, law)
        if result.has(GaussianExpectation):
            raise ValueError(f"ClosedForm: no closed form for E[{integrand}]")
        value = complex(sp.N(result.subs(values or {}), 17))
        return Estimate(np.float64(value.real), 0.0, quadrature_error=0.0)
