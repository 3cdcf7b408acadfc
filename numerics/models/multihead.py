"""The multi-head kind (Sagitova et al. 2026): a ``theory.multihead.MultiHeadModel``, H heads
on the order parameters (m, r, b, v), its loss and flow by quasi-Monte Carlo over the prior;
SGD in D dimensions ('direct') or on the Gram matrix ('gram'); the reduced loss by plain Monte
Carlo."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from theory.headstate import HeadState, head_state_names
from theory.models.sagitova2026 import flipping_spike
from theory.multihead import MultiHeadModel

from ..compiled import compile_heads
from ..multihead.montecarlo import reduced_loss
from ..reduced.registry import reduce_heads
from ..sgd import MultiHeadGramSGD, MultiHeadSGD, SimulationConfig
from ..kinds import Kind, register

__all__ = ["MULTI_HEAD", "head_state"]


def head_state(model: MultiHeadModel, state: Mapping[str, float] | HeadState) -> HeadState:
    """``state`` as a HeadState: itself, or packed coordinates by name (m[h,f], r[h,k], b[h],
    v[h]; those not given are 0); a ValueError names an unknown coordinate."""
    if isinstance(state, HeadState):
        return state
    names = head_state_names(model.H, model.F)
    unknown = sorted(set(state) - set(names))
    if unknown:
        raise ValueError(f"state: {unknown} are not order parameters of {model.H} heads and "
                         f"{model.F} features; allowed: {list(names)}")
    y = np.array([float(state.get(n, 0.0)) for n in names])
    return HeadState.unpack(y, model.H, model.F)


def _risk(model, params, state, n: int, seed: int) -> tuple[float, float]:
    """The reduced loss at ``state`` by plain Monte Carlo over the prior (``params['prior']``)."""
    if "prior" not in params:
        raise ValueError("params: give prior (the law of θ, e.g. flipping_spike(4.0, 1.5))")
    mean, se, _ = reduced_loss(model, head_state(model, state), params["prior"], n, seed)
    return mean, se


_STATE = {"m[0,0]": 0.3, "m[1,1]": 0.2, "r[0,0]": 0.1, "r[1,1]": 0.1}


def _example():
    return (MultiHeadModel(2, 3, 2, "softmax"), {"n": 2**12, "seed": 0},
            {"prior": flipping_spike(4.0, 1.5), "default_state": dict(_STATE)})


def _trials():
    prior = flipping_spike(4.0, 1.5)
    config = SimulationConfig(lr=0.01, steps=4, seeds=2, record_every=2, device="cpu")
    params = {"D": 16, "prior": prior}
    return {"direct": (params, config), "gram": (params, config),
            "risk": ({"prior": prior}, dict(_STATE))}


MULTI_HEAD = register(Kind(
    "multi-head", MultiHeadModel, compile=compile_heads, reduce=reduce_heads, example=_example,
    simulators={"direct": MultiHeadSGD, "gram": MultiHeadGramSGD}, risk=_risk, trials=_trials,
    doc="H heads on (m, r, b, v), quasi-Monte Carlo loss and flow (Sagitova et al. 2026)"))
