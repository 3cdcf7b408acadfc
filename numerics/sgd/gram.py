"""Online SGD simulated exactly in law through the Gram matrix: cost per step independent of d.

The state is the Gram matrix G (n × n, n = q hidden + p trainable) of the hidden and trainable
vectors. Pick an n-dimensional subspace E ⊇ S = span(vectors) with orthonormal coordinates V
(rows: the vectors, V Vᵀ = G). A token is x = x_E + x_⊥ with x_E = s·z + μ (z ~ N(0, I_n),
μ the planted mean, in E) and x_⊥ ~ N(0, s²·I_{d−n}) independent of everything the model sees.
The batch gradient of trainable w_i is g_i = Σ_{b,ℓ} c_{bℓ,i}·x_{bℓ} with coefficients
c = (2/B)(ŷ − y)·∂t/∂(xᵀw_i) generated from the student; so

    g_i·u  = Σ c·(x_E·u)                      (u any model vector: exact from z),
    g_i·g_j = (g_i)_E·(g_j)_E + (g_i)_⊥·(g_j)_⊥,  ((g_i)_⊥·(g_j)_⊥)_{ij} ~ Wishart_p(d − n, AᵀA),

with A_{(bℓ),i} = c_{bℓ,i}·s_{bℓ} (Bartlett decomposition, exact χ² via a Marsaglia–Tsang
gamma sampler on the simulator's own generator). The update w ← w − lr·g̃ (g̃ = P⊥_w g on the
sphere), then renormalisation, is applied to G directly. Same model description and generated
derivative code as the direct simulator; the laws agree at every d (tests check it).
"""

from __future__ import annotations

from collections.abc import Mapping

from theory.model import Model
from .base import SimulationConfig, psd_factor, realise_overlaps
from .token_sum import TokenSumSimulator

__all__ = ["GramSGD", "standard_gamma", "wishart", "psd_factor"]


def standard_gamma(shape, gen):
    """Gamma(shape, 1) samples for a tensor of shapes > 0 (Marsaglia & Tsang 2000; shapes < 1
    by the boost Gamma(a) = Gamma(a + 1)·U^{1/a}); exact, vectorised, explicit generator."""
    import torch
    a = torch.as_tensor(shape)
    small = a < 1
    a1 = torch.where(small, a + 1, a)
    d = a1 - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    out = torch.empty_like(a1)
    todo = torch.ones_like(a1, dtype=torch.bool)
    while bool(todo.any()):
        x = torch.randn(a1.shape, generator=gen, dtype=a1.dtype, device=a1.device)
        u = torch.rand(a1.shape, generator=gen, dtype=a1.dtype, device=a1.device)
        cx = c * x
        ok = cx > -1
        cx_safe = torch.where(ok, cx, torch.zeros_like(cx))
        # log v − (v − 1) with v = (1 + cx)³, written without cancellation for huge shapes
        vm1 = 3 * cx_safe + 3 * cx_safe**2 + cx_safe**3
        logv = 3 * torch.log1p(cx_safe)
        accept = ok & (torch.log(u) < 0.5 * x * x + d * (logv - vm1))
        take = todo & accept
        out = torch.where(take, d * (1 + vm1), out)
        todo = todo & ~accept
    if bool(small.any()):
        u = torch.rand(a1.shape, generator=gen, dtype=a1.dtype, device=a1.device)
        out = torch.where(small, out * u ** (1 / torch.where(small, a, torch.ones_like(a))), out)
    return out


def wishart(Sigma, dof: float, gen):
    """Wishart_p(dof, Σ) for a batch of PSD matrices Σ (… × p × p): M·T·Tᵀ·Mᵀ with M Mᵀ = Σ
    (any factor: the law only depends on M Mᵀ) and T the Bartlett factor."""
    import torch
    p = Sigma.shape[-1]
    batch = Sigma.shape[:-2]
    M = psd_factor(Sigma)
    dofs = torch.tensor([dof - i for i in range(p)], dtype=Sigma.dtype, device=Sigma.device)
    chi2 = 2 * standard_gamma(dofs.expand(*batch, p) / 2, gen)
    T = torch.diag_embed(chi2.sqrt())
    if p > 1:
        low = torch.randn(*batch, p, p, generator=gen, dtype=Sigma.dtype, device=Sigma.device)
        T = T + torch.tril(low, diagonal=-1)
    MT = M @ T
    return MT @ MT.transpose(-1, -2)


class GramSGD(TokenSumSimulator):
    """State: G (S × n × n), hidden vectors first. See the module docstring."""

    def __init__(self, model: Model, params: Mapping[str, float], config: SimulationConfig):
        super().__init__(model, params, config)
        self.n = self.p + self.q
        self.G = self._init_gram()

    def _init_gram(self):
        torch, S, n, q, p = self.torch, self.cfg.seeds, self.n, self.q, self.p
        if isinstance(self.init, str):                                          # 'random'
            # p i.i.d. N(0, I_d) vectors: hidden coordinates z, the rest a Wishart(d − q) Gram
            z = torch.randn(S, p, q, generator=self.gen, dtype=self.dtype, device=self.device)
            eye = torch.eye(p, dtype=self.dtype, device=self.device).expand(S, p, p)
            Gtt = z @ z.transpose(1, 2) + wishart(eye, self.d - q, self.gen)
            G = torch.zeros(S, n, n, dtype=self.dtype, device=self.device)
            G[:, :q, :q] = torch.eye(q, dtype=self.dtype, device=self.device)
            G[:, q:, :q] = z
            G[:, :q, q:] = z.transpose(1, 2)
            G[:, q:, q:] = Gtt
            return self._normalise(G)
        C = torch.as_tensor(realise_overlaps(self.model, self.init), dtype=self.dtype,
                            device=self.device)
        return (C @ C.T).expand(S, n, n).clone()

    def _normalise(self, G):
        q = self.q
        diag = G.diagonal(dim1=1, dim2=2)[:, q:]
        s = self.torch.where(self.sphere, diag.clamp(min=1e-300).rsqrt(), self.torch.ones_like(diag))
        scale = self.torch.cat([self.torch.ones_like(G[:, :q, 0]), s], 1)
        return G * scale[:, :, None] * scale[:, None, :]

    def _coords(self):
        return psd_factor(self.G)                                  # rows: vectors, V Vᵀ = G

    def overlaps(self):
        names = list(self.code.hidden) + list(self.code.trainable)
        cols = [(names.index(a), names.index(b)) for (a, b) in self.model.overlaps]
        return self.torch.stack([self.G[:, i, j] for i, j in cols], -1)

    def step(self):
        torch, cfg = self.torch, self.cfg
        S, B, L, n, q, p = cfg.seeds, cfg.batch, self.L, self.n, self.q, self.p
        V = self._coords()
        Z, J = self._draw_tokens(B, n)
        xi = self._label_noise(B)
        X, onehot, scale = self._embed_scaled(Z, J, V)
        P = X @ V.transpose(1, 2)[:, None]
        r, dts = self._predict(P[..., q:], P[..., :q], onehot)
        r = r - self.label_noise * xi
        c = (2.0 / B) * r[..., None, None] * torch.stack(dts, -1)              # S,B,L,p
        gE = torch.einsum("sblp,sbln->spn", c, X)                              # E-coordinates
        gu = gE @ V.transpose(1, 2)                                            # g_i·u_j
        A = (c * scale[..., None]).reshape(S, B * L, p)
        gg = gE @ gE.transpose(1, 2) + wishart(A.transpose(1, 2) @ A, self.d - n, self.gen)
        G = self.G
        Gt = G[:, q:, :]                                                       # w_i·u
        a = torch.where(self.sphere, gu[:, :, q:].diagonal(dim1=1, dim2=2),
                        torch.zeros_like(gu[:, :, 0]))                         # g_i·w_i
        gu_t = gu - a[:, :, None] * Gt                                         # g̃_i·u
        gw = gu[:, :, q:]                                                      # g_i·w_j
        gg_t = (gg - a[:, None, :] * gw - a[:, :, None] * gw.transpose(1, 2)
                + a[:, :, None] * a[:, None, :] * G[:, q:, q:])                # g̃_i·g̃_j
        lr = cfg.lr
        new = G.clone()
        new[:, q:, :q] = Gt[:, :, :q] - lr * gu_t[:, :, :q]
        new[:, :q, q:] = new[:, q:, :q].transpose(1, 2)
        tt = gu_t[:, :, q:]
        new[:, q:, q:] = G[:, q:, q:] - lr * (tt + tt.transpose(1, 2)) + lr * lr * gg_t
        self.G = self._normalise(new)

    def gram(self):
        return self.G

