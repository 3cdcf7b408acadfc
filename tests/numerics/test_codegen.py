"""Generated numpy and torch code (``numerics.codegen``) against SymPy evaluated by mpmath at 30
digits (Owen's T in torch against mpmath and scipy), and the code cache's key. (The cache
itself: tests/numerics/test_code_cache.py.)"""

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, strategies as st
from scipy.special import owens_t

from numerics import compiled, generate
from numerics.codegen import numbers_to_floats
from numerics.codegen.base import expression_key, stable_rewrites
from theory import OwensT, derive
from theory.gaussian import GaussianExpectation
from theory.models.marion2025 import MODEL
from theory.special import owens_t_mpmath
from tests.helpers import marion_params, q_of, unit_overlaps

DER = derive(MODEL)


def _reference(expr, p, ov):
    vals = {s: sp.Float(repr(float(v)), 30) for s, v in
            list(zip(MODEL.param_symbols, [p[s.name] for s in MODEL.param_symbols]))
            + list(zip(MODEL.order_parameters, q_of(ov)))}
    return float(sp.N(expr.subs(vals), 30))


@given(marion_params(), unit_overlaps())
def test_numpy_risk_matches_sympy(p, ov):
    got = float(compiled(MODEL).risk(p, q_of(ov)))
    ref = _reference(DER.risk, p, ov)
    assert got == pytest.approx(ref, rel=1e-11, abs=1e-12)


@given(marion_params(), unit_overlaps())
def test_torch_risk_matches_numpy_and_sympy(p, ov):
    ref = _reference(DER.risk, p, ov)
    got = float(compiled(MODEL, "torch").risk(p, torch.tensor(q_of(ov))))
    assert got == pytest.approx(ref, rel=1e-11, abs=1e-12)


@given(marion_params(), unit_overlaps())
def test_flow_rhs_matches_sympy(p, ov):
    got = compiled(MODEL).rhs(p, q_of(ov))
    ref = np.array([_reference(r, p, ov) for r in DER.flow.rhs])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-11)


def test_batched_evaluation_broadcasts():
    cm = compiled(MODEL)
    p = dict(d=10, L=3, lam=0.5, gamma=0.8, eps=0.2)
    Q = np.random.default_rng(0).uniform(-0.3, 0.3, (7, 3, 5))
    batched = cm.risk(p, Q)
    assert batched.shape == (7, 3)
    assert batched[4, 2] == pytest.approx(float(cm.risk(p, Q[4, 2])), rel=1e-15)
    assert cm.jacobian(p, Q).shape == (7, 3, 5, 5)


x, y = sp.symbols("x y", real=True)
EXPRS = [sp.erf(x) * sp.exp(-y**2) + sp.sqrt(2) * x, sp.log(1 + x**2) + sp.exp(y) - 1,
         OwensT(x, 1 / (1 + y**2)), sp.atan(1 / sp.sqrt(5)) * x + sp.pi * y**2,
         sp.erf(x + y) ** 2 * sp.tanh(y)]


@pytest.mark.parametrize("expr", EXPRS, ids=range(len(EXPRS)))
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@given(a=st.floats(-3, 3), b=st.floats(-3, 3))
def test_elementary_expressions_match_mpmath(expr, backend, a, b):
    f = generate([x, y], [expr], backend=backend)
    got = float(f(a, b)[0])
    ref = float(sp.N(expr.subs({x: sp.Float(a, 30), y: sp.Float(b, 30)}), 30))
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-14)


def test_stable_rewrites_keep_precision():
    f = generate([x], [sp.log(1 + x), sp.exp(x) - 1])
    small = 1e-17
    assert f(small)[0] == pytest.approx(small, rel=1e-15)
    assert f(small)[1] == pytest.approx(small, rel=1e-15)
    assert "log1p" in str(stable_rewrites(sp.log(1 + x)))


def test_numbers_become_floats():
    out = numbers_to_floats(sp.sqrt(2) * x + sp.atan(sp.Rational(1, 3)))
    assert not out.has(sp.Pow) and not out.has(sp.atan)
    assert float(out.subs(x, 1)) == pytest.approx(2**0.5 + np.arctan(1 / 3), rel=1e-16)


def test_unknown_backend_is_rejected():
    with pytest.raises(ValueError, match="backend"):
        generate([x], [x], backend="jax")


def test_min_max_generate_in_every_backend():
    """Dohmatob's r = min(β, √(2α)): the numpy printer writes Min/Max with functools.reduce."""
    import torch
    a, b = sp.symbols("a b", positive=True)
    exprs = [sp.Min(a, sp.sqrt(2 * b)), sp.Max(a, b)]
    x, y = np.array([1.0, 3.0]), np.array([2.0, 0.5])
    want = [np.minimum(x, np.sqrt(2 * y)), np.maximum(x, y)]
    got_np = generate([a, b], exprs, backend="numpy")(x, y)
    got_t = generate([a, b], exprs, backend="torch")(torch.tensor(x), torch.tensor(y))
    for w, n, t in zip(want, got_np, got_t):
        np.testing.assert_allclose(n, w, rtol=1e-15)
        np.testing.assert_allclose(t.numpy(), w, rtol=1e-15)


# --- Owen's T in generated torch code ------------------------------------------------------
h, a = sp.symbols("h a", real=True)


@given(st.floats(-8, 8), st.floats(-5, 5))
def test_torch_owens_t_matches_mpmath(hv, av):
    f = generate([h, a], [OwensT(h, a)], backend="torch")
    got = float(f(hv, av)[0])
    ref = float(owens_t_mpmath(hv, av))
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-15)
    assert owens_t(hv, av) == pytest.approx(ref, rel=1e-12, abs=1e-15)


# --- the code cache's key ------------------------------------------------------------------
_a, _b, _c = sp.symbols("a b c")
_atoms = st.sampled_from([_a, _b, _c, sp.Integer(2), sp.Rational(1, 3), sp.Float("0.1", 17),
                          sp.Symbol("a", positive=True), sp.pi])
_exprs = st.recursive(_atoms, lambda sub: st.one_of(
    st.tuples(sub, sub).map(lambda t: t[0] + t[1]),
    st.tuples(sub, sub).map(lambda t: t[0] * t[1]),
    st.tuples(sub, st.integers(-3, 3)).map(lambda t: t[0] ** t[1]),
    sub.map(sp.erf), sub.map(sp.exp),
    st.tuples(sub, sub).map(lambda t: sp.Max(*t)),
    st.tuples(sub, sub).map(lambda t: GaussianExpectation(t[0] * _c ** 2, _c) + t[1])),
    max_leaves=12)


@given(st.lists(_exprs, min_size=1, max_size=3), st.lists(_exprs, min_size=1, max_size=3))
def test_expression_key_equal_exactly_when_expressions_are(e1, e2):
    """The key separates exactly what SymPy's equality separates (srepr's job before)."""
    assert (expression_key(e1) == expression_key(e2)) == (tuple(e1) == tuple(e2))
    assert (expression_key(e1) == expression_key(e2)) == (sp.srepr(tuple(e1)) == sp.srepr(tuple(e2)))


def test_expression_key_sees_assumptions_precision_and_grouping():
    x, xr = sp.Symbol("x"), sp.Symbol("x", real=True)
    f, fr = sp.Function("f"), sp.Function("f", real=True)
    distinct = [[x], [xr], [sp.Float(1.5, 15)], [sp.Float(1.5, 30)], [sp.Integer(1)], [sp.Float(1)],
                [x, xr], [sp.Tuple(x, xr)], [f(x)], [fr(x)], [sp.S.Half], [sp.Rational(1, 2) * x]]
    keys = [expression_key(e) for e in distinct]
    assert len(set(keys)) == len(keys)
    built_apart = (sp.Symbol("y") + x) * 2, 2 * (x + sp.Symbol("y"))
    assert expression_key([built_apart[0]]) == expression_key([built_apart[1]])


def test_expression_key_is_the_same_in_every_process():
    """Cache entries are shared between processes: the key must not depend on hash seeds."""
    import os
    import subprocess
    import sys
    code = ("import sympy as sp; from numerics.codegen.base import expression_key; "
            "a, b = sp.symbols('a b'); "
            "print(expression_key([sp.expand((a + b + sp.erf(a) + 1) ** 4), sp.Max(a, b)]))")
    keys = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
            for seed in ("1", "2", "3")}
    assert len(keys) == 1 and len(keys.pop()) == 64


def test_expression_key_takes_any_integer_type_and_prints_the_rest():
    """mpmath keeps a Float's mantissa as gmpy2's mpz when gmpy2 is installed: any integral
    type keys as the integer it is; other contents as srepr would print them."""
    class Carrier(sp.Basic):
        def __new__(cls, payload):
            obj = sp.Basic.__new__(cls)
            obj.payload = payload
            return obj

        def _hashable_content(self):
            return (self.payload,)
    assert expression_key([Carrier(np.int64(7))]) == expression_key([Carrier(7)])
    assert expression_key([Carrier(7)]) != expression_key([Carrier(7.0)])
    assert expression_key([Carrier(True)]) != expression_key([Carrier(1)])
    assert expression_key([Carrier(frozenset({1}))]) != expression_key([Carrier(frozenset({2}))])
