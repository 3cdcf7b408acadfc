"""Finite-dimension simulation of Dohmatob's softmax-attention student in R^d (torch).

Data (spec "Model"): L tokens, a secret index ℓ* uniform on [L], the secret token
x_{ℓ*} ~ N(c√d·u*, γ²I) with c = √(1 − γ²), the others N(0, I); label y = σ(x_{ℓ*}ᵀv*) + εξ.
Student f(X; u, v) = Σ_ℓ softmax(β√d·Xu)_ℓ·σ(x_ℓᵀv), u, v on the unit sphere. PGD on the
empirical risk of n samples: u ← (u − s·P⊥_u∇_u R̂)/‖·‖, likewise v (Dohmatob 2025, Eq. 29)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

Link = Callable[["torch.Tensor"], "torch.Tensor"]

__all__ = ["AttentionData", "sample_data", "student", "pgd_empirical"]


@dataclass(frozen=True)
class AttentionData:
    """n samples of Dohmatob's data law (tensors)."""

    X: object          # (n, L, d) tensor
    y: object          # (n,) noisy labels
    clean: object      # (n,) σ(x_{ℓ*}ᵀv*) without label noise


def _check(d, L, beta, gamma, eps, n):
    for name, v, ok, rng in (("d", d, d >= 2, "≥ 2"), ("L", L, L >= 2, "≥ 2"),
                             ("beta", beta, beta > 0, "> 0"), ("gamma", gamma, 0 < gamma < 1, "in (0, 1)"),
                             ("eps", eps, eps >= 0, "≥ 0"), ("n", n, n >= 1, "≥ 1")):
        if not ok:
            raise ValueError(f"{name}={v!r} must be {rng}")


def sample_data(n: int, d: int, L: int, gamma: float, eps: float, link: Link, u_star: torch.Tensor,
                v_star: torch.Tensor, generator: torch.Generator) -> AttentionData:
    """n samples: the secret index uniform on [L], x_{ℓ*} = c√d·u* + γ·N(0, I), the other
    tokens N(0, I), y = σ(x_{ℓ*}ᵀv*) + ε·N(0, 1), all drawn from ``generator``."""
    import torch
    c = np.sqrt(1 - gamma**2)
    dt = u_star.dtype
    X = torch.randn(n, L, d, generator=generator, dtype=dt)
    secret = torch.randint(L, (n,), generator=generator)
    rows = torch.arange(n)
    X[rows, secret] = c * np.sqrt(d) * u_star + gamma * X[rows, secret]
    clean = link(X[rows, secret] @ v_star)
    y = clean + eps * torch.randn(n, generator=generator, dtype=dt)
    return AttentionData(X, y, clean)


def student(X: torch.Tensor, u: torch.Tensor, v: torch.Tensor, beta: float, link: Link) -> torch.Tensor:
    """f = Σ_ℓ softmax(β√d·x_ℓᵀu)·σ(x_ℓᵀv) for X (n, L, d); u, v (..., d) broadcast."""
    import torch
    d = X.shape[-1]
    p = torch.softmax(beta * np.sqrt(d) * (X @ u), dim=-1)
    return (p * link(X @ v)).sum(-1)


def pgd_empirical(d: int, L: int, beta: float, gamma: float, eps: float, link: Link, n_train: int,
                  n_test: int, step: float, n_steps: int, record_every: int, seed: int,
                  init: Sequence[np.ndarray | torch.Tensor] | None = None,
                  dtype: str = "float64") -> dict[str, np.ndarray]:
    """PGD on the empirical risk of ``n_train`` samples; at every record, the overlaps
    (µ, ν, ζ, η, ρ) and the test risk E(f − σ(x_{ℓ*}ᵀv*))² on ``n_test`` fresh samples (the
    irreducible ε² removed by testing against noise-free labels) with its standard error."""
    import torch
    _check(d, L, beta, gamma, eps, n_train)
    if not step > 0:
        raise ValueError(f"step={step!r} must be > 0")
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(int(seed))
    basis = torch.linalg.qr(torch.randn(d, 2, generator=g, dtype=dt))[0]
    u_star, v_star = basis[:, 0], basis[:, 1]
    train = sample_data(n_train, d, L, gamma, eps, link, u_star, v_star, g)
    test = sample_data(n_test, d, L, gamma, eps, link, u_star, v_star, g)
    if init is None:
        u, v = torch.randn(d, generator=g, dtype=dt), torch.randn(d, generator=g, dtype=dt)
    else:
        u, v = (torch.as_tensor(w, dtype=dt) for w in init)
    u, v = u / u.norm(), v / v.norm()
    recs = {"step": [], "overlaps": [], "test_risk": [], "test_se": [], "train_risk": []}
    for k in range(n_steps + 1):
        u.requires_grad_(True)
        v.requires_grad_(True)
        train_risk = ((student(train.X, u, v, beta, link) - train.y) ** 2).mean()
        if k % record_every == 0 or k == n_steps:
            with torch.no_grad():
                e = (student(test.X, u, v, beta, link) - test.clean) ** 2
                recs["step"].append(k)
                recs["overlaps"].append([float(u @ u_star), float(v @ v_star), float(v @ u_star),
                                         float(u @ v_star), float(u @ v)])
                recs["test_risk"].append(float(e.mean()))
                recs["test_se"].append(float(e.std() / np.sqrt(n_test)))
                recs["train_risk"].append(float(train_risk))
        if k == n_steps:
            break
        gu, gv = torch.autograd.grad(train_risk, (u, v))
        with torch.no_grad():
            u, v = u.detach(), v.detach()
            a, b = gu - (gu @ u) * u, gv - (gv @ v) * v
            u = (u - step * a) / (u - step * a).norm()
            v = (v - step * b) / (v - step * b).norm()
    out = {k: np.asarray(v) for k, v in recs.items()}
    if not np.all(np.isfinite(out["test_risk"])):
        raise FloatingPointError("pgd_empirical: non-finite test risk")
    return out
