"""Numerical layer: generated code, expectation rules, ODE integration, Monte Carlo SGD,
the reduced-model interface every model kind implements, and the registry of kinds.

Curated public API:

>>> from numerics import reduced, compiled, integrate, simulate, SimulationConfig, kind_of
"""

from .codegen import generate
from .compiled import CompiledModel, compiled
from .expectation import ClosedForm, GaussHermite, MonteCarlo, QuasiMonteCarlo
from .kinds import KINDS, SIMULATORS, Kind, kind_of, register, simulate, unregister
from .montecarlo import direct_risk_mc
from .ode import Status, Trajectory, integrate
from .pgd import autograd_flow, projected_gd
from .reduced import HeadReduced, OverlapReduced, ReducedModel, reduced
from .sgd import SGDResult, SimulationConfig

from . import models  # noqa: F401, I001  the built-in kinds register; last, they use all above

__all__ = ["compiled", "CompiledModel", "generate", "ClosedForm", "GaussHermite", "MonteCarlo",
           "QuasiMonteCarlo", "direct_risk_mc", "integrate", "Trajectory", "Status", "projected_gd",
           "autograd_flow",
           "simulate", "SimulationConfig", "SGDResult", "SIMULATORS",
           "Kind", "KINDS", "kind_of", "register", "unregister",
           "ReducedModel", "OverlapReduced", "HeadReduced", "reduced"]
