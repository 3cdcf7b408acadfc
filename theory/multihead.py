"""Multi-head attention in the single-location model: the model kind of Sagitova et al. (2026).

The :class:`theory.Model` kind covers students that are a sum over tokens of one function
of the token's projections. H attention heads couple the tokens through the normalisation, so
they get their own description here, with the same division of labour: the user states the
activation as SymPy expressions, SymPy derives everything the numerical layer evaluates.

Setting (signal token at ℓ = 0 by exchangeability of the tokens): logits s_hℓ (H × L), sink
logits v_h, head weights A_h = activation(s_h, v), token weights w_ℓ = (1/H)Σ_h A_hℓ, prediction
ŷ = Σ_ℓ w_ℓ z_ℓ with values z ~ N(0, I_L) independent of the logits, label y = z_0 + Δξ.

Derived here:

* the conditional loss φ(s, v) = E_{z,ξ}(y − ŷ)² − Δ² = Σ_ℓ([ℓ = 0] − w_ℓ)² (spec
  "Attention model");
* its gradient ∂φ/∂s_hℓ, its same-token Hessian blocks ∂²φ/∂s_hℓ∂s_kℓ (the Stein/Price
  identities turn them into the r-equation of the flow, see the multi-head flow), ∂φ/∂v_h;
* the SGD-noise integrand: for one sample the key gradient is g_h = 2(ŷ − y)Σ_ℓ (∂ŷ/∂s_hℓ)x_ℓ,
  and as D → ∞, g_hᵀg_k/D → 4Σ_ℓ E_{z,ξ}[(ŷ − y)²(∂ŷ/∂s_hℓ)(∂ŷ/∂s_kℓ)]
  = 4Σ_ℓ[(φ + Δ²)·(∂w/∂s_hℓ)·(∂w/∂s_kℓ) + ½·(∂φ/∂s_hℓ)(∂φ/∂s_kℓ)]
  (Gaussian fourth moments of z; ∂w/∂s_hℓ is the vector over tokens ℓ′);
* for online SGD on samples: w, ∂w_ℓ′/∂s_hℓ and ∂w_ℓ′/∂v_h, so that a per-sample gradient is
  2(ŷ − y)·Σ_ℓ′ (∂w_ℓ′/∂·)z_ℓ′;
* the Hessian of the reduced loss in the head overlaps m at the unspecialized saddle (Lemma
  III.1), from the same conditional loss (``saddle_hessian``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property
from collections.abc import Callable

import sympy as sp

__all__ = ["Activation", "ACTIVATIONS", "SHIFT_INVARIANCES", "MultiHeadModel", "HeadDerivation",
           "activation",
           "saddle_hessian", "saddle_symbols", "head_difference_block"]


SHIFT_INVARIANCES = (None, "head", "all")


@dataclass(frozen=True)
class Activation:
    """Attention weights of H heads as SymPy expressions: the one definition of an activation.

    ``weights(s, v)`` gets the logits ``s`` (H lists of L symbols) and the sink logits ``v``
    (H symbols) and returns H lists of L expressions A_hℓ. ``sinks`` says whether v_h are
    trained parameters (softmax-v); otherwise they are ignored.

    ``shift_invariance`` declares a symmetry the generated code uses to avoid overflow
    (the multi-head weights function subtracts the largest logit before evaluating):
    'head' when A_h is unchanged by adding one constant to head h's logits s_h (and to its
    sink v_h when ``sinks``), 'all' when A is unchanged by adding one constant to every logit
    (and sink), None when no such symmetry holds (softmax-1: its sink logit is fixed at 0).
    The declaration is checked when the code is generated."""

    name: str
    weights: Callable
    sinks: bool = False
    shift_invariance: str | None = None

    def __post_init__(self):
        if self.shift_invariance not in SHIFT_INVARIANCES:
            raise ValueError(f"Activation {self.name!r}: shift_invariance={self.shift_invariance!r}; "
                             f"allowed: {SHIFT_INVARIANCES}")


def _softmax(s, v):
    return [[sp.exp(x) / sum(sp.exp(y) for y in row) for x in row] for row in s]


def _softmax_1(s, v):
    return [[sp.exp(x) / (1 + sum(sp.exp(y) for y in row)) for x in row] for row in s]


def _softmax_v(s, v):
    return [[sp.exp(x) / (sp.exp(vh) + sum(sp.exp(y) for y in row)) for x in row]
            for row, vh in zip(s, v)]


def _bsoftmax(s, v):
    Z = sum(sp.exp(y) for row in s for y in row)
    return [[len(s) * sp.exp(x) / Z for x in row] for row in s]


ACTIVATIONS = {
    "softmax": Activation("softmax", _softmax, shift_invariance="head"),
    "softmax-1": Activation("softmax-1", _softmax_1),
    "softmax-v": Activation("softmax-v", _softmax_v, sinks=True, shift_invariance="head"),
    "b-softmax": Activation("b-softmax", _bsoftmax, shift_invariance="all"),
}


def activation(spec) -> Activation:
    """An :class:`Activation` from a registered name or an Activation instance."""
    if isinstance(spec, Activation):
        return spec
    if spec not in ACTIVATIONS:
        raise ValueError(f"activation={spec!r}; allowed: {sorted(ACTIVATIONS)} or an Activation")
    return ACTIVATIONS[spec]


@dataclass(frozen=True)
class MultiHeadModel:
    """H heads, L tokens, F hidden features, an activation; Δ is the label-noise level;
    ``output`` 'mean' combines heads as ŷ = (1/H)Σ_h Σ_ℓ A_hℓ z_ℓ (the spec's reading), 'sum'
    as ŷ = Σ_h Σ_ℓ A_hℓ z_ℓ (a convention the paper may use; the Sec. IV claims depend on it).

    Order parameters (spec "Order parameters"): m = (k_hᵀk*_f) (H × F), r = Q − mmᵀ (H × H),
    biases b (H), sink logits v (H, trained only when ``activation.sinks``)."""

    H: int
    L: int
    F: int
    activation: Activation | str = "softmax"
    delta: float = 0.0
    output: str = "mean"

    def __post_init__(self):
        if self.output not in ("mean", "sum"):
            raise ValueError(f"MultiHeadModel: output={self.output!r}; allowed: 'mean' "
                             "(ŷ = (1/H)Σ_h, the spec's reading) or 'sum' (ŷ = Σ_h)")
        for name, lo in (("H", 1), ("L", 2), ("F", 1)):
            val = getattr(self, name)
            if not (isinstance(val, int) and val >= lo):
                raise ValueError(f"MultiHeadModel: {name}={val!r} must be an integer ≥ {lo}")
        if not (float(self.delta) >= 0):
            raise ValueError(f"MultiHeadModel: delta={self.delta!r} must be ≥ 0")
        object.__setattr__(self, "activation", activation(self.activation))

    @property
    def trains_sinks(self) -> bool:
        return self.activation.sinks

    def derivation(self) -> HeadDerivation:
        """The expressions SymPy derives for this model (use ``theory.derive(model)``, which
        keeps them once per model)."""
        return HeadDerivation(self)

    def check_prior(self, prior):
        """``prior`` if it draws θ with this model's F features, else a ValueError: the one check
        of a prior against the model (reduced flow, Monte Carlo losses, SGD simulators)."""
        F = getattr(prior, "F", None)
        if F != self.F:
            raise ValueError(f"prior has F={F} features, the model F={self.F}; allowed: a prior "
                             f"over {self.F} features")
        return prior


class HeadDerivation:
    """Everything SymPy derives for a :class:`MultiHeadModel` (module docstring): the logit and
    sink symbols, the weights, the conditional loss and its derivatives, the SGD-noise
    integrand. Built by ``theory.derive(model)``, once per model."""

    def __init__(self, model: MultiHeadModel):
        self.model = model
        self.H, self.L, self.F = model.H, model.L, model.F
        self.activation, self.delta, self.output = model.activation, model.delta, model.output
        self.trains_sinks = model.trains_sinks

    # --- symbols ---------------------------------------------------------------------------
    @cached_property
    def logits(self):
        return [[sp.Symbol(f"s_{h}_{l}", real=True) for l in range(self.L)] for h in range(self.H)]

    @cached_property
    def sinks(self):
        return [sp.Symbol(f"v_{h}", real=True) for h in range(self.H)]

    @property
    def arguments(self):
        """Argument symbols of every generated function: logits (row-major), then sinks."""
        return [x for row in self.logits for x in row] + list(self.sinks)

    # --- derived expressions ---------------------------------------------------------------
    @cached_property
    def head_weights(self):
        A = self.activation.weights(self.logits, self.sinks)
        if len(A) != self.H or any(len(row) != self.L for row in A):
            raise ValueError(f"activation {self.activation.name!r} must return {self.H} rows of "
                             f"{self.L} weights")
        return [[sp.sympify(a) for a in row] for row in A]

    @cached_property
    def token_weights(self):
        """w_ℓ = (1/H)Σ_h A_hℓ ('mean') or Σ_h A_hℓ ('sum')."""
        A = self.head_weights
        scale = sp.Rational(1, self.H) if self.output == "mean" else sp.S.One
        return [scale * sum(A[h][l] for h in range(self.H)) for l in range(self.L)]

    @cached_property
    def conditional_loss(self):
        """φ = Σ_ℓ([ℓ = 0] − w_ℓ)² (the loss given the logits, minus Δ²)."""
        return sum(((1 if l == 0 else 0) - w) ** 2 for l, w in enumerate(self.token_weights))

    @cached_property
    def loss_gradient(self):
        """∂φ/∂s_hℓ (H × L)."""
        return [[sp.diff(self.conditional_loss, x) for x in row] for row in self.logits]

    @cached_property
    def loss_hessian_blocks(self):
        """∂²φ/∂s_hℓ∂s_kℓ for every token ℓ: L lists of H × H (the same-token blocks)."""
        G, s, H = self.loss_gradient, self.logits, self.H
        out = []
        for l in range(self.L):
            block = [[None] * H for _ in range(H)]
            for h in range(H):
                for k in range(h, H):
                    block[h][k] = block[k][h] = sp.diff(G[h][l], s[k][l])
            out.append(block)
        return out

    @cached_property
    def loss_sink_gradient(self):
        """∂φ/∂v_h (zero when the activation has no sinks)."""
        return [sp.diff(self.conditional_loss, v) for v in self.sinks]

    @cached_property
    def weight_jacobian(self):
        """∂w_ℓ′/∂s_hℓ as [h][ℓ][ℓ′]."""
        w = self.token_weights
        return [[[sp.diff(wp, x) for wp in w] for x in row] for row in self.logits]

    @cached_property
    def weight_sink_jacobian(self):
        """∂w_ℓ′/∂v_h as [h][ℓ′]."""
        return [[sp.diff(wp, v) for wp in self.token_weights] for v in self.sinks]

    @cached_property
    def noise_integrand(self):
        """N_hk = 4Σ_ℓ[(φ + Δ²)(∂w/∂s_hℓ)·(∂w/∂s_kℓ) + ½(∂φ/∂s_hℓ)(∂φ/∂s_kℓ)] (H × H): the
        D → ∞ limit of g_hᵀg_k/D for one sample's key gradients (module docstring)."""
        J, G, H, L = self.weight_jacobian, self.loss_gradient, self.H, self.L
        total = self.conditional_loss + sp.Float(float(self.delta)) ** 2
        out = [[None] * H for _ in range(H)]
        for h in range(H):
            for k in range(h, H):
                out[h][k] = out[k][h] = 4 * sum(
                    total * sum(a * b for a, b in zip(J[h][l], J[k][l])) + G[h][l] * G[k][l] / 2
                    for l in range(L))
        return out

    def latex(self) -> dict:
        """The derived expressions as LaTeX (for reports)."""
        from .printing import latex
        return {"token_weights": [latex(w) for w in self.token_weights],
                "conditional_loss": latex(self.conditional_loss)}


# --- the unspecialized saddle, symbolically (Lemma III.1; spec "Hints") --------------------
def saddle_symbols(H: int, F: int) -> tuple[list, tuple, sp.Matrix]:
    """The symbols of :func:`saddle_hessian`, named 0-based like the reduced model's state
    (``numerics.reduced.HeadReduced.state_names``): the overlaps m[h,f] (row-major, h < H,
    f < F), the prior's mean mu[f] = Eθ_f and its second moment S[f,g] = Eθ_fθ_g, a symmetric
    Matrix (its entries [f,g] and [g,f] are the one symbol S[min(f,g),max(f,g)])."""
    m = [sp.Symbol(f"m[{h},{f}]", real=True) for h in range(H) for f in range(F)]
    mu = tuple(sp.Symbol(f"mu[{f}]", real=True) for f in range(F))
    S = sp.Matrix(F, F, lambda i, j: sp.Symbol(f"S[{min(i, j)},{max(i, j)}]", real=True))
    return m, mu, S


def saddle_hessian(model: MultiHeadModel) -> tuple[sp.Matrix, list, tuple, sp.Matrix]:
    """Hessian of the reduced loss in the keys' overlaps m (H×F, row-major) at m = 0, r = 0,
    b = 0, v = 0 (all logits zero), for any :class:`MultiHeadModel` (any activation, either
    output convention; sinks held at v = 0).

    The model's own conditional loss φ(s, v) is taken with the logits s_hℓ = Σ_f m_hf χ_ℓf
    and v = 0, differentiated twice in m at m = 0 — a quadratic form in the spike
    projections χ — and its Gaussian expectation taken with χ_0 = θ + g₀, χ_ℓ = g_ℓ (g
    standard; the signal token first), then E over θ through the symbols mu[f] = Eθ_f and
    S[f,g] = Eθ_fθ_g. Exact in L, H and the moments of θ. Every index is 0-based, and the
    symbols of m are named as the state: m[h,f] (``saddle_symbols``).

    Returns (Hessian Matrix, m symbols, mu symbols, second-moment Matrix S): new Matrices at
    each call, derived once per model."""
    if not isinstance(model, MultiHeadModel):
        raise TypeError(f"saddle_hessian: model must be a MultiHeadModel, got {type(model).__name__} "
                        "(e.g. saddle_hessian(MultiHeadModel(H, L, F, activation)))")
    try:
        hash(model)
    except TypeError:                      # an activation whose weights cannot be hashed
        Hm, ms, mu, S = _derive_saddle_hessian(model)
    else:
        Hm, ms, mu, S = _kept_saddle_hessian(model)
    return Hm.as_mutable(), list(ms), mu, S.as_mutable()


def _derive_saddle_hessian(model: MultiHeadModel):
    """``saddle_hessian``'s derivation (seconds for H·F = 4; ``_kept_saddle_hessian`` keeps it
    for the last models: the command line prints it and evaluates it at a prior)."""
    from .derived import derive
    from .gaussian import GaussianLaw, expect
    H, L, F = model.H, model.L, model.F
    derived = derive(model)
    ms, mu, S = saddle_symbols(H, F)
    m = sp.Matrix(H, F, ms)
    chi = sp.Matrix(L, F, lambda l, f: sp.Symbol(f"chi[{l},{f}]", real=True))
    theta = tuple(sp.Symbol(f"theta[{f}]", real=True) for f in range(F))
    logits = {derived.logits[h][l]: sum(m[h, f] * chi[l, f] for f in range(F))
              for h in range(H) for l in range(L)}
    logits.update({v: sp.S.Zero for v in derived.sinks})
    integrand = derived.conditional_loss.xreplace(logits)
    zero = {x: 0 for x in ms}
    law = GaussianLaw(tuple(chi), sp.Matrix([theta[f] if l == 0 else 0 for l in range(L)
                                             for f in range(F)]), sp.eye(L * F))
    second = {theta[f] * theta[g]: S[f, g] for f in range(F) for g in range(F)}
    squares = {theta[f] ** 2: S[f, f] for f in range(F)}
    first = {theta[f]: mu[f] for f in range(F)}
    Hm = sp.zeros(len(ms))
    for i, a in enumerate(ms):
        for j in range(i, len(ms)):
            q = sp.expand(sp.diff(integrand, a, ms[j]).subs(zero))
            e = sp.expand(expect(q, law))                      # quadratic in θ
            e = e.subs(second).subs(squares).subs(first)
            Hm[i, j] = Hm[j, i] = sp.simplify(e)
    return sp.ImmutableMatrix(Hm), tuple(ms), mu, sp.ImmutableMatrix(S)


_kept_saddle_hessian = functools.lru_cache(maxsize=32)(_derive_saddle_hessian)


def head_difference_block(Hm, H: int, F: int, heads=(0, 1)):
    """The Hessian restricted to the directions m[h1,·] − m[h2,·] (one per feature), unit
    norm."""
    h1, h2 = heads
    P = sp.zeros(H * F, F)
    for f in range(F):
        P[h1 * F + f, f] = 1 / sp.sqrt(2)
        P[h2 * F + f, f] = -1 / sp.sqrt(2)
    return sp.simplify(P.T * Hm * P)
