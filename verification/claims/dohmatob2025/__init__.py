"""Claims of Dohmatob (NeurIPS 2025), softmax attention in the random-energy-model regime.
Model and claims: docs/models/dohmatob2025.md. One module per section of the spec; importing the package
registers every claim, in the order of the spec's file:

* ``rem_constants``: REM constants (Eqs. 14–18), Gibbs averages (Props. 12–13):
  extreme-value sampling, d → ∞;
* ``risk``: Prop. 1 per link, Cor. 1, Prop. 2 per link (+ the phase diagram): Monte Carlo at
  L − 1 = e^{αd} tokens against the paper's R̄, extrapolated in d;
* ``flow_on_M``: Props. 5, 6, 3 per link: symbolic, on the flow the engine derives from R̄;
* ``stationary_points``: Props. 7, 9, 10 per link (exact arithmetic at several d);
* ``stationary_linear``: Prop. 4 (root finding on the full overlap flow, linear link);
* ``fig2``: PGD on an empirical risk in R^d against R̄ along the trajectory;
* ``sec5_convergence``: Sec. 5 global convergence (the flow in vector coordinates) and the
  rebuttal's descent lemma (PGD in R^d).

Each claim judges what it simulates through ``Context.map``: the simulations (Monte Carlo,
R̄ by quadrature, symbolic simplification, exact stationary points, ODE and PGD runs) are in
``verification.simulations.dohmatob2025``, one module per section module here, stored apart
from the judging. Shared judging helpers (per-link registration, the stationary-point
settings, the declared formula mutations) live in ``_common``.

``link_variants(link, claims)`` re-runs the per-link claims with a link of the user's (a SymPy
Lambda of one variable, or a function of one SymPy symbol) as variants of the paper's claims
(``Claim.variant``: ids ``dohmatob2025:<claim>@<link>``); their items hold the link as a
``Link`` (its SymPy Lambda keys them), so their simulations are stored like the paper's.

R̄ and its flow come from the reduced model the command line shows
(``numerics.reduced.registry.dohmatob_reduced``: the overlap flow on the Gram structure of
(u, v; u*, v*)); the symbolic checks use its derivations, the numerical ones code generated
from them at exact parameter values (in vector coordinates: the engine's frame flow of its
geometry and risk)."""

# registration order = the spec's order (isort would reorder it); the shared helpers that
# tests call through a public name are re-exported from ``_common``
from ._common import (PER_LINK, STATIONARY_SETTINGS, deciding_column, flow_on_M_2d,  # noqa: F401, I001
                      link_variants, numeric_risk, paper_stationary, reduced_model,
                      stationary_points_uncached)
from . import rem_constants  # noqa: F401, I001
from . import risk  # noqa: F401, I001
from . import flow_on_M  # noqa: F401, I001
from . import stationary_points  # noqa: F401, I001
from . import stationary_linear  # noqa: F401, I001
from . import fig2  # noqa: F401, I001
from . import sec5_convergence  # noqa: F401, I001
