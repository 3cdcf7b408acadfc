"""Numerical layer: generated code, expectation rules, ODE integration, Monte Carlo SGD,
and the reduced-model interface every model kind implements.

Curated public API:

>>> from numerics import reduced, compiled, integrate, simulate, SimulationConfig
"""

from .codegen import generate
from .compiled import CompiledModel, compiled
from .expectation import ClosedForm, GaussHermite, MonteCarlo, QuasiMonteCarlo
from .montecarlo import direct_risk_mc
from .ode import Status, Trajectory, integrate
from .pgd import autograd_flow, projected_gd
from .reduced import HeadReduced, OverlapReduced, ReducedModel, reduced
from .sgd import SIMULATORS, SGDResult, SimulationConfig, simulate

__all__ = ["compiled", "CompiledModel", "generate", "ClosedForm", "GaussHermite", "MonteCarlo",
           "QuasiMonteCarlo", "direct_risk_mc", "integrate", "Trajectory", "Status", "projected_gd",
           "autograd_flow",
           "simulate", "SimulationConfig", "SGDResult", "SIMULATORS",
           "ReducedModel", "OverlapReduced", "HeadReduced", "reduced"]
