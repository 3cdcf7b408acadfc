"""Marion et al.'s attention with tanh in place of erf: a variant in a file of its own.

    python -m verification derive examples/marion_tanh.py --on theta=0,eta=0,rho=0
    python -m verification evaluate examples/marion_tanh.py --param lam=1.2
"""

import sympy as sp

from theory.models.marion2025 import DEFAULT_PARAMS, DEFAULT_STATE, build  # noqa: F401 (CLI defaults)

MODEL = build(activation=sp.tanh, name="marion-tanh")
