"""Generated numerical functions of a model's derived equations: the one compile step of
every model kind, ``compiled(model, backend)``, kept once per model and backend.

* a :class:`theory.Model`: :class:`CompiledModel`, the reduced risk, its gradient, the overlap
  flow and its Jacobian as batched functions of (params, q), q stacking the order parameters
  in ``model.order_parameters`` order along the last axis, and the per-token code of the SGD
  simulators (``token_code``);
* Dohmatob's student (any declaration whose derivation is an
  :class:`theory.derived.OverlapDerivation`): :class:`CompiledDerivation`, the same for a risk
  stated in overlaps (also for a flow restricted to a submanifold), q in its ``state`` order;
  ``risk_estimate`` and ``rhs_estimate`` give the value with its quadrature error (exactly 0
  where every expectation closed; else |rule − companion rule|, see ``numerics.expectation``);
* a :class:`theory.multihead.MultiHeadModel`: :class:`CompiledHeads`, functions of the logits
  and sinks (the conditional loss and its derivatives, the weights and their Jacobians).

Every function comes from ``numerics.codegen.generate`` (common sub-expressions eliminated,
source cached on disk).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import numpy as np
import sympy as sp

from theory import derive
from theory.gaussian import GaussianExpectation
from theory.derived import OverlapDerivation, memo_by_model
from theory.model import Model, check_params, projection
from theory.multihead import MultiHeadModel

from .codegen import default_rule, generate
from .expectation import Estimate
from .kinds import kind_of

__all__ = ["CompiledDerivation", "CompiledModel", "CompiledHeads", "TokenCode", "compiled",
           "compile_derivation", "compile_heads"]


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

    # -- values with their quadrature error (only where asked: the plain calls stay one pass) --
    def risk_estimate(self, params, q, check=True) -> Estimate:
        """The risk with its quadrature error: 0 (exactly) when the risk has no expectation
        node left, else |value − the companion rule's value| (``ExpectationRule.companion``:
        2n Gauss–Hermite points, independent quasi-Monte Carlo draws)."""
        return self._estimate("risk", [self.derived.risk], params, q, check)

    def rhs_estimate(self, params, q, check=True) -> Estimate:
        """dq/dt with its quadrature errors (per coordinate), as ``risk_estimate``."""
        return self._estimate("rhs", list(self.derived.flow.rhs), params, q, check)

    @cached_property
    def _companion(self) -> CompiledDerivation:
        rule = default_rule() if self.rule is None else self.rule
        return CompiledDerivation(self.derived, self.backend, rule.companion(), self.name)

    def _estimate(self, method, exprs, params, q, check) -> Estimate:
        value = getattr(self, method)(params, q, check)
        if not any(e.has(GaussianExpectation) for e in exprs):
            zero = value * 0
            return Estimate(value, zero, quadrature_error=zero)
        other = getattr(self._companion, method)(params, q, False)
        return Estimate(value, value * 0, quadrature_error=abs(value - other))


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


    @cached_property
    def token_code(self) -> TokenCode:
        """The per-token code of the SGD simulators (torch, whatever this backend)."""
        return TokenCode(self.model)


class TokenCode:
    """Generated torch code for the per-token student t, its derivatives ∂t/∂(xᵀw) for the
    trainable w, and the label s, all as functions of the token's projections."""

    def __init__(self, model: Model):
        self.model = model
        self.trainable = tuple(v.name for v in model.trainable)
        self.hidden = tuple(model.hidden)
        params = model.param_symbols
        pw = [projection(n) for n in self.trainable]
        ph = [projection(n) for n in self.hidden]
        t = model.student
        self.student = generate(list(params) + pw + ph, [t] + [sp.diff(t, p) for p in pw],
                                backend="torch")
        self.label = generate(list(params) + ph, [model.label], backend="torch")


class CompiledHeads:
    """Generated code of a :class:`MultiHeadModel`'s derivation (``theory.derive(model)``):
    every function takes the logits s_hℓ (row-major) and then the sinks v_h, the order of
    ``derived.arguments``."""

    def __init__(self, model: MultiHeadModel, backend: str = "numpy"):
        self.model, self.backend, self.derived = model, backend, derive(model)

    def _gen(self, outputs):
        return generate(self.derived.arguments, outputs, backend=self.backend)

    @cached_property
    def loss(self):
        """φ."""
        return self._gen([self.derived.conditional_loss])

    def flow(self, noise: bool):
        """∂φ/∂s (H·L), the same-token Hessian blocks ∂²φ/∂s_hℓ∂s_kℓ (ℓ, h ≤ k), ∂φ/∂v (trained
        sinks only) and, with ``noise``, the noise integrand N_hk (h ≤ k)."""
        return self._flow_with_noise if noise else self._flow

    def _flow_outputs(self):
        md = self.derived
        H, L = md.H, md.L
        outs = [g for row in md.loss_gradient for g in row]
        outs += [md.loss_hessian_blocks[l][h][k] for l in range(L) for h in range(H)
                 for k in range(h, H)]
        if md.trains_sinks:
            outs += md.loss_sink_gradient
        return outs

    @cached_property
    def _flow(self):
        return self._gen(self._flow_outputs())

    @cached_property
    def _flow_with_noise(self):
        md = self.derived
        return self._gen(self._flow_outputs() + [md.noise_integrand[h][k] for h in range(md.H)
                                                 for k in range(h, md.H)])

    @cached_property
    def gradient(self):
        """φ, ∂φ/∂s and ∂φ/∂v (trained sinks only): for optimisers, no Hessian blocks."""
        md = self.derived
        outs = [md.conditional_loss] + [g for row in md.loss_gradient for g in row]
        if md.trains_sinks:
            outs += md.loss_sink_gradient
        return self._gen(outs)

    @cached_property
    def samples(self):
        """w_ℓ′, ∂w_ℓ′/∂s_hℓ ([h, ℓ, ℓ′]) and ∂w_ℓ′/∂v_h (trained sinks only): a per-sample
        gradient of the SGD simulators is 2(ŷ − y)·Σ_ℓ′ (∂w_ℓ′/∂·)z_ℓ′."""
        md = self.derived
        outs = list(md.token_weights)
        outs += [j for Jh in md.weight_jacobian for row in Jh for j in row]
        if md.trains_sinks:
            outs += [j for row in md.weight_sink_jacobian for j in row]
        return self._gen(outs)

    def weights(self, per_head: bool):
        """Token weights w_ℓ, or head weights A_hℓ with ``per_head``."""
        md = self.derived
        outs = [a for row in md.head_weights for a in row] if per_head else list(md.token_weights)
        return self._gen(outs)


def compile_derivation(model, backend: str = "numpy", rule=None) -> CompiledDerivation:
    """The compile step of a declaration whose derivation is an :class:`OverlapDerivation`
    (Dohmatob's student, a user's kind stated in overlaps)."""
    derived = derive(model)
    if not isinstance(derived, OverlapDerivation):
        raise TypeError(f"compiled: the derivation of a {type(model).__name__} is a "
                        f"{type(derived).__name__}; allowed: an OverlapDerivation")
    return CompiledDerivation(derived, backend, rule, name=getattr(model, "name", ""))


def compile_heads(model, backend: str = "numpy", rule=None) -> CompiledHeads:
    """The multi-head kind's compile step (its functions need no expectation rule)."""
    return CompiledHeads(model, backend)


@memo_by_model
def _compile(model, backend: str, rule):
    return kind_of(model).compile(model, backend, rule)


def compiled(model, backend: str = "numpy", rule=None):
    """The (cached) generated code of a declaration of any kind for ``backend`` ('numpy' or
    'torch'): its kind's ``compile`` (``numerics.kinds``), for the built-in kinds
    :class:`CompiledModel`, :class:`CompiledDerivation` or :class:`CompiledHeads` (module
    docstring). A TypeError names the registered kinds for anything else."""
    if backend not in ("numpy", "torch"):
        raise ValueError(f"backend={backend!r}; allowed: 'numpy', 'torch'")
    return _compile(model, backend, rule)
