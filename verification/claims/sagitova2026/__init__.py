"""Claims of Sagitova, Duranthon, Zdeborová (2026), multi-head softmax attention in the
single-location model (model and claims: docs/models/sagitova2026.md, the suite's reading of the
paper), one module per section of the paper; importing this package registers them all.

- ``sec3_landscape``: the reduced loss (Prop. III.1) and the saddle Hessian (Lemma III.1);
- ``sec3_dynamics``: SGD → gradient flow (Prop. III.2), the symmetric manifold, the
  unspecialized phase (Prop. III.3);
- ``sec3_specialization``: the Θ(log D) escape (Prop. III.4), the sharp transition
  (Conj. III.1);
- ``sec3_sequential``: sequential specialization (Result III.1);
- ``sec4_bayes``: the Bayes estimator (Prop. IV.1), B-softmax attaining it (Prop. IV.2);
- ``sec4_expressivity``: softmax's gap (Prop. IV.3), softmax-1 and noise;
- ``sec4_trained_heads``: mixture directions, head pruning.

Shared helpers are in ``_common``; what the claims simulate (flows, SGD, Monte Carlo, optimised
heads, SymPy derivations) is in ``verification.simulations.sagitova2026``, one module per
section, each simulation stored apart from the judging here."""

from . import (sec3_landscape, sec3_dynamics, sec3_sequential,  # noqa: F401
               sec3_specialization, sec4_bayes, sec4_expressivity, sec4_trained_heads)
from ._common import quantile_text, small_init  # noqa: F401
