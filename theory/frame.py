"""Projected gradient flow of the trainable vectors in the coordinates of an orthonormal frame.

For a geometry with hidden (orthonormal, fixed) vectors h_1..h_q and trainable vectors
w_1..w_p, every configuration lives in an n = q + p dimensional subspace of R^d spanned by a
frame e_1..e_n with e_k = h_k for k ≤ q. Writing w_i = Σ_k w_{i,k}·e_k, every overlap is a
polynomial in the frame coordinates:

    wᵢᵀh_k = w_{i,k},     wᵢᵀw_j = Σ_k w_{i,k}·w_{j,k},

so a risk R̄(overlaps) becomes R(y) with y the stacked coordinates. The projected gradient
flow (Marion et al. 2025, Sec. 5; Dohmatob 2025, Sec. 4)

    ẇ_i = −(I − w_i w_iᵀ)·∇_{w_i}R   (sphere vectors),      ẇ_i = −∇_{w_i}R   (free vectors)

leaves the span invariant (∇_{w_i}R is a combination of the frame vectors), so its frame
coordinates are a closed ODE: PGD in R^d started in the span is PGD in these coordinates.
Integrating vectors rather than overlaps keeps every state realisable and resolves tiny
departures from an edge such as u = −u*, which overlap coordinates lose.

Staying on the sphere numerically. Along ẇ = −(I − wwᵀ)g one has d‖w‖²/dt = 2(wᵀg)(‖w‖² − 1):
where wᵀg > 0 the unit sphere is *repelling*, so rounding errors grow (a Dohmatob run once ended
with ‖u‖ = 124). With ``keep_on_sphere`` (the default) a sphere vector moves by

    ẇ = −(I − wwᵀ/‖w‖²)·g − (‖w‖² − 1)·w,

which equals the projected flow on the unit sphere (same trajectories, same stationary points
and, tangentially, the same Jacobian), conserves ‖w‖ exactly in its tangential part and pulls
any rounding drift back: d‖w‖²/dt = −2‖w‖²(‖w‖² − 1).

The geometry is anything with ``hidden`` (names), ``trainable`` (objects with ``name`` and
``constraint`` 'sphere' or 'free') and ``overlaps`` ({(a, b): Symbol}).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

__all__ = ["FrameFlow", "frame_flow"]


@dataclass(frozen=True)
class FrameFlow:
    """dy/dt = rhs for the frame coordinates y (same order as ``state``).

    ``blocks`` lists, per trainable vector, (name, first index, end index, constraint) of its
    coordinates in y; ``overlaps`` is the geometry's {(a, b): symbol}; ``overlap_expressions``
    maps each overlap symbol to its polynomial in y; ``risk`` is R written in y."""

    state: tuple
    rhs: tuple
    risk: sp.Expr
    blocks: tuple
    overlaps: dict
    overlap_expressions: dict
    hidden: tuple

    @property
    def dimension(self) -> int:
        """Size n of the frame (hidden vectors first)."""
        return len(self.hidden) + len(self.blocks)

    def jacobian(self) -> sp.Matrix:
        return sp.Matrix(self.rhs).jacobian(sp.Matrix(self.state))

    def gradient(self) -> tuple:
        """Euclidean gradient ∂R/∂y (before projection)."""
        return tuple(sp.diff(self.risk, y) for y in self.state)

    def hessian(self) -> sp.Matrix:
        """Euclidean Hessian ∂²R/∂y² (before projection)."""
        return sp.hessian(self.risk, list(self.state))

    def overlap_rates(self) -> dict:
        """d/dt of every overlap along the flow by the chain rule, Σ_j ∂q/∂y_j · ẏ_j, in y."""
        return {q: sum((sp.diff(e, y) * r for y, r in zip(self.state, self.rhs)), sp.S.Zero)
                for q, e in self.overlap_expressions.items()}


def _coordinates(geometry, n: int) -> dict:
    """Frame coordinates of every vector: symbols for trainable ones, unit vectors for hidden."""
    out = {h: [sp.S.One if k == i else sp.S.Zero for k in range(n)]
           for i, h in enumerate(geometry.hidden)}
    for w in geometry.trainable:
        out[w.name] = list(sp.symbols(f"{w.name}1:{n + 1}", real=True))
    return out


def frame_flow(geometry, risk: sp.Expr, values: dict | None = None,
               keep_on_sphere: bool = True) -> FrameFlow:
    """The projected gradient flow of ``risk`` (an expression in the geometry's overlap
    symbols; ``values`` substituted first, e.g. the parameters) in frame coordinates.

    The frame has n = len(hidden) + len(trainable) vectors, the hidden ones first; trainable
    vector w has coordinates w1..wn (e.g. for Dohmatob's (u, v; u*, v*): µ = u1, η = u2,
    ζ = v1, ν = v2, ρ = Σ u_k v_k). ``keep_on_sphere`` adds the norm-restoring form of the
    sphere vectors' flow (module docstring); False gives the plain −(I − wwᵀ)g."""
    if not geometry.trainable:
        raise ValueError("frame_flow: the geometry has no trainable vector")
    for w in geometry.trainable:
        if w.constraint not in ("sphere", "free"):
            raise ValueError(f"frame_flow: vector {w.name} has constraint {w.constraint!r}; "
                             "allowed: 'sphere', 'free'")
    n = len(geometry.hidden) + len(geometry.trainable)
    coords = _coordinates(geometry, n)
    expressions = {sym: sum((x * y for x, y in zip(coords[a], coords[b])), sp.S.Zero)
                   for (a, b), sym in geometry.overlaps.items()}
    R = sp.sympify(risk)
    if values:
        R = R.subs(values)
    R = R.subs(expressions)
    state, rhs, blocks = [], [], []
    for w in geometry.trainable:
        W = coords[w.name]
        g = [sp.diff(R, x) for x in W]
        if w.constraint == "sphere" and keep_on_sphere:
            norm2 = sum(x**2 for x in W)          # ẇ = −(g − (wᵀg)w/‖w‖²) − (‖w‖² − 1)w
            radial = sum(x * gi for x, gi in zip(W, g)) / norm2
            rhs += [-(gi - radial * x) - (norm2 - 1) * x for x, gi in zip(W, g)]
        elif w.constraint == "sphere":     # ẇ = −(g − (wᵀg)·w)
            radial = sum(x * gi for x, gi in zip(W, g))
            rhs += [-(gi - radial * x) for x, gi in zip(W, g)]
        else:
            rhs += [-gi for gi in g]
        blocks.append((w.name, len(state), len(state) + n, w.constraint))
        state += W
    return FrameFlow(tuple(state), tuple(rhs), R, tuple(blocks), dict(geometry.overlaps), expressions,
                     tuple(geometry.hidden))
