"""Monte Carlo SGD simulators (torch; batched over seeds; GPU when present).

``simulate_direct``: d-dimensional vectors and tokens; ``simulate_gram``: the same online SGD
exactly in law through the Gram matrix, at a cost per step independent of d."""

from .base import SGDConfig, SGDResult, TokenSumSimulator, model_code, realise_overlaps, resolve_device
from .direct import DirectSGD, simulate_direct
from .gram import GramSGD, simulate_gram, standard_gamma, wishart
from .multihead import HeadSGDConfig, HeadSGDResult, HeadSimulator, MultiHeadSGD, simulate_heads
from .multihead_gram import MultiHeadGramSGD, simulate_heads_gram

__all__ = ["SGDConfig", "SGDResult", "DirectSGD", "GramSGD", "simulate_direct", "simulate_gram",
           "TokenSumSimulator", "model_code", "realise_overlaps", "resolve_device",
           "standard_gamma", "wishart", "HeadSGDConfig", "HeadSGDResult", "MultiHeadSGD",
           "simulate_heads", "HeadSimulator", "MultiHeadGramSGD", "simulate_heads_gram"]
