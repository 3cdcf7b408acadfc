"""Marion et al.'s attention with softplus in place of erf, written as the formula it is.

Any composition of SymPy's functions works as the activation (docs/functions.md): the Gaussian
layer finds the linear form the factor depends on, and what has no closed form is evaluated by
Gauss–Hermite nodes in the generated code.

    python -m verification derive examples/marion_softplus.py --on theta=0,eta=0,rho=0
    python -m verification evaluate examples/marion_softplus.py --param lam=1.2
"""

import sympy as sp

from theory.models.marion2025 import DEFAULT_PARAMS, DEFAULT_STATE, build  # noqa: F401 (CLI defaults)


def softplus(t):
    """log(1 + eᵗ)."""
    return sp.log(1 + sp.exp(t))


MODEL = build(activation=softplus, name="marion-softplus")
