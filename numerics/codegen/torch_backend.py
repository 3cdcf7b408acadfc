"""PyTorch backend of the code generator (differentiable, any device)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sympy.printing.pytorch import TorchPrinter

from .base import CodeGenerator, UserFunctionPrinting

__all__ = ["TorchGenerator"]


class _Printer(UserFunctionPrinting, TorchPrinter):
    backend = "torch"

    def _print_OwensT(self, expr):
        return "_owens_t({}, {})".format(*(self._print(a) for a in expr.args))

    def _print_log1p(self, expr):
        return f"torch.log1p({self._print(expr.args[0])})"

    def _print_expm1(self, expr):
        return f"torch.expm1({self._print(expr.args[0])})"


_PRELUDE = '''
import math
import numpy
import torch

_GL_X, _GL_W = numpy.polynomial.legendre.leggauss(64)
_GL_X = (_GL_X + 1.0) / 2.0
_GL_W = _GL_W / 2.0


def _owens_t_small(h, a):
    """T(h, a) for |a| <= 1 by 64-point Gauss-Legendre on x in [0, 1] (entire integrand)."""
    x = torch.as_tensor(_GL_X, dtype=h.dtype, device=h.device)
    w = torch.as_tensor(_GL_W, dtype=h.dtype, device=h.device)
    h = h[..., None]
    a = a[..., None]
    ax2 = (a * x) ** 2
    f = torch.exp(-h * h * (1 + ax2) / 2) / (1 + ax2)
    return (a * (f * w).sum(-1, keepdim=True) / (2 * math.pi))[..., 0]


def _owens_t(h, a):
    """Owen's T without |h| or |a| kinks (autograd stays exact at h = 0 and a = 0):
    |a| <= 1 by quadrature; |a| > 1 through
    T(h, a) = sign(a)/4 − erf(h/√2)·erf(ah/√2)/4 − T(ah, 1/a)."""
    h, a = torch.broadcast_tensors(torch.as_tensor(h), torch.as_tensor(a))
    big = a.abs() > 1
    a_in = torch.where(big, 1 / torch.where(big, a, torch.ones_like(a)), a)
    h_in = torch.where(big, a * h, h)
    t = _owens_t_small(h_in, a_in)
    r2 = math.sqrt(2.0)
    t_big = 0.25 * torch.sign(a) - 0.25 * torch.erf(h / r2) * torch.erf(a * h / r2) - t
    return torch.where(big, t_big, t)


def _contract(values, weights):
    return values @ weights.to(values)
'''


class TorchGenerator(CodeGenerator):
    """Generated differentiable functions of torch tensors on any device; Python numbers are
    converted with ``dtype`` (default float64) on ``device``."""

    name = "torch"

    def printer(self) -> TorchPrinter:
        return _Printer()

    def prelude(self) -> str:
        return _PRELUDE

    def library_versions(self) -> str:
        import torch
        return f"torch={torch.__version__}"

    def wrap(self, namespace: dict, n_outputs: int, rule: Any) -> Callable[..., tuple]:
        import torch
        fn = namespace["generated"]

        def call(*args, dtype=None, device=None):
            tensors = [a if torch.is_tensor(a) else torch.as_tensor(a, dtype=dtype or torch.float64,
                                                                   device=device) for a in args]
            ref = tensors[0] if tensors else torch.zeros((), dtype=torch.float64)
            out = fn(*tensors)
            out = [o if torch.is_tensor(o) else torch.as_tensor(float(o), dtype=ref.dtype,
                                                                device=ref.device) for o in out]
            return tuple(torch.broadcast_tensors(*out))

        call.__doc__ = "generated torch function; returns a tuple of tensors"
        return call
