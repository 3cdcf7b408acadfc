"""Symbolic layer: model descriptions and everything SymPy derives from them.

Curated public API:

>>> from theory import Model, derive
>>> from theory.models import marion2025
>>> derived = derive(marion2025.MODEL)
>>> derived.risk, derived.flow.rhs
"""

from .derived import Derived, OverlapDerivation, derive, model_key
from .dynamics import OverlapFlow, overlap_flow
from .gaussian import GaussianExpectation, GaussianLaw, expect
from .quadrature import Integrated, QuadratureError, integrate
from .rebuild import evaluate_json, rebuild
from .model import GaussianToken, Geometry, Model, Param, SingleLocation, Vector, projection
from .risk import population_risk, projection_law
from .special import OwensT
from .stationary import StationaryPoint, classify, find_stationary_points, hessian

__all__ = [
    "Model", "Geometry", "Param", "Vector", "GaussianToken", "SingleLocation", "projection",
    "GaussianLaw", "GaussianExpectation", "expect", "OwensT",
    "integrate", "Integrated", "QuadratureError", "rebuild", "evaluate_json",
    "population_risk", "projection_law", "overlap_flow", "OverlapFlow",
    "derive", "Derived", "OverlapDerivation", "model_key",
    "hessian", "classify", "find_stationary_points", "StationaryPoint",
]
