"""The multi-head flow (``numerics.multihead``): generated attention weights against numpy
oracles (logsumexp, at large logits) and their SymPy expressions; the reduced flow against
independent computations (finite differences of the common-random-number loss, the Gram chain
rule, head relabelling, the torch backend, a tempered user activation, finite-D Monte Carlo,
the Bayes risk); its draws, states, integration with stop and restarts, and the optimiser; bad
input named."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st
from scipy.special import logsumexp

from numerics.multihead import (FlowDraws, HeadState, ReducedFlow, draw, draws_for, head_state_names,
                                minimise, reduced_loss, weights_function)
from theory.models.sagitova2026 import DiscretePrior, GaussianPrior, flipping_spike
from theory import derive
from theory.multihead import ACTIVATIONS, Activation, MultiHeadModel

ACTS = sorted(ACTIVATIONS)


def random_state(rng, H, F, scale=0.6):
    A = rng.standard_normal((H, H)) * 0.5
    return HeadState.make(rng.standard_normal((H, F)) * scale, A @ A.T + 0.05 * np.eye(H),
                          rng.normal(0, 0.3, H), rng.normal(0, 0.5, H))


# -- the attention weights --------------------------------------------------------------------
@given(act=st.sampled_from(ACTS), H=st.integers(1, 3), L=st.integers(2, 4),
       seed=st.integers(0, 2**31))
def test_symbolic_weights_equal_their_generated_numpy_code(act, H, L, seed):
    md = MultiHeadModel(H, L, 1, act)
    rng = np.random.default_rng(seed)
    s, v = rng.normal(0, 2, (H, L)), rng.normal(0, 1, H)
    derived = derive(md)
    subs = dict(zip(derived.arguments, list(s.ravel()) + list(v)))
    A_sym = np.array([[float(a.subs(subs)) for a in row] for row in derived.head_weights])
    assert np.allclose(A_sym, weights_function(md, per_head=True)(s, v), rtol=1e-12, atol=1e-14)


# oracle: numpy activations with logsumexp, logits s (..., H, L), sinks v (H,)
def _np_softmax(s, v):
    return np.exp(s - logsumexp(s, axis=-1, keepdims=True))


def _np_softmax_v(s, v):
    v = np.broadcast_to(np.asarray(v, float), s.shape[-2:-1])[..., None]
    full = np.concatenate([np.broadcast_to(v, s.shape[:-1] + (1,)), s], axis=-1)
    return np.exp(s - logsumexp(full, axis=-1, keepdims=True))


def _np_softmax_1(s, v):
    return _np_softmax_v(s, np.zeros(s.shape[-2]))


def _np_bsoftmax(s, v):
    return s.shape[-2] * np.exp(s - logsumexp(s, axis=(-2, -1), keepdims=True))


ORACLE = {"softmax": _np_softmax, "softmax-1": _np_softmax_1, "softmax-v": _np_softmax_v,
          "b-softmax": _np_bsoftmax}


@pytest.mark.parametrize("act", sorted(ORACLE))
@pytest.mark.parametrize("H, L", [(1, 2), (2, 4), (3, 3)])
def test_generated_weights_equal_the_logsumexp_oracle_including_large_logits(act, H, L):
    """Relative agreement ~1e-12 at logits up to |s| ≈ 700 where the activation declares a
    shift invariance (softmax-1 cannot be shifted: moderate logits only)."""
    import torch
    rng = np.random.default_rng(H * 10 + L)
    md = MultiHeadModel(H, L, 1, act)
    A, w = weights_function(md, per_head=True), weights_function(md)
    At = weights_function(md, backend="torch", per_head=True)
    scales = (1.0, 30.0) if act == "softmax-1" else (1.0, 30.0, 300.0)
    for scale in scales:
        s, v = rng.normal(0, scale, (400, H, L)), rng.normal(0, scale, H)
        s[0] = 700.0 if act != "softmax-1" else s[0]
        want = ORACLE[act](s, v)
        tiny = 1e-290                               # below: both underflow towards 0
        for got in (A(s, v), At(torch.as_tensor(s), torch.as_tensor(v)).numpy()):
            rel = np.abs(got - want) / np.maximum(np.abs(want), tiny)
            assert np.all(rel[want > tiny] < 2e-12), (act, scale, rel.max())
            assert np.all(np.abs(got - want)[want <= tiny] < 1e-280)
        assert np.allclose(w(s, v), want.mean(-2), rtol=1e-12, atol=1e-300)


def test_weights_without_a_shift_invariance_raise_instead_of_returning_nan():
    s = np.full((2, 3), 800.0)
    with pytest.raises(FloatingPointError, match="softmax-1"):
        weights_function(MultiHeadModel(2, 3, 1, "softmax-1"))(s)
    assert np.allclose(weights_function(MultiHeadModel(2, 3, 1, "softmax"))(s), 1 / 3)
    assert np.allclose(weights_function(MultiHeadModel(2, 3, 1, "b-softmax"))(s), 1 / 3)
    with pytest.raises(ValueError, match="shape"):
        weights_function(MultiHeadModel(2, 3, 1))(np.zeros((3, 2)))


def test_a_wrong_shift_invariance_declaration_is_caught():
    wrong = Activation("softmax-1-claimed-invariant", ACTIVATIONS["softmax-1"].weights,
                       shift_invariance="head")
    with pytest.raises(ValueError, match="declares shift_invariance"):
        weights_function(MultiHeadModel(2, 3, 1, wrong))
    with pytest.raises(ValueError, match="shift_invariance="):
        Activation("x", ACTIVATIONS["softmax"].weights, shift_invariance="token")


def test_softmax1_is_softmax_v_at_zero_sink_and_bsoftmax_sums_to_h():
    rng = np.random.default_rng(2)
    s = rng.standard_normal((5, 3, 4))

    def weights(act, v=None):
        return weights_function(MultiHeadModel(3, 4, 1, act), per_head=True)(s, v)
    assert np.allclose(weights("softmax-1"), weights("softmax-v", np.zeros(3)))
    assert not np.allclose(weights("softmax-1"), weights("softmax-v", np.ones(3)))
    assert np.allclose(weights("b-softmax").sum((-2, -1)), 3)


# -- the reduced flow and loss ----------------------------------------------------------------
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


def test_draws_are_antithetic_and_exact_at_the_saddle():
    prior = GaussianPrior([0.0, 0.0], np.diag([2.0, 1.0]))
    dr = draws_for(prior, 4, 2, 64, seed=0)
    assert np.allclose(dr.zeta.mean(0), 0, atol=1e-14)
    assert isinstance(dr, FlowDraws)
    assert np.allclose(dr.theta.mean(0), 0, atol=1e-14) and np.allclose(dr.g.mean(0), 0, atol=1e-14)
    fl = ReducedFlow(MultiHeadModel(2, 4, 2), prior, n=64, seed=0)
    d = fl.derivative(HeadState.make(np.zeros((2, 2)), 0.3 * np.eye(2)))   # r ≠ 0: logits random
    assert np.allclose(d.m, 0, atol=1e-14)


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


def test_head_permutation_symmetry_of_the_reduced_loss():
    prior = flipping_spike(2.0, 1.0)
    m = np.array([[1.0, 0.5], [-0.3, 1.2], [0.2, -0.8]])
    b = np.array([0.1, -0.2, 0.3])
    draws = draw(prior, 4, 5000, 1, H_max=3)
    for act in ("softmax", "softmax-1", "b-softmax"):
        md = MultiHeadModel(3, 4, 2, act)
        a = reduced_loss(md, HeadState.make(m, b=b), prior, 5000, 0, draws=draws)[0]
        p = [2, 0, 1]
        c = reduced_loss(md, HeadState.make(m[p], b=b[p]), prior, 5000, 0, draws=draws)[0]
        assert abs(a - c) < 1e-12


# -- integration with stop and restarts: as the former chunked loop ---------------------------
def _oracle_trajectory_until(flow, state0, t_max, done, chunk=5.0, dt=0.5):
    H, F = flow.model.H, flow.model.F
    ts, states, t0, s0 = [0.0], [state0], 0.0, state0
    while t0 < t_max and not done(states):
        t1 = min(t0 + chunk, t_max)
        tr = flow.integrate(s0, np.linspace(t0, t1, int(round((t1 - t0) / dt)) + 1), rtol=1e-6, atol=1e-12)
        st = [HeadState.unpack(y, H, F) for y in tr.y]
        ts += list(tr.t[1:])
        states += st[1:]
        t0, s0 = t1, st[-1]
    return np.array(ts), states


def test_integrate_with_stop_and_chunk_restarts_like_the_chunked_loop():
    md = MultiHeadModel(2, 3, 2)
    fl = ReducedFlow(md, GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5])), n=256, seed=1)
    s0 = HeadState.make([[0.02, -0.01], [0.01, 0.015]], 1e-4 * np.eye(2))

    def escaped(state):
        return bool(np.linalg.norm(state.m) >= 0.3)
    t_old, st_old = _oracle_trajectory_until(fl, s0, 60.0, lambda states: escaped(states[-1]))
    tr = fl.integrate(s0, np.linspace(0, 60.0, 121), rtol=1e-6, atol=1e-12, chunk=10,
                      reached=lambda t, s: escaped(s))
    assert tr.status == "event" and escaped(HeadState.unpack(tr.y[-1], 2, 2))
    assert not escaped(HeadState.unpack(tr.y[-2], 2, 2))
    k = len(tr.t)
    assert len(t_old) >= k and np.array_equal(tr.t, t_old[:k])
    assert np.array_equal(tr.y, np.array([s.pack() for s in st_old[:k]]))
    assert tr.names == head_state_names(2, 2) and len(tr.names) == len(s0.pack())


def test_state_helpers_and_the_optimiser_function():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((3, 3))
    st = HeadState.make(rng.standard_normal((3, 2)), A @ A.T, rng.standard_normal(3))
    R = st.residual_root()
    assert np.allclose(R @ R.T, st.r)
    names = head_state_names(3, 2)
    assert names[:2] == ("m[0,0]", "m[0,1]") and names[6] == "r[0,0]" and names[7] == "r[0,1]"
    assert names[-4:] == ("b[2]", "v[0]", "v[1]", "v[2]") and len(names) == len(st.pack())
    md = MultiHeadModel(2, 3, 1, "softmax-1")
    fl = ReducedFlow(md, GaussianPrior([1.0], [[1.0]]), n=512, seed=0)
    starts = [HeadState.make([[0.5], [-0.5]], 0.1 * np.eye(2)), HeadState.make([[1.0], [0.2]])]
    best, loss, found = minimise(fl, starts, max_iter=30)
    assert len(found) == 2 and loss == min(f[1] for f in found)
    assert loss < min(fl.loss(s)[0] for s in starts)
    again = minimise(fl, starts, max_iter=30)           # deterministic: the same draws
    assert again[1] == loss and np.array_equal(again[0].m, best.m)


# -- bad input --------------------------------------------------------------------------------
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


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="probs"):
        DiscretePrior([[1.0], [2.0]], [0.5, 0.6])
    with pytest.raises(ValueError, match="activation"):
        MultiHeadModel(1, 4, 1, "relu")
    with pytest.raises(ValueError, match="r must"):
        HeadState.make(np.zeros((2, 1)), -np.eye(2))
    with pytest.raises(ValueError, match="L="):
        MultiHeadModel(1, 1, 1)
    with pytest.raises(ValueError, match="n="):
        reduced_loss(MultiHeadModel(1, 3, 2), HeadState.make(np.zeros((1, 2))), flipping_spike(1, 1), 1, 0)
    with pytest.raises(ValueError, match="features"):
        reduced_loss(MultiHeadModel(1, 3, 1), HeadState.make(np.zeros((1, 1))), flipping_spike(1, 1), 10, 0)
