"""NumPy/SciPy backend of the code generator."""

from __future__ import annotations

import numpy as np
import scipy
from sympy.printing.numpy import SciPyPrinter

from collections.abc import Callable
from typing import Any

from .base import CodeGenerator, UserFunctionPrinting

__all__ = ["NumpyGenerator"]


class _Printer(UserFunctionPrinting, SciPyPrinter):
    backend = "numpy"

    def __init__(self):
        super().__init__({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": False})

    def _print_OwensT(self, expr):
        return "scipy.special.owens_t({}, {})".format(*(self._print(a) for a in expr.args))


class NumpyGenerator(CodeGenerator):
    """Generated functions of numpy arrays (SciPy special functions), float64."""

    name = "numpy"

    def printer(self) -> SciPyPrinter:
        return _Printer()

    def prelude(self) -> str:
        return ("import functools\nimport numpy\nimport scipy.special\n\n"
                "def _contract(values, weights):\n"
                "    return numpy.asarray(values) @ weights\n")

    def library_versions(self) -> str:
        return f"numpy={np.__version__};scipy={scipy.__version__}"

    def lift(self, arg: str) -> str:
        return f"numpy.asarray({arg}, dtype=float)[..., None]"

    def wrap(self, namespace: dict, n_outputs: int, rule: Any) -> Callable[..., tuple]:
        fn = namespace["generated"]

        def call(*args):
            with np.errstate(all="ignore"):
                out = fn(*(np.asarray(a, dtype=float) for a in args))
            return tuple(np.broadcast_arrays(*(np.asarray(o, dtype=float) for o in out)))

        call.__doc__ = "generated numpy function; returns a tuple of arrays"
        return call
