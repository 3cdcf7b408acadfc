"""The token-sum model kind's layer over the SGD skeleton (``numerics.sgd.base``): ŷ = Σ_ℓ t(x_ℓ)
with the per-token student t and the label s(x_J) generated from the model's SymPy expressions
(``theory.model.Model``), tokens x_ℓ = s_ℓ·g_ℓ + μ_ℓ with the signal's or the noise's scale and
planted mean. Shared by the direct (``direct``) and the Gram-matrix (``gram``) simulators."""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp

from theory.model import Model
from .base import SGDSimulator, SimulationConfig, model_code

__all__ = ["TokenSumSimulator"]


class TokenSumSimulator(SGDSimulator):
    """The token-sum kind: validated parameters, generated per-token code, token laws and the
    prediction from projections. Order parameters: the model's overlaps, by name. Subclasses
    keep their own state and implement ``step``, ``gram`` and ``overlaps`` (S × K, in
    ``model.order_parameters`` order).

    params: the model's parameters by name (d, L, …; checked by the model). config.init: a dict
    of overlaps (the same in every seed) or 'random' (i.i.d. Gaussian directions; also None).
    One step: w ← w − lr·∇ℓ (free) or w ← (w − lr·P⊥∇ℓ)/‖·‖ (sphere), ℓ the squared error
    averaged over a batch; t = step·lr."""

    def __init__(self, model: Model, params: Mapping[str, float], config: SimulationConfig):
        if not isinstance(params, Mapping):
            raise ValueError(f"params={params!r}; allowed: a dict of the model's parameters")
        init = "random" if config.init is None else config.init
        if not (init == "random" or isinstance(init, Mapping)):
            raise ValueError(f"init={init!r}; allowed: 'random' or a dict of overlaps")
        self.model, self.init = model, init
        self.params = model.check_params(params)
        self.d = int(self.params[model.dimension.name])
        self.code = model_code(model)
        self.p, self.q = len(self.code.trainable), len(self.code.hidden)
        if self.d < self.p + self.q:
            raise ValueError(f"dimension d={self.d}; allowed: d ≥ {self.p + self.q} "
                             "(number of trainable plus hidden vectors)")
        super().__init__(config)
        torch = self.torch
        self.names = tuple(s.name for s in model.order_parameters)
        subs = {s: self.params[s.name] for s in model.param_symbols}

        def ev(e):
            return float(sp.sympify(e).subs(subs))
        self.L = int(ev(model.data.L))
        self.pvals = [self.params[s.name] for s in model.param_symbols]
        data = model.data
        self.scale_signal, self.scale_noise = ev(data.signal.scale), ev(data.noise.scale)
        idx = {h: i for i, h in enumerate(self.code.hidden)}
        self.mu_signal = torch.zeros(self.q, dtype=self.dtype, device=self.device)
        self.mu_noise = torch.zeros(self.q, dtype=self.dtype, device=self.device)
        for a, c in data.signal.mean.items():
            self.mu_signal[idx[a]] = ev(c)
        for a, c in data.noise.mean.items():
            self.mu_noise[idx[a]] = ev(c)
        self.label_noise = ev(model.label_noise)
        self.sphere = torch.tensor([v.constraint == "sphere" for v in model.trainable],
                                   device=self.device)
        self.all_sphere = bool(self.sphere.all())

    def overlaps(self):
        """Order parameters (S × K) in ``model.order_parameters`` order."""
        raise NotImplementedError

    def order_parameters(self) -> dict:
        q = self.overlaps()
        return {name: q[:, k] for k, name in enumerate(self.names)}

    def _token_terms(self, J):
        """Per-token scale and mean (coefficients on the hidden basis) from the location J."""
        torch = self.torch
        onehot = torch.nn.functional.one_hot(J, self.L).to(self.dtype)         # S,B,L
        scale = self.scale_noise + onehot * (self.scale_signal - self.scale_noise)
        mu = self.mu_noise + onehot[..., None] * (self.mu_signal - self.mu_noise)  # S,B,L,q
        return onehot, scale, mu

    def _predict(self, Pw, Ph, onehot):
        """ŷ − s(x_J) and ∂t/∂(xᵀw) from the projections on trainable (Pw) and hidden (Ph)."""
        outs = self.code.student(*self.pvals, *Pw.unbind(-1), *Ph.unbind(-1))
        t, dts = outs[0], outs[1:]
        PhJ = (Ph * onehot[..., None]).sum(-2)
        y = self.code.label(*self.pvals, *PhJ.unbind(-1))[0]
        return t.sum(-1) - y, dts

    def _embed_scaled(self, Z, J, V):
        """x_E = s·z + Σ_a μ_a·V_a (hidden rows of V first), with the one-hot of J and s."""
        onehot, scale, mu = self._token_terms(J)
        X = scale[..., None] * Z + mu @ V[:, None, :self.q, :]
        return X, onehot, scale

    def _embed(self, Z, J, V):
        X, onehot, _ = self._embed_scaled(Z, J, V)
        return X, onehot

    def _label_noise(self, m: int):
        """Standard label-noise draws ξ (S × m); y = s(x_J) + σ·ξ."""
        return self.torch.randn(self.cfg.seeds, m, generator=self.gen, dtype=self.dtype,
                                device=self.device)

    def _residual(self, P, onehot):
        xi = self._label_noise(P.shape[1])
        r, _ = self._predict(P[..., self.q:], P[..., :self.q], onehot)
        return r - self.label_noise * xi
