"""Where an integrand is not smooth: the zeros of the arguments of Abs, sign, Heaviside and ReLU,
where the arguments of Max/Min meet, the boundaries of a Piecewise, and the points a user
function declares (a class attribute ``breakpoints``); and mpmath versions of the kinked
functions. Used to split quadratures (``theory.gaussian``'s evalf, ``theory.quadrature``)."""

from __future__ import annotations

from collections.abc import Mapping
import math

import mpmath
import sympy as sp

from .special import Relu, owens_t_mpmath

__all__ = ["breakpoints", "kink_arguments", "MPMATH_KINKS"]


def _user_breakpoints(fn) -> tuple:
    points = getattr(type(fn), "breakpoints", None)
    return tuple(points) if isinstance(points, (tuple, list)) else ()


def kink_arguments(integrand) -> list:
    """Expressions whose zeros are where ``integrand`` is not smooth."""
    out = []
    for f in integrand.atoms(Relu, sp.Heaviside, sp.Abs, sp.sign, sp.Max, sp.Min, sp.Piecewise,
                             sp.Function):
        if isinstance(f, (Relu, sp.Heaviside, sp.Abs, sp.sign)):
            out.append(f.args[0])
        elif isinstance(f, (sp.Max, sp.Min)):
            out += [a - b for k, a in enumerate(f.args) for b in f.args[k + 1:]]
        elif isinstance(f, sp.Piecewise):
            for _, cond in f.args:
                out += [r.lhs - r.rhs for r in cond.atoms(sp.core.relational.Relational)]
        else:
            out += [f.args[0] - p for p in _user_breakpoints(f)]
    return out


def breakpoints(integrand: sp.Expr, z: sp.Symbol, given: Mapping | None = None) -> list[float]:
    """The sorted finite points in z where ``integrand`` (other variables at ``given``) is not
    smooth: zeros of its kink arguments that are linear in z."""
    points = set()
    for arg in kink_arguments(integrand):
        arg = arg.xreplace(given) if given else arg
        if arg.free_symbols != {z}:
            continue
        a, b = sp.expand(arg).as_independent(z, as_Add=True)
        slope = sp.simplify(b / z)
        if slope.free_symbols or slope == 0:
            continue
        root = complex(sp.N(-a / slope))
        if abs(root.imag) < 1e-14 and math.isfinite(root.real):
            points.add(root.real)
    return sorted(points)


MPMATH_KINKS = {"Relu": lambda x: max(x, 0), "Heaviside": lambda x, h0=0.5: mpmath.mpf(
    1 if x > 0 else 0 if x < 0 else h0), "OwensT": owens_t_mpmath}
