"""What the engine's claim on Marion et al.'s model simulates: batched online SGD at finite d,
and the reduced overlap ODE on the same time grid (the paper's flow, or a deliberately wrong one:
``time_scaled_flow``, ``flow_without_noise_tokens``)."""

from __future__ import annotations

import numpy as np

from numerics import reduced
from numerics.sgd import SimulationConfig, simulate
from theory import Model
from theory.models.marion2025 import MODEL
from ..base import simulation

__all__ = ["sgd_run", "ode_run", "TimeScaledFlow", "time_scaled_flow", "flow_without_noise_tokens"]


@simulation(seeded=False)
def sgd_run(sim, item) -> dict:
    """Batched direct SGD on ``item["model"]`` at ``params`` (the ``SimulationConfig`` fields
    ``lr``, ``steps``, ``seeds``, ``batch``, ``record_every``, ``n_test``, ``init``, ``seed``,
    ``dtype`` from the item, on the run's device): the ``SGDResult`` as data ("t", "state",
    "loss", "names", "steps_per_second")."""
    fields = ("lr", "steps", "seeds", "batch", "record_every", "n_test", "init", "seed", "dtype")
    cfg = SimulationConfig(**{k: item[k] for k in fields}, device=sim.device)
    res = simulate(item["model"], item["params"], cfg)
    return {"t": res.t, "state": res.state, "loss": res.loss, "names": list(res.names),
            "steps_per_second": res.steps_per_second}


@simulation(seeded=False)
def ode_run(sim, item) -> dict:
    """The reduced flow from ``item["init"]`` at the times ``t``, at ``params``: ``item["flow"]``
    a model (its reduced flow) or a module-level function of the parameters returning a flow
    (a deliberately wrong one). {"y" [record, K], "risk": the risk along it}."""
    flow, p = item["flow"], item["params"]
    flow = reduced(flow, p) if isinstance(flow, Model) else flow(p)
    sol = flow.integrate(item["init"], item["t"])
    if not sol.ok:
        raise RuntimeError(f"the reduced ODE at d={p['d']} could not be integrated: {sol.message}")
    return {"y": sol.y, "risk": np.array([flow.loss(y)[0] for y in sol.y])}


class TimeScaledFlow:
    """The reduced flow run ``factor`` times too fast (its right-hand side × factor, as a
    learning rate mis-scaled in the reduction): the state at t is the flow's at factor·t."""

    def __init__(self, flow, factor):
        self.flow, self.factor = flow, factor

    def integrate(self, y0, t_eval, **kw):
        return self.flow.integrate(y0, self.factor * np.asarray(t_eval, float), **kw)

    def loss(self, y):
        return self.flow.loss(y)


def time_scaled_flow(p, factor):
    """The paper's reduced flow at ``p``, ``factor`` times too fast (``TimeScaledFlow``)."""
    return TimeScaledFlow(reduced(MODEL, p), factor)


def flow_without_noise_tokens(p):
    """The paper's reduced flow with the noise tokens' terms dropped (the (L−1) and (L−1)(L−2)
    terms: the flow at L = 1)."""
    return reduced(MODEL, {**p, "L": 1})
