"""Monte Carlo SGD simulators (torch; batched over seeds; GPU when present).

One calling convention for every model kind: ``simulate(model, params, config, method)``
(``registry``), with one configuration (``SimulationConfig``) and one result (``SGDResult``).
One skeleton (``base``: device and generator, recording loop, test loss in law) and two model
kinds, each with a direct and a Gram-matrix simulator: token-sum models (``DirectSGD``,
d-dimensional vectors; ``GramSGD``, exactly in law through the Gram matrix, cost per step
independent of d) and multi-head attention (``MultiHeadSGD``, ``MultiHeadGramSGD``)."""

from .base import (SGDResult, SGDSimulator, SimulationConfig, model_code, psd_factor, realise_overlaps,
                   resolve_device)
from .direct import DirectSGD
from .gram import GramSGD, standard_gamma, wishart
from .multihead import HeadSimulator, MultiHeadSGD
from .multihead_gram import MultiHeadGramSGD
from .registry import SIMULATORS, simulate, simulator
from .token_sum import TokenSumSimulator

__all__ = ["simulate", "simulator", "SIMULATORS", "SimulationConfig", "SGDResult", "SGDSimulator",
           "TokenSumSimulator", "HeadSimulator", "DirectSGD", "GramSGD", "MultiHeadSGD",
           "MultiHeadGramSGD", "model_code", "realise_overlaps", "resolve_device", "psd_factor",
           "standard_gamma", "wishart"]
