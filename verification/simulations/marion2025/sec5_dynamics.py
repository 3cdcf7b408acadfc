"""What the claims on Marion et al.'s dynamics (Sec. 5, Thm 5) simulate: the flow off the
invariant manifold M (symbolically, then at 40 digits at given points), projected gradient
descent in R^d from given starts, the flow and Hessian at the saddle at 40 digits, and the
stationary points of the flow on M."""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from numerics import projected_gd, reduced
from theory.models.marion2025 import MANIFOLD, kappa, nu
from ..base import simulation
from .common import derivation_of, exact, high_precision

__all__ = ["flow_off_manifold", "flow_off_manifold_at", "projected_descent",
           "descent_until_decreasing", "saddle_at", "stationary_on_manifold"]


def _manifold(item) -> dict:
    return item.get("manifold") or MANIFOLD


def _flow_off(der, manifold):
    """The components of ``der``'s flow along ``manifold``'s order parameters, on it."""
    return {q: r.subs(manifold) for q, r in der.flow.as_dict().items() if q in manifold}


@simulation(seeded=False)
def flow_off_manifold(sim, item) -> dict:
    """The flow off ``item["manifold"]`` (default M) of the risk ``item["risk"]`` names
    (``common.derivation_of``), on it, simplified: {"symbolic": {component: text}, "free": the
    names of the order parameters M leaves free}."""
    der, manifold = derivation_of(item["model"], item["risk"]), _manifold(item)
    on_m = _flow_off(der, manifold)
    return {"symbolic": {str(q): str(sp.simplify(r)) for q, r in on_m.items()},
            "free": [q.name for q in der.flow.state if q not in manifold]}


@simulation(seeded=False)
def flow_off_manifold_at(sim, item) -> list[list[tuple[str, float]]]:
    """The flow off the manifold (as ``flow_off_manifold``) at 40 digits at the parameters
    ``params`` and each of ``item["points"]`` (values of the free order parameters): per point,
    (component "dq/dt", value) in the flow's order."""
    model = item["model"]
    der, manifold = derivation_of(model, item["risk"]), _manifold(item)
    on_m = _flow_off(der, manifold)
    by_name = {q.name: q for q in der.flow.state}
    out = []
    for point in item["points"]:
        vals = {model.param(k).symbol: v for k, v in item["params"].items()}
        vals.update({by_name[q]: v for q, v in point.items()})
        out.append([(f"d{q}/dt", float(high_precision(r, vals))) for q, r in on_m.items()])
    return out


@simulation(seeded=False)
def projected_descent(sim, item) -> dict:
    """Batched PGD in R^d (autograd gradients) on ``item["model"]`` at ``params`` from each of
    ``inits`` (overlap dicts), ``n_steps`` steps of size ``step``, recorded every
    ``record_every``: {"overlaps" [record, run, K], "risks" [record, run], "max_increase"
    [run]}."""
    _, qs, rs, rise = projected_gd(item["model"], item["params"], item["inits"], step=item["step"],
                                   n_steps=item["n_steps"], record_every=item["record_every"])
    return {"overlaps": qs, "risks": rs, "max_increase": rise}


@simulation(seeded=False)
def descent_until_decreasing(sim, item) -> dict:
    """``projected_descent`` with the step starting at 0.5 and halved until the risk decreases
    at every step of every run (or the step is below 1e-3), recorded every n_steps/10; stops
    at the first non-finite run: its overlaps and risks, the step used and the largest one-step
    increase of the risk."""
    step = 0.5
    while True:
        out = projected_descent(sim, {**item, "step": step, "record_every": item["n_steps"] // 10})
        rise = out["max_increase"]
        if not (np.all(np.isfinite(out["overlaps"])) and np.all(np.isfinite(out["risks"]))):
            return {**out, "step": step, "max_risk_increase": float(rise.max())}
        if rise.max() <= 1e-12 or step < 1e-3:
            return {**out, "step": step, "max_risk_increase": float(rise.max())}
        step /= 2


@functools.lru_cache(maxsize=8)
def _saddle_symbolic(der):
    """R on M, its Hessian in (κ, ν) and the Jacobian of the flow on M (symbolic, per
    derivation: the same at every setting)."""
    R_M = der.risk.subs(MANIFOLD)
    return R_M, sp.hessian(R_M, [kappa, nu]), der.flow.restrict(MANIFOLD).jacobian()


@simulation(seeded=False)
def saddle_at(sim, item) -> dict:
    """At (κ, ν) = (0, 0) on M, for the risk ``item["risk"]`` names at the setting ``params``:
    the order parameters R on M still depends on there ("ops_left"), its Hessian in (κ, ν)
    symbolically ("hessian_symbolic") and at 40 digits ("hessian"), the full flow there
    ("flow_at_point") and the Jacobian of the flow on M ("jacobian"), at 40 digits."""
    model, p = item["model"], item["params"]
    der = derivation_of(model, item["risk"])
    R_M, H, J2 = _saddle_symbolic(der)
    at = R_M.subs({model.param(k).symbol: exact(v) for k, v in p.items()})
    vals = {model.param(k).symbol: v for k, v in p.items()}
    vals.update({kappa: 0, nu: 0, **MANIFOLD})

    def matrix(M):
        return np.array([[float(high_precision(M[i, j], vals)) for j in range(2)] for i in range(2)])
    return {"ops_left": sorted(str(s) for s in at.free_symbols & set(model.order_parameters)),
            "hessian_symbolic": str(H),
            "flow_at_point": [float(high_precision(r, vals)) for r in der.flow.rhs],
            "hessian": matrix(H), "jacobian": matrix(J2)}


@simulation(seeded=False)
def stationary_on_manifold(sim, item) -> list[dict]:
    """Every stationary point of the model's reduced flow on M at ``params`` in (κ, ν) ∈
    [−1, 1]², from 64 starts seeded by ``item["seed"]``: its point, class and eigenvalues."""
    on_M = {q.name: v for q, v in MANIFOLD.items()}
    pts = reduced(item["model"], item["params"]).restrict(on_M).stationary_points(
        [(-1, 1), (-1, 1)], n_starts=64, seed=item["seed"])
    return [{"point": pt.x, "class": pt.kind, "eigenvalues": [complex(e) for e in pt.eigenvalues]}
            for pt in pts]
