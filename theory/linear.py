"""Best linear predictor of the label from the tokens, derived from the model's data law.

For features f = (x_ℓᵀh_a)_{ℓ ≤ L, a hidden} (with an intercept) the best linear risk is
Var(y) − Cov(f, y)ᵀ Cov(f)⁻¹ Cov(f, y) + σ². Token components orthogonal to the hidden span are
centred, isotropic and independent of the hidden projections and of y, so adding them to the
features changes nothing: this is the best predictor linear in the whole of X
(Marion et al. 2025, Prop. 3)."""

from __future__ import annotations

import sympy as sp

from .model import Model, projection
from .risk import token_expectation

__all__ = ["best_linear_risk", "trivial_risk"]


def trivial_risk(model: Model) -> sp.Expr:
    """Risk of the best constant predictor: Var(y) + σ²."""
    Es = lambda e: token_expectation(model, model.data.signal, e)
    return sp.simplify(Es(model.label**2) - Es(model.label)**2 + model.label_noise**2)


def best_linear_risk(model: Model, L: int) -> sp.Expr:
    """Exact best linear risk for an integer number of tokens L (other parameters symbolic)."""
    if int(L) != L or L < 1:
        raise ValueError(f"L={L} must be a positive integer")
    data = model.data
    Es = lambda e: token_expectation(model, data.signal, e)
    En = lambda e: token_expectation(model, data.noise, e)
    hs = [projection(h) for h in model.hidden]
    s = model.label
    feats = [(l, a) for l in range(L) for a in range(len(hs))]
    Ls = sp.Integer(L)
    # E over the location J (uniform): the token is the signal one with probability 1/L
    mean = {f: (Es(hs[f[1]]) + (Ls - 1) * En(hs[f[1]])) / Ls for f in feats}
    Ey = Es(s)

    def second(f, g):
        (l, a), (m, b) = f, g
        if l == m:
            return (Es(hs[a] * hs[b]) + (Ls - 1) * En(hs[a] * hs[b])) / Ls
        other = (Es(hs[a]) * En(hs[b]) + En(hs[a]) * Es(hs[b])) / Ls
        return other + (Ls - 2) / Ls * En(hs[a]) * En(hs[b])

    def with_y(f):
        l, a = f
        return (Es(hs[a] * s) + (Ls - 1) * En(hs[a]) * Es(s)) / Ls

    n = len(feats)
    cov = sp.Matrix(n, n, lambda i, j: second(feats[i], feats[j]) - mean[feats[i]] * mean[feats[j]])
    c = sp.Matrix([with_y(f) - mean[f] * Ey for f in feats])
    var_y = Es(s**2) - Ey**2
    try:
        explained = sp.cancel((c.T * cov.LUsolve(c))[0, 0])
    except (ValueError, ZeroDivisionError):  # singular feature covariance
        explained = (c.T * cov.pinv() * c)[0, 0]
    return sp.simplify(var_y - explained + model.label_noise**2)
