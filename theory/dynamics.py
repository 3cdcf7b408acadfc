"""Order-parameter dynamics by the chain rule on the Gram matrix.

Let R depend on the trainable vectors w_i only through inner products G(w_i, u) with the
other vectors u (trainable or hidden; hidden ones orthonormal and fixed). Then

    ∇_{w_i} R = Σ_{u ≠ w_i} ∂R/∂G(w_i,u) · u  +  2·∂R/∂G(w_i,w_i) · w_i   (last term: free w_i).

Gradient flow: ẇ_i = −∇_{w_i}R for free vectors; projected flow on the sphere:
ẇ_i = −(I − w_i w_iᵀ)·∇_{w_i}R (Marion et al. 2025, Sec. 5; Dohmatob 2025, Sec. 4). The
overlaps evolve as d/dt G(w_i, h_a) = ẇ_iᵀh_a and d/dt G(w_i, w_j) = ẇ_iᵀw_j + w_iᵀẇ_j,
which closes on the order parameters. Nothing here is model-specific: only the
:class:`theory.model.Geometry` (of a Model, or on its own) and the risk enter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp

from .model import Geometry, Model

__all__ = ["OverlapFlow", "overlap_flow", "vector_gradients"]


@dataclass(frozen=True)
class OverlapFlow:
    """dq/dt = rhs for the order parameters q (same order as ``state``)."""

    state: tuple
    rhs: tuple

    def as_dict(self) -> dict[sp.Symbol, sp.Expr]:
        return dict(zip(self.state, self.rhs))

    def jacobian(self) -> sp.Matrix:
        return sp.Matrix(self.rhs).jacobian(sp.Matrix(self.state))

    def restrict(self, fixed: Mapping[sp.Symbol | str, sp.Expr]) -> OverlapFlow:
        """The flow on the submanifold where the symbols in ``fixed`` (Symbols or names, matched
        by name) take the given values; a ValueError names a key that is no state symbol."""
        from .model import by_name
        fixed = by_name(fixed, self.state, "restrict")
        keep = [i for i, q in enumerate(self.state) if q not in fixed]
        return OverlapFlow(tuple(self.state[i] for i in keep),
                           tuple(self.rhs[i].subs(fixed) for i in keep))


def _geometry(obj: Geometry | Model) -> Geometry:
    return obj.geometry if isinstance(obj, Model) else obj


def _norm_symbol(model: Geometry, name: str):
    return model.inner(name, name)


def vector_gradients(geometry: Geometry | Model, risk: sp.Expr) -> dict[str, dict[str, sp.Expr]]:
    """∇_{w_i}R as linear combinations {vector name: coefficient} of the geometry's vectors."""
    model = _geometry(geometry)
    grads = {}
    for w in model.trainable:
        comb = {}
        for u in model.vectors:
            if u == w.name:
                if w.constraint == "free":
                    comb[u] = comb.get(u, 0) + 2 * sp.diff(risk, _norm_symbol(model, u))
                continue
            comb[u] = comb.get(u, 0) + sp.diff(risk, model.inner(w.name, u))
        grads[w.name] = comb
    return grads


def _ip(model, comb, u):
    """(Σ_v c_v·v)ᵀu."""
    return sum((c * model.inner(v, u) for v, c in comb.items()), sp.S.Zero)


def overlap_flow(geometry: Geometry | Model, risk: sp.Expr) -> OverlapFlow:
    """dq/dt for the order parameters q of ``geometry`` (a Geometry, or a Model's) under the
    (projected) gradient flow of ``risk``, a SymPy expression in those order parameters."""
    model = _geometry(geometry)
    grads = vector_gradients(model, risk)
    velocity = {}
    for w in model.trainable:
        g = grads[w.name]
        v = {u: -c for u, c in g.items()}
        if w.constraint == "sphere":  # ẇ = −(g − (wᵀg)·w)
            radial = _ip(model, g, w.name)
            v[w.name] = v.get(w.name, 0) + radial
        velocity[w.name] = v
    rhs = {}
    trainable = [w.name for w in model.trainable]
    for (a, b), sym in model.overlaps.items():
        out = sp.S.Zero
        if a in trainable:
            out += _ip(model, velocity[a], b)
        if b in trainable:
            out += _ip(model, velocity[b], a)
        rhs[sym] = out
    state = model.order_parameters
    return OverlapFlow(state, tuple(rhs[q] for q in state))
