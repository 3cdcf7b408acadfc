"""Finite-d Monte Carlo of the population risk at explicit vectors.

Builds vectors in R^d realising given overlaps (hidden = e_1..e_q), draws whole tokens in R^d
from the model's data law and averages (ŷ − y)², with an explicit seed and a standard error.
This is the reference the derived risk is checked against (no low-dimensional shortcut)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import sympy as sp

from theory.model import Model
from .expectation import Estimate
from .sgd.base import model_code, realise_overlaps, resolve_device

__all__ = ["direct_risk_mc"]


def direct_risk_mc(model: Model, params: Mapping[str, float], overlaps: Mapping[str, float],
                   n: int, seed: int, device: str = "cpu", chunk: int = 20_000) -> Estimate:
    """E(ŷ − y)² at the vectors realising ``overlaps`` in R^d (d = the model's dimension
    parameter), from ``n`` whole token sequences drawn in ``chunk``s with a torch generator
    seeded by ``seed``; (mean, standard error)."""
    import torch

    if n < 2:
        raise ValueError(f"n={n} must be >= 2 samples")
    p = model.check_params(params)
    dev = resolve_device(device)
    d = int(p[model.dimension.name])
    code = model_code(model)
    q, k = len(code.hidden), len(code.trainable)
    if d < q + k:
        raise ValueError(f"dimension d={d} must be >= {q + k}")
    C = realise_overlaps(model, overlaps)
    V = torch.zeros(q + k, d, dtype=torch.float64, device=dev)
    V[:, :q + k] = torch.as_tensor(C, dtype=torch.float64)
    subs = {s: p[s.name] for s in model.param_symbols}
    ev = lambda e: float(sp.sympify(e).subs(subs))
    L = int(ev(model.data.L))
    mean_s = torch.zeros(d, dtype=torch.float64, device=dev)
    mean_n = torch.zeros(d, dtype=torch.float64, device=dev)
    for a, c in model.data.signal.mean.items():
        mean_s[code.hidden.index(a)] = ev(c)
    for a, c in model.data.noise.mean.items():
        mean_n[code.hidden.index(a)] = ev(c)
    s_sig, s_noise, eps = ev(model.data.signal.scale), ev(model.data.noise.scale), ev(model.label_noise)
    pv = [p[s.name] for s in model.param_symbols]
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(seed))
    total, total2, done = 0.0, 0.0, 0
    while done < n:
        m = min(chunk, n - done)
        X = torch.randn(m, L, d, generator=gen, dtype=torch.float64, device=dev) * s_noise + mean_n
        J = torch.randint(L, (m,), generator=gen, device=dev)
        rows = torch.arange(m, device=dev)
        X[rows, J] = torch.randn(m, d, generator=gen, dtype=torch.float64, device=dev) * s_sig + mean_s
        P = X @ V.T                                                        # m, L, q+k
        ph, pw = P[..., :q], P[..., q:]
        t = code.student(*pv, *pw.unbind(-1), *ph.unbind(-1))[0].sum(-1)
        y = code.label(*pv, *ph[rows, J].unbind(-1))[0]
        y = y + eps * torch.randn(m, generator=gen, dtype=torch.float64, device=dev)
        e = (t - y) ** 2
        total += float(e.sum())
        total2 += float((e ** 2).sum())
        done += m
    mean = total / n
    var = max(total2 / n - mean**2, 0.0) * n / (n - 1)
    return Estimate(mean, float(np.sqrt(var / n)), dof=n - 1)
