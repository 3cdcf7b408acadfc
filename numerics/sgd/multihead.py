"""Online SGD of multi-head attention in dimension D (Sagitova et al. 2026), torch, batched over
independent seeds; GPU when present.

Spikes k*_f = e_f (f < F) and value direction v* = e_F: the D → ∞ reading of the spec's
nearly-orthonormal spikes, exact for the reduced description (k*ᵀk* = I, v* ⊥ spikes).
Each step draws a batch of N_b samples per seed: tokens x_ℓ ~ N(0, I_D), the signal token
ε ~ U[L] shifted by Σ_f θ_f e_f with θ from the prior, y = z_ε + Δξ (z_ℓ = x_ℓ·e_F). The
per-sample gradient of (y − ŷ)² is 2(ŷ − y)·Σ_ℓ′ (∂w_ℓ′/∂·)·z_ℓ′ with ∂w/∂s and ∂w/∂v generated
from the SymPy activation (``theory.multihead``); keys, biases and (softmax-v) sinks all move
with step γ; τ = γ·t. The recorded order parameters are m = K e_{<F}, r = KKᵀ − mmᵀ, b, v.
"""

from __future__ import annotations

from dataclasses import dataclass
import time

import numpy as np

from theory.multihead import MultiHeadModel
from ..multihead import HeadState
from .base import resolve_device

__all__ = ["HeadSGDConfig", "HeadSGDResult", "HeadSimulator", "MultiHeadSGD", "simulate_heads"]


@dataclass(frozen=True)
class HeadSGDConfig:
    """D: dimension; lr: γ; steps; batch: N_b; seeds: independent runs; init: a HeadState
    (the same order parameters in every seed) or a float σ₀ (keys ~ N(0, σ₀²I/D): m ~ σ₀/√D,
    r ≈ σ₀²I, b = v = 0)."""

    D: int
    lr: float
    steps: int
    batch: int = 1
    seeds: int = 8
    seed: int = 0
    record_every: int = 100
    init: HeadState | float = 0.1
    device: str = "auto"
    dtype: str = "float64"
    n_test: int = 0

    def __post_init__(self):
        for name in ("D", "steps", "batch", "seeds", "record_every"):
            v = getattr(self, name)
            if not (isinstance(v, (int, np.integer)) and v >= 1):
                raise ValueError(f"HeadSGDConfig: {name}={v!r} must be an integer ≥ 1")
        if not (np.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"HeadSGDConfig: lr={self.lr!r} must be > 0")
        if not (isinstance(self.n_test, (int, np.integer)) and self.n_test >= 0):
            raise ValueError(f"HeadSGDConfig: n_test={self.n_test!r} must be an integer ≥ 0")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"HeadSGDConfig: dtype={self.dtype!r}; allowed: 'float32', 'float64'")
        if not isinstance(self.init, HeadState) and not (float(self.init) >= 0):
            raise ValueError(f"HeadSGDConfig: init={self.init!r} must be a HeadState or σ₀ ≥ 0")

    @property
    def kappa(self):
        """γD/N_b, the strength of the SGD-noise term of the reduced flow."""
        return self.lr * self.D / self.batch


@dataclass
class HeadSGDResult:
    """tau[k]; m[k, seed, h, f], r[k, seed, h, h′], b[k, seed, h], v[k, seed, h]; loss[k, seed]
    the fresh-sample test loss E(y − ŷ)² on n_test samples (None when n_test = 0)."""

    tau: np.ndarray
    m: np.ndarray
    r: np.ndarray
    b: np.ndarray
    v: np.ndarray
    steps_per_second: float = float("nan")
    loss: np.ndarray | None = None

    def state(self, k, seed):
        return HeadState(self.m[k, seed], self.r[k, seed], self.b[k, seed], self.v[k, seed])


class HeadSimulator:
    """What the direct and the Gram simulators of multi-head SGD share: validation, device,
    generator (explicit seed), the generated per-sample code, biases and sinks, θ draws and the
    recording loop. Subclasses keep the keys (or their Gram matrix) and implement ``step`` and
    ``order_parameters``."""

    def __init__(self, model: MultiHeadModel, prior, config: HeadSGDConfig):
        import torch
        from numerics.codegen import generate
        if prior.F != model.F:
            raise ValueError(f"prior has F={prior.F} features, the model F={model.F}")
        if config.D < model.F + 1 + model.H:
            raise ValueError(f"D={config.D} must be ≥ F + 1 + H = {model.F + 1 + model.H}")
        self.torch, self.model, self.prior, self.cfg = torch, model, prior, config
        self.device = resolve_device(config.device)
        self.dtype = getattr(torch, config.dtype)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(int(config.seed))
        H, L = model.H, model.L
        outs = list(model.token_weights)
        outs += [j for Jh in model.weight_jacobian for row in Jh for j in row]      # h, ℓ, ℓ′
        if model.trains_sinks:
            outs += [j for row in model.weight_sink_jacobian for j in row]          # h, ℓ′
        self.code = generate(model.arguments, outs, backend="torch")
        S = config.seeds
        kw = {"dtype": self.dtype, "device": self.device}
        if isinstance(config.init, HeadState):
            if config.init.m.shape != (H, model.F):
                raise ValueError(f"init.m must be {H}×{model.F}")
            self.b = torch.as_tensor(config.init.b, **kw).expand(S, H).clone()
            self.v = torch.as_tensor(config.init.v, **kw).expand(S, H).clone()
        else:
            self.b = torch.zeros(S, H, **kw)
            self.v = torch.zeros(S, H, **kw)

    def _init_root_r(self):
        lam, U = np.linalg.eigh(self.cfg.init.r)
        return U * np.sqrt(np.clip(lam, 0, None))

    def _theta(self, shape):
        u = self.torch.rand(*shape, self.prior.n_uniform, generator=self.gen, dtype=self.torch.float64,
                            device=self.device).cpu().numpy()
        th = self.prior.quantile(u.reshape(-1, self.prior.n_uniform)).reshape(*shape, self.prior.F)
        return self.torch.as_tensor(th, dtype=self.dtype, device=self.device)

    def _coefficients(self, s, z, y):
        """Per-sample gradient coefficients ∂(y − ŷ)²/∂s_hℓ (÷ batch) and the sink gradient,
        from logits s (S,B,H,L), values z (S,B,L) and labels y (S,B)."""
        torch, md = self.torch, self.model
        S, B, H, L = s.shape
        args = [s[..., h, l] for h in range(H) for l in range(L)]
        args += [self.v[:, h, None].expand(S, B) for h in range(H)]
        out = self.code(*args)
        w = torch.stack(out[:L], -1)                                                # S,B,L
        J = torch.stack(out[L:L + H * L * L], -1).reshape(S, B, H, L, L)
        res = (w * z).sum(-1) - y                                                   # ŷ − y
        c = (2.0 / B) * res[..., None, None] * torch.einsum("sbhlk,sbk->sbhl", J, z)
        gv = None
        if md.trains_sinks:
            Jv = torch.stack(out[L + H * L * L:], -1).reshape(S, B, H, L)
            gv = ((2.0 / B) * res[..., None] * torch.einsum("sbhk,sbk->sbh", Jv, z)).sum(1)
        return c, gv

    def _labels(self, z, onehot):
        y = (z * onehot).sum(-1)
        if self.model.delta:
            y = y + self.model.delta * self.torch.randn(*y.shape, generator=self.gen, dtype=self.dtype,
                                                        device=self.device)
        return y

    def _move_scalars(self, c, gv):
        lr = self.cfg.lr
        self.b = self.b - lr * c.sum((1, 3))
        if gv is not None:
            self.v = self.v - lr * gv

    def gram(self):
        """Gram matrix (S × n × n) of spikes, value direction and keys."""
        raise NotImplementedError

    def test_loss(self, n):
        """Fresh-sample loss per seed: a token's projections on (spikes, value, keys) are
        N(mean, Gram) in law, so they are drawn in an n-dimensional coordinate system."""
        from .gram import psd_factor
        torch, md, S, L = self.torch, self.model, self.cfg.seeds, self.model.L
        F, q = md.F, md.F + 1
        V = psd_factor(self.gram())
        X = torch.randn(S, n, L, V.shape[-1], generator=self.gen, dtype=self.dtype, device=self.device)
        eps = torch.randint(L, (S, n), generator=self.gen, device=self.device)
        onehot = torch.nn.functional.one_hot(eps, L).to(self.dtype)
        X = X + onehot[..., None] * (self._theta((S, n)) @ V[:, :F, :])[:, :, None, :]
        P = X @ V.transpose(1, 2)[:, None]
        z = P[..., F]
        y = self._labels(z, onehot)
        s = P[..., q:].transpose(2, 3) + self.b[:, None, :, None]
        args = [s[..., h, l] for h in range(md.H) for l in range(L)]
        args += [self.v[:, h, None].expand(S, n) for h in range(md.H)]
        w = torch.stack(self.code(*args)[:L], -1)
        return (((w * z).sum(-1) - y) ** 2).mean(1).cpu().numpy()

    def run(self, progress=None, until=None) -> HeadSGDResult:
        """Run ``steps`` steps, recording every ``record_every``; ``until(m, r, b, v)`` (arrays
        over seeds) may stop the run early at a record when it returns True."""
        cfg = self.cfg
        losses = []

        def record(k):
            if cfg.n_test:
                losses.append(self.test_loss(cfg.n_test))
            return (k * cfg.lr, self.order_parameters())
        with self.torch.no_grad():
            rec = [record(0)]
        start = time.perf_counter()
        k = 0
        with self.torch.no_grad():
            for k in range(1, cfg.steps + 1):
                self.step()
                if k % cfg.record_every == 0 or k == cfg.steps:
                    rec.append(record(k))
                    if not np.all(np.isfinite(rec[-1][1][0])):
                        raise FloatingPointError(f"SGD diverged at step {k} (lr={cfg.lr})")
                    if progress is not None:
                        progress(k, cfg.steps)
                    if until is not None and until(*rec[-1][1]):
                        break
        elapsed = time.perf_counter() - start
        tau = np.array([t for t, _ in rec])
        m, r, b, v = (np.stack([q[i] for _, q in rec]) for i in range(4))
        return HeadSGDResult(tau, m, r, b, v, k / max(elapsed, 1e-12),
                             np.array(losses) if losses else None)


class MultiHeadSGD(HeadSimulator):
    """Direct simulation: keys K (S × H × D)."""

    def __init__(self, model: MultiHeadModel, prior, config: HeadSGDConfig):
        super().__init__(model, prior, config)
        torch, S, D, H = self.torch, config.seeds, config.D, model.H
        kw = {"dtype": self.dtype, "device": self.device}
        if isinstance(config.init, HeadState):
            K = torch.zeros(S, H, D, **kw)
            K[:, :, :model.F] = torch.as_tensor(config.init.m, **kw)
            K[:, :, model.F + 1:model.F + 1 + H] = torch.as_tensor(self._init_root_r(), **kw)
        else:
            K = float(config.init) * torch.randn(S, H, D, generator=self.gen, **kw) / np.sqrt(D)
        self.K = K

    def step(self):
        torch, cfg, md = self.torch, self.cfg, self.model
        S, B, L, D, H, F = cfg.seeds, cfg.batch, md.L, cfg.D, md.H, md.F
        X = torch.randn(S, B, L, D, generator=self.gen, dtype=self.dtype, device=self.device)
        eps = torch.randint(L, (S, B), generator=self.gen, device=self.device)
        onehot = torch.nn.functional.one_hot(eps, L).to(self.dtype)                 # S,B,L
        X[..., :F] += onehot[..., None] * self._theta((S, B))[:, :, None, :]
        z = X[..., F]                                                               # S,B,L
        y = self._labels(z, onehot)
        s = (torch.bmm(X.view(S, B * L, D), self.K.transpose(1, 2)).view(S, B, L, H)
             .transpose(2, 3) + self.b[:, None, :, None])                          # S,B,H,L
        c, gv = self._coefficients(s, z, y)
        gK = torch.bmm(c.transpose(2, 3).reshape(S, B * L, H).transpose(1, 2), X.view(S, B * L, D))
        self.K = self.K - cfg.lr * gK
        self._move_scalars(c, gv)

    def gram(self):
        torch, F, H = self.torch, self.model.F, self.model.H
        q = F + 1
        U = torch.cat([torch.eye(q, self.cfg.D, dtype=self.dtype, device=self.device)
                       .expand(self.cfg.seeds, q, self.cfg.D), self.K], 1)
        return U @ U.transpose(1, 2)

    def order_parameters(self):
        F = self.model.F
        m = self.K[:, :, :F]
        r = self.K @ self.K.transpose(1, 2) - m @ m.transpose(1, 2)
        return (m.cpu().numpy(), r.cpu().numpy(), self.b.cpu().numpy(), self.v.cpu().numpy())



def simulate_heads(model: MultiHeadModel, prior, config: HeadSGDConfig, progress=None, until=None):
    """Run online SGD of ``model`` on data from ``prior`` (see module docstring)."""
    return MultiHeadSGD(model, prior, config).run(progress, until)
