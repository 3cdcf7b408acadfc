"""Reduced models whose state is the order parameters (overlaps) of a :class:`Geometry`.

Anything with a geometry and a risk R(q; params) written in its order parameters q: the
token-sum :class:`theory.Model` (R derived by ``theory.derive``) and risks stated in overlaps
directly (Dohmatob's student, ``DohmatobModel``: R̄ of Prop. 1 for its link). The flow is the
projected gradient flow of R closed on the overlaps (Gram-matrix chain rule,
``theory.dynamics``); loss, flow, Jacobian and Hessian are generated code
(``numerics.compiled``; disk-cached), so the loss is exact (standard error 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import numpy as np
import sympy as sp

from theory import derive
from theory.derived import OverlapDerivation
from theory.gaussian import GaussianExpectation
from theory.quadrature import integrate
from theory.model import Geometry, Model, Param, check_params
from theory.printing import latex

from ..compiled import CompiledDerivation, compiled
from ..expectation import Estimate
from .base import Equation, ReducedModel

__all__ = ["OverlapReduced"]


class OverlapReduced(ReducedModel):
    """The overlap flow of a risk on a geometry, parameters bound.

    derivation: the symbolic derivations (risk, flow, Jacobian, Hessian; possibly restricted
                to a submanifold); ``params`` binds its parameters (checked against their
                :class:`Param` ranges at construction; None leaves them unbound: the equations
                are available, numerical methods raise).
    """

    loss_name = "risk"

    def __init__(self, derivation: OverlapDerivation, params: Mapping[str, float] | None = None,
                 name: str = "", default_state: Mapping[str, float] | None = None,
                 model: Model | None = None, backend: str = "numpy", rule=None,
                 risk_name: tuple[str, str] = ("R", "R")):
        self.derivation = derivation
        self.name = name or derivation.geometry.name or "overlap model"
        self.model = model
        self.backend, self.rule = backend, rule
        if params is None and not derivation.params:
            params = {}                     # nothing to bind
        self._bound = None if params is None else check_params(derivation.params, params, self.name)
        self._default = dict(default_state or {})
        self._risk_name = risk_name
        if self._default:
            self.check_state(self.pack(self._default, base=np.zeros(len(self.state_names))))

    # --- construction --------------------------------------------------------------------
    @classmethod
    def from_model(cls, model: Model, params: Mapping[str, float] | None = None,
                   **kw) -> OverlapReduced:
        """The token-sum model's reduced risk (``theory.derive(model).risk``) and its flow."""
        return cls(derive(model), params, name=kw.pop("name", model.name), model=model, **kw)

    @classmethod
    def from_risk(cls, geometry: Geometry, risk: sp.Expr, param_spec: tuple[Param, ...] = (),
                  params: Mapping[str, float] | None = None, **kw) -> OverlapReduced:
        """A risk stated in the geometry's order parameters, with parameters ``param_spec``."""
        extra = sorted(s.name for s in risk.free_symbols
                       - set(geometry.order_parameters) - {p.symbol for p in param_spec})
        if extra:
            raise ValueError(f"risk has symbols {extra} that are neither order parameters nor "
                             f"parameters; allowed: {[q.name for q in geometry.order_parameters]} "
                             f"and {[p.name for p in param_spec]}")
        return cls(OverlapDerivation(geometry, risk, param_spec), params, **kw)

    def restrict(self, fixed: Mapping[str | sp.Symbol, float]) -> OverlapReduced:
        """The model on the submanifold where the order parameters in ``fixed`` take the given
        values (e.g. Marion's M = {θ = η = ρ = 0}): its state is the remaining ones."""
        by_name = {q.name: q for q in self.derivation.geometry.order_parameters}
        sym = {}
        for key, value in fixed.items():
            name = key.name if isinstance(key, sp.Symbol) else key
            if name not in by_name:
                raise ValueError(f"{self.name}: cannot fix {name!r}; allowed: {sorted(by_name)}")
            sym[by_name[name]] = sp.sympify(value)
        default = {k: v for k, v in self._default.items() if k not in {s.name for s in sym}}
        return OverlapReduced(self.derivation.restrict(sym), self._bound, name=self.name,
                              default_state=default, backend=self.backend, rule=self.rule,
                              risk_name=self._risk_name)

    # --- state ---------------------------------------------------------------------------
    @property
    def geometry(self) -> Geometry:
        return self.derivation.geometry

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(q.name for q in self.derivation.state)

    @property
    def params(self) -> dict[str, float]:
        return dict(self._bound or {})

    @property
    def fixed(self) -> dict[str, float]:
        return {q.name: float(v) for q, v in self.derivation.fixed.items()}

    def default_state(self) -> np.ndarray:
        return self.pack(self._default, base=np.zeros(len(self.state_names)))

    def default_box(self) -> list[tuple[float, float]]:
        """[−1, 1] for every overlap between unit vectors (the only case with a natural box)."""
        units = {q: self.geometry.is_unit(a) and self.geometry.is_unit(b)
                 for (a, b), q in self.geometry.overlaps.items()}
        if not all(units[q] for q in self.derivation.state):
            return super().default_box()
        return [(-1.0, 1.0)] * len(self.state_names)

    def unpack(self, y: np.ndarray) -> dict[str, float]:
        """{order parameter: value}, the fixed ones included."""
        return {**self.fixed, **self.as_dict(y)}

    def check_state(self, y: np.ndarray) -> np.ndarray:
        """y if realisable: finite, overlaps of unit vectors in [−1, 1], PSD Gram matrix (the
        fixed order parameters included); else a ValueError naming the order parameter(s)."""
        y = self._vector(y)
        self.geometry.check_overlaps(self.unpack(y))
        return y

    # --- numerics ------------------------------------------------------------------------
    @cached_property
    def compiled(self) -> CompiledDerivation:
        """The generated functions (shared with ``numerics.compiled(model)`` for a Model)."""
        if self.model is not None and not self.derivation.fixed:
            return compiled(self.model, self.backend, self.rule)
        return CompiledDerivation(self.derivation, self.backend, self.rule, name=self.name)

    def compile(self) -> CompiledDerivation:
        return self.compiled

    def _p(self) -> dict[str, float]:
        if self._bound is None:
            raise ValueError(f"{self.name}: parameters are not bound; give params= with "
                             + ", ".join(f"{p.name} ({p.describe()})" for p in self.derivation.params))
        return self._bound

    def loss(self, y: np.ndarray) -> tuple[float, float]:
        """(R(y), 0.0): the reduced risk is exact."""
        return float(self.compiled.risk(self._p(), self._vector(y), check=False)), 0.0

    def rhs(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(self.compiled.rhs(self._p(), self._vector(y), check=False), float)

    def loss_estimate(self, y: np.ndarray, tol: float | None = None) -> Estimate:
        """R(y) with its quadrature error: the generated value (exact, error 0) when R has a
        closed form, else every expectation node integrated by adaptive quadrature split at the
        kinks (``theory.quadrature.integrate``; Gauss–Hermite, which ``loss`` uses, converges
        slowly on kinked integrands)."""
        return self._estimate([self.derivation.risk], y, tol,
                              lambda: [self.loss(y)[0]])

    def rhs_estimate(self, y: np.ndarray, tol: float | None = None) -> Estimate:
        """dq/dt at y with its quadrature errors, as ``loss_estimate``."""
        return self._estimate(list(self.derivation.flow.rhs), y, tol, lambda: self.rhs(y))

    def _estimate(self, exprs, y, tol, generated) -> Estimate:
        value = np.asarray(generated(), float)      # also refuses what cannot be evaluated
        if not any(e.has(GaussianExpectation) for e in exprs):
            return Estimate(value if value.size > 1 or len(exprs) > 1 else float(value[0]), 0.0,
                            quadrature_error=0.0 * value if len(exprs) > 1 else 0.0)
        at = {p.symbol: sp.Float(v) for p, v in zip(self.derivation.params,
                                                    (self._p()[p.name] for p in
                                                     self.derivation.params))}
        at.update({q: sp.Float(v) for q, v in zip(self.derivation.state, self._vector(y))})
        done = [integrate(e, at, tol) for e in exprs]
        if len(exprs) == 1:
            return Estimate(done[0].value, 0.0, quadrature_error=done[0].quadrature_error)
        return Estimate(np.array([d.value for d in done]), np.zeros(len(done)),
                        quadrature_error=np.array([d.quadrature_error for d in done]))

    def jacobian(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(self.compiled.jacobian(self._p(), self._vector(y), check=False), float)

    def hessian(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(self.compiled.hessian(self._p(), self._vector(y), check=False), float)

    def gradient(self, y: np.ndarray) -> np.ndarray:
        """∂R/∂y."""
        return np.asarray(self.compiled.gradient(self._p(), self._vector(y), check=False), float)

    def _integrate_defaults(self) -> dict:
        return {"method": "Radau", "jac": self.jacobian}

    # --- symbolic ------------------------------------------------------------------------
    def equations(self) -> list[Equation]:
        """R and dq/dt for each order parameter q of the state (fixed ones substituted)."""
        plain, tex = self._risk_name
        eqs = [Equation(plain, tex, self.derivation.risk)]
        for q, r in zip(self.derivation.flow.state, self.derivation.flow.rhs):
            eqs.append(Equation(f"d{q.name}/d{self.time}",
                                rf"\frac{{d{latex(q)}}}{{d{self.time}}}", r))
        return eqs
