"""The multi-head model kind's symbolic layer (``theory.multihead``): declared shift invariances
hold symbolically; the saddle Hessian (Lemma III.1) from the model's own loss equals the former
hand-written one, softmax-v's at zero sinks is softmax-1's, its head-difference block is −c
times the second moment, and it is minus the Jacobian of the Monte Carlo flow; the SGD-noise
integrand equals the sampled gradient second moment; and equal models share their derived
expressions."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from numerics.multihead import HeadState, ReducedFlow
from theory.gaussian import GaussianLaw, expect
from theory.models.sagitova2026 import GaussianPrior
from theory import derive
from theory.multihead import ACTIVATIONS, Activation, HeadDerivation, MultiHeadModel, saddle_hessian

ACTS = sorted(ACTIVATIONS)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_declared_shift_invariances_hold_symbolically(name):
    act = ACTIVATIONS[name]
    md = derive(MultiHeadModel(2, 3, 1, act))
    c = sp.symbols("c_0:2", real=True)
    per_head = act.shift_invariance == "head"
    shift = {x: x + (c[h] if per_head else c[0]) for h, row in enumerate(md.logits) for x in row}
    shift.update({v: v + (c[h] if per_head else c[0]) for h, v in enumerate(md.sinks)})
    moved = [sp.simplify(a.xreplace(shift) - a) for row in md.head_weights for a in row]
    if act.shift_invariance is None:
        assert any(d != 0 for d in moved)
    else:
        assert all(d == 0 for d in moved)


# -- the saddle Hessian against the former hand-written one (its own weights and loss) --------
def _oracle_saddle_hessian(L, H, F, activation):
    m = sp.Matrix(H, F, lambda h, f: sp.Symbol(f"m[{h},{f}]", real=True))     # as the state
    chi = sp.Matrix(L, F, lambda l, f: sp.Symbol(f"chi_{l + 1}{f + 1}", real=True))
    theta = sp.symbols(f"theta_1:{F + 1}", real=True)
    mu = tuple(sp.Symbol(f"mu[{f}]", real=True) for f in range(F))
    S = sp.Matrix(F, F, lambda i, j: sp.Symbol(f"S[{min(i, j)},{max(i, j)}]", real=True))
    s = [[sum(m[h, f] * chi[l, f] for f in range(F)) for l in range(L)] for h in range(H)]
    if activation == "softmax":
        A = [[sp.exp(x) / sum(sp.exp(y) for y in row) for x in row] for row in s]
    elif activation == "softmax-1":
        A = [[sp.exp(x) / (1 + sum(sp.exp(y) for y in row)) for x in row] for row in s]
    else:
        Z = sum(sp.exp(y) for row in s for y in row)
        A = [[len(s) * sp.exp(x) / Z for x in row] for row in s]
    w = [sum(A[h][l] for h in range(H)) / H for l in range(L)]
    integrand = sum(((1 if l == 0 else 0) - w[l]) ** 2 for l in range(L))
    ms = list(m)
    law = GaussianLaw(tuple(chi), sp.Matrix([theta[f] if l == 0 else 0 for l in range(L)
                                             for f in range(F)]), sp.eye(L * F))
    Hm = sp.zeros(len(ms))
    for i, a in enumerate(ms):
        for j in range(i, len(ms)):
            q = sp.expand(sp.diff(integrand, a, ms[j]).subs({v: 0 for v in ms}))
            e = sp.expand(expect(q, law))
            e = e.subs({theta[f] * theta[g]: S[f, g] for f in range(F) for g in range(F)})
            e = e.subs({theta[f] ** 2: S[f, f] for f in range(F)}).subs({theta[f]: mu[f] for f in range(F)})
            Hm[i, j] = Hm[j, i] = sp.simplify(e)
    return Hm, ms, mu, S


@pytest.mark.parametrize("act, L, H, F", [("softmax", 3, 2, 1), ("softmax", 3, 2, 2),
                                          ("softmax-1", 3, 2, 1), ("softmax-1", 2, 3, 1),
                                          ("b-softmax", 3, 2, 1), ("b-softmax", 2, 3, 1)])
def test_saddle_hessian_from_the_models_loss_equals_the_hand_written_one(act, L, H, F):
    new = saddle_hessian(MultiHeadModel(H, L, F, act))
    old = _oracle_saddle_hessian(L, H, F, act)
    assert sp.simplify(new[0] - old[0]) == sp.zeros(H * F, H * F)
    assert new[1:] == old[1:]


def test_saddle_hessian_takes_a_model_only():
    with pytest.raises(TypeError, match="must be a MultiHeadModel, got int"):
        saddle_hessian(3)                    # the former (L, H, F, activation) form is gone
    with pytest.raises(TypeError):
        saddle_hessian(3, 2, 2)


def test_saddle_hessian_of_softmax_v_at_zero_sinks_is_softmax_1s():
    a = saddle_hessian(MultiHeadModel(2, 3, 1, "softmax-v"))[0]
    b = saddle_hessian(MultiHeadModel(2, 3, 1, "softmax-1"))[0]
    assert sp.simplify(a - b) == sp.zeros(2, 2)


def test_saddle_hessian_head_difference_block_is_minus_c_times_the_second_moment():
    import sympy as sp
    from theory.multihead import MultiHeadModel, head_difference_block, saddle_hessian
    Hm, ms, mu, S = saddle_hessian(MultiHeadModel(2, 3, 2))
    assert sp.simplify(head_difference_block(Hm, 2, 2) + sp.Rational(2, 27) * S) == sp.zeros(2, 2)


@given(H=st.integers(1, 3), F=st.integers(1, 2), L=st.integers(2, 4), seed=st.integers(0, 2**31),
       act=st.sampled_from(ACTS), output=st.sampled_from(["mean", "sum"]))
def test_symbolic_saddle_hessian_equals_the_jacobian_of_the_monte_carlo_flow(H, F, L, seed, act, output):
    """dm/dτ = −∇_m L, so at m = 0, r = 0 (b = v = 0) its Jacobian in m is minus the saddle
    Hessian of Lemma III.1 for any activation and output convention; the Monte Carlo Jacobian
    (per-draw central differences) agrees within z·se."""
    from theory.models.sagitova2026 import at_prior
    from theory.multihead import saddle_hessian
    rng = np.random.default_rng(seed)
    prior = GaussianPrior(rng.normal(0, 0.5, F), np.diag(rng.uniform(0.3, 2, F)))
    md = MultiHeadModel(H, L, F, act, output=output)
    Hm, ms, mu, S = saddle_hessian(md)
    Hn = at_prior(Hm, prior, mu, S)
    fl = ReducedFlow(md, prior, n=2**14, seed=seed, kind="random")
    eps = 1e-4
    for j in range(H * F):
        e = np.zeros(H * F)
        e[j] = eps
        dp = fl.derivative_draws(HeadState.make(e.reshape(H, F)))[:, :H * F]
        dm = fl.derivative_draws(HeadState.make(-e.reshape(H, F)))[:, :H * F]
        from numerics.multihead import mean_and_se
        col, se = mean_and_se((dp - dm) / (2 * eps))
        assert np.all(np.abs(col + Hn[:, j]) <= 5 * se + 1e-6), (j, col, -Hn[:, j], se)


# -- the SGD-noise integrand and the shared derivations ---------------------------------------
def test_noise_integrand_equals_sampled_gradient_second_moment():
    """N_hk = E_z,ξ[4(ŷ − y)² Σ_ℓ ∂ŷ/∂s_hℓ ∂ŷ/∂s_kℓ] at fixed logits, by sampling z and ξ."""
    md = derive(MultiHeadModel(2, 3, 1, "softmax-1", delta=0.4))
    rng = np.random.default_rng(0)
    s = rng.normal(0, 1, (2, 3))
    subs = dict(zip(md.arguments, list(s.ravel()) + [0.0, 0.0]))
    N = np.array([[float(e.subs(subs)) for e in row] for row in md.noise_integrand])
    w = np.array([float(e.subs(subs)) for e in md.token_weights])
    J = np.array([[[float(e.subs(subs)) for e in row] for row in Jh] for Jh in md.weight_jacobian])
    n = 400_000
    z = rng.standard_normal((n, 3))
    y = z[:, 0] + 0.4 * rng.standard_normal(n)
    res = z @ w - y
    dy = np.einsum("hlk,nk->nhl", J, z)                              # ∂ŷ/∂s_hℓ
    x = 4 * res[:, None, None] ** 2 * np.einsum("nhl,nkl->nhk", dy, dy)
    mc, se = x.mean(0), x.std(0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(mc - N) <= 5 * se), (mc, N, se)


def test_equal_models_share_their_derivations_and_different_ones_do_not():
    """Derived expressions are kept once per model in a process (``theory.derive``, the one
    derivation cache), never shared between models that differ in any field; an activation's
    weights count by identity, whatever object they are."""
    a, b = MultiHeadModel(2, 3, 1, "softmax"), MultiHeadModel(2, 3, 1, "softmax")
    assert a is not b and derive(a) is derive(b)
    others = (MultiHeadModel(2, 3, 1, "softmax-1"), MultiHeadModel(2, 3, 1, "softmax", delta=0.5),
              MultiHeadModel(2, 3, 1, "softmax", output="sum"), MultiHeadModel(2, 4, 1, "softmax"))
    for other in others:
        assert derive(other) is not derive(a)
        fresh = HeadDerivation(other)                                  # derived anew, no store
        for name in ("conditional_loss", "noise_integrand"):
            assert getattr(derive(other), name) == getattr(fresh, name)
        assert derive(other).noise_integrand != derive(a).noise_integrand   # Δ enters N, not φ

    class Weights(list):                                   # unhashable, and a list
        def __call__(self, s, v):
            return ACTIVATIONS["softmax"].weights(s, v)
    odd = MultiHeadModel(2, 3, 1, Activation("listy", Weights()))
    twin = MultiHeadModel(2, 3, 1, Activation("listy", Weights()))
    assert derive(odd) is derive(odd) and derive(twin) is not derive(odd)
    assert [[sp.simplify(x - y) for x, y in zip(r1, r2)]
            for r1, r2 in zip(derive(odd).loss_gradient, derive(a).loss_gradient)] == [[0] * 3] * 2
