"""Expectation rules behind one interface (see ``base``)."""

from .adaptive import Adaptive
from .base import Estimate, ExpectationRule
from .closed_form import ClosedForm
from .gauss_hermite import GaussHermite
from .monte_carlo import MonteCarlo
from .qmc import QuasiMonteCarlo

RULES = {"closed_form": ClosedForm, "gauss_hermite": GaussHermite, "adaptive": Adaptive,
         "qmc": QuasiMonteCarlo, "monte_carlo": MonteCarlo}

__all__ = ["Estimate", "ExpectationRule", "ClosedForm", "GaussHermite", "Adaptive", "QuasiMonteCarlo",
           "MonteCarlo", "RULES"]
