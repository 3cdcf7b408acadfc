"""The policies of the check library (``verification.checks``), one module each: what they
decide with (``contract``: the ledger, the error contract, ``Check``) and each kind of
comparison (``estimate``, ``limit``, ``extrapolate``, ``trend``, ``sequential``, ``exact``, ``realisable``).
This index keeps the names importable from one place."""

from .contract import (DECISIONS, MAX_EVIDENCE_ROWS, PERTURBATIONS, Z95, Check, Contract, Family,
                       Ledger, check_perturbation, combine, critical_value, legs_summary,
                       perturbed, welch_dof)
from .estimate import estimate_vs_theory
from .exact import exact
from .extrapolate import CORRECTIONS, Correction, extrapolate
from .limit import FINITE_SIZE_TERMS, limit
from .realisable import OutsideRealisableSet, realisable
from .sequential import confidence_sequence_radius, sequential
from .trend import panel_trend, trend

__all__ = ["Z95", "PERTURBATIONS", "check_perturbation", "perturbed", "Contract", "Family",
           "Ledger", "Check", "OutsideRealisableSet", "critical_value", "welch_dof",
           "estimate_vs_theory", "limit", "FINITE_SIZE_TERMS", "extrapolate", "CORRECTIONS",
           "Correction", "trend", "sequential",
           "confidence_sequence_radius", "exact", "panel_trend", "realisable", "combine", "legs_summary",
           "MAX_EVIDENCE_ROWS", "DECISIONS"]
