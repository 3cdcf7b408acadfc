"""Numerical layer: generated code, expectation engines, ODE integration, Monte Carlo SGD.

Curated public API:

>>> from numerics import compiled, integrate_flow, SGDConfig, simulate_direct
"""

from .compiled import CompiledModel, compiled
from .codegen import generate
from .expectation import ClosedForm, GaussHermite, MonteCarlo, QuasiMonteCarlo
from .montecarlo import direct_risk_mc
from .ode import integrate_adaptive, integrate_euler_maruyama, integrate_flow, integrate_rk4
from .pgd import autograd_flow, projected_gd
from .sgd import (HeadSGDConfig, SGDConfig, SGDResult, SimulationConfig, simulate_direct, simulate_gram,
                  simulate_heads, simulate_heads_gram)

__all__ = ["compiled", "CompiledModel", "generate", "ClosedForm", "GaussHermite", "MonteCarlo",
           "QuasiMonteCarlo", "direct_risk_mc", "integrate_adaptive", "integrate_flow",
           "integrate_rk4", "integrate_euler_maruyama", "projected_gd", "autograd_flow",
           "SGDConfig", "SGDResult", "simulate_direct", "simulate_gram", "simulate_heads",
           "simulate_heads_gram", "HeadSGDConfig", "SimulationConfig"]
