"""Claims of Marion, Berthier, Biau, Boyer (ICLR 2025), arXiv 2410.01537: erf attention on
single-location regression. Model and claims: docs/models/marion2025.md.

One module per part of the paper: ``sec3_risk`` (the risk in closed form, the linear baseline,
the Bayes limit: Thm 1, Prop. 3, Cor. 2), ``sec5_dynamics`` (the invariant manifold, the saddle,
convergence of projected gradient descent: Sec. 5, Thm 5) and ``sgd`` (the engine's own claim
that online SGD follows the reduced ODE). Shared helpers are in ``_common``; what the claims
simulate is in ``verification.simulations.marion2025``. Importing this package registers every
claim.

Each claim declares what its statement quantifies over (``_common.DOMAIN``: (d, L, λ, γ, ε), or
a part of it where d is swept inside a setting, as in Cor. 2 and the SGD claim) and judges one
setting at a time; its ``points`` are the settings the quick and full profiles judge.

Each check takes the model (and, where the claim is a formula, the formula) as keyword
arguments defaulting to the paper's, so that a deliberately wrong one can be fed in; the wrong
ones each claim must refute are declared in ``@claim(mutations=...)``."""

from . import sec3_risk, sec5_dynamics, sgd  # noqa: F401
from ...simulations.marion2025.common import TERMS, risk_term  # noqa: F401
