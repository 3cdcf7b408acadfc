"""Code generation from SymPy: one abstract generator (``base``), thin backends."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import sympy as sp

from .base import CodeGenerator, UnsupportedFunction, numbers_to_floats
from .numpy_backend import NumpyGenerator
from .torch_backend import TorchGenerator

if TYPE_CHECKING:
    from numerics.expectation import ExpectationRule

BACKENDS = {"numpy": NumpyGenerator, "torch": TorchGenerator}

__all__ = ["generate", "default_rule", "CodeGenerator", "NumpyGenerator", "TorchGenerator", "BACKENDS",
           "numbers_to_floats", "UnsupportedFunction"]


def default_rule() -> ExpectationRule:
    """The rule generated code uses when none is given: Gauss–Hermite, 40 points per dimension."""
    from numerics.expectation import GaussHermite
    return GaussHermite(40)


def generate(args: Iterable[sp.Symbol], outputs: Iterable[sp.Expr | float], backend: str = "numpy",
             rule: ExpectationRule | None = None) -> Callable[..., tuple]:
    """Compile ``outputs`` (expressions in ``args``) to a batched function of ``backend``.

    ``rule`` evaluates any :class:`theory.gaussian.GaussianExpectation` node (default:
    Gauss–Hermite with 40 points per dimension)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} is unknown; allowed: {sorted(BACKENDS)}")
    if rule is None:
        rule = default_rule()
    if backend == "torch":
        rule = rule.for_torch() if hasattr(rule, "for_torch") else rule
    return BACKENDS[backend]().compile(list(args), list(outputs), rule)
