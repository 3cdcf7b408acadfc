"""Generated numerical functions of a model's derived equations.

``compiled(model, backend)`` gives the reduced risk, its gradient, the overlap flow and its
Jacobian as batched functions of (params, q), where q stacks the order parameters in
``model.order_parameters`` order along the last axis. :class:`CompiledDerivation` does the same
for any :class:`theory.derived.OverlapDerivation` (a risk stated in overlaps, e.g. Dohmatob's
R̄, or a flow restricted to a submanifold), with q in its ``state`` order.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import numpy as np

from theory import derive
from theory.derived import OverlapDerivation, memo_by_model
from theory.model import Model, check_params

from .codegen import generate

__all__ = ["CompiledDerivation", "CompiledModel", "compiled"]


class CompiledDerivation:
    """Generated code (disk-cached, see ``numerics.codegen``) of an OverlapDerivation's risk,
    risk gradient and Hessian, flow and flow Jacobian; every function takes the parameters (a
    mapping by name) and q (..., n_state)."""

    def __init__(self, derived: OverlapDerivation, backend: str = "numpy", rule=None,
                 name: str = ""):
        self.derived = derived
        self.backend = backend
        self.rule = rule
        self.name = name

    def _gen(self, outputs):
        return generate(self.derived.args, outputs, backend=self.backend, rule=self.rule)

    @cached_property
    def _risk(self):
        return self._gen([self.derived.risk])

    @cached_property
    def _grad(self):
        return self._gen(list(self.derived.risk_gradient))

    @cached_property
    def _rhs(self):
        return self._gen(list(self.derived.flow.rhs))

    @cached_property
    def _jac(self):
        return self._gen(list(self.derived.flow_jacobian))

    @cached_property
    def _hess(self):
        return self._gen(list(self.derived.risk_hessian))

    # -- calling convention -----------------------------------------------------------------
    def check_params(self, params: Mapping[str, float]) -> dict[str, float]:
        return check_params(self.derived.params, params, self.name)

    def param_values(self, params: Mapping[str, float], check: bool = True) -> list[float]:
        if check:
            params = self.check_params(params)
        return [params[p.name] for p in self.derived.params]

    def _call(self, fn, params, q, check=True):
        pv = self.param_values(params, check)
        if self.backend == "torch":
            import torch
            q = q if torch.is_tensor(q) else torch.as_tensor(np.asarray(q, float))
            return fn(*pv, *q.unbind(-1), dtype=q.dtype, device=q.device)
        q = np.asarray(q, float)
        return fn(*pv, *np.moveaxis(q, -1, 0))

    def _stack(self, outs, shape=None):
        if self.backend == "torch":
            import torch
            out = torch.stack(outs, -1)
        else:
            out = np.stack(outs, -1)
        return out if shape is None else out.reshape(out.shape[:-1] + shape)

    def risk(self, params, q, check=True):
        return self._call(self._risk, params, q, check)[0]

    def gradient(self, params, q, check=True):
        return self._stack(self._call(self._grad, params, q, check))

    def rhs(self, params, q, check=True):
        return self._stack(self._call(self._rhs, params, q, check))

    def jacobian(self, params, q, check=True):
        n = len(self.derived.state)
        return self._stack(self._call(self._jac, params, q, check), (n, n))

    def hessian(self, params, q, check=True):
        n = len(self.derived.state)
        return self._stack(self._call(self._hess, params, q, check), (n, n))


class CompiledModel(CompiledDerivation):
    """The compiled derivations of a :class:`theory.Model` (``derive(model)``)."""

    def __init__(self, model: Model, backend: str = "numpy", rule=None):
        super().__init__(derive(model), backend, rule, name=model.name)
        self.model = model

    def check_params(self, params: Mapping[str, float]) -> dict[str, float]:
        return self.model.check_params(params)

    def q_vector(self, overlaps: Mapping[str, float]) -> np.ndarray:
        """Order parameters as a vector, validated (range and Gram-matrix realisability)."""
        checked = self.model.check_overlaps(overlaps)
        return np.array([checked[s.name] for s in self.model.order_parameters])


_compiled = memo_by_model(CompiledModel)


def compiled(model: Model, backend: str = "numpy", rule=None) -> CompiledModel:
    """The (cached) compiled functions of ``model`` for ``backend``."""
    return _compiled(model, backend, rule)
