"""The multi-head model kind (Sagitova et al. 2026) in numbers, one concern per module:

* ``state``: :class:`HeadState`, the order parameters (m, r, b, v), and ``head_state_names``
  (their packed coordinates' names, m[h,f], r[h,k], b[h], v[h]);
* ``weights``: the activations' weights as generated numpy/torch code (``weights_function``);
* ``draws``: common random numbers of the reduced flow (``draws_for``), ``mean_and_se``,
  ``first_passage``;
* ``flow``: :class:`ReducedFlow`, the reduced loss and gradient flow on (m, r, b, v) (built
  through ``numerics.reduced.HeadReduced``, the kind's reduced model, as its ``.flow``);
* ``optimise``: ``minimise``, L-BFGS-B on the reduced loss;
* ``montecarlo``: plain Monte Carlo of the reduced and finite-D losses and the Bayes risk.

The SGD simulators are in ``numerics.sgd.multihead`` and ``numerics.sgd.multihead_gram``.
"""

from .draws import FlowDraws, draws_for, first_passage, mean_and_se
from .flow import ReducedFlow
from .montecarlo import bayes_loss, bayes_posterior, draw, finite_d_loss, reduced_loss, token_weights
from .optimise import minimise
from .state import HeadState, head_state_names
from .weights import WeightsFunction, weights_function

__all__ = ["HeadState", "head_state_names", "FlowDraws", "ReducedFlow", "draws_for", "mean_and_se",
           "first_passage", "minimise", "weights_function", "WeightsFunction", "draw", "reduced_loss",
           "finite_d_loss", "bayes_posterior", "bayes_loss", "token_weights"]
