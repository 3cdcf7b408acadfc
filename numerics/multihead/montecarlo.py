"""Losses of the multi-head single-location model (Sagitova et al. 2026) by plain Monte Carlo.

``reduced_loss``: the D → ∞ loss as an expectation over θ, the L·F spike projections and the
L·H residual logits, Δ² + E Σ_ℓ([ℓ = ε] − w_ℓ)² with the model's token weights w (the value z
is independent of the logits); ε = 1 by exchangeability of the tokens. Common random numbers:
the same seed gives the same draws for every parameter value. ``finite_d_loss``: the same
loss with whole tokens in R^D. The weights are the generated code of the model's activation
(``weights``). ``bayes_posterior``: P(ε = ℓ | X) ∝ E_θ exp(θᵀχ*_ℓ − ‖θ‖²/2) (Prop. IV.1) and
``bayes_loss`` its risk (the Bayes estimator is not an attention layer)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from theory.multihead import MultiHeadModel
from .state import HeadState
from .weights import weights_function

__all__ = ["draw", "token_weights", "reduced_loss", "bayes_posterior", "bayes_loss", "finite_d_loss"]


def _check(L, n, delta):
    if not (isinstance(L, (int, np.integer)) and L >= 2):
        raise ValueError(f"L={L!r} must be an integer ≥ 2")
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n={n!r} must be an integer ≥ 2")
    if not delta >= 0:
        raise ValueError(f"delta={delta!r} must be ≥ 0")


def _check_shapes(model: MultiHeadModel, state: HeadState, prior):
    if state.m.shape != (model.H, model.F):
        raise ValueError(f"state.m has shape {state.m.shape}; the model needs ({model.H}, {model.F})")
    model.check_prior(prior)


def draw(prior, L: int, n: int, seed, H_max: int = 8):
    """The random numbers of the reduced loss: θ (n, F), χ* (n, L, F) with the signal at ℓ = 0,
    and standard normals g (n, L, H_max) for the residual logits."""
    rng = np.random.default_rng(seed)
    theta = prior.sample(n, rng)
    chi = rng.standard_normal((n, L, prior.F))
    chi[:, 0, :] += theta
    g = rng.standard_normal((n, L, H_max))
    return theta, chi, g


def token_weights(model: MultiHeadModel, state: HeadState, chi, g=None) -> np.ndarray:
    """w_ℓ (n, L) at logits s_hℓ = m_h·χ_ℓ + (R g_ℓ)_h + b_h (RRᵀ = r) and sinks v, for spike
    projections χ (n, L, F) and standard normals g (n, L, ≥ H; None when r = 0)."""
    s = np.einsum("nlf,hf->nhl", chi, state.m, optimize=True)          # BLAS: 10× the loops
    if g is not None:
        s = s + np.einsum("nlk,hk->nhl", g[..., :state.H], state.residual_root(), optimize=True)
    return weights_function(model)(s + state.b[:, None], state.v)


def _loss_from_weights(w, delta):
    target = np.zeros(w.shape[-1])
    target[0] = 1.0
    e = delta**2 + ((target - w) ** 2).sum(-1)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size)), e


def reduced_loss(model: MultiHeadModel, state: HeadState, prior, n: int, seed, draws=None):
    """(mean, stderr, per-sample losses) of the reduced loss of ``model`` at ``state``'s
    (m, r, b, v); ``draws`` = ``draw(prior, model.L, n, seed, H_max ≥ model.H)`` reuses draws."""
    _check(model.L, n, model.delta)
    _check_shapes(model, state, prior)
    theta, chi, g = draws if draws is not None else draw(prior, model.L, n, seed, model.H)
    return _loss_from_weights(token_weights(model, state, chi, g), model.delta)


def bayes_posterior(prior, chi) -> np.ndarray:
    """P(ε = ℓ | X) ∝ E_θ exp(θᵀχ*_ℓ − ‖θ‖²/2), for χ* (n, L, F)."""
    a = prior.log_evidence(chi)
    return np.exp(a - logsumexp(a, axis=-1, keepdims=True))


def bayes_loss(prior, L: int, n: int, seed, delta: float = 0.0, draws=None):
    """(mean, stderr, per-sample losses) of the Bayes estimator's risk (Prop. IV.1)."""
    _check(L, n, delta)
    theta, chi, g = draws if draws is not None else draw(prior, L, n, seed)
    return _loss_from_weights(bayes_posterior(prior, chi), delta)


def finite_d_loss(model: MultiHeadModel, keys, biases, spikes, value, prior, n: int, seed,
                  sinks=None, conditional: bool = False, chunk: int = 2000):
    """E(y − ŷ)² of ``model`` with whole tokens in R^D: keys (H, D), biases (H), spikes (F, D),
    value (D,), sink logits ``sinks`` (H; None: zeros). ``conditional=True`` integrates z and ξ
    out given the tokens' other components, Δ² + Σ_ℓ([ℓ = ε] − w_ℓ)², exact when the keys and
    spikes are orthogonal to the value direction (then z is independent of the logits); it is
    checked and much less noisy. Returns (mean, stderr)."""
    L, delta = model.L, model.delta
    _check(L, n, delta)
    keys, spikes, value = (np.asarray(a, float) for a in (keys, spikes, value))
    model.check_prior(prior)
    if keys.shape[0] != model.H or spikes.shape[0] != model.F:
        raise ValueError(f"keys must have {model.H} rows, spikes {model.F}; got {keys.shape[0]}, "
                         f"{spikes.shape[0]}")
    if conditional and (np.abs(keys @ value).max() > 1e-10 or np.abs(spikes @ value).max() > 1e-10):
        raise ValueError("conditional=True needs keys and spikes orthogonal to the value direction")
    weights = weights_function(model)
    rng = np.random.default_rng(seed)
    sinks = np.zeros(keys.shape[0]) if sinks is None else sinks
    out = []
    for start in range(0, n, chunk):
        k = min(chunk, n - start)
        theta = prior.sample(k, rng)
        X = rng.standard_normal((k, L, keys.shape[1]))
        X[:, 0, :] += theta @ spikes
        s = np.einsum("nld,hd->nhl", X, keys, optimize=True) + np.asarray(biases, float)[:, None]
        w = weights(s, sinks)
        if conditional:
            target = np.zeros(L)
            target[0] = 1
            out.append(delta**2 + ((target - w) ** 2).sum(-1))
        else:
            z = X @ value
            y = z[:, 0] + delta * rng.standard_normal(k)
            out.append((y - (w * z).sum(-1)) ** 2)
    e = np.concatenate(out)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(n))
