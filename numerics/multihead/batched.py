"""The multi-head reduced flow's right-hand side at K states in one call.

``ReducedFlow.rhs`` evaluates the flow's quasi-Monte Carlo expectations (``flow`` module) at one
state; at a few thousand draws most of its time is the per-call cost of the generated code's
elementwise operations, not arithmetic, so K states cost nearly K times one. ``rhs_batch``
evaluates the same generated code once on all K states' logits (K × n draws per argument) and
averages per state: the same estimator on the same draws, so each row equals ``flow.rhs`` of
that state up to the rounding of the summation order. With ``numerics.ode.batched`` it
integrates many initial conditions of one flow at once (``integrate_batch``).

It is a function of a :class:`~numerics.multihead.flow.ReducedFlow` (its model, draws, noise
strength and generated code) rather than a method, so the flow module stays as it is.
"""

from __future__ import annotations

import numpy as np

from ..ode.batched import rk45_until_batch
from .flow import ReducedFlow
from .state import HeadState

__all__ = ["rhs_batch", "integrate_batch"]


def _unpack(Y, H, F):
    """Packed states (K × P, ``HeadState.pack`` order) as arrays m (K,H,F), r (K,H,H), b, v."""
    iu = np.triu_indices(H)
    k, nr = H * F, len(iu[0])
    m = Y[:, :k].reshape(-1, H, F)
    r = np.zeros((len(Y), H, H))
    r[:, iu[0], iu[1]] = Y[:, k:k + nr]
    r = r + np.swapaxes(np.triu(r, 1), -1, -2)
    return m, r, Y[:, k + nr:k + nr + H], Y[:, k + nr + H:k + nr + 2 * H]


def _check_width(Y, H, F):
    """A ValueError unless the last axis of ``Y`` is one packed state of H heads, F features."""
    P = H * F + H * (H + 1) // 2 + 2 * H
    if Y.shape[-1] != P:
        raise ValueError(f"Y has {Y.shape[-1]} coordinates per state; the {H}-head, {F}-feature "
                         f"state has {P}")


def rhs_batch(flow: ReducedFlow, Y) -> np.ndarray:
    """d(m, r, b, v)/dτ at each row of ``Y`` (K × P packed states): row k equals
    ``flow.rhs(Y[k])`` (same draws, same estimator), computed in one call of the generated code.

    ω = g Rᵀ with the root R = U√Λ of each state's r = UΛUᵀ (eigenvalues clipped at 0), the
    root ``HeadState.residual_root`` gives ``ReducedFlow``. The row sums run over the K × n
    draws at once, so a row can differ from ``flow.rhs`` in the last bits, and with K."""
    md, xp = flow.model, flow.xp
    H, L, F = md.H, md.L, md.F
    Y = np.atleast_2d(np.asarray(Y, float))
    _check_width(Y, H, F)
    m, r, b, v = _unpack(Y, H, F)
    lam, U = np.linalg.eigh(r)
    R = U * np.sqrt(np.clip(lam, 0, None))[:, None, :]
    as_x = ((lambda a: xp.as_tensor(a, dtype=xp.float64, device=flow.device)) if xp is not np
            else (lambda a: np.asarray(a, float)))
    chi, g = flow._chi(), flow._g                                    # n × L × F, n × L × H
    # logits laid out (h, l, k, n) so that each generated-code argument is one contiguous K × n
    s = (xp.einsum("nlf,khf->hlkn", chi, as_x(m)) + xp.einsum("nlj,khj->hlkn", g, as_x(R))
         + as_x(b).T[:, None, :, None])
    args = [s[h, l] for h in range(H) for l in range(L)] + [as_x(v[:, h:h + 1]) for h in range(H)]
    out = flow._flow_code(*args)
    flow.nfev += len(Y)
    n = chi.shape[0]
    nb = H * (H + 1) // 2
    G = xp.stack(out[:H * L]).reshape(H, L, len(Y), n)
    dm = -xp.einsum("hlkn,nlf->khf", G, chi) / n
    pos = H * L
    K = xp.stack(out[pos:pos + L * nb]).reshape(L, nb, len(Y), n).sum((0, 3)).T / n
    db = -G.sum((1, 3)).T / n
    pos += L * nb
    parts = {"m": flow._np(dm).reshape(len(Y), H * F), "K": flow._np(K), "b": flow._np(db)}
    if md.trains_sinks:
        parts["v"] = flow._np(-xp.stack(out[pos:pos + H]).sum(-1).T / n)
        pos += H
    N = flow._np(xp.stack(out[pos:pos + nb]).sum(-1).T / n) if flow.kappa > 0 else None
    if not all(np.all(np.isfinite(a)) for a in (*parts.values(), *(() if N is None else (N,)))):
        raise FloatingPointError("reduced flow: non-finite integrand (logits too large?)")
    dr = flow._dr(parts["K"], N, r)
    dv = parts.get("v", np.zeros((len(Y), H)))
    return np.concatenate([parts["m"], dr, parts["b"], dv], 1)


def integrate_batch(flow: ReducedFlow, Y0, t_eval, reached=None, chunk=None, rtol=1e-6, atol=1e-12,
                    name: str | None = None):
    """The flow from each row of ``Y0`` (K × P packed states) at the output times ``t_eval``,
    each by its own RK45 (``numerics.ode.batched.rk45_until_batch``: the numbers of integrating
    it alone with scipy's RK45, up to the rounding of the batched right-hand side), the
    right-hand sides of all rows still running in one ``rhs_batch`` call. ``reached(y)`` ends a
    row at its first output state where it holds; ``chunk`` restarts each row's solver every
    ``chunk`` output intervals. Returns K pairs (times, packed states). Each initial state is
    checked first (finite, r positive semi-definite), as ``HeadReduced.check_state`` does; errors
    name ``name`` (default: the flow's class) and the row."""
    md = flow.model
    Y0 = np.atleast_2d(np.asarray(Y0, float))
    for k, y in enumerate(Y0):
        try:
            _check_width(y, md.H, md.F)
            st = HeadState.unpack(y, md.H, md.F)
            HeadState.make(st.m, st.r, st.b, st.v)
        except ValueError as exc:
            raise ValueError(f"Y0 row {k}: {exc}") from None
    return rk45_until_batch(lambda t, Y: rhs_batch(flow, Y), Y0, t_eval, reached=reached,
                            chunk=chunk, rtol=rtol, atol=atol, name=name or type(flow).__name__)

