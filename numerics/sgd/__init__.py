"""Monte Carlo SGD simulators (torch; batched over seeds; GPU when present)."""

from .base import SGDConfig, SGDResult, model_code, realise_overlaps, resolve_device
from .direct import DirectSGD, simulate_direct

__all__ = ["SGDConfig", "SGDResult", "DirectSGD", "simulate_direct", "model_code",
           "realise_overlaps", "resolve_device"]
