"""Losses of the multi-head single-location model (Sagitova et al. 2026) by Monte Carlo.

``reduced_loss``: the D → ∞ loss as an expectation over θ, the L·F spike projections and the
L·H residual logits, Δ² + E Σ_ℓ([ℓ = ε] − w_ℓ)² with w = (1/H)Σ_h A_h (the value z is
independent of the logits); ε = 1 by exchangeability of the tokens. Common random numbers:
the same seed gives the same draws for every parameter value. ``finite_d_loss``: the same
loss with whole tokens in R^D. ``bayes``: the posterior P(ε = ℓ | X) ∝ E_θ exp(θᵀχ*_ℓ − ‖θ‖²/2)
(Prop. IV.1) and its risk."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = ["draw", "reduced_loss", "bayes_posterior", "bayes_loss", "finite_d_loss"]


def _check(L, n, delta):
    if not (isinstance(L, (int, np.integer)) and L >= 2):
        raise ValueError(f"L={L!r} must be an integer ≥ 2")
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n={n!r} must be an integer ≥ 2")
    if not delta >= 0:
        raise ValueError(f"delta={delta!r} must be ≥ 0")


def draw(prior, L, n, seed, H_max=8):
    """The random numbers of the reduced loss: θ (n, F), χ* (n, L, F) with the signal at ℓ = 0,
    and standard normals g (n, L, H_max) for the residual logits."""
    rng = np.random.default_rng(seed)
    theta = prior.sample(n, rng)
    chi = rng.standard_normal((n, L, prior.F))
    chi[:, 0, :] += theta
    g = rng.standard_normal((n, L, H_max))
    return theta, chi, g


def _loss_from_weights(w, delta):
    target = np.zeros(w.shape[-1])
    target[0] = 1.0
    e = delta**2 + ((target - w) ** 2).sum(-1)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size)), e


def reduced_loss(att, prior, L, n, seed, delta=0.0, draws=None):
    """(mean, stderr, per-sample losses) of the reduced loss at ``att``'s (m, r, b, v)."""
    _check(L, n, delta)
    theta, chi, g = draws if draws is not None else draw(prior, L, n, seed, max(att.H, 1))
    lam, U = np.linalg.eigh(att.r)
    R = U * np.sqrt(np.clip(lam, 0, None))                       # r = R Rᵀ
    s = np.einsum("nlf,hf->nhl", chi, att.m) + np.einsum("nlk,hk->nhl", g[..., :att.H], R)
    w = att.weights(s).mean(-2)
    return _loss_from_weights(w, delta)


def bayes_posterior(prior, chi):
    """P(ε = ℓ | X) ∝ E_θ exp(θᵀχ*_ℓ − ‖θ‖²/2), for χ* (n, L, F)."""
    a = prior.log_evidence(chi)
    return np.exp(a - logsumexp(a, axis=-1, keepdims=True))


def bayes_loss(prior, L, n, seed, delta=0.0, draws=None):
    _check(L, n, delta)
    theta, chi, g = draws if draws is not None else draw(prior, L, n, seed)
    return _loss_from_weights(bayes_posterior(prior, chi), delta)


def finite_d_loss(keys, biases, spikes, value, prior, activation, L, n, seed, delta=0.0, sinks=None,
                  conditional=False, chunk=2000):
    """E(y − ŷ)² with whole tokens in R^D: keys (H, D), spikes (F, D), value (D,).
    ``conditional=True`` integrates z and ξ out given the tokens' other components,
    Δ² + Σ_ℓ([ℓ = ε] − w_ℓ)², exact when the keys and spikes are orthogonal to the value
    direction (then z is independent of the logits); it is checked and much less noisy."""
    from theory.models.sagitova2026 import ACTIVATIONS
    _check(L, n, delta)
    keys, spikes, value = (np.asarray(a, float) for a in (keys, spikes, value))
    if conditional and (np.abs(keys @ value).max() > 1e-10 or np.abs(spikes @ value).max() > 1e-10):
        raise ValueError("conditional=True needs keys and spikes orthogonal to the value direction")
    rng = np.random.default_rng(seed)
    sinks = np.zeros(keys.shape[0]) if sinks is None else sinks
    out = []
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        theta = prior.sample(k, rng)
        X = rng.standard_normal((k, L, keys.shape[1]))
        X[:, 0, :] += theta @ spikes
        s = np.einsum("nld,hd->nhl", X, keys) + np.asarray(biases, float)[:, None]
        A = ACTIVATIONS[activation](s, sinks)
        if conditional:
            w = A.mean(-2)
            target = np.zeros(L)
            target[0] = 1
            out.append(delta**2 + ((target - w) ** 2).sum(-1))
        else:
            z = X @ value
            y = z[:, 0] + delta * rng.standard_normal(k)
            out.append((y - (A * z[:, None, :]).sum(-1).mean(-1)) ** 2)
    e = np.concatenate(out)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(n))
