"""What Dohmatob's REM claims simulate (``verification/claims/dohmatob2025/rem_constants.py``
judges): extreme-value samples of log Z and of Gibbs averages at e^{αd} levels, and the
engine's own Laplace-method REM constants at a setting."""

from __future__ import annotations

import numpy as np
import sympy as sp

from numerics.rem import extreme_value_sample, gibbs_average_estimate
from theory.models import dohmatob2025 as dm
from theory.rem import rem_constants

from ..base import simulation

__all__ = ["rem_piece", "gibbs_piece", "laplace_constants", "TEST_FUNCTIONS"]

TEST_FUNCTIONS = {"t": lambda t: t, "t^2": lambda t: t**2, "tanh": np.tanh}
"""The test functions F of Props. 12–13, by name."""


@simulation(seeded=False)
def rem_piece(sim, item):
    """One (α, β, d): the mean and standard error of (βd)⁻¹ log Z and of the Gibbs mean over
    ``item['n']`` extreme-value samples drawn with ``item['seed']``."""
    n = item["n"]
    s = extreme_value_sample(item["alpha"], item["beta"], item["d"], n, seed=item["seed"])
    return [[float(s.free_energy.mean()), float(s.gibbs_mean.mean())],
            [float(s.free_energy.std(ddof=1) / np.sqrt(n)),
             float(s.gibbs_mean.std(ddof=1) / np.sqrt(n))]]


@simulation(seeded=False)
def gibbs_piece(sim, item):
    """One (α, β, ρ, d): per test function, the mean, standard error and bulk rule's
    quadrature error of its Gibbs average over ``item['n']`` samples (the same levels for
    every F, drawn with ``item['seed']``; ``numerics.rem.gibbs_average_estimate``)."""
    ests = [gibbs_average_estimate(TEST_FUNCTIONS[name], item["alpha"], item["beta"],
                                   item["d"], item["rho"], item["n"], item["seed"])
            for name in TEST_FUNCTIONS]
    return [[float(getattr(e, k)) for e in ests] for k in ("value", "stderr", "quadrature_error")]


@simulation(seeded=False)
def laplace_constants(sim, item):
    """The engine's Laplace-method ψ and r (``theory.rem.rem_constants``): their formulas as
    text, and their exact values at (α, β) = (``item["alpha"]``, ``item["beta"]``), exact
    texts, as ``srepr`` (read back with ``sympy.sympify``)."""
    derived = rem_constants()
    at = {dm.alpha: sp.Rational(item["alpha"]), dm.beta: sp.Rational(item["beta"])}
    return {"psi": str(derived["psi"]), "r": str(derived["r"]),
            "psi_at": sp.srepr(derived["psi"].subs(at)), "r_at": sp.srepr(derived["r"].subs(at))}
