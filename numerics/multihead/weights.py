"""Attention weights of a multi-head model as generated code: the numpy and torch versions of
the one SymPy definition of each activation (``theory.multihead.Activation``).

``weights_function(model)`` evaluates the token weights w_ℓ (the model's output convention)
or, with ``per_head=True``, the head weights A_hℓ at batches of logits s (…, H, L) and sink
logits v (H or …, H). The code comes from ``numerics.compiled`` (common
sub-expressions eliminated, source cached on disk) and takes exp of the logits as written.
An activation that declares a shift invariance is evaluated at shifted logits (the largest
logit of each head, or of all heads, subtracted; the declaration is checked numerically once
per compiled function), so softmax and B-softmax never overflow; any other non-finite weight
raises FloatingPointError instead of passing NaN on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from theory.derived import memo_by_model
from theory.multihead import MultiHeadModel

__all__ = ["weights_function", "WeightsFunction"]


class WeightsFunction:
    """Callable (s, v=None) → weights: s (…, H, L) logits, v sink logits broadcastable to
    (…, H) (None: zeros). Returns (…, H, L) head weights when ``per_head`` else (…, L) token
    weights. Works on numpy arrays (backend 'numpy') or torch tensors (backend 'torch')."""

    def __init__(self, model: MultiHeadModel, backend: str, per_head: bool, code: Callable):
        self.model, self.backend, self.per_head, self._code = model, backend, per_head, code
        self.shift = model.activation.shift_invariance

    def _xp(self):
        if self.backend == "torch":
            import torch
            return torch
        return np

    def _shifted(self, s, v):
        """Logits (and sinks) minus the largest one per head ('head') or overall ('all')."""
        xp = self._xp()
        sinks = self.model.activation.sinks
        if self.shift is None:
            return s, v
        full = xp.concatenate([s, v[..., None]], -1) if sinks else s
        if self.backend == "torch":
            c = full.amax(-1, keepdim=True) if self.shift == "head" else full.amax((-2, -1), keepdim=True)
        else:
            c = full.max(-1, keepdims=True) if self.shift == "head" else full.max((-2, -1), keepdims=True)
        return s - c, (v - c[..., 0] if sinks else v)

    def evaluate(self, s, v=None, stabilise: bool = True):
        """The weights at (s, v); ``stabilise=False`` evaluates the expressions at the raw
        logits (for checks of the declared invariance)."""
        xp, md = self._xp(), self.model
        H, L = md.H, md.L
        if self.backend == "torch":
            s = xp.as_tensor(s, dtype=xp.float64) if not xp.is_tensor(s) else s
            v = xp.zeros(H, dtype=s.dtype, device=s.device) if v is None else xp.as_tensor(
                v, dtype=s.dtype, device=s.device)
            v = xp.broadcast_to(v, s.shape[:-1])
        else:
            s = np.asarray(s, float)
            v = np.broadcast_to(np.zeros(H) if v is None else np.asarray(v, float), s.shape[:-1])
        if tuple(s.shape[-2:]) != (H, L):
            raise ValueError(f"logits s must have shape (..., {H}, {L}), got {tuple(s.shape)}")
        largest = float(s.max())
        if stabilise:
            s, v = self._shifted(s, v)
        args = [s[..., h, l] for h in range(H) for l in range(L)] + [v[..., h] for h in range(H)]
        out = self._code(*args)
        batch = tuple(s.shape[:-2])
        if self.backend == "torch":
            w = xp.stack([xp.broadcast_to(o, batch) for o in out], -1)
            ok = bool(xp.isfinite(w).all())
        else:
            w = np.stack([np.broadcast_to(o, batch) for o in out], -1)
            ok = bool(np.all(np.isfinite(w)))
        if not ok:
            raise FloatingPointError(
                f"weights of activation {md.activation.name!r}: non-finite value (largest logit "
                f"{largest:.4g}); declare its shift_invariance if it has one")
        return w.reshape(*batch, H, L) if self.per_head else w

    __call__ = evaluate


def weights_function(model: MultiHeadModel, backend: str = "numpy",
                     per_head: bool = False) -> WeightsFunction:
    """The generated weights of ``model`` (cached per activation, H, L, output convention and
    backend): token weights w_ℓ = (1/H)Σ_h A_hℓ ('mean') or Σ_h A_hℓ ('sum') by default, head
    weights A_hℓ with ``per_head=True``. See the module docstring for overflow handling."""
    if backend not in ("numpy", "torch"):
        raise ValueError(f"backend={backend!r}; allowed: 'numpy', 'torch'")
    weights_only = MultiHeadModel(model.H, model.L, 1, model.activation, output=model.output)
    return _checked_weights(weights_only, backend, bool(per_head))


@memo_by_model
def _checked_weights(model: MultiHeadModel, backend: str, per_head: bool) -> WeightsFunction:
    from numerics.compiled import compiled
    fn = WeightsFunction(model, backend, per_head, compiled(model, backend).weights(per_head))
    _check_declared_invariance(fn)
    return fn


def _check_declared_invariance(fn: WeightsFunction) -> None:
    """The weights at moderate random logits equal those at logits shifted as the activation's
    ``shift_invariance`` declares (the stabilisation relies on it)."""
    shift = fn.model.activation.shift_invariance
    if shift is None:
        return
    H, L = fn.model.H, fn.model.L
    rng = np.random.default_rng(0)
    s, v = rng.normal(0, 1.5, (3, H, L)), rng.normal(0, 1.5, (3, H))
    c = rng.normal(0, 3, (3, H, 1)) if shift == "head" else np.full((3, 1, 1), 2.7)
    raw = [fn.evaluate(x, y, stabilise=False) for x, y in ((s, v), (s + c, v + c[..., 0]))]
    if fn.backend == "torch":
        raw = [r.cpu().numpy() for r in raw]
    if not np.allclose(raw[0], raw[1], rtol=1e-10, atol=1e-13):
        raise ValueError(f"activation {fn.model.activation.name!r} declares shift_invariance="
                         f"{shift!r}, but its weights change when the logits are shifted that way")
