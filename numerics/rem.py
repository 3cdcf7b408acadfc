"""Partition functions of N = e^{αd} Gaussian energy levels, sampled without drawing N levels.

Extreme-value sampling: the K largest of N i.i.d. E ~ N(0, d) are drawn exactly through their
upper-tail probabilities S_(j) = Γ_j/N (Γ_j sums of j standard exponentials; the relative
error of this representation is O(1/√N)), E_(j) = −√d·Φ⁻¹(S_(j)) computed in log space. The
N − K levels below the threshold τ = E_(K) are i.i.d. conditioned on E < τ; their Boltzmann
sum enters through its conditional mean and a central-limit fluctuation (the closed forms of
the truncated Gaussian moments below). ``brute_force`` draws all N levels (small αd only) and
is the reference in the tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import functools
import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import log_ndtr, logsumexp, ndtri_exp

from .expectation import Estimate

if TYPE_CHECKING:
    import torch

__all__ = ["REMSample", "extreme_value_sample", "brute_force_sample", "gibbs_average",
           "brute_force_gibbs_average", "gibbs_average_estimate", "softmax_risk_mc",
           "brute_force_softmax_risk", "direct_softmax_risk", "BULK_RULE", "doubled"]

ArrayFn = Callable[[np.ndarray], np.ndarray]
"""A vectorised function of one variable (a link σ or a test function F), numpy in, numpy out."""


@dataclass(frozen=True)
class REMSample:
    """Per sample: f = (βd)⁻¹·log Z and the Gibbs mean energy density m = Σ_ℓ q_ℓ E_ℓ/d."""

    free_energy: np.ndarray
    gibbs_mean: np.ndarray


def _check(alpha, beta, d, n):
    for name, v in (("alpha", alpha), ("beta", beta), ("d", d)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name}={v!r} must be a positive finite number")
    if n < 1:
        raise ValueError(f"n_samples={n} must be >= 1")


def brute_force_sample(alpha: float, beta: float, d: float, n_samples: int, seed: int,
                       max_levels: int = 5_000_000) -> REMSample:
    """Reference for ``extreme_value_sample`` drawing all e^{αd} levels (small αd only)."""
    _check(alpha, beta, d, n_samples)
    N = int(round(np.exp(alpha * d)))
    if N > max_levels:
        raise ValueError(f"e^(alpha*d) = {N} levels exceed max_levels={max_levels}")
    rng = np.random.default_rng(seed)
    f, m = np.empty(n_samples), np.empty(n_samples)
    for i in range(n_samples):
        E = rng.standard_normal(N) * np.sqrt(d)
        logw = beta * E
        logZ = logsumexp(logw)
        f[i] = logZ / (beta * d)
        m[i] = np.sum(np.exp(logw - logZ) * E) / d
    return REMSample(f, m)


def _log_trunc_moments(beta, d, tau, log_ndtr=log_ndtr, exp=np.exp):
    """log E[e^{βE}; E<τ], E[E·e^{βE}; E<τ]/E[e^{βE}; E<τ], log E[e^{2βE}; E<τ], log P(E<τ).
    ``log_ndtr``/``exp`` are the array library's (SciPy/NumPy here, torch in ``rem_torch``)."""
    sd = np.sqrt(d)
    a1 = (tau - beta * d) / sd
    log_m1 = beta**2 * d / 2 + log_ndtr(a1)
    # mean of E under the tilted truncated law N(βd, d) | E < τ: βd − √d·φ(a)/Φ(a)
    log_phi = -a1**2 / 2 - 0.5 * np.log(2 * np.pi)
    mean_tilted = beta * d - sd * exp(log_phi - log_ndtr(a1))
    a2 = (tau - 2 * beta * d) / sd
    log_m2 = 2 * beta**2 * d + log_ndtr(a2)
    return log_m1, mean_tilted, log_m2, log_ndtr(tau / sd)


@dataclass(frozen=True)
class _Levels:
    E_top: np.ndarray      # n × K, decreasing
    log_bulk: np.ndarray   # log of the bulk Boltzmann sum (n)
    logZ: np.ndarray       # n
    tau: np.ndarray        # threshold E_(K)
    mean_bulk: np.ndarray  # mean energy of the tilted truncated bulk law


def _levels(alpha, beta, d, n_samples, rng, top_k):
    logN = alpha * d
    K = int(min(top_k, max(1, np.floor(np.exp(min(logN, 700)) / 2))))
    gam = np.cumsum(rng.standard_exponential((n_samples, K)), axis=1)
    logS = np.log(gam) - logN                                   # upper-tail probabilities
    E_top = -np.sqrt(d) * ndtri_exp(np.minimum(logS, -1e-300))  # decreasing in j
    tau = E_top[:, -1]
    log_m1, mean_t, log_m2, log_p = _log_trunc_moments(beta, d, tau)
    log_rest = np.log(np.expm1(logN) - K) if logN < 30 else logN + np.log1p(-K * np.exp(-logN))
    # bulk Boltzmann sum: mean (N−K)·E[e^{βE} | E<τ], CLT fluctuation with the conditional variance
    log_mean = log_rest + log_m1 - log_p
    # log Var[e^{βE} | E<τ] = log(m2/p) + log(1 − (m1/p)²/(m2/p)), in log space (no overflow)
    ratio = np.minimum(2 * (log_m1 - log_p) - (log_m2 - log_p), -1e-300)
    log_var_term = (log_m2 - log_p) + np.log(-np.expm1(ratio))
    rel_sd = np.exp(0.5 * (log_rest + log_var_term) - log_mean)
    bulk_factor = np.maximum(1 + rel_sd * rng.standard_normal(n_samples), 1e-12)
    log_bulk = log_mean + np.log(bulk_factor)
    logZ = np.logaddexp(logsumexp(beta * E_top, axis=1), log_bulk)
    return _Levels(E_top, log_bulk, logZ, tau, mean_t)


def extreme_value_sample(alpha: float, beta: float, d: float, n_samples: int, seed: int,
                         top_k: int = 2000) -> REMSample:
    """(βd)⁻¹·log Z and the Gibbs mean energy density of N = e^{αd} levels E ~ N(0, d), the
    top ``top_k`` exactly, the bulk through its truncated-Gaussian moments (module docstring)."""
    _check(alpha, beta, d, n_samples)
    lv = _levels(alpha, beta, d, n_samples, np.random.default_rng(seed), top_k)
    w_top = np.exp(beta * lv.E_top - lv.logZ[:, None])
    w_bulk = np.exp(lv.log_bulk - lv.logZ)
    gibbs = (np.sum(w_top * lv.E_top, axis=1) + w_bulk * lv.mean_bulk) / d
    return REMSample(lv.logZ / (beta * d), gibbs)


BULK_RULE = (48, 24)
"""Points of the bulk's Gibbs average: Gauss–Legendre in the quantile of its tilted truncated
law, Gauss–Hermite in z. Its quadrature error is |this rule − the doubled rule| on the same
draws (``numerics.expectation.Estimate.quadrature_error``'s convention)."""


@functools.cache
def _bulk_nodes(n_u: int, n_z: int):
    """(u, weights, z, weights) of the bulk rule: u ∈ (0, 1), z standard normal, each weight
    vector summing to 1."""
    u, wu = np.polynomial.legendre.leggauss(n_u)
    z, wz = np.polynomial.hermite_e.hermegauss(n_z)
    return (u + 1) / 2, wu / 2, z, wz / np.sqrt(2 * np.pi)


def doubled(rule: tuple[int, int]) -> tuple[int, int]:
    """The companion of a bulk rule: twice its points in each direction."""
    return tuple(2 * n for n in rule)


def _bulk_average(lv, F, beta, d, rho, s, rule):
    u, wu, z, wz = _bulk_nodes(*rule)
    a = (lv.tau - beta * d) / np.sqrt(d)
    E_b = beta * d + np.sqrt(d) * ndtri_exp(np.log(u)[None, :] + log_ndtr(a)[:, None])  # n × U
    vals = F(rho * E_b[:, :, None] / d + s * z[None, None, :])                            # n × U × Z
    return np.einsum("nuz,u,z->n", vals, wu, wz)


def _gibbs_from_levels(lv, F, beta, d, rho, rng, rules=(BULK_RULE,)):
    """The per-sample Gibbs average of F with the bulk by each rule of ``rules`` (the top
    levels, their z and the weights shared: the rules' difference is the bulk rule's error)."""
    s = np.sqrt(1 - rho**2) / np.sqrt(d)
    z = rng.standard_normal(lv.E_top.shape)
    w_top = np.exp(beta * lv.E_top - lv.logZ[:, None])
    top = np.sum(w_top * F(rho * lv.E_top / d + s * z), axis=1)
    w_bulk = np.exp(lv.log_bulk - lv.logZ)
    return [top + w_bulk * _bulk_average(lv, F, beta, d, rho, s, r) for r in rules]


def _mean_estimate(samples, companion=None) -> Estimate:
    """Mean, standard error (dof n − 1) and, given the companion rule's samples on the same
    draws, |mean − companion's mean| as the quadrature error (NaN: not estimated)."""
    n = len(samples)
    mean = float(samples.mean())
    q = math.nan if companion is None else abs(mean - float(companion.mean()))
    return Estimate(mean, float(samples.std(ddof=1) / np.sqrt(n)), dof=n - 1, quadrature_error=q)


def softmax_risk_mc(link: ArrayFn, alpha: float, beta: float, gamma: float, d: float,
                    overlaps: Mapping[str, float], n_samples: int, seed: int,
                    top_k: int = 2000, quadrature_error: bool = False) -> Estimate:
    """Monte Carlo of Dohmatob's risk E(f − σ(x_*ᵀv*))² (ε² removed) at L − 1 = e^{αd}
    dummy tokens: the secret token's projections on (u, v, v*) are sampled exactly
    (mean c√d·(µ, ζ, 0), covariance γ²·Gram), the dummies through extreme-value sampling of
    their energies √d·x_ℓᵀu with x_ℓᵀv = ρ·x_ℓᵀu + √(1−ρ²)·z_ℓ. Returns the mean with its
    standard error (unpacks as (mean, stderr)) and, where ``quadrature_error``, the bulk rule's
    error (``BULK_RULE`` against its doubled rule on the same draws; NaN when not asked).
    The bulk's Gibbs average enters through its conditional mean (its fluctuation is
    bounded by the largest bulk weight, negligible next to the top levels)."""
    _check(alpha, beta, d, n_samples)
    if not 0 < gamma < 1:
        raise ValueError(f"gamma={gamma!r} must be in (0, 1)")
    mu, nu, zeta, eta, rho = (overlaps[k] for k in ("mu", "nu", "zeta", "eta", "rho"))
    G = np.array([[1, rho, eta], [rho, 1, nu], [eta, nu, 1.0]])
    if np.linalg.eigvalsh(G).min() < -1e-10:
        raise ValueError(f"overlaps {overlaps} are not realisable (Gram of u, v, v* not PSD)")
    rng = np.random.default_rng(seed)
    c = np.sqrt(1 - gamma**2)
    lam, U = np.linalg.eigh(G)
    A = U * np.sqrt(np.clip(lam, 0, None))
    sec = c * np.sqrt(d) * np.array([mu, zeta, 0.0]) + gamma * rng.standard_normal((n_samples, 3)) @ A.T
    lv = _levels(alpha, beta, d, n_samples, rng, top_k)
    sigma_scaled = lambda t: link(np.sqrt(d) * t)          # F(x_ℓᵀv/√d) = σ(x_ℓᵀv)
    rules = (BULK_RULE, doubled(BULK_RULE)) if quadrature_error else (BULK_RULE,)
    avgs = _gibbs_from_levels(lv, sigma_scaled, beta, d, rho, rng, rules)
    log_secret = beta * np.sqrt(d) * sec[:, 0]
    p = np.exp(log_secret - np.logaddexp(log_secret, lv.logZ))
    secret, target = p * link(sec[:, 1]), link(sec[:, 2])
    return _mean_estimate(*[(secret + (1 - p) * avg - target) ** 2 for avg in avgs])


def brute_force_softmax_risk(link: ArrayFn, alpha: float, beta: float, gamma: float, d: float,
                             overlaps: Mapping[str, float], n_samples: int, seed: int,
                             max_levels: int = 2_000_000) -> tuple[float, float]:
    """Reference for ``softmax_risk_mc``: every dummy token's projections drawn (small αd)."""
    _check(alpha, beta, d, n_samples)
    N = int(round(np.exp(alpha * d)))
    if N > max_levels:
        raise ValueError(f"e^(alpha*d) = {N} levels exceed max_levels={max_levels}")
    mu, nu, zeta, eta, rho = (overlaps[k] for k in ("mu", "nu", "zeta", "eta", "rho"))
    G = np.array([[1, rho, eta], [rho, 1, nu], [eta, nu, 1.0]])
    lam, U = np.linalg.eigh(G)
    A = U * np.sqrt(np.clip(lam, 0, None))
    rng = np.random.default_rng(seed)
    c = np.sqrt(1 - gamma**2)
    out = np.empty(n_samples)
    for i in range(n_samples):
        sec = c * np.sqrt(d) * np.array([mu, zeta, 0.0]) + gamma * A @ rng.standard_normal(3)
        xu = rng.standard_normal(N)
        xv = rho * xu + np.sqrt(1 - rho**2) * rng.standard_normal(N)
        logits = beta * np.sqrt(d) * np.concatenate([[sec[0]], xu])
        q = np.exp(logits - logsumexp(logits))
        f = q[0] * link(sec[1]) + q[1:] @ link(xv)
        out[i] = (f - link(sec[2])) ** 2
    return float(out.mean()), float(out.std(ddof=1) / np.sqrt(n_samples))


def gibbs_average(F: ArrayFn, alpha: float, beta: float, d: float, rho: float, n_samples: int,
                  seed: int, top_k: int = 2000, rules=(BULK_RULE,)) -> np.ndarray:
    """Σ_ℓ q_ℓ·F(x_ℓᵀv/√d) over N = e^{αd} dummy tokens with Gibbs weights q ∝ e^{β√d·x_ℓᵀu}
    and ρ = uᵀv: x_ℓᵀv/√d = ρ·E_ℓ/d + √(1−ρ²)·z_ℓ/√d with z_ℓ ~ N(0, 1) independent.
    Top levels exactly; the bulk by quadrature over its tilted truncated law
    (E ~ N(βd, d) | E < τ, through its quantile function) and z (Gauss–Hermite): one row of
    samples per bulk rule of ``rules`` (one rule: the samples alone), on the same draws."""
    _check(alpha, beta, d, n_samples)
    if not -1 <= rho <= 1:
        raise ValueError(f"rho={rho!r} must be in [-1, 1]")
    rng = np.random.default_rng(seed)
    lv = _levels(alpha, beta, d, n_samples, rng, top_k)
    out = _gibbs_from_levels(lv, F, beta, d, rho, rng, tuple(rules))
    return out[0] if len(out) == 1 else np.array(out)


def gibbs_average_estimate(F: ArrayFn, alpha: float, beta: float, d: float, rho: float,
                           n_samples: int, seed: int, top_k: int = 2000) -> Estimate:
    """The mean of ``gibbs_average``'s samples with its standard error and the bulk rule's
    quadrature error (``BULK_RULE`` against its doubled rule on the same draws)."""
    rows = gibbs_average(F, alpha, beta, d, rho, n_samples, seed, top_k,
                         rules=(BULK_RULE, doubled(BULK_RULE)))
    return _mean_estimate(*rows)


def brute_force_gibbs_average(F: ArrayFn, alpha: float, beta: float, d: float, rho: float,
                              n_samples: int, seed: int, max_levels: int = 5_000_000) -> np.ndarray:
    """Reference for ``gibbs_average`` drawing all e^{αd} levels (small αd only)."""
    _check(alpha, beta, d, n_samples)
    N = int(round(np.exp(alpha * d)))
    if N > max_levels:
        raise ValueError(f"e^(alpha*d) = {N} levels exceed max_levels={max_levels}")
    rng = np.random.default_rng(seed)
    out = np.empty(n_samples)
    for i in range(n_samples):
        E = rng.standard_normal(N) * np.sqrt(d)
        z = rng.standard_normal(N)
        logw = beta * E
        q = np.exp(logw - logsumexp(logw))
        out[i] = q @ F(rho * E / d + np.sqrt(1 - rho**2) * z / np.sqrt(d))
    return out


def direct_softmax_risk(link: Callable[[torch.Tensor], torch.Tensor], alpha: float, beta: float,
                        gamma: float, d: int, overlaps: Mapping[str, float], n_samples: int,
                        seed: int, max_tokens: int = 20_000) -> tuple[float, float]:
    """Reference in R^d: unit vectors (u, v, u*, v*) realising the overlaps, 1 + e^{αd} whole
    tokens per sample (secret x* ~ N(c√d·u*, γ²I), dummies N(0, I)), softmax(β√d·xᵀu)."""
    import torch
    _check(alpha, beta, d, n_samples)
    N = int(round(np.exp(alpha * d)))
    if N > max_tokens:
        raise ValueError(f"e^(alpha*d) = {N} tokens exceed max_tokens={max_tokens}")
    mu, nu, zeta, eta, rho = (overlaps[k] for k in ("mu", "nu", "zeta", "eta", "rho"))
    G = np.array([[1, 0, mu, zeta], [0, 1, eta, nu], [mu, eta, 1, rho], [zeta, nu, rho, 1.0]])
    lam, U = np.linalg.eigh(G)
    if lam.min() < -1e-10:
        raise ValueError(f"overlaps {overlaps} are not realisable")
    V = np.zeros((4, d))
    V[:, :4] = (U * np.sqrt(np.clip(lam, 0, None))) @ U.T    # rows: u*, v*, u, v (Gram G)
    us, vs, u, v = (torch.as_tensor(r) for r in V)
    gen = torch.Generator().manual_seed(int(seed))
    c = np.sqrt(1 - gamma**2)
    out = np.empty(n_samples)
    for i in range(n_samples):
        X = torch.randn(N + 1, d, generator=gen, dtype=torch.float64)
        X[0] = c * np.sqrt(d) * us + gamma * X[0]
        q = torch.softmax(beta * np.sqrt(d) * (X @ u), 0)
        f = q @ link(X @ v)
        out[i] = float((f - link(X[0] @ vs)) ** 2)
    return float(out.mean()), float(out.std(ddof=1) / np.sqrt(n_samples))
