"""Sagitova, Duranthon, Zdeborová (2026), "Specialization of softmax attention heads: insights
from the high-dimensional single-location model" (arXiv 2603.03993). The model in full:
docs/models/sagitova2026.md — the suite's reading of the paper, parameterised (activation,
prior, H, F, L) so that the paper's exact conventions can be swapped in.

Data: spikes k*_f (f ≤ F), latent θ ~ P_θ, location ε uniform on [L]; the projections
χ*_ℓf = k*_fᵀx_ℓ ~ N(θ_f·[ℓ = ε], 1), the value z_ℓ = v*ᵀx_ℓ ~ N(0, 1), y = z_ε + Δξ.
Heads: logits s_hℓ = k_hᵀx_ℓ + b_h, weights A_h = activation(s_h), ŷ = (1/H)Σ_h Σ_ℓ A_hℓ z_ℓ.
Order parameters: m = (k_hᵀk*_f) (H×F), r = Q − mmᵀ (H×H), biases b, sink logits v.

This file holds the priors (with the Bayes evidence E_θ exp(θᵀχ − ‖θ‖²/2) each needs, Prop.
IV.1) and the B-softmax parameters of Prop. IV.2. The model itself (activations, the derived
loss, the saddle Hessian of Lemma III.1) is the multi-head model kind of ``theory.multihead``;
the numerical layer evaluates it. ``PARAMS`` and ``DEFAULT_PARAMS`` declare the command line's
parameters of the paper's model (the reduced-model registry builds it from them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.special import logsumexp

from ..headstate import HeadState
from ..model import Param

__all__ = ["DiscretePrior", "GaussianPrior", "flipping_spike", "bsoftmax_bayes_parameters", "at_prior",
           "at_moments", "PARAMS", "DEFAULT_PARAMS", "WORDS", "FEATURES", "default_state"]


def _sym(name):
    return sp.Symbol(name, real=True)


PARAMS = (
    Param(_sym("H"), 1, math.inf, integer=True, doc="number of heads"),
    Param(_sym("L"), 2, math.inf, integer=True, doc="number of tokens"),
    Param(_sym("delta"), 0, math.inf, open_high=True, doc="label-noise level Δ"),
    Param(_sym("nu1"), 0, math.inf, open_high=True, doc="flipping spike: θ₁ = √ν₁"),
    Param(_sym("nu2"), 0, math.inf, open_high=True, doc="flipping spike: θ₂ = ±√ν₂"),
    Param(_sym("sgd_noise"), 0, math.inf, open_high=True, doc="κ = γD/N_b (0: gradient flow)"),
    Param(_sym("n"), 8, math.inf, integer=True, open_high=True,
          doc="quasi-Monte Carlo draws (a multiple of 4)"),
    Param(_sym("seed"), 0, math.inf, integer=True, open_high=True, doc="seed of the draws"),
)
"""The numerical parameters of the paper's model on the command line, with their ranges (the
words ``WORDS`` besides: the activation and the output convention)."""
WORDS = ("activation", "output")
DEFAULT_PARAMS = {"H": 2, "L": 4, "activation": "softmax", "output": "mean", "delta": 0.0,
                  "nu1": 4.0, "nu2": 1.5, "sgd_noise": 0.0, "n": 2**14, "seed": 0}
"""Two softmax heads, L = 4, F = 2 features, the flipping-spike prior ν = (4, 1.5)."""
FEATURES = 2
"""F: the paper's model has two spike features, those of the flipping spike θ = (√ν₁, ±√ν₂)."""


def default_state(H: int) -> dict[str, float]:
    """The command line's initial state of H heads: head h slightly aligned with feature
    h mod F (m[h, h mod F] = 0.1), every other order parameter 0."""
    return {f"m[{h},{h % FEATURES}]": 0.1 for h in range(H)}



def _as_2d(x, name):
    x = np.atleast_2d(np.asarray(x, float))
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite")
    return x


@dataclass(frozen=True)
class DiscretePrior:
    """θ = points[s] with probability probs[s] (points: S × F)."""

    points: np.ndarray
    probs: np.ndarray

    def __post_init__(self):
        pts = _as_2d(self.points, "points")
        p = np.asarray(self.probs, float)
        if p.shape != (pts.shape[0],) or np.any(p <= 0) or abs(p.sum() - 1) > 1e-12:
            raise ValueError(f"probs must be {pts.shape[0]} positive numbers summing to 1, got {p}")
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "probs", p)

    @property
    def F(self):
        return self.points.shape[1]

    def sample(self, n, rng):
        return self.points[rng.choice(len(self.probs), size=n, p=self.probs)]

    n_uniform = 1

    def quantile(self, u):
        """θ from uniforms u (n, 1) by the inverse CDF over the support points."""
        idx = np.searchsorted(np.cumsum(self.probs), np.asarray(u)[:, 0], side="right")
        return self.points[np.minimum(idx, len(self.probs) - 1)]

    def reflect(self, theta):
        """2Eθ − θ when the prior is symmetric about its mean (antithetic draws), else None."""
        mu = self.mean()
        mirrored = 2 * mu - self.points
        match = [np.flatnonzero(np.all(np.abs(self.points - p) < 1e-12, axis=1)) for p in mirrored]
        if any(len(i) != 1 for i in match) or not np.allclose(
                self.probs[[i[0] for i in match]], self.probs, atol=1e-12):
            return None
        return 2 * mu - theta

    def mean(self):
        return self.probs @ self.points

    def cov(self):
        c = self.points - self.mean()
        return (c * self.probs[:, None]).T @ c

    def log_evidence(self, chi):
        """log E_θ exp(θᵀχ − ‖θ‖²/2) for χ (..., F)."""
        a = chi @ self.points.T - 0.5 * (self.points**2).sum(1) + np.log(self.probs)
        return logsumexp(a, axis=-1)


@dataclass(frozen=True)
class GaussianPrior:
    """θ ~ N(mean, cov) (cov may be singular): E exp(θᵀχ − ‖θ‖²/2) in closed form,
    θ = µ + Ag, AAᵀ = cov: det(I + AᵀA)^{-1/2} exp(½aᵀ(I + AᵀA)⁻¹a + µᵀχ − ½‖µ‖²),
    a = Aᵀ(χ − µ)."""

    mean_: np.ndarray
    cov_: np.ndarray

    def __post_init__(self):
        mu = np.asarray(self.mean_, float).ravel()
        C = _as_2d(self.cov_, "cov")
        if C.shape != (mu.size, mu.size) or np.linalg.eigvalsh((C + C.T) / 2).min() < -1e-12:
            raise ValueError("cov must be a symmetric PSD F × F matrix matching the mean")
        object.__setattr__(self, "mean_", mu)
        object.__setattr__(self, "cov_", (C + C.T) / 2)

    @property
    def F(self):
        return self.mean_.size

    def _root(self):
        lam, U = np.linalg.eigh(self.cov_)
        return U * np.sqrt(np.clip(lam, 0, None))

    def sample(self, n, rng):
        return self.mean_ + rng.standard_normal((n, self.F)) @ self._root().T

    @property
    def n_uniform(self):
        return self.F

    def quantile(self, u):
        """θ = µ + A·Φ⁻¹(u) for uniforms u (n, F)."""
        from scipy.special import ndtri
        return self.mean_ + ndtri(np.clip(u, 1e-16, 1 - 1e-16)) @ self._root().T

    def reflect(self, theta):
        """2µ − θ (a Gaussian is symmetric about its mean): antithetic draws."""
        return 2 * self.mean_ - theta

    def mean(self):
        return self.mean_

    def cov(self):
        return self.cov_

    def log_evidence(self, chi):
        A = self._root()
        M = np.eye(self.F) + A.T @ A
        a = (chi - self.mean_) @ A
        quad = np.einsum("...i,ij,...j->...", a, np.linalg.inv(M), a)
        return (-0.5 * np.linalg.slogdet(M)[1] + 0.5 * quad + chi @ self.mean_
                - 0.5 * self.mean_ @ self.mean_)


def flipping_spike(nu1, nu2):
    """F = 2: θ = (√ν₁, ±√ν₂) with equal probability."""
    if not (nu1 >= 0 and nu2 >= 0):
        raise ValueError(f"nu1={nu1}, nu2={nu2} must be ≥ 0")
    return DiscretePrior([[np.sqrt(nu1), np.sqrt(nu2)], [np.sqrt(nu1), -np.sqrt(nu2)]], [0.5, 0.5])


def bsoftmax_bayes_parameters(prior: DiscretePrior) -> HeadState:
    """Prop. IV.2: one head per support point, k_h = Σ_f θ_hf k*_f (m_h = θ_h, r = 0),
    b_h = −‖θ_h‖²/2 + log P_θ(θ_h), v = 0 — the order parameters of a B-softmax model
    (``MultiHeadModel(len(prior.probs), L, prior.F, "b-softmax")``)."""
    th = prior.points
    return HeadState.make(th, np.zeros((len(th), len(th))), -0.5 * (th**2).sum(1) + np.log(prior.probs))


def at_prior(expr, prior, mu, S):
    """Substitute a prior's moments (mu[f] = Eθ_f, S[f,g] = Eθ_fθ_g) into a symbolic matrix
    from ``theory.multihead.saddle_hessian`` and return it as a float array."""
    return at_moments(expr, prior.mean(), prior.cov() + np.outer(prior.mean(), prior.mean()),
                      mu, S)


def at_moments(expr, mean, second_moment, mu, S):
    """``expr`` (a symbolic matrix from ``theory.multihead.saddle_hessian``) at θ's mean
    (F numbers, for the symbols mu[f]) and second moment E θθᵀ (F × F, symmetric, for the
    symbols S[f,g]), as a float array."""
    mean = np.asarray(mean, float).ravel()
    second = np.asarray(second_moment, float)
    F = len(mu)
    if mean.shape != (F,) or second.shape != (F, F):
        raise ValueError(f"at_moments: mean of shape {mean.shape} and second moment of shape "
                         f"{second.shape}; allowed: ({F},) and ({F}, {F})")
    subs = {S[a, b]: second[a, b] for a in range(F) for b in range(F)}
    subs.update({mu[a]: mean[a] for a in range(F)})
    return np.array(expr.subs(subs).evalf(), float)
