"""Adaptive quadrature to a requested tolerance (scipy's QUADPACK), split at the kinks of
non-smooth integrands (``theory.quadrature``): for SymPy integrands in one or two dimensions
(more: ``nquad`` without splitting); no fixed nodes, so not for generated code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math

import numpy as np
import sympy as sp

from .base import Estimate, ExpectationRule, Integrand, Nodes


@dataclass(frozen=True)
class Adaptive(ExpectationRule):
    """E[integrand] with its estimated quadrature error; ``tol``: the largest acceptable error
    (absolute; ``theory.quadrature.QuadratureError`` when it is not met)."""

    tol: float = 1e-8

    def __post_init__(self):
        if not (self.tol > 0 and math.isfinite(self.tol)):
            raise ValueError(f"Adaptive: tol={self.tol!r}; allowed: a positive finite number")

    def nodes(self, K: int) -> Nodes:
        raise NotImplementedError("Adaptive has no fixed nodes; generated code uses GaussHermite "
                                  "(its error: GaussHermite.expect) or quasi-Monte Carlo")

    def expect(self, f: Integrand, K: int) -> Estimate:
        raise NotImplementedError("Adaptive integrates SymPy integrands only; use expectation()")

    def expectation(self, integrand: sp.Expr, zs: Sequence[sp.Symbol],
                    values: Mapping[sp.Basic, float] | None = None) -> Estimate:
        from theory.gaussian import GaussianExpectation
        from theory.quadrature import integrate

        node = GaussianExpectation(sp.sympify(integrand), *zs)
        value, error = integrate(node, values or {}, self.tol)
        return Estimate(np.float64(value), 0.0, quadrature_error=error)
