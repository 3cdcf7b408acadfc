"""Direct finite-dimension online SGD in torch, batched over independent seeds.

Shapes: S seeds, B samples per step, L tokens, d dimensions, p trainable and q hidden vectors
(hidden = e_1..e_q by rotation invariance). Each step draws raw tokens g ~ N(0, I_d)
(S × B × L × d); the signal token is x_J = s_signal·g_J + μ_signal and the others
x_ℓ = s_noise·g_ℓ + μ_noise. Projections and gradients only need g through two contractions,

    xᵀw = s_ℓ·gᵀw + μ_ℓᵀw,       ∇_w ℓ = 2(ŷ − y)·Σ_ℓ ∂t/∂(xᵀw)·(s_ℓ·g_ℓ + μ_ℓ),

where ∂t/∂(xᵀw) is generated from the model's student expression: no autograd, so one step
costs little more than drawing the B·L·d Gaussians per seed. The fresh-sample test loss is
the skeleton's (``SGDSimulator.test_loss``), in law through ``gram()``.
"""

from __future__ import annotations

from collections.abc import Mapping

from theory.model import Model
from .base import SimulationConfig, realise_overlaps
from .token_sum import TokenSumSimulator

__all__ = ["DirectSGD"]


class DirectSGD(TokenSumSimulator):
    """State: the trainable vectors W (S × p × d); hidden vectors are e_1..e_q."""

    def __init__(self, model: Model, params: Mapping[str, float], config: SimulationConfig):
        super().__init__(model, params, config)
        self.W = self._init_weights()

    # ---------------------------------------------------------------------------------------
    def _init_weights(self):
        torch, cfg = self.torch, self.cfg
        S = cfg.seeds
        W = torch.zeros(S, self.p, self.d, dtype=self.dtype, device=self.device)
        if isinstance(self.init, str):                                          # 'random'
            W = torch.randn(S, self.p, self.d, generator=self.gen, dtype=self.dtype,
                            device=self.device)
            return W / W.norm(dim=-1, keepdim=True)
        C = realise_overlaps(self.model, self.init)
        n = self.p + self.q
        W[:, :, :n] = torch.as_tensor(C[self.q:], dtype=self.dtype, device=self.device)
        return W

    def overlaps(self, W=None):
        """Order parameters (S × K) in model.order_parameters order."""
        W = self.W if W is None else W
        names = list(self.code.trainable) + list(self.code.hidden)
        H = W[:, :, :self.q]
        gram_tw = W @ W.transpose(1, 2)
        out = []
        for (a, b), _sym in self.model.overlaps.items():
            i, j = names.index(a), names.index(b)
            if i >= self.p:
                i, j = j, i
            out.append(gram_tw[:, i, j] if j < self.p else H[:, i, j - self.p])
        return self.torch.stack(out, -1)

    def _forward(self, Praw, Hraw, J, W):
        """Projections → (ŷ − y, ∂t/∂p per trainable): Praw = gᵀw (S,B,L,p), Hraw = g[:q]."""
        onehot, scale, mu = self._token_terms(J)
        muW = mu @ W[:, :, :self.q].transpose(1, 2)[:, None]                    # S,B,L,p
        P = scale[..., None] * Praw + muW
        Ph = scale[..., None] * Hraw + mu
        r, dts = self._predict(P, Ph, onehot)
        return r, dts, scale, mu

    def step(self):
        """One SGD step; two contractions over the B·L·d Gaussians, the rest is O(S·p·d)."""
        torch, cfg = self.torch, self.cfg
        S, B, L, d = cfg.seeds, cfg.batch, self.L, self.d
        W = self.W
        G = torch.randn(S, B * L, d, generator=self.gen, dtype=self.dtype, device=self.device)
        J = torch.randint(L, (S, B), generator=self.gen, device=self.device)
        xi = torch.randn(S, B, generator=self.gen, dtype=self.dtype, device=self.device)
        Praw = torch.bmm(G, W.transpose(1, 2)).view(S, B, L, self.p)
        Hraw = G[:, :, :self.q].view(S, B, L, self.q)
        r, dts, scale, mu = self._forward(Praw, Hraw, J, W)
        r = r - self.label_noise * xi
        coef = (2.0 / B) * r[..., None, None] * torch.stack(dts, -1)           # S,B,L,p
        grad = torch.bmm((coef * scale[..., None]).view(S, B * L, self.p).transpose(1, 2), G)
        grad[:, :, :self.q] += torch.einsum("sblp,sblq->spq", coef, mu)
        lr = cfg.lr
        if self.all_sphere:   # w ← (w − lr·(g − (g·w)w)) / ‖·‖, in place
            radial = torch.linalg.vecdot(grad, W).unsqueeze(-1)
            W = W.mul(1 + lr * radial).sub_(grad, alpha=lr)
            self.W = W.div_(torch.linalg.vector_norm(W, dim=-1, keepdim=True))
            return
        radial = torch.linalg.vecdot(grad, W).unsqueeze(-1)
        grad = torch.where(self.sphere[None, :, None], grad - radial * W, grad)
        W = W - lr * grad
        norm = W.norm(dim=-1, keepdim=True)
        self.W = torch.where(self.sphere[None, :, None], W / norm, W)

    def gram(self):
        """Gram matrix (S × n × n) of the hidden vectors e_1..e_q and the trainable rows of W."""
        torch, S = self.torch, self.cfg.seeds
        U = torch.cat([torch.eye(self.q, self.d, dtype=self.dtype, device=self.device)
                       .expand(S, -1, -1), self.W], 1)                        # S, q+p, d
        return U @ U.transpose(1, 2)

