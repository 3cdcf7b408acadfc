"""The order parameters of H attention heads (Sagitova et al. 2026, spec "Order parameters"):
one state type for the reduced flow, the Monte Carlo losses and the SGD simulators. Declared
beside the multi-head model (``theory.multihead``) so that a model file's statements in these
order parameters (e.g. the B-softmax Bayes parameters of Prop. IV.2) need nothing above the
symbolic layer; the numerical layer re-exports it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["HeadState", "head_state_names"]


def head_state_names(H: int, F: int) -> tuple[str, ...]:
    """Labels of the ``HeadState.pack`` coordinates: m[h,f] (row-major), r[h,k] (h ≤ k), b[h],
    v[h] — the names of the reduced model's state and of its trajectories' columns."""
    iu = np.triu_indices(H)
    return (tuple(f"m[{h},{f}]" for h in range(H) for f in range(F))
            + tuple(f"r[{h},{k}]" for h, k in zip(*iu))
            + tuple(f"b[{h}]" for h in range(H)) + tuple(f"v[{h}]" for h in range(H)))


@dataclass(frozen=True)
class HeadState:
    """Order parameters of H heads: m = (k_hᵀk*_f) (H × F), r = Q − mmᵀ (H × H, symmetric
    PSD), biases b (H), sink logits v (H; used only by activations with sinks).

    The constructor takes the arrays as they are (for internal use); ``make`` validates."""

    m: np.ndarray
    r: np.ndarray
    b: np.ndarray
    v: np.ndarray

    @classmethod
    def make(cls, m, r=None, b=None, v=None) -> HeadState:
        """A validated state; r defaults to 0, b and v to zeros."""
        m = np.atleast_2d(np.asarray(m, float))
        H = m.shape[0]
        r = np.zeros((H, H)) if r is None else np.asarray(r, float)
        b = np.zeros(H) if b is None else np.asarray(b, float).ravel()
        v = np.zeros(H) if v is None else np.asarray(v, float).ravel()
        if r.shape != (H, H) or b.shape != (H,) or v.shape != (H,):
            raise ValueError(f"HeadState: r must be {H}×{H}, b and v must have {H} entries")
        if not all(np.all(np.isfinite(x)) for x in (m, r, b, v)):
            raise ValueError("HeadState: m, r, b and v must be finite")
        r = (r + r.T) / 2
        if np.linalg.eigvalsh(r).min() < -1e-9 * max(1.0, np.abs(r).max()):
            raise ValueError("HeadState: r must be positive semi-definite")
        return cls(m, r, b, v)

    @property
    def H(self) -> int:
        return self.m.shape[0]

    def residual_root(self) -> np.ndarray:
        """R with R Rᵀ = r: the symmetric square root (eigenvalues clipped at 0)."""
        lam, U = np.linalg.eigh(self.r)
        return (U * np.sqrt(np.clip(lam, 0, None))) @ U.T

    def pack(self) -> np.ndarray:
        """m (row-major), the upper triangle of r (row-major), b, v as one vector (coordinates
        named by ``head_state_names``)."""
        iu = np.triu_indices(self.H)
        return np.concatenate([self.m.ravel(), self.r[iu], self.b, self.v])

    @classmethod
    def unpack(cls, y, H: int, F: int) -> HeadState:
        """The inverse of ``pack`` for H heads and F features."""
        y = np.asarray(y, float)
        iu = np.triu_indices(H)
        k = H * F
        nr = len(iu[0])
        r = np.zeros((H, H))
        r[iu] = y[k:k + nr]
        r = r + np.triu(r, 1).T
        return cls(y[:k].reshape(H, F), r, y[k + nr:k + nr + H], y[k + nr + H:k + nr + 2 * H])

    def permuted(self, perm) -> HeadState:
        """The same heads relabelled: head i of the result is head perm[i]."""
        p = np.asarray(perm)
        return HeadState(self.m[p], self.r[np.ix_(p, p)], self.b[p], self.v[p])

    def to_dict(self) -> dict:
        return {k: getattr(self, k).tolist() for k in ("m", "r", "b", "v")}
