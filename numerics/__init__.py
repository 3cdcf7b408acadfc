"""Numerical layer: generated code, expectation rules, ODE integration, Monte Carlo SGD,
and the reduced-model interface every model kind implements.

Curated public API:

>>> from numerics import reduced, integrate, SGDConfig, simulate_direct
"""

from .codegen import generate
from .compiled import CompiledModel, compiled
from .expectation import ClosedForm, GaussHermite, MonteCarlo, QuasiMonteCarlo
from .montecarlo import direct_risk_mc
from .ode import Status, Trajectory, integrate
from .pgd import autograd_flow, projected_gd
from .reduced import HeadReduced, OverlapReduced, ReducedModel, reduced
from .sgd import (HeadSGDConfig, SGDConfig, SGDResult, SimulationConfig, simulate_direct, simulate_gram,
                  simulate_heads, simulate_heads_gram)

__all__ = ["compiled", "CompiledModel", "generate", "ClosedForm", "GaussHermite", "MonteCarlo",
           "QuasiMonteCarlo", "direct_risk_mc", "integrate", "Trajectory", "Status", "projected_gd",
           "autograd_flow",
           "SGDConfig", "SGDResult", "simulate_direct", "simulate_gram", "simulate_heads",
           "simulate_heads_gram", "HeadSGDConfig", "SimulationConfig",
           "ReducedModel", "OverlapReduced", "HeadReduced", "reduced"]
