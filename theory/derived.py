"""Everything the engine derives from a model, computed once per model and kept."""

from __future__ import annotations

import functools
from functools import cached_property

import sympy as sp

from .dynamics import OverlapFlow, overlap_flow
from .model import Model
from .risk import population_risk

__all__ = ["Derived", "derive", "model_key", "memo_by_model"]


def _canon(obj) -> str:
    if isinstance(obj, sp.Basic):
        return sp.srepr(obj)
    if isinstance(obj, dict):
        return "{" + ",".join(f"{_canon(k)}:{_canon(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (tuple, list)):
        return "(" + ",".join(_canon(x) for x in obj) + ")"
    if hasattr(obj, "__dataclass_fields__"):
        return type(obj).__name__ + "(" + ",".join(
            f"{k}={_canon(getattr(obj, k))}" for k in obj.__dataclass_fields__) + ")"
    if callable(obj) and hasattr(obj, "__name__"):
        return obj.__name__
    return repr(obj)


def model_key(model: Model) -> str:
    """A canonical text of the model: two models with the same key derive the same equations."""
    return _canon(model)


class Derived:
    """Reduced risk, overlap flow, its Jacobian and the risk's Hessian for one model."""

    def __init__(self, model: Model):
        self.model = model

    @cached_property
    def risk(self) -> sp.Expr:
        return population_risk(self.model)

    @cached_property
    def flow(self) -> OverlapFlow:
        return overlap_flow(self.model, self.risk)

    @cached_property
    def flow_jacobian(self) -> sp.Matrix:
        return self.flow.jacobian()

    @cached_property
    def risk_gradient(self) -> sp.Matrix:
        return sp.Matrix([sp.diff(self.risk, q) for q in self.model.order_parameters])

    @cached_property
    def risk_hessian(self) -> sp.Matrix:
        return sp.hessian(self.risk, list(self.model.order_parameters))

    @property
    def args(self) -> tuple:
        """Argument order of every generated function: parameters, then order parameters."""
        return self.model.param_symbols + self.model.order_parameters

    def latex(self) -> dict:
        """The derived equations as LaTeX, for reports."""
        return {"risk": sp.latex(self.risk),
                "flow": {sp.latex(q): sp.latex(r) for q, r in zip(self.flow.state, self.flow.rhs)}}


def memo_by_model(build):
    """Cache ``build(model, *rest)`` by the model's canonical text and the other arguments'
    reprs: equal models share their derivations, generated code and simulators' code."""
    cache: dict = {}

    @functools.wraps(build)
    def get(model, *rest):
        key = (model_key(model),) + tuple(repr(r) for r in rest)
        if key not in cache:
            cache[key] = build(model, *rest)
        return cache[key]

    return get


@memo_by_model
def derive(model: Model) -> Derived:
    """The (cached) derivations of ``model``."""
    return Derived(model)
