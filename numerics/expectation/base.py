"""Expectation rules: E[f(z)] over K i.i.d. standard normals, behind one interface.

Every rule is a small immutable object with
  ``nodes(K) -> (Z, W)``: points Z (K × n) and weights W (n) used by generated code, and
  ``expect(f, K) -> Estimate``: value and standard error for a vectorised f(Z) -> (..., n);
  ``expectation(integrand, zs, values)``: the same for a SymPy integrand in symbols ``zs``;
  ``companion()``: the rule whose disagreement with this one estimates its error where only
  nodes are used (generated code): twice the points for Gauss–Hermite, an independent draw set
  for (quasi-)Monte Carlo.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp

if TYPE_CHECKING:
    import torch

Nodes = tuple[np.ndarray, np.ndarray]
"""(Z, W): points Z (K × n) and weights W (n)."""
Integrand = Callable[[np.ndarray], np.ndarray]
"""A vectorised f(Z) -> (..., n) over the K × n points Z."""

__all__ = ["Estimate", "ExpectationRule"]


@dataclass(frozen=True)
class Estimate:
    """A value with its standard error (random rules: Monte Carlo, quasi-Monte Carlo; 0 for
    deterministic ones) and its quadrature error (deterministic rules: the estimated absolute
    error of a quadrature; 0 for a closed form and for random rules); unpacks as
    (value, stderr). ``dof``: the standard error's degrees of freedom (replicates − 1; inf when
    it is known or rests on so many samples that a normal quantile holds), for the checks' t
    quantiles."""

    value: np.ndarray | float
    stderr: np.ndarray | float
    dof: float = math.inf
    quadrature_error: np.ndarray | float = 0.0

    @property
    def error(self) -> np.ndarray | float:
        """The larger of the two errors (only one is nonzero for the rules here)."""
        return np.maximum(self.stderr, self.quadrature_error)

    def __iter__(self):
        return iter((self.value, self.stderr))

    def __getitem__(self, i):          # indexes as the (value, stderr) pair it unpacks to
        return (self.value, self.stderr)[i]


class ExpectationRule(abc.ABC):
    """E[f(z)] over K i.i.d. standard normals; ``deterministic``: same answer on every call."""

    deterministic: bool = True

    @abc.abstractmethod
    def nodes(self, K: int) -> Nodes: ...

    def expect(self, f: Integrand, K: int) -> Estimate:
        Z, W = self.nodes(K)
        return Estimate(np.asarray(f(Z)) @ W, 0.0)

    def expectation(self, integrand: sp.Expr, zs: Sequence[sp.Symbol],
                    values: Mapping[sp.Basic, float] | None = None) -> Estimate:
        values = values or {}
        expr = sp.sympify(integrand).subs(values)
        fn = sp.lambdify(zs, expr, modules=["scipy", "numpy"])
        return self.expect(lambda Z: np.broadcast_to(fn(*Z), Z.shape[1:]), len(zs))

    def companion(self) -> ExpectationRule:
        """The rule evaluated beside this one to estimate its error in generated code
        (``numerics.compiled``: |value − companion's value|); a rule without nodes has none."""
        raise NotImplementedError(f"{type(self).__name__} has no nodes, so no companion rule; "
                                  "allowed: GaussHermite, QuasiMonteCarlo, MonteCarlo")

    def for_torch(self, dtype: torch.dtype | None = None,
                  device: str | torch.device | None = None) -> _TorchNodes:
        return _TorchNodes(self, dtype, device)


class _TorchNodes:
    """Adapter giving a rule's nodes as cached torch tensors to generated torch code."""

    def __init__(self, rule, dtype=None, device=None):
        self.rule, self.dtype, self.device = rule, dtype, device
        self._cache = {}

    def nodes(self, K):
        if K not in self._cache:
            import torch
            Z, W = self.rule.nodes(K)
            dt = self.dtype or torch.float64
            self._cache[K] = (torch.as_tensor(Z, dtype=dt, device=self.device),
                              torch.as_tensor(W, dtype=dt, device=self.device))
        return self._cache[K]
