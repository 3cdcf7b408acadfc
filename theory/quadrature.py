"""Numerical integration of the Gaussian layer's explicit nodes, with their error.

``integrate(expr, values, tol)`` returns expr at ``values`` with every remaining
:class:`theory.gaussian.GaussianExpectation` node integrated by adaptive quadrature (scipy's
QUADPACK) after closed-form conditioning, and the error of the result: each node's estimated
absolute error, propagated through expr to first order. Non-smooth integrands are split where
they are not smooth, since an adaptive rule only converges at its nominal order on smooth
pieces: at the zeros of the arguments of Abs, sign, Heaviside and ReLU, where the two
arguments of Max/Min meet, at the boundaries of a Piecewise, and at the points a user function
declares (a class attribute ``breakpoints``: the values of its argument where it is not smooth,
docs/functions.md). In one dimension the split is exact; in two, the inner integral is split at
the kinks for each value of the outer variable. A requested tolerance that the error estimate
exceeds raises :class:`QuadratureError` (one line), never a silent value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math

import numpy as np
import sympy as sp

from .gaussian import GaussianExpectation
from .kinks import MPMATH_KINKS, breakpoints, kink_arguments
from .special import OwensT

__all__ = ["integrate", "evaluate", "Integrated", "QuadratureError"]

_EPSABS, _EPSREL = 1e-13, 1e-11
"""QUADPACK's targets per piece: what ``evaluate`` has always used (its numbers unchanged)."""


class QuadratureError(ValueError):
    """A requested tolerance the quadrature could not meet; one line naming both."""


@dataclass(frozen=True)
class Integrated:
    """A value and its estimated absolute quadrature error (0 for a closed form)."""

    value: float
    quadrature_error: float

    def __iter__(self):
        return iter((self.value, self.quadrature_error))


def evaluate(expr: sp.Expr, values: Mapping[sp.Basic, float | sp.Expr],
             tol: float | None = None) -> float:
    """float(expr) at ``values`` (``integrate``'s value): every remaining expectation node
    integrated in float64 by adaptive quadrature split at the kinks (to ~1e-10 by default);
    QuadratureError when ``tol`` is given and the estimated error exceeds it."""
    return integrate(expr, values, tol).value


def integrate(expr: sp.Expr, values: Mapping[sp.Basic, float | sp.Expr] | None = None,
              tol: float | None = None) -> Integrated:
    """expr at ``values`` with its nodes integrated, and the estimated error (see the module's
    docstring). ``tol``: the largest acceptable error (absolute); None accepts any."""
    if tol is not None and not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol={tol!r}; allowed: a positive finite number")
    expr = _substitute(sp.sympify(expr), values or {})
    nodes = sorted(expr.atoms(GaussianExpectation), key=sp.default_sort_key)
    each = [_integrate_node(node) for node in nodes]
    syms = sp.symbols(f"_node0:{len(nodes)}")
    outer = expr.xreplace(dict(zip(nodes, syms)))
    if outer.free_symbols - set(syms):
        names = sorted(map(str, outer.free_symbols - set(syms)))
        raise ValueError(f"integrate: symbols {names} have no value; allowed: values for every "
                         "free symbol")
    fn = sp.lambdify(syms, outer, modules=[_implementations(outer, "mpmath"), MPMATH_KINKS,
                                           "mpmath"])
    point = [v for v, _ in each]
    value = _real(fn(*point), expr)
    error = sum(_slope(fn, point, i, e, expr) * e for i, (_, e) in enumerate(each) if e > 0)
    if tol is not None and not error <= tol:
        raise QuadratureError(f"quadrature error {error:.3g} exceeds the requested tolerance "
                              f"{tol:.3g} (value {value:.12g}); allowed: a tolerance ≥ "
                              f"{error:.2g}, or a smoother integrand")
    return Integrated(value, float(error))


def _substitute(expr, values):
    """expr at ``values``: ``xreplace`` for symbols (``subs`` re-derives every expectation
    node, minutes on large risks), ``subs`` for anything else."""
    values = {sp.sympify(k): sp.sympify(v) for k, v in values.items()}
    if all(isinstance(k, sp.Symbol) for k in values):
        return expr.xreplace(values)
    return expr.subs(values)


def _real(value, expr) -> float:
    value = complex(value)
    if abs(value.imag) > 1e-12 * max(1.0, abs(value.real)):
        raise ValueError(f"evaluate: complex value {value} for {expr}")
    return value.real


def _slope(fn, point, i, error, expr) -> float:
    """|∂expr/∂node_i| by a central difference of step max(error, 1e-7·scale)."""
    h = max(error, 1e-7 * (1 + abs(point[i])))
    up, down = list(point), list(point)
    up[i] += h
    down[i] -= h
    return abs(_real(fn(*up), expr) - _real(fn(*down), expr)) / (2 * h)


# --------------------------------------------------------------------------------------------
# breakpoints


def _kink_roots(integrand, zs):
    """For two variables (inner z0, outer z1): [(c0, c1, c)] with each kink at c0·z0 + c1·z1 + c
    = 0, from the kink arguments linear in both (the others are left to the adaptive rule)."""
    out = []
    for arg in kink_arguments(integrand):
        try:
            poly = sp.Poly(sp.expand(arg), *zs)
        except sp.PolynomialError:
            continue
        if poly.total_degree() != 1 or poly.free_symbols - set(zs):
            continue
        c0, c1, c = (float(poly.coeff_monomial(m)) for m in (zs[0], zs[1], 1))
        if c0 != 0:
            out.append((c0, c1, c))
    return out


# --------------------------------------------------------------------------------------------
# one node


_NUMPY_KINKS = {"Relu": lambda x: max(x, 0.0), "Heaviside": lambda x, h0=0.5: (
    1.0 if x > 0 else 0.0 if x < 0 else h0)}
def _implementations(expr, backend: str) -> dict:
    """{name: implementation} of the user functions in expr (docs/functions.md)."""
    return {type(a).__name__: getattr(type(a), backend) for a in expr.atoms(sp.Function)
            if callable(getattr(type(a), backend, None)) and not isinstance(a, OwensT)}


def _numpy_function(integrand, zs):
    from scipy.special import owens_t
    kinks = dict(_NUMPY_KINKS, OwensT=owens_t)
    f = sp.lambdify(zs, integrand, modules=[_implementations(integrand, "numpy"), kinks, "numpy"])

    def dens(*z):
        weight = math.exp(-sum(t * t for t in z) / 2) / (2 * math.pi) ** (len(z) / 2)
        if weight == 0.0:       # far in the tails, where f may overflow (exp(λz)/(1 + exp(λz)))
            return 0.0
        with np.errstate(over="ignore"):
            return float(f(*z)) * weight
    return dens


def _quad_line(g, points) -> tuple[float, float]:
    """∫ g over the real line split at ``points``: (value, estimated error)."""
    from scipy import integrate as si
    value = error = 0.0
    for a, b in zip([-np.inf, *points], [*points, np.inf]):
        v, e = si.quad(g, a, b, limit=200, epsabs=_EPSABS, epsrel=_EPSREL)
        value, error = value + v, error + e
    return value, error


def _integrate_node(node) -> tuple[float, float]:
    """(value, estimated error) of one node with no free symbol left, in float64."""
    from scipy import integrate as si

    integrand, zs = node.conditioned()
    dens = _numpy_function(integrand, zs)
    if len(zs) == 1:
        return _quad_line(dens, breakpoints(integrand, zs[0]))
    if len(zs) == 2:
        kinks = _kink_roots(integrand, zs)
        inner_errors = []

        def inner(z1):
            pts = sorted({-(c1 * z1 + c) / c0 for c0, c1, c in kinks})
            v, e = _quad_line(lambda z0: dens(z0, z1), pts)
            inner_errors.append((z1, e))
            return v
        value, error = _quad_line(inner, breakpoints(integrand, zs[1]))
        z, e = np.array(sorted(p for p in inner_errors if abs(p[0]) <= 40)).T
        return value, error + float(np.sum(np.diff(z) * (e[1:] + e[:-1]) / 2))  # ∫ inner errors
    value, error = si.nquad(dens, [[-np.inf, np.inf]] * len(zs))
    return value, error
