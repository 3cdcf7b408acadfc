"""The e^{αd}-token softmax risk Monte Carlo of ``numerics.rem`` in torch: the same
extreme-value algorithm (top K levels exact in log space, the bulk by its truncated-Gaussian
moments), batched over samples, on any device (CUDA when present). ``numerics.rem`` (NumPy/
SciPy) is its reference in the tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
import math
from typing import TYPE_CHECKING

import numpy as np

from .expectation import Estimate
from .rem import BULK_RULE, _bulk_nodes, _check, _log_trunc_moments, doubled
from .sgd.base import resolve_device

if TYPE_CHECKING:
    import torch

__all__ = ["ndtri_exp", "softmax_risk_mc_torch"]

_LOG_2PI = math.log(2 * math.pi)


def _log_phi(x):
    return -x * x / 2 - _LOG_2PI / 2


def ndtri_exp(y: torch.Tensor) -> torch.Tensor:
    """x with log Φ(x) = y for y < 0 (Φ⁻¹ in log space, no underflow for y down to −10⁶):
    a tail asymptotic or Φ⁻¹(eʸ) to start, then Newton on log Φ."""
    import torch
    from torch.special import log_ndtr, ndtri
    y = torch.clamp(y, max=-1e-300)
    t = torch.sqrt(torch.clamp(-2 * y, min=1e-300))
    tail = -torch.sqrt(torch.clamp(t * t - torch.log(torch.clamp(t * t, min=1e-300)) - _LOG_2PI, min=0.0))
    x = torch.where(y > -30, ndtri(torch.exp(y).clamp(max=1 - 1e-16)), tail)
    for _ in range(2):       # quadratic convergence: 2 steps reach float64 accuracy
        lp = log_ndtr(x)
        step = (lp - y) * torch.exp(lp - _log_phi(x))
        x = x - torch.clamp(step, -5, 5)
    return x


def softmax_risk_mc_torch(link: Callable[[torch.Tensor], torch.Tensor], alpha: float, beta: float,
                          gamma: float, d: float, overlaps: Mapping[str, float], n_samples: int,
                          seed: int, top_k: int = 2000, device: str = "auto",
                          dtype: str = "float64", quadrature_error: bool = False) -> Estimate:
    """Same estimator as ``numerics.rem.softmax_risk_mc`` (docstring there: the return value
    and ``quadrature_error``); ``link`` acts on torch tensors."""
    import torch
    from torch.special import log_ndtr
    _check(alpha, beta, d, n_samples)
    if not 0 < gamma < 1:
        raise ValueError(f"gamma={gamma!r} must be in (0, 1)")
    dev, dt = resolve_device(device), getattr(torch, dtype)
    mu, nu, zeta, eta, rho = (float(overlaps[k]) for k in ("mu", "nu", "zeta", "eta", "rho"))
    G = np.array([[1, rho, eta], [rho, 1, nu], [eta, nu, 1.0]])
    if np.linalg.eigvalsh(G).min() < -1e-10:
        raise ValueError(f"overlaps {overlaps} are not realisable (Gram of u, v, v* not PSD)")
    lam, U = np.linalg.eigh(G)
    A = torch.as_tensor(U * np.sqrt(np.clip(lam, 0, None)), dtype=dt, device=dev)
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    randn = lambda *s: torch.randn(*s, generator=gen, dtype=dt, device=dev)
    c, sd = math.sqrt(1 - gamma**2), math.sqrt(d)
    mean = torch.tensor([mu, zeta, 0.0], dtype=dt, device=dev) * c * sd
    sec = mean + gamma * randn(n_samples, 3) @ A.T
    # top K levels: upper-tail probabilities Γ_j/N, E_(j) = −√d Φ⁻¹(Γ_j/N) in log space
    logN = alpha * d
    K = int(min(top_k, max(1, np.floor(np.exp(min(logN, 700)) / 2))))
    expo = -torch.log(torch.rand(n_samples, K, generator=gen, dtype=dt, device=dev).clamp(min=1e-300))
    logS = torch.log(torch.cumsum(expo, 1)) - logN
    E_top = -sd * ndtri_exp(logS)
    tau = E_top[:, -1]
    # bulk: N − K levels below τ, conditional mean and CLT fluctuation of their Boltzmann sum
    a1 = (tau - beta * d) / sd
    log_m1, _, log_m2, log_p = _log_trunc_moments(beta, d, tau, log_ndtr=log_ndtr, exp=torch.exp)
    log_rest = math.log(math.expm1(logN) - K) if logN < 30 else logN + math.log1p(-K * math.exp(-logN))
    log_mean = log_rest + log_m1 - log_p
    ratio = torch.clamp(2 * (log_m1 - log_p) - (log_m2 - log_p), max=-1e-300)
    log_var = (log_m2 - log_p) + torch.log(-torch.expm1(ratio))
    rel_sd = torch.exp(0.5 * (log_rest + log_var) - log_mean)
    log_bulk = log_mean + torch.log(torch.clamp(1 + rel_sd * randn(n_samples), min=1e-12))
    logZ = torch.logaddexp(torch.logsumexp(beta * E_top, 1), log_bulk)
    # Gibbs average of σ(x_ℓᵀv), x_ℓᵀv = ρ·E_ℓ/√d + √(1−ρ²)·z_ℓ
    s = math.sqrt(1 - rho**2)
    top = link(rho * E_top / sd + s * randn(n_samples, K))
    w_top = torch.exp(beta * E_top - logZ[:, None])
    rules = (BULK_RULE, doubled(BULK_RULE)) if quadrature_error else (BULK_RULE,)
    log_secret = beta * sd * sec[:, 0]
    p = torch.exp(log_secret - torch.logaddexp(log_secret, logZ))
    secret, target = p * link(sec[:, 1]), link(sec[:, 2])
    top_avg, w_bulk = (w_top * top).sum(1), torch.exp(log_bulk - logZ)
    es = []
    for rule in rules:
        u, wu, z, wz = (torch.as_tensor(x, dtype=dt, device=dev) for x in _bulk_nodes(*rule))
        E_b = beta * d + sd * ndtri_exp(torch.log(u)[None, :] + log_ndtr(a1)[:, None])
        vals = link(rho * E_b[:, :, None] / sd + s * z[None, None, :])
        avg = top_avg + w_bulk * torch.einsum("nuz,u,z->n", vals, wu, wz)
        es.append((secret + (1 - p) * avg - target) ** 2)
    if not all(torch.isfinite(e).all() for e in es):
        raise FloatingPointError("softmax_risk_mc_torch: non-finite risk samples")
    mean = float(es[0].mean())
    q = abs(mean - float(es[1].mean())) if quadrature_error else math.nan
    return Estimate(mean, float(es[0].std() / math.sqrt(n_samples)), dof=n_samples - 1,
                    quadrature_error=q)
