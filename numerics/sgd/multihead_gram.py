"""Online SGD of multi-head attention simulated exactly in law through the Gram matrix of the
spikes, the value direction and the keys: cost per step independent of D.

Vectors: hidden u = (k*_1..k*_F, v*) (orthonormal, q = F + 1) and keys k_1..k_H; n = q + H.
With orthonormal coordinates V (rows: the vectors, VVᵀ = G) of an n-dimensional subspace E
containing them, a token is x = x_E + x_⊥, x_E ~ N(μ, I_n) in those coordinates (μ = Σ_f θ_f V_f
for the signal token) and x_⊥ ~ N(0, I_{D−n}) independent of every projection the model sees.
A batch gradient of key h is g_h = Σ_{b,ℓ} c_bhℓ x_bℓ with the per-sample coefficients of the
direct simulator (generated from the SymPy activation), so

    g_h·u = Σ c·(x_E·u) (exact),   (g_h·g_k) = (g_E)_h·(g_E)_k + W_hk,  W ~ Wishart_H(D − n, CᵀC)

with C_{(bℓ),h} = c_bhℓ (Bartlett decomposition, ``numerics.sgd.gram.wishart``). The update
k ← k − γg is applied to G; biases and sinks move as in the direct simulator. Same
configuration and result types as ``numerics.sgd.multihead``; the two agree in law at every D
(tests check means and standard deviations of every order parameter).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from theory.multihead import MultiHeadModel
from ..multihead import HeadState
from .base import SimulationConfig, psd_factor
from .gram import wishart
from .multihead import HeadSimulator

__all__ = ["MultiHeadGramSGD"]


class MultiHeadGramSGD(HeadSimulator):
    """State: G (S × n × n), hidden vectors (spikes, value) first, then the keys."""

    def __init__(self, model: MultiHeadModel, params: Mapping[str, object],
                 config: SimulationConfig):
        super().__init__(model, params, config)
        torch, S, H, F = self.torch, config.seeds, model.H, model.F
        self.q, self.n = F + 1, F + 1 + H
        q = self.q
        kw = {"dtype": self.dtype, "device": self.device}
        G = torch.zeros(S, self.n, self.n, **kw)
        G[:, :q, :q] = torch.eye(q, **kw)
        if isinstance(self.init, HeadState):
            C = np.zeros((H, q + H))
            C[:, :F] = self.init.m
            C[:, q:] = self._init_root_r()
            Ct = torch.as_tensor(C, **kw)
            G[:, q:, :q] = Ct[:, :q]
            G[:, :q, q:] = Ct[:, :q].T
            G[:, q:, q:] = Ct @ Ct.T
        else:
            # keys σ₀·N(0, I_D/D): hidden coordinates z, the rest a Wishart(D − q) Gram
            s2 = float(self.init) ** 2 / self.D
            zc = torch.randn(S, H, q, generator=self.gen, **kw)
            eye = torch.eye(H, **kw).expand(S, H, H)
            G[:, q:, :q] = np.sqrt(s2) * zc
            G[:, :q, q:] = np.sqrt(s2) * zc.transpose(1, 2)
            G[:, q:, q:] = s2 * (zc @ zc.transpose(1, 2) + wishart(eye, self.D - q, self.gen))
        self.G = G

    def step(self):
        cfg, md = self.cfg, self.model
        S, B, L, H, F, n, q = cfg.seeds, cfg.batch, md.L, md.H, md.F, self.n, self.q
        V = psd_factor(self.G)                                           # S,n,n rows: vectors
        X, onehot = self._embed(*self._draw_tokens(B, n), V)              # S,B,L,n (E coords)
        P = X @ V.transpose(1, 2)[:, None]                                # S,B,L,n projections
        z = P[..., F]
        y = self._labels(z, onehot)
        s = self._logits(P)                                               # S,B,H,L
        c, gv = self._coefficients(s, z, y)
        Cm = c.transpose(2, 3).reshape(S, B * L, H)
        gE = Cm.transpose(1, 2) @ X.reshape(S, B * L, n)                   # S,H,n (E coords)
        gu = gE @ V.transpose(1, 2)                                       # g_h·(vector j)
        gg = gE @ gE.transpose(1, 2) + wishart(Cm.transpose(1, 2) @ Cm, self.D - n, self.gen)
        lr, G = cfg.lr, self.G
        new = G.clone()
        new[:, q:, :q] = G[:, q:, :q] - lr * gu[:, :, :q]
        new[:, :q, q:] = new[:, q:, :q].transpose(1, 2)
        kk = gu[:, :, q:]                                                 # g_h·k_k
        new[:, q:, q:] = G[:, q:, q:] - lr * (kk + kk.transpose(1, 2)) + lr * lr * gg
        self.G = new
        self._move_scalars(c, gv)

    def gram(self):
        return self.G

    def keys_gram(self):
        q = self.q
        return self.G[:, q:, :self.model.F], self.G[:, q:, q:]

