"""The multi-head engine path (numerics.multihead, theory.multihead.saddle_hessian) against
independent implementations kept here as oracles: the former hand-written numpy activations
(logsumexp), the former hand-written saddle Hessian, the former chunked integration loop."""

import numpy as np
import pytest
import sympy as sp
from scipy.special import logsumexp

from numerics.multihead import HeadState, ReducedFlow, head_state_names, minimise, weights_function
from theory.gaussian import GaussianLaw, expect
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import ACTIVATIONS, Activation, MultiHeadModel, saddle_hessian


# --- oracle: numpy activations with logsumexp, logits s (..., H, L), sinks v (H,) -------------
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


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_declared_shift_invariances_hold_symbolically(name):
    act = ACTIVATIONS[name]
    md = MultiHeadModel(2, 3, 1, act)
    c = sp.symbols("c_0:2", real=True)
    per_head = act.shift_invariance == "head"
    shift = {x: x + (c[h] if per_head else c[0]) for h, row in enumerate(md.logits) for x in row}
    shift.update({v: v + (c[h] if per_head else c[0]) for h, v in enumerate(md.sinks)})
    moved = [sp.simplify(a.xreplace(shift) - a) for row in md.head_weights for a in row]
    if act.shift_invariance is None:
        assert any(d != 0 for d in moved)
    else:
        assert all(d == 0 for d in moved)


def test_a_wrong_shift_invariance_declaration_is_caught():
    wrong = Activation("softmax-1-claimed-invariant", ACTIVATIONS["softmax-1"].weights,
                       shift_invariance="head")
    with pytest.raises(ValueError, match="declares shift_invariance"):
        weights_function(MultiHeadModel(2, 3, 1, wrong))
    with pytest.raises(ValueError, match="shift_invariance="):
        Activation("x", ACTIVATIONS["softmax"].weights, shift_invariance="token")


# --- oracle: the former hand-written saddle Hessian (its own weights and loss) -----------------
def _oracle_saddle_hessian(L, H, F, activation):
    m = sp.Matrix(H, F, lambda h, f: sp.Symbol(f"m_{h + 1}{f + 1}", real=True))
    chi = sp.Matrix(L, F, lambda l, f: sp.Symbol(f"chi_{l + 1}{f + 1}", real=True))
    theta = sp.symbols(f"theta_1:{F + 1}", real=True)
    mu = sp.symbols(f"mu_1:{F + 1}", real=True)
    S = sp.Matrix(F, F, lambda i, j: sp.Symbol(f"S_{min(i, j) + 1}{max(i, j) + 1}", real=True))
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


# --- the integration with stop and restarts: as the former chunked loop -----------------------
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
