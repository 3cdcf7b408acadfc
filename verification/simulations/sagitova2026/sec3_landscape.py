"""What Sec. III's landscape claims simulate: Prop. III.1's finite-D and reduced losses at random
keys (``iii1_losses``; the reduced losses of its declared mutations beside it), the symbolic
head-difference block of the saddle Hessian (``saddle_block``, SymPy) and its Monte Carlo
counterpart by Richardson-extrapolated second differences (``numeric_hessian``)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from numerics.multihead import HeadState, draw, finite_d_loss, reduced_loss
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import MultiHeadModel, head_difference_block, saddle_hessian
from ..base import simulation


# --- Prop. III.1 -------------------------------------------------------------------------------
def reduced_without_residual(model, state, *a, **k):
    """Mutation: the reduced loss with the residual covariance r dropped."""
    return reduced_loss(model, HeadState.make(state.m, 0 * state.r, state.b, state.v), *a, **k)


def reduced_with_identity_residual(model, state, *a, **k):
    """Mutation: the reduced loss with the residual covariance r replaced by I (right only
    where the keys' noise is isotropic with unit norm)."""
    return reduced_loss(model, HeadState.make(state.m, np.eye(len(state.r)), state.b, state.v),
                        *a, **k)


def reduced_5pc_high(*a, **k):
    """Mutation: the reduced loss 5 % too large (a wrong factor)."""
    loss, se, per_sample = reduced_loss(*a, **k)
    return 1.05 * loss, 1.05 * se, 1.05 * per_sample


def key_coefficients(H, F):
    """The keys' components on the spikes (H × F): the pattern [[1.5, 0.3], [−0.4, 1.2]] tiled
    over the heads and features, heads beyond the second scaled by 1 + ½⌊h/2⌋ (distinct keys)."""
    base = np.array([[1.5, 0.3], [-0.4, 1.2]])
    A = base[np.ix_(np.arange(H) % 2, np.arange(F) % 2)]
    return A * (1 + 0.5 * (np.arange(H) // 2))[:, None]


def iii1_prior(F):
    """Prop. III.1's prior: N(0.5·1, diag(2 … 0.5)) (F = 2: diag(2, 0.5))."""
    return GaussianPrior(np.full(F, 0.5), np.diag(np.linspace(2.0, 0.5, F)))


@simulation(seeded=False)
def iii1_losses(sim, item):
    """At one setting: random keys in R^D with residual scale ``item["noise"]`` (drawn from
    ``item["keys_seed"]``; see the claim's reading), the finite-D Monte Carlo loss (``item["n"]``
    draws from ``item["fd_seed"]``) and the reduced loss ``item["reduced"]`` at the keys' (m, r)
    (independent draws, ``item["rd_seed"]``): one row."""
    activation, H, F, D, c, n = (item[k] for k in ("activation", "H", "F", "D", "noise", "n"))
    prior = iii1_prior(F)
    md = MultiHeadModel(H, item["L"], F, activation)
    rng = np.random.default_rng(item["keys_seed"])
    basis = np.linalg.qr(rng.standard_normal((D, F + 1)))[0].T        # orthonormal rows
    spikes, value = basis[:F], basis[F]
    corr = np.full((H, H), 0.6) + 0.4 * np.eye(H)
    mix = np.linalg.cholesky(corr)                                     # correlated heads
    noise = c * mix @ rng.standard_normal((H, D)) / np.sqrt(D)         # r ≈ c²·mix·mixᵀ
    keys = key_coefficients(H, F) @ spikes + noise
    keys -= np.outer(keys @ value, value)      # keys ⊥ v*: z independent of the logits
    b = np.linspace(0.2, -0.3, H)
    v = np.linspace(0.3, -0.2, H) if md.trains_sinks else np.zeros(H)  # softmax-v: sink logits
    fd, fd_se = finite_d_loss(md, keys, b, spikes, value, prior, n, sinks=v,
                              seed=item["fd_seed"], conditional=True)
    m = keys @ spikes.T
    r = keys @ keys.T - m @ m.T                # K(I − K*ᵀK*)Kᵀ: PSD for orthonormal K*
    lam = np.linalg.eigvalsh((r + r.T) / 2)    # recorded; HeadState.make rejects r ⋡ 0
    rd, rd_se, _ = item["reduced"](md, HeadState.make(m, (r + r.T) / 2, b, v), prior, n,
                                   seed=item["rd_seed"])
    return {"activation": activation, "H": H, "F": F, "L": item["L"], "D": D, "noise_scale": c,
            "finite_d": fd, "finite_d_se": fd_se, "reduced": rd, "reduced_se": rd_se,
            "difference": fd - rd, "difference_se": float(np.hypot(fd_se, rd_se)),
            "r_min_eig": float(lam[0])}


# --- Lemma III.1 -------------------------------------------------------------------------------
@simulation(seeded=False)
def saddle_block(sim, item):
    """The symbolic head-difference block (heads 0 and 1, unit-norm directions m₀ − m₁ per
    feature) of the saddle Hessian of H heads, L tokens, F features and ``item["activation"]``,
    as its ``srepr`` (symbols of ``theory.multihead.saddle_symbols``)."""
    H, F = item["H"], item["F"]
    Hm, _, _, _ = saddle_hessian(MultiHeadModel(H, item["L"], F, item["activation"]))
    return sp.srepr(head_difference_block(Hm, H, F))


STEPS = (0.3, 0.15, 0.075)
"""Finite-difference steps δ of Lemma III.1's numeric Hessian (each half the previous)."""


def numeric_samples(prior, L, H, F, n, seed, deltas=STEPS):
    """Per-sample head-difference second differences of the reduced loss at m = 0: an array
    (len(deltas), n, F, F), central differences with common random numbers (one set of draws
    for every step and every evaluation), so that combinations across steps have per-sample
    values and honest standard errors."""
    draws = draw(prior, L, n, seed, H_max=H)
    md = MultiHeadModel(H, L, F)
    dirs = []
    for f in range(F):
        dvec = np.zeros((H, F))
        dvec[0, f], dvec[1, f] = 1 / np.sqrt(2), -1 / np.sqrt(2)
        dirs.append(dvec)

    def loss(mm):
        return reduced_loss(md, HeadState.make(mm), prior, n, 0, draws=draws)[2]
    out = np.empty((len(deltas), n, F, F))
    for k, delta in enumerate(deltas):
        for i in range(F):
            for j in range(i, F):
                out[k, :, i, j] = out[k, :, j, i] = (
                    loss(delta * (dirs[i] + dirs[j])) - loss(delta * (dirs[i] - dirs[j]))
                    - loss(delta * (dirs[j] - dirs[i])) + loss(-delta * (dirs[i] + dirs[j]))
                ) / (4 * delta**2)
    return out


def richardson_hessian(e):
    """Richardson estimate of the Hessian from per-sample second differences ``e`` at steps
    δ, δ/2, δ/4 (:func:`numeric_samples`), with its standard error and a derived bias term.

    With B(δ) = B + aδ² + bδ⁴ + O(δ⁶) (central differences of a smooth loss),
    R(δ) = (4B(δ/2) − B(δ))/3 = B − bδ⁴/4; the estimate is R(δ/2) = B − bδ⁴/64, and since
    R(δ/2) − R(δ) = 15bδ⁴/64, its remaining step error is (R(δ/2) − R(δ))/15: the bias term,
    taken as its absolute value (the O(δ⁶) rest is 16× smaller again). Standard errors are
    those of the per-sample combinations (common draws: correlations included).
    Returns (estimate, se, bias, B at each step)."""
    r1 = (4 * e[1] - e[0]) / 3
    r2 = (4 * e[2] - e[1]) / 3
    n = e.shape[1]
    est = r2.mean(0)
    se = r2.std(0, ddof=1) / np.sqrt(n)
    bias = np.abs((r2 - r1).mean(0)) / 15
    return est, se, bias, e.mean(1)


@simulation(seeded=False)
def numeric_hessian(sim, item):
    """``richardson_hessian`` of ``numeric_samples`` (softmax, prior ``item["prior"]``, L, H, F,
    ``item["n"]`` draws from ``item["seed"]``): (estimate, se, bias, B at each step)."""
    return richardson_hessian(numeric_samples(item["prior"], item["L"], item["H"], item["F"],
                                              item["n"], item["seed"]))
