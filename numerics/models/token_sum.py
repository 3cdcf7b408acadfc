"""The token-sum kind (Marion et al. 2025): a ``theory.Model``, ŷ = Σ_ℓ t(x_ℓ), its risk
derived in the overlaps; SGD in d dimensions ('direct') or on the Gram matrix ('gram'); the
risk by Monte Carlo over whole token sequences in R^d."""

from __future__ import annotations

from theory.model import Model
from theory.models import marion2025

from ..compiled import CompiledModel
from ..montecarlo import direct_risk_mc
from ..reduced.registry import reduce_token_sum
from ..sgd import DirectSGD, GramSGD, SimulationConfig
from ..kinds import Kind, register

__all__ = ["TOKEN_SUM"]


def _risk(model, params, state, n: int, seed: int) -> tuple[float, float]:
    est = direct_risk_mc(model, params, state, n, seed, device="cpu")
    return float(est.value), float(est.stderr)


def _example():
    return (marion2025.MODEL, dict(marion2025.DEFAULT_PARAMS),
            {"default_state": marion2025.DEFAULT_STATE})


def _trials():
    params = {**marion2025.DEFAULT_PARAMS, "d": 16}
    config = SimulationConfig(lr=0.01, steps=4, seeds=2, record_every=2, device="cpu")
    return {"direct": (params, config), "gram": (params, config),
            "risk": (params, dict(marion2025.DEFAULT_STATE))}


TOKEN_SUM = register(Kind(
    "token-sum", Model, compile=CompiledModel, reduce=reduce_token_sum, example=_example,
    simulators={"direct": DirectSGD, "gram": GramSGD}, risk=_risk, trials=_trials,
    doc="a theory.Model: ŷ = Σ_ℓ t(x_ℓ); the risk derived in its overlaps (Marion et al. 2025)"))
