"""What Sec. IV's expressivity claims simulate: for the prior θ = ±s (F = 1), the Bayes risk and
the best reduced risk of an activation, re-evaluated on fresh draws (``risk_piece``), shared by
Prop. IV.3 and the softmax-1 claim. Every seed comes in the item."""

from __future__ import annotations

from numerics.multihead import bayes_loss
from theory.models.sagitova2026 import DiscretePrior
from ..base import simulation
from .common import L, best_risk


def pm_prior(s, mass=0.5):
    """θ = +s with probability ``mass``, −s otherwise (F = 1): mass on a set S = {s} and on −S."""
    return DiscretePrior([[s], [-s]], [mass, 1.0 - mass])


@simulation(seeded=False)
def risk_piece(sim, item):
    """One entry of the risk table at signal s = ``item["signal"]``: the Bayes risk (kind
    "bayes", from ``item["seed"]``), or the best risk of H heads of one (activation, output)
    (kind "best", seeds ``item["seeds"]``, ``common.best_risk``), re-evaluated on fresh draws."""
    prior = pm_prior(item["signal"], item["mass"])
    if item["kind"] == "bayes":
        rb, rb_se, _ = bayes_loss(prior, L, sim.pick(100_000, 400_000), item["seed"])
        return {"bayes": float(rb), "bayes_se": float(rb_se)}
    r, se, st = best_risk(item["activation"], prior, item["H"], sim.pick(2**13, 2**15),
                          sim.pick(2**15, 2**17), item["seeds"], output=item["output"])
    return {"risk": float(r), "se": float(se), "state": st.to_dict()}
