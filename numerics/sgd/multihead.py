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

from collections.abc import Mapping

import numpy as np

from theory.multihead import MultiHeadModel
from ..multihead import HeadState
from .base import SGDSimulator, SimulationConfig

__all__ = ["HeadSimulator", "MultiHeadSGD"]

PARAMS = ("D", "prior")


def _check_params(model: MultiHeadModel, params) -> tuple[int, object]:
    if not isinstance(params, Mapping) or set(params) != set(PARAMS):
        got = sorted(params) if isinstance(params, Mapping) else repr(params)
        raise ValueError(f"params: {got}; allowed: a dict with exactly D (the dimension, an "
                         "integer) and prior (the law of θ, e.g. theory.models.sagitova2026."
                         "flipping_spike)")
    D = params["D"]
    if not (isinstance(D, (int, np.integer)) and not isinstance(D, bool)
            and D >= model.F + 1 + model.H):
        raise ValueError(f"D={D!r}; allowed: an integer ≥ F + 1 + H = {model.F + 1 + model.H}")
    return int(D), model.check_prior(params["prior"])


def _check_init(init):
    init = 0.1 if init is None else init
    if isinstance(init, HeadState):
        return init
    number = isinstance(init, (int, float, np.integer, np.floating)) and not isinstance(init, bool)
    if not (number and np.isfinite(init) and init >= 0):
        raise ValueError(f"init={init!r}; allowed: a HeadState or σ₀ ≥ 0")
    return init


class HeadSimulator(SGDSimulator):
    """The multi-head kind: the generated per-sample code, biases and sinks, θ draws, labels
    and the prediction from projections. Order parameters m = K e_{<F}, r = KKᵀ − mmᵀ, b, v.
    Subclasses keep the keys (or their Gram matrix) and implement ``step``, ``gram`` and
    ``keys_gram`` (the keys' overlaps with the spikes and with each other).

    params: D (the dimension, ≥ F + 1 + H) and prior (the law of θ). lr is γ and the flow time
    τ = γ·step. config.init: a HeadState (the same order parameters in every seed) or a float
    σ₀ ≥ 0 (keys ~ N(0, σ₀²I/D): m ~ σ₀/√D, r ≈ σ₀²I, b = v = 0; None: σ₀ = 0.1)."""

    def __init__(self, model: MultiHeadModel, params: Mapping[str, object],
                 config: SimulationConfig):
        from numerics.compiled import compiled
        self.D, prior = _check_params(model, params)
        self.init = _check_init(config.init)
        super().__init__(config)
        torch = self.torch
        self.model, self.prior = model, prior
        H, self.L = model.H, model.L
        self.code = compiled(model, "torch").samples
        S = config.seeds
        kw = {"dtype": self.dtype, "device": self.device}
        if isinstance(self.init, HeadState):
            if self.init.m.shape != (H, model.F):
                raise ValueError(f"init.m has shape {self.init.m.shape}; allowed: {H}×{model.F}")
            self.b = torch.as_tensor(self.init.b, **kw).expand(S, H).clone()
            self.v = torch.as_tensor(self.init.v, **kw).expand(S, H).clone()
        else:
            self.b = torch.zeros(S, H, **kw)
            self.v = torch.zeros(S, H, **kw)

    def extras(self) -> dict:
        return {"sgd_noise": self.cfg.lr * self.D / self.cfg.batch}

    def _init_root_r(self):
        lam, U = np.linalg.eigh(self.init.r)
        return U * np.sqrt(np.clip(lam, 0, None))

    def _theta(self, shape):
        u = self.torch.rand(*shape, self.prior.n_uniform, generator=self.gen, dtype=self.torch.float64,
                            device=self.device).cpu().numpy()
        th = self.prior.quantile(u.reshape(-1, self.prior.n_uniform)).reshape(*shape, self.prior.F)
        return self.torch.as_tensor(th, dtype=self.dtype, device=self.device)

    def _weight_args(self, s):
        """Arguments of the generated code: logits s (S,B,H,L) then the sinks v."""
        S, B, H, L = s.shape
        args = [s[..., h, l] for h in range(H) for l in range(L)]
        return args + [self.v[:, h, None].expand(S, B) for h in range(H)]

    def _coefficients(self, s, z, y):
        """Per-sample gradient coefficients ∂(y − ŷ)²/∂s_hℓ (÷ batch) and the sink gradient,
        from logits s (S,B,H,L), values z (S,B,L) and labels y (S,B)."""
        torch, md = self.torch, self.model
        S, B, H, L = s.shape
        out = self.code(*self._weight_args(s))
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

    def _embed(self, Z, J, V):
        """Standard tokens in the frame V (rows: spikes, value, keys); the signal token J is
        shifted by Σ_f θ_f k*_f with θ from the prior (drawn here)."""
        onehot = self.torch.nn.functional.one_hot(J, self.L).to(self.dtype)
        mu = self._theta(J.shape) @ V[:, :self.model.F, :]                # S,m,n (frame coords)
        return Z + onehot[..., None] * mu[:, :, None, :], onehot

    def _logits(self, P):
        """s_hℓ = k_h·x_ℓ + b_h (S,B,H,L) from the projections P (S,B,L,n; keys last)."""
        return P[..., self.model.F + 1:].transpose(2, 3) + self.b[:, None, :, None]

    def _residual(self, P, onehot):
        z = P[..., self.model.F]                                          # value projections
        y = self._labels(z, onehot)
        w = self.torch.stack(self.code(*self._weight_args(self._logits(P)))[:self.L], -1)
        return (w * z).sum(-1) - y

    def keys_gram(self):
        """(k_h·k*_f) (S × H × F) and (k_h·k_k) (S × H × H)."""
        raise NotImplementedError

    def order_parameters(self) -> dict:
        m, kk = self.keys_gram()
        return {"m": m, "r": kk - m @ m.transpose(1, 2), "b": self.b, "v": self.v}


class MultiHeadSGD(HeadSimulator):
    """Direct simulation: keys K (S × H × D)."""

    def __init__(self, model: MultiHeadModel, params: Mapping[str, object],
                 config: SimulationConfig):
        super().__init__(model, params, config)
        torch, S, D, H = self.torch, config.seeds, self.D, model.H
        kw = {"dtype": self.dtype, "device": self.device}
        if isinstance(self.init, HeadState):
            K = torch.zeros(S, H, D, **kw)
            K[:, :, :model.F] = torch.as_tensor(self.init.m, **kw)
            K[:, :, model.F + 1:model.F + 1 + H] = torch.as_tensor(self._init_root_r(), **kw)
        else:
            K = float(self.init) * torch.randn(S, H, D, generator=self.gen, **kw) / np.sqrt(D)
        self.K = K

    def step(self):
        torch, cfg, md = self.torch, self.cfg, self.model
        S, B, L, D, H, F = cfg.seeds, cfg.batch, md.L, self.D, md.H, md.F
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
        torch, q = self.torch, self.model.F + 1
        U = torch.cat([torch.eye(q, self.D, dtype=self.dtype, device=self.device)
                       .expand(self.cfg.seeds, q, self.D), self.K], 1)
        return U @ U.transpose(1, 2)

    def keys_gram(self):
        return self.K[:, :, :self.model.F], self.K @ self.K.transpose(1, 2)

