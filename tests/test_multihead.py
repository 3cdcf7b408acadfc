"""Multi-head attention model kind: the derived expressions and the reduced flow against
independent computations (hand-written activations, finite differences of the common-random-
number loss, the Gram chain rule, direct sampling of the SGD noise)."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from numerics.multihead import (FlowDraws, HeadState, ReducedFlow, draws_for, minimise, reduced_loss,
                                weights_function)
from theory.models.sagitova2026 import GaussianPrior, flipping_spike
from theory.multihead import _DERIVED, ACTIVATIONS, Activation, MultiHeadModel

ACTS = sorted(ACTIVATIONS)


def random_state(rng, H, F, scale=0.6):
    A = rng.standard_normal((H, H)) * 0.5
    return HeadState.make(rng.standard_normal((H, F)) * scale, A @ A.T + 0.05 * np.eye(H),
                          rng.normal(0, 0.3, H), rng.normal(0, 0.5, H))


@given(act=st.sampled_from(ACTS), H=st.integers(1, 3), L=st.integers(2, 4),
       seed=st.integers(0, 2**31))
def test_symbolic_weights_equal_their_generated_numpy_code(act, H, L, seed):
    md = MultiHeadModel(H, L, 1, act)
    rng = np.random.default_rng(seed)
    s, v = rng.normal(0, 2, (H, L)), rng.normal(0, 1, H)
    subs = dict(zip(md.arguments, list(s.ravel()) + list(v)))
    A_sym = np.array([[float(a.subs(subs)) for a in row] for row in md.head_weights])
    assert np.allclose(A_sym, weights_function(md, per_head=True)(s, v), rtol=1e-12, atol=1e-14)


@given(act=st.sampled_from(ACTS), H=st.integers(1, 3), F=st.integers(1, 2),
       seed=st.integers(0, 2**31))
def test_m_b_v_equations_are_minus_the_gradient_of_the_common_random_number_loss(act, H, F, seed):
    rng = np.random.default_rng(seed)
    md = MultiHeadModel(H, 3, F, act)
    prior = GaussianPrior(rng.normal(0, 0.5, F), np.diag(rng.uniform(0.5, 2, F)))
    fl = ReducedFlow(md, prior, n=512, seed=seed)
    s = random_state(rng, H, F)
    d = fl.derivative(s)
    eps = 1e-6
    for name in ("m", "b", "v"):
        x = getattr(s, name)
        for idx in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            sp_, sm_ = (HeadState(**{**s.__dict__, name: y}) for y in (xp, xm))
            fd = -(fl.loss(sp_)[0] - fl.loss(sm_)[0]) / (2 * eps)
            want = getattr(d, name)[idx] if (name != "v" or md.trains_sinks) else 0.0
            if name == "v" and not md.trains_sinks:
                continue
            assert abs(want - fd) <= 1e-6 * (1 + abs(fd)), (name, idx, want, fd)


@pytest.mark.parametrize("act", ["softmax", "softmax-v", "b-softmax"])
def test_r_equation_stein_form_agrees_with_the_gram_chain_rule(act):
    """dr from the Stein identity vs dQ − dm mᵀ − m dmᵀ with dQ from finite differences of the
    loss written in (m, Q): dK = −∂ℓ/∂m S − 2(∂ℓ/∂Q)K (pathwise, another estimator)."""
    rng = np.random.default_rng(3)
    H, F = 2, 2
    md = MultiHeadModel(H, 4, F, act)
    fl = ReducedFlow(md, flipping_spike(1.0, 2.0), n=2**16, seed=5)
    s = random_state(rng, H, F)
    d, se = fl.derivative(s, with_se=True)
    Q = s.r + s.m @ s.m.T

    def loss(m, Q):
        return fl.loss(HeadState.make(m, Q - m @ m.T, s.b, s.v))[0]
    eps = 1e-4
    gQ, gm = np.zeros((H, H)), np.zeros((H, F))
    for i in range(H):
        for j in range(H):
            E = np.zeros((H, H))
            E[i, j] += eps / 2
            E[j, i] += eps / 2
            gQ[i, j] = (loss(s.m, Q + E) - loss(s.m, Q - E)) / (2 * eps)
    for idx in np.ndindex(H, F):
        E = np.zeros((H, F))
        E[idx] = eps
        gm[idx] = (loss(s.m + E, Q) - loss(s.m - E, Q)) / (2 * eps)
    dm = -gm - 2 * gQ @ s.m
    dQ = -gm @ s.m.T - s.m @ gm.T - 2 * gQ @ Q - 2 * Q @ gQ
    dr = dQ - dm @ s.m.T - s.m @ dm.T
    assert np.allclose(dm, d.m, atol=1e-7)
    assert np.all(np.abs(dr - d.r) <= 6 * np.sqrt(2) * se.r + 1e-6), (dr, d.r, se.r)


@given(act=st.sampled_from(ACTS), seed=st.integers(0, 2**31))
def test_head_permutation_equivariance(act, seed):
    """Relabelling heads relabels the flow. Exact at r = 0 with the same draws (the residual
    draws then do not enter; the r-equation is the SGD-noise term)."""
    rng = np.random.default_rng(seed)
    H, F = 3, 2
    md = MultiHeadModel(H, 3, F, act)
    fl = ReducedFlow(md, GaussianPrior([0.3, 0.0], np.diag([1.5, 0.7])), n=256, seed=seed,
                     sgd_noise=0.4)
    perm = rng.permutation(H)
    s = random_state(rng, H, F)
    s0 = HeadState(s.m, np.zeros((H, H)), s.b, s.v)
    d, dp = fl.derivative(s0), fl.derivative(s0.permuted(perm))
    for name in ("m", "r", "b", "v"):
        assert np.allclose(getattr(dp, name), getattr(d.permuted(perm), name), atol=1e-12)
    assert np.isclose(fl.loss(s0)[0], fl.loss(s0.permuted(perm))[0], rtol=1e-13)


def test_torch_backend_equals_numpy_backend():
    md = MultiHeadModel(2, 4, 2, "softmax-v")
    prior = flipping_spike(1.0, 1.5)
    s = random_state(np.random.default_rng(1), 2, 2)
    a = ReducedFlow(md, prior, n=1024, seed=2, sgd_noise=0.3).derivative(s).pack()
    b = ReducedFlow(md, prior, n=1024, seed=2, sgd_noise=0.3, backend="torch").derivative(s).pack()
    assert np.allclose(a, b, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("act", ["softmax", "softmax-1", "b-softmax"])
def test_reduced_flow_loss_matches_the_numpy_reduced_loss(act):
    rng = np.random.default_rng(7)
    prior = GaussianPrior([0.5, 0.5], np.diag([2.0, 0.5]))
    s = random_state(rng, 2, 2)
    md = MultiHeadModel(2, 4, 2, act, delta=0.3)
    a, a_se = ReducedFlow(md, prior, n=2**14, seed=1, kind="random").loss(s)
    b, b_se, _ = reduced_loss(md, s, prior, 2**15, seed=2)
    assert abs(a - b) <= 5 * np.hypot(a_se, b_se)


def test_noise_integrand_equals_sampled_gradient_second_moment():
    """N_hk = E_z,ξ[4(ŷ − y)² Σ_ℓ ∂ŷ/∂s_hℓ ∂ŷ/∂s_kℓ] at fixed logits, by sampling z and ξ."""
    md = MultiHeadModel(2, 3, 1, "softmax-1", delta=0.4)
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


def test_user_activation_from_one_sympy_function():
    """A variant written as one function (a tempered softmax) needs no engine change."""
    tempered = Activation("softmax-T2", lambda s, v: [[sp.exp(2 * x) / sum(sp.exp(2 * y) for y in row)
                                                        for x in row] for row in s])
    md = MultiHeadModel(2, 3, 1, tempered)
    fl = ReducedFlow(md, GaussianPrior([1.0], [[1.0]]), n=256, seed=0)
    base = ReducedFlow(MultiHeadModel(2, 3, 1, "softmax"), GaussianPrior([1.0], [[1.0]]), n=256, seed=0)
    s = HeadState.make([[0.3], [-0.2]], np.zeros((2, 2)))
    s2 = HeadState.make([[0.6], [-0.4]], np.zeros((2, 2)))
    assert np.isclose(fl.loss(s)[0], base.loss(s2)[0], rtol=1e-12)


def test_equal_models_share_their_derivations_and_different_ones_do_not():
    """Derived expressions are shared by equal models in a process (``theory.multihead.derived``),
    never between models that differ in any field; an unhashable activation still works."""
    a, b = MultiHeadModel(2, 3, 1, "softmax"), MultiHeadModel(2, 3, 1, "softmax")
    assert a is not b and a.loss_gradient is b.loss_gradient
    others = (MultiHeadModel(2, 3, 1, "softmax-1"), MultiHeadModel(2, 3, 1, "softmax", delta=0.5),
              MultiHeadModel(2, 3, 1, "softmax", output="sum"), MultiHeadModel(2, 4, 1, "softmax"))
    for other in others:
        assert a.noise_integrand and other.noise_integrand            # both in the shared store
        for name in ("conditional_loss", "noise_integrand"):
            fresh = vars(MultiHeadModel)[name].fn(other)               # derived anew, no store
            assert getattr(other, name) == fresh
        assert other.noise_integrand != a.noise_integrand              # Δ enters N, not φ

    class Weights(list):                                   # unhashable: cached per instance only
        def __call__(self, s, v):
            return ACTIVATIONS["softmax"].weights(s, v)
    odd = MultiHeadModel(2, 3, 1, Activation("listy", Weights()))
    assert odd.loss_gradient is odd.loss_gradient                     # cached on the instance
    assert all(key[0] is not odd for key in _DERIVED)                  # never in the shared store
    assert [[sp.simplify(x - y) for x, y in zip(r1, r2)]
            for r1, r2 in zip(odd.loss_gradient, a.loss_gradient)] == [[0] * 3] * 2


def test_draws_are_antithetic_and_exact_at_the_saddle():
    prior = GaussianPrior([0.0, 0.0], np.diag([2.0, 1.0]))
    dr = draws_for(prior, 4, 2, 64, seed=0)
    assert np.allclose(dr.zeta.mean(0), 0, atol=1e-14)
    assert isinstance(dr, FlowDraws)
    assert np.allclose(dr.theta.mean(0), 0, atol=1e-14) and np.allclose(dr.g.mean(0), 0, atol=1e-14)
    fl = ReducedFlow(MultiHeadModel(2, 4, 2), prior, n=64, seed=0)
    d = fl.derivative(HeadState.make(np.zeros((2, 2)), 0.3 * np.eye(2)))   # r ≠ 0: logits random
    assert np.allclose(d.m, 0, atol=1e-14)


def test_bad_input_is_rejected_with_the_parameter_named():
    with pytest.raises(ValueError, match="H="):
        MultiHeadModel(0, 3, 1)
    with pytest.raises(ValueError, match="activation="):
        MultiHeadModel(1, 3, 1, "relu")
    with pytest.raises(ValueError, match="positive semi-definite"):
        HeadState.make([[0.0], [0.0]], -np.eye(2))
    with pytest.raises(ValueError, match="sgd_noise"):
        ReducedFlow(MultiHeadModel(1, 3, 1), GaussianPrior([0.0], [[1.0]]), sgd_noise=-1)
    with pytest.raises(ValueError, match="n="):
        draws_for(GaussianPrior([0.0], [[1.0]]), 3, 1, 10, 0)


@given(act=st.sampled_from(["softmax", "softmax-1", "b-softmax"]), H=st.integers(1, 3),
       F=st.integers(1, 2), L=st.integers(2, 4), seed=st.integers(0, 2**31))
def test_reduced_loss_equals_finite_d_monte_carlo(act, H, F, L, seed):
    """With orthonormal spikes and a value direction orthogonal to keys and spikes, the keys'
    logits are exactly m·χ + N(0, r): the finite-D loss equals the reduced one at any D."""
    from numerics.multihead import finite_d_loss
    rng = np.random.default_rng(seed)
    prior = GaussianPrior(rng.normal(0, 0.5, F), np.diag(rng.uniform(0.3, 2, F)))
    s = random_state(rng, H, F)
    D = F + 1 + H + 7
    spikes = np.eye(D)[:F]
    value = np.eye(D)[F]
    lam, U = np.linalg.eigh(s.r)
    keys = np.zeros((H, D))
    keys[:, :F] = s.m
    keys[:, F + 1:F + 1 + H] = U * np.sqrt(np.clip(lam, 0, None))
    fd, fd_se = finite_d_loss(MultiHeadModel(H, L, F, act), keys, s.b, spikes, value, prior, 40_000,
                              seed=seed, conditional=True)
    red, red_se = ReducedFlow(MultiHeadModel(H, L, F, act), prior, n=2**14, seed=seed,
                              kind="random").loss(s)
    assert abs(fd - red) <= 5 * np.hypot(fd_se, red_se), (fd, red)


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


@given(act=st.sampled_from(ACTS), seed=st.integers(0, 2**31))
def test_no_optimised_model_beats_the_bayes_risk(act, seed):
    from numerics.multihead import bayes_loss
    from theory.models.sagitova2026 import DiscretePrior
    rng = np.random.default_rng(seed)
    prior = DiscretePrior(rng.normal(0, 2, (3, 2)), rng.dirichlet(np.ones(3)))
    md = MultiHeadModel(2, 3, 2, act)
    fl = ReducedFlow(md, prior, n=2**11, seed=seed)
    best, _, _ = minimise(fl, [random_state(rng, 2, 2) for _ in range(2)], max_iter=100)
    risk, se = ReducedFlow(md, prior, n=2**15, seed=seed + 1, kind="random").loss(best)
    bayes, bse, _ = bayes_loss(prior, 3, 2**16, seed + 2)
    assert risk >= bayes - 5 * np.hypot(se, bse), (risk, bayes)
