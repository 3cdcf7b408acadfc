"""Projected gradient descent on the population risk, in R^d, by torch autograd.

u ← (u − s·P⊥_u∇_uR)/‖u − s·P⊥_u∇_uR‖ on the sphere, w ← w − s·∇_wR for free vectors, where
R(w) = R̄(overlaps(w)) is the derived risk evaluated by the generated torch code. The
gradient here comes from autograd through the overlaps, independently of the symbolic
Gram-matrix chain rule used by the overlap flow."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from theory.model import Model
from .compiled import compiled
from .sgd.base import realise_overlaps

__all__ = ["vectors_from_overlaps", "overlaps_of", "projected_gd", "autograd_flow"]


def vectors_from_overlaps(model: Model, overlaps: Mapping[str, float], d: int):
    import torch
    C = realise_overlaps(model, overlaps)
    n = C.shape[0]
    if d < n:
        raise ValueError(f"d={d} must be >= {n}")
    V = torch.zeros(n, d, dtype=torch.float64)
    V[:, :n] = torch.as_tensor(C)
    q = len(model.hidden)
    return V[:q], V[q:].clone()


def overlaps_of(model: Model, H, W):
    """Order parameters (model order) of trainable rows W and hidden rows H."""
    import torch
    names = [v.name for v in model.trainable] + list(model.hidden)
    V = torch.cat([W, H], 0)
    G = V @ V.T
    return torch.stack([G[names.index(a), names.index(b)] for (a, b) in model.overlaps])


def autograd_flow(model: Model, params, overlaps, d: int | None = None):
    """d/dt of the overlaps under projected gradient flow, with ∇ from autograd (reference for
    the symbolic flow)."""
    import torch
    cm = compiled(model, "torch")
    p = model.check_params(params)
    d = d or int(p[model.dimension.name])
    H, W = vectors_from_overlaps(model, overlaps, max(d, len(model.vectors)))
    W.requires_grad_(True)
    R = cm.risk(p, overlaps_of(model, H, W), check=False)
    (g,) = torch.autograd.grad(R, W)
    with torch.no_grad():
        vel = -g.clone()
        for i, v in enumerate(model.trainable):
            if v.constraint == "sphere":
                vel[i] += (g[i] @ W[i]) * W[i]
        Wd = W.detach()
        eps = 1e-7  # exact for the bilinear overlaps: d/dt G = Ġ via the product rule
        names = [v.name for v in model.trainable] + list(model.hidden)
        V, Vd = torch.cat([Wd, H]), torch.cat([vel, torch.zeros_like(H)])
        Gd = Vd @ V.T + V @ Vd.T
        return np.array([float(Gd[names.index(a), names.index(b)]) for (a, b) in model.overlaps])


def projected_gd(model: Model, params, init, step: float, n_steps: int,
                 record_every: int = 100, d: int | None = None):
    """PGD from one initial overlap dict or a list of them (batched: one run per init).
    Returns (steps, overlaps[record, run, K], risk[record, run], max_increase[run]), the last
    being the largest one-step increase of the risk (> 0: the step is too large for descent)."""
    import torch
    if not step > 0:
        raise ValueError(f"step={step} must be > 0")
    inits = [init] if isinstance(init, Mapping) else list(init)
    cm = compiled(model, "torch")
    p = model.check_params(params)
    d = d or int(p[model.dimension.name])
    pairs = [vectors_from_overlaps(model, i, d) for i in inits]
    H = pairs[0][0]
    W = torch.stack([w for _, w in pairs])                                  # runs, p, d
    names = [v.name for v in model.trainable] + list(model.hidden)
    idx = [(names.index(a), names.index(b)) for (a, b) in model.overlaps]
    sphere = torch.tensor([v.constraint == "sphere" for v in model.trainable])[None, :, None]

    def overlaps(W):
        V = torch.cat([W, H.expand(W.shape[0], -1, -1)], 1)
        G = V @ V.transpose(1, 2)
        return torch.stack([G[:, i, j] for i, j in idx], -1)

    ks, qs, rs = [], [], []
    prev, max_inc = None, np.full(len(inits), -np.inf)
    for k in range(n_steps + 1):
        W.requires_grad_(True)
        ov = overlaps(W)
        R = cm.risk(p, ov, check=False)
        now = R.detach().numpy()
        if prev is not None:
            max_inc = np.maximum(max_inc, now - prev)
        prev = now.copy()
        if k % record_every == 0 or k == n_steps:
            ks.append(k)
            qs.append(ov.detach().numpy().copy())
            rs.append(R.detach().numpy().copy())
        if k == n_steps:
            break
        (g,) = torch.autograd.grad(R.sum(), W)
        with torch.no_grad():
            W = W.detach()
            radial = (g * W).sum(-1, keepdim=True)
            g = torch.where(sphere, g - radial * W, g)
            W = W - step * g
            W = torch.where(sphere, W / W.norm(dim=-1, keepdim=True), W)
    qs = np.array(qs)
    if not np.all(np.isfinite(qs)):
        raise FloatingPointError("projected_gd: overlaps became non-finite")
    return np.array(ks), qs, np.array(rs), max_inc
