"""Marion et al.'s attention with an activation of your own: a SymPy function with its
derivative and its numeric implementations (the protocol of docs/functions.md).

    python -m verification derive examples/marion_user_function.py
    python -m verification evaluate examples/marion_user_function.py --param lam=1.2
"""

import numpy as np
import sympy as sp

from theory.models.marion2025 import DEFAULT_PARAMS, DEFAULT_STATE, build  # noqa: F401 (CLI defaults)


class sigmoid(sp.Function):
    """σ(t) = 1/(1 + e⁻ᵗ), with σ′ = σ(1 − σ)."""

    nargs = 1

    def fdiff(self, argindex=1):
        s = sigmoid(self.args[0])
        return s * (1 - s)

    numpy = staticmethod(lambda x: 0.5 * (1 + np.tanh(x / 2)))   # no overflow for large |x|

    @staticmethod
    def torch(x):
        import torch
        return torch.sigmoid(x)


MODEL = build(activation=sigmoid, name="marion-sigmoid")
