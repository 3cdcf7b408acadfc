"""Sagitova, Duranthon, Zdeborová (2026), "Specialization of softmax attention heads: insights
from the high-dimensional single-location model" (arXiv 2603.03993). Spec:
shared/spec/sagitova2026.md — the suite's reading of the paper, parameterised (activation,
prior, H, F, L) so that the paper's exact conventions can be swapped in.

Data: spikes k*_f (f ≤ F), latent θ ~ P_θ, location ε uniform on [L]; the projections
χ*_ℓf = k*_fᵀx_ℓ ~ N(θ_f·[ℓ = ε], 1), the value z_ℓ = v*ᵀx_ℓ ~ N(0, 1), y = z_ε + Δξ.
Heads: logits s_hℓ = k_hᵀx_ℓ + b_h, weights A_h = activation(s_h), ŷ = (1/H)Σ_h Σ_ℓ A_hℓ z_ℓ.
Order parameters: m = (k_hᵀk*_f) (H×F), r = Q − mmᵀ (H×H), biases b, sink logits v.

This file holds the priors (with the Bayes evidence E_θ exp(θᵀχ − ‖θ‖²/2) each needs, Prop.
IV.1) and the activations; ``numerics.sagitova`` evaluates losses from them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

__all__ = ["DiscretePrior", "GaussianPrior", "flipping_spike", "ACTIVATIONS", "Attention",
           "bsoftmax_bayes_parameters", "saddle_hessian", "head_difference_block", "at_prior"]


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


# --- activations: logits s (..., H, L) [+ sink logits v (H,)] → weights A (..., H, L) -------
def _softmax(s, v=None):
    return np.exp(s - logsumexp(s, axis=-1, keepdims=True))


def _softmax_v(s, v):
    v = np.broadcast_to(np.asarray(v, float), s.shape[-2:-1])[..., None]
    full = np.concatenate([np.broadcast_to(v, s.shape[:-1] + (1,)), s], axis=-1)
    return np.exp(s - logsumexp(full, axis=-1, keepdims=True))


def _softmax_1(s, v=None):
    return _softmax_v(s, np.zeros(s.shape[-2]))


def _bsoftmax(s, v=None):
    H = s.shape[-2]
    return H * np.exp(s - logsumexp(s, axis=(-2, -1), keepdims=True))


ACTIVATIONS = {"softmax": _softmax, "softmax-1": _softmax_1, "softmax-v": _softmax_v,
               "b-softmax": _bsoftmax}


@dataclass(frozen=True)
class Attention:
    """H heads in the reduced description: m (H×F), r (H×H, PSD), biases b (H), sinks v (H)."""

    m: np.ndarray
    r: np.ndarray
    b: np.ndarray = None
    v: np.ndarray = None
    activation: str = "softmax"

    def __post_init__(self):
        m = _as_2d(self.m, "m")
        H = m.shape[0]
        r = _as_2d(self.r, "r")
        if r.shape != (H, H) or np.linalg.eigvalsh((r + r.T) / 2).min() < -1e-10:
            raise ValueError(f"r must be a symmetric PSD {H} × {H} matrix")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation={self.activation!r}; allowed: {sorted(ACTIVATIONS)}")
        b = np.zeros(H) if self.b is None else np.asarray(self.b, float).ravel()
        v = np.zeros(H) if self.v is None else np.asarray(self.v, float).ravel()
        if b.shape != (H,) or v.shape != (H,):
            raise ValueError(f"b and v must have {H} entries")
        for k, x in (("m", m), ("r", (r + r.T) / 2), ("b", b), ("v", v)):
            object.__setattr__(self, k, x)

    @property
    def H(self):
        return self.m.shape[0]

    def weights(self, s):
        return ACTIVATIONS[self.activation](s + self.b[:, None], self.v)


def bsoftmax_bayes_parameters(prior: DiscretePrior) -> Attention:
    """Prop. IV.2: one head per support point, k_h = Σ_f θ_hf k*_f (m_h = θ_h, r = 0),
    b_h = −‖θ_h‖²/2 + log P_θ(θ_h)."""
    th = prior.points
    return Attention(m=th, r=np.zeros((len(th), len(th))),
                     b=-0.5 * (th**2).sum(1) + np.log(prior.probs), activation="b-softmax")


# --- the unspecialized saddle, symbolically (Lemma III.1; spec "Hints") --------------------
def _sympy_activation(name, s_rows, sinks=None):
    import sympy as sp
    if name == "softmax":
        return [[sp.exp(x) / sum(sp.exp(y) for y in row) for x in row] for row in s_rows]
    if name == "softmax-1":
        return [[sp.exp(x) / (1 + sum(sp.exp(y) for y in row)) for x in row] for row in s_rows]
    if name == "b-softmax":
        Z = sum(sp.exp(y) for row in s_rows for y in row)
        return [[len(s_rows) * sp.exp(x) / Z for x in row] for row in s_rows]
    raise ValueError(f"activation={name!r}; allowed: softmax, softmax-1, b-softmax")


def saddle_hessian(L: int, H: int, F: int, activation: str = "softmax"):
    """Hessian of the reduced loss in the keys' overlaps m (H×F, row-major) at m = 0, r = 0,
    b = 0 (all logits zero, uniform attention): the integrand Σ_ℓ([ℓ = 1] − w_ℓ)² is
    differentiated twice in m at m = 0 — a quadratic form in the spike projections χ* — and its
    Gaussian expectation taken with χ*_1 = θ + g₁, χ*_ℓ = g_ℓ (g standard), then E over θ
    through the symbols mu_f = Eθ_f and S_ff′ = Eθ_fθ_f′. Exact in L, H and the moments of θ.
    Returns (Hessian Matrix, m symbols, mu symbols, second-moment Matrix S)."""
    import sympy as sp
    from ..gaussian import GaussianLaw, expect
    for name, v in (("L", L), ("H", H), ("F", F)):
        if not (isinstance(v, int) and v >= 1) or (name == "L" and v < 2):
            raise ValueError(f"{name}={v!r} must be an integer ≥ {2 if name == 'L' else 1}")
    m = sp.Matrix(H, F, lambda h, f: sp.Symbol(f"m_{h + 1}{f + 1}", real=True))
    chi = sp.Matrix(L, F, lambda l, f: sp.Symbol(f"chi_{l + 1}{f + 1}", real=True))
    theta = sp.symbols(f"theta_1:{F + 1}", real=True)
    mu = sp.symbols(f"mu_1:{F + 1}", real=True)
    S = sp.Matrix(F, F, lambda i, j: sp.Symbol(f"S_{min(i, j) + 1}{max(i, j) + 1}", real=True))
    s = [[sum(m[h, f] * chi[l, f] for f in range(F)) for l in range(L)] for h in range(H)]
    A = _sympy_activation(activation, s)
    w = [sum(A[h][l] for h in range(H)) / H for l in range(L)]
    integrand = sum(((1 if l == 0 else 0) - w[l]) ** 2 for l in range(L))
    ms = list(m)
    zero = {v: 0 for v in ms}
    law = GaussianLaw(tuple(chi), sp.Matrix([theta[f] if l == 0 else 0 for l in range(L)
                                             for f in range(F)]), sp.eye(L * F))
    first = {}
    for f in range(F):
        first[theta[f]] = mu[f]
    Hm = sp.zeros(len(ms))
    for i, a in enumerate(ms):
        for j in range(i, len(ms)):
            q = sp.expand(sp.diff(integrand, a, ms[j]).subs(zero))
            e = sp.expand(expect(q, law))                      # quadratic in θ
            e = e.subs({theta[f] * theta[g]: S[f, g] for f in range(F) for g in range(F)})
            e = e.subs({theta[f] ** 2: S[f, f] for f in range(F)}).subs(first)
            Hm[i, j] = Hm[j, i] = sp.simplify(e)
    return Hm, ms, mu, S


def at_prior(expr, prior, mu, S):
    """Substitute a prior's moments (mu_f = Eθ_f, S_ff′ = Eθ_fθ_f′) into a symbolic matrix
    from ``saddle_hessian`` and return it as a float array."""
    F = prior.F
    second = prior.cov() + np.outer(prior.mean(), prior.mean())
    subs = {S[a, b]: second[a, b] for a in range(F) for b in range(F)}
    subs.update({mu[a]: prior.mean()[a] for a in range(F)})
    return np.array(expr.subs(subs).evalf(), float)


def head_difference_block(Hm, H: int, F: int, heads=(0, 1)):
    """The Hessian restricted to the directions m_{h1} − m_{h2} (one per feature), unit norm."""
    import sympy as sp
    h1, h2 = heads
    P = sp.zeros(H * F, F)
    for f in range(F):
        P[h1 * F + f, f] = 1 / sp.sqrt(2)
        P[h2 * F + f, f] = -1 / sp.sqrt(2)
    return sp.simplify(P.T * Hm * P)
