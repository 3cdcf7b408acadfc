"""Monte Carlo SGD simulators (torch; batched over seeds; GPU when present).

One skeleton (``base``: configuration, device and generator, recording loop, test loss in law,
``SGDResult``) and two model kinds, each with a direct and a Gram-matrix simulator:
token-sum models ``simulate_direct`` (d-dimensional vectors) and ``simulate_gram`` (exactly in
law through the Gram matrix, cost per step independent of d); multi-head attention
``simulate_heads`` and ``simulate_heads_gram``."""

from .base import (SGDResult, SGDSimulator, SimulationConfig, model_code, psd_factor, realise_overlaps,
                   resolve_device)
from .direct import DirectSGD, simulate_direct
from .gram import GramSGD, simulate_gram, standard_gamma, wishart
from .multihead import HeadSGDConfig, HeadSimulator, MultiHeadSGD, simulate_heads
from .multihead_gram import MultiHeadGramSGD, simulate_heads_gram
from .token_sum import SGDConfig, TokenSumSimulator

__all__ = ["SimulationConfig", "SGDConfig", "HeadSGDConfig", "SGDResult", "SGDSimulator",
           "TokenSumSimulator", "HeadSimulator", "DirectSGD", "GramSGD", "MultiHeadSGD",
           "MultiHeadGramSGD", "simulate_direct", "simulate_gram", "simulate_heads",
           "simulate_heads_gram", "model_code", "realise_overlaps", "resolve_device", "psd_factor",
           "standard_gamma", "wishart"]
