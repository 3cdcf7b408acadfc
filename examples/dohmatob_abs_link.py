"""Dohmatob's student with the link σ(t) = |t|: a link of your own in a file (a function of one
SymPy symbol). The Gaussian layer writes |u| = ReLU(u) + ReLU(−u); what has no closed form is
integrated by adaptive quadrature split at the kink, and evaluate states its error.

    python -m verification evaluate dohmatob2025 --param link=examples/dohmatob_abs_link.py:ABS
    python -m verification derive dohmatob2025 --param link=examples/dohmatob_abs_link.py:ABS
"""

import sympy as sp


def ABS(t):
    return sp.Abs(t)
