"""Minimisation of the common-random-number reduced loss of a :class:`ReducedFlow` over the
heads' order parameters (L-BFGS-B on the exact pathwise gradient), for best-risk searches."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .state import HeadState

__all__ = ["minimise"]


class _Parametrisation:
    """x ↔ (m, A, b, v) with r = AAᵀ, A lower triangular (or A = 0 when not ``residual``)."""

    def __init__(self, H: int, F: int, residual: bool, sinks: bool):
        self.H, self.F, self.residual, self.sinks = H, F, residual, sinks
        self.il = np.tril_indices(H)
        self.nA = len(self.il[0]) if residual else 0

    def unpack(self, x):
        H, F, nA = self.H, self.F, self.nA
        m = x[:H * F].reshape(H, F)
        A = np.zeros((H, H))
        if self.residual:
            A[self.il] = x[H * F:H * F + nA]
        b = x[H * F + nA:H * F + nA + H]
        v = x[H * F + nA + H:] if self.sinks else np.zeros(H)
        return m, A, b, v

    def pack(self, m, A, b, v):
        parts = [np.ravel(m)] + ([A[self.il]] if self.residual else []) + [b]
        return np.concatenate(parts + ([v] if self.sinks else []))

    def start(self, st: HeadState):
        H = self.H
        A0 = np.linalg.cholesky(st.r + 1e-12 * np.eye(H)) if self.residual else np.zeros((H, H))
        return self.pack(st.m, A0, st.b, st.v)

    def box(self, bound):
        bm, bA, bb = bound
        H, F = self.H, self.F
        return ([(-bm, bm)] * (H * F) + [(-bA, bA)] * self.nA + [(-bb, bb)] * H
                + ([(-bb, bb)] * H if self.sinks else []))


def minimise(flow, starts: Iterable[HeadState], max_iter: int = 500, residual: bool = True,
             bound=(15.0, 5.0, 150.0)):
    """Lowest loss found by L-BFGS-B from each start (HeadStates) on the exact gradient of
    ``flow``'s common-random-number loss (``ReducedFlow.loss_and_gradient``; ``flow`` is a
    reduced model's ``HeadReduced.flow``); r = AAᵀ with A lower triangular (``residual=False``
    keeps r = 0). ``bound`` = (|m|, |A|, |b| and |v|) box
    limits keeping the logits far from float64 overflow. Returns (best state, its loss on these
    draws, all (state, loss)); the loss on the draws it was optimised on is biased low:
    re-evaluate on fresh draws."""
    from scipy.optimize import minimize
    md = flow.model
    par = _Parametrisation(md.H, md.F, residual, md.trains_sinks)

    def fun(x):
        m, A, b, v = par.unpack(x)
        try:
            loss, gm, gA, gb, gv = flow.loss_and_gradient(m, A, b, v)
        except FloatingPointError:      # overflowing logits: make the line search back off
            return 1e6, np.zeros_like(x)
        return loss, par.pack(gm, gA, gb, gv)
    found = []
    box = par.box(bound)
    lo, hi = [a for a, _ in box], [c for _, c in box]
    for st in starts:
        x0 = np.clip(par.start(st), lo, hi)
        res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=box, options={"maxiter": max_iter})
        if res.fun >= 1e6:
            continue
        m, A, b, v = par.unpack(res.x)
        found.append((HeadState(m, A @ A.T, b, v), float(res.fun)))
    if not found:
        raise FloatingPointError("minimise: every start overflowed")
    best = min(found, key=lambda t: t[1])
    return best[0], best[1], found
