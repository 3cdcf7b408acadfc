"""Dohmatob (NeurIPS 2025), "Understanding Softmax Attention Layers: Exact Mean-Field Analysis
on a Toy Problem" (OpenReview GiqeRe1NsY). Spec: shared/spec/dohmatob2025.md.

So far this file holds the paper's statements about the random energy model formed by the
e^{αd} dummy tokens (Eqs. 14–18), as the paper states them: they are what the claims check.
The engine's own derivation of the same constants is ``theory.rem.rem_constants``."""

import sympy as sp

from ..rem import alpha, beta

__all__ = ["alpha", "beta", "PAPER_BETA_C", "PAPER_PSI", "PAPER_R"]

PAPER_BETA_C = sp.sqrt(2 * alpha)
PAPER_PSI = sp.Piecewise((alpha / beta + beta / 2, beta <= PAPER_BETA_C), (PAPER_BETA_C, True))
PAPER_R = sp.Min(beta, PAPER_BETA_C)
