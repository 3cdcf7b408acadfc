"""Everything SymPy derives from a model, computed once per model and kept."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from functools import cached_property

import sympy as sp

from .dynamics import OverlapFlow, overlap_flow
from .model import Geometry, Model, Param, by_name
from .risk import population_risk

__all__ = ["Derived", "OverlapDerivation", "derive", "model_key", "memo_by_model"]

# The one store of derivations (and of what is built from them, e.g. generated code), by
# builder and model key; it lives as long as the process.
_STORE: dict[tuple, object] = {}


def _canon(obj) -> str:
    if isinstance(obj, sp.Basic):
        return sp.srepr(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return type(obj).__name__ + "(" + ",".join(
            f"{k}={_canon(getattr(obj, k))}" for k in obj.__dataclass_fields__) + ")"
    if callable(obj) and not isinstance(obj, type):
        # by identity: two functions of one name (a user's, in two files) are two models
        name = getattr(obj, "__qualname__", type(obj).__qualname__)
        return f"{getattr(obj, '__module__', '')}.{name}@{id(obj):x}"
    if isinstance(obj, dict):
        return "{" + ",".join(f"{_canon(k)}:{_canon(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (tuple, list)):
        return "(" + ",".join(_canon(x) for x in obj) + ")"
    return repr(obj)


def model_key(model: object) -> str:
    """A canonical text of a declaration (of any kind) or a geometry: two with the same key
    derive the same equations. Functions in it count by identity."""
    return _canon(model)


class OverlapDerivation:
    """Everything derived from a risk R(q; params) written in the order parameters q of a
    :class:`Geometry`: the overlap flow (Gram-matrix chain rule, ``theory.dynamics``), its
    Jacobian, and R's gradient and Hessian in q.

    ``fixed`` restricts everything to the submanifold where some order parameters take given
    values (e.g. M = {θ = η = ρ = 0} in Marion et al., Sec. 5): the flow of the remaining ones is
    the full flow with the fixed values substituted, which is the flow on that submanifold when
    it is invariant. ``state`` is the order parameters that are not fixed, in geometry order."""

    def __init__(self, geometry: Geometry, risk: sp.Expr | None, params: tuple[Param, ...] = (),
                 fixed: Mapping[sp.Symbol, sp.Expr] | None = None):
        self.geometry = geometry
        self.params = tuple(params)
        self.fixed = dict(fixed or {})
        unknown = [q for q in self.fixed if q not in geometry.order_parameters]
        if unknown:
            raise ValueError(f"fixed: {unknown} are not order parameters; allowed: "
                             f"{[q.name for q in geometry.order_parameters]}")
        self._risk = risk

    @cached_property
    def unrestricted_risk(self) -> sp.Expr:
        """R as a function of every order parameter (before ``fixed`` is substituted)."""
        return self._risk

    @property
    def state(self) -> tuple[sp.Symbol, ...]:
        return tuple(q for q in self.geometry.order_parameters if q not in self.fixed)

    @property
    def param_symbols(self) -> tuple[sp.Symbol, ...]:
        return tuple(p.symbol for p in self.params)

    @cached_property
    def risk(self) -> sp.Expr:
        R = self.unrestricted_risk
        return R.subs(self.fixed) if self.fixed else R

    @cached_property
    def flow(self) -> OverlapFlow:
        flow = overlap_flow(self.geometry, self.unrestricted_risk)
        return flow.restrict(self.fixed) if self.fixed else flow

    @cached_property
    def flow_jacobian(self) -> sp.Matrix:
        return self.flow.jacobian()

    @cached_property
    def risk_gradient(self) -> sp.Matrix:
        return sp.Matrix([sp.diff(self.risk, q) for q in self.state])

    @cached_property
    def risk_hessian(self) -> sp.Matrix:
        return sp.hessian(self.risk, list(self.state))

    @property
    def args(self) -> tuple[sp.Symbol, ...]:
        """Argument order of every generated function: parameters, then the state."""
        return self.param_symbols + self.state

    def restrict(self, fixed: Mapping[sp.Symbol | str, sp.Expr]) -> OverlapDerivation:
        """The derivations on the submanifold where, in addition, ``fixed`` holds (keys are
        order parameters, as Symbols or names; matched by name, an unknown one raises)."""
        fixed = by_name(fixed, self.geometry.order_parameters, "restrict")
        return OverlapDerivation(self.geometry, self.unrestricted_risk, self.params,
                                 {**self.fixed, **fixed})

    def latex(self) -> dict:
        """The derived equations as LaTeX, for reports."""
        from .printing import latex
        return {"risk": latex(self.risk),
                "flow": {latex(q): latex(r) for q, r in zip(self.flow.state, self.flow.rhs)}}


class Derived(OverlapDerivation):
    """Reduced risk, overlap flow, its Jacobian and the risk's Hessian for one model."""

    def __init__(self, model: Model):
        super().__init__(model.geometry, None, model.params)
        self.model = model

    @cached_property
    def unrestricted_risk(self) -> sp.Expr:
        return population_risk(self.model)


def memo_by_model(build):
    """Cache ``build(model, *rest)`` in the one store, by the model's key and the other
    arguments' reprs: equal models share their derivations, generated code and simulators'
    code. The entries keep their models alive, so an identity in a key is never reused."""
    where = (build.__module__, build.__qualname__)

    @functools.wraps(build)
    def get(model, *rest):
        key = where + (model_key(model),) + tuple(repr(r) for r in rest)
        if key not in _STORE:
            _STORE[key] = build(model, *rest)
        return _STORE[key]

    return get


Model.derivation_class = Derived


@memo_by_model
def derive(model) -> object:
    """The (cached) derivations of a declaration of any kind: ``model.derivation()``, the one
    protocol of every declaration (:class:`Derived` for a :class:`theory.Model`, an
    :class:`OverlapDerivation` for Dohmatob's student, ``theory.multihead.HeadDerivation`` for
    multi-head attention)."""
    make = getattr(model, "derivation", None)
    if not callable(make):
        raise TypeError(f"derive: a {type(model).__name__} is not a model declaration; allowed: "
                        "a declaration with a derivation() method (Model, DohmatobModel, "
                        "MultiHeadModel, or a kind's own)")
    return make()
