"""Kept for old imports: the Monte Carlo losses of the multi-head model now live in
``numerics.multihead.montecarlo`` (one engine path for the multi-head kind)."""

from .multihead.montecarlo import (bayes_loss, bayes_posterior, draw, finite_d_loss, reduced_loss,
                                   token_weights)

__all__ = ["draw", "token_weights", "reduced_loss", "bayes_posterior", "bayes_loss", "finite_d_loss"]
