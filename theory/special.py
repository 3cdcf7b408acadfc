"""Special functions the Gaussian-expectation layer produces, as SymPy functions.

Owen's T function (Owen 1956),

    T(h, a) = (1/2π) ∫_0^a exp(-h²(1+x²)/2) / (1+x²) dx,

appears in E[erf(m + s·Z)²] = 1 − 8·T(√2·m/√(1+2s²), 1/√(1+4s²)) (Marion et al. 2025, spec
"Facts the derivation needs"). It carries its exact partial derivatives so that SymPy can
differentiate risks that contain it, and evaluates at any precision through mpmath.
"""

from __future__ import annotations

import mpmath
import sympy as sp

__all__ = ["OwensT", "owens_t_mpmath", "Relu"]


class OwensT(sp.Function):
    """Owen's T function T(h, a), with ∂T/∂h = −φ(h)·erf(a·h/√2)/2 and
    ∂T/∂a = exp(−h²(1+a²)/2) / (2π(1+a²))."""

    nargs = 2

    @classmethod
    def eval(cls, h, a):
        if a.is_zero:
            return sp.S.Zero
        if h.is_zero:
            return sp.atan(a) / (2 * sp.pi)
        if h.could_extract_minus_sign():
            return cls(-h, a)
        if a.could_extract_minus_sign():
            return -cls(h, -a)
        return None

    def fdiff(self, argindex=1):
        h, a = self.args
        if argindex == 1:
            return -sp.exp(-h**2 / 2) / (2 * sp.sqrt(2 * sp.pi)) * sp.erf(a * h / sp.sqrt(2))
        if argindex == 2:
            return sp.exp(-h**2 * (1 + a**2) / 2) / (2 * sp.pi * (1 + a**2))
        raise sp.ArgumentIndexError(self, argindex)

    def _eval_evalf(self, prec):
        h, a = (arg._to_mpmath(prec) for arg in self.args)
        with mpmath.workprec(prec + 20):
            value = owens_t_mpmath(h, a)
        return sp.Float._new(mpmath.mpf(value)._mpf_, prec)

    def _eval_is_real(self):
        return all(arg.is_real for arg in self.args) or None


def owens_t_mpmath(h: float | mpmath.mpf, a: float | mpmath.mpf) -> mpmath.mpf:
    """Owen's T by mpmath quadrature of its defining integral (reference precision)."""
    h = mpmath.mpf(h)
    a = mpmath.mpf(a)
    f = lambda x: mpmath.exp(-h * h * (1 + x * x) / 2) / (1 + x * x)
    return mpmath.quad(f, [0, a]) / (2 * mpmath.pi)


class Relu(sp.Function):
    """ReLU(x) = max(x, 0), a function of one variable with derivative Heaviside(x).

    Kept as its own function (rather than ``Max(0, x)``) so that the Gaussian layer can
    recognise it as φ(u) of a linear form and apply its closed forms; at the kink SymPy's
    convention Heaviside(0) = 1/2 gives the midpoint of the subdifferential."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_nonnegative:
            return x
        if x.is_nonpositive:
            return sp.S.Zero
        if x.is_Number:
            return sp.Max(x, 0)
        return None

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise sp.ArgumentIndexError(self, argindex)
        return sp.Heaviside(self.args[0])

    @staticmethod
    def numpy(x):
        import numpy as np
        return np.maximum(x, 0.0)

    @staticmethod
    def torch(x):
        import torch
        return torch.relu(x)

    def _eval_rewrite_as_Max(self, x, **kwargs):
        return sp.Max(x, 0)

    def _eval_evalf(self, prec):
        x = self.args[0].evalf(prec)
        return sp.Max(x, 0) if x.is_Number else None

    def _eval_is_real(self):
        return self.args[0].is_real or None

    def _eval_is_nonnegative(self):
        return self.args[0].is_real or None
