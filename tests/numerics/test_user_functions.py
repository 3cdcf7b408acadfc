"""Functions of the user's own in generated code (issue 28, docs/functions.md): a
``sympy.Function`` subclass with ``fdiff`` and ``numpy``/``torch`` implementations as class
attributes is printed as a call of an identifier; the implementation is put into the generated
module's namespace at load time, never into the (cached, signed) source; different functions
never share a cache entry or an identifier; a function a backend cannot evaluate is refused
with one line naming it."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, strategies as st

from numerics import generate
from numerics.codegen import UnsupportedFunction
from numerics.codegen.base import expression_key, implementation_name
from theory.gaussian import GaussianExpectation, GaussianLaw, UnknownDerivative, expect

x = sp.Symbol("x", real=True)
z = sp.Symbol("z", real=True)


def _sigmoid_class(name="sigm", module=__name__, numpy_impl=None, torch_impl=torch.sigmoid):
    def fdiff(self, argindex=1):
        return type(self)(self.args[0]) * (1 - type(self)(self.args[0]))

    attrs = {"nargs": 1, "fdiff": fdiff, "__module__": module,
             "numpy": staticmethod(numpy_impl or (lambda u: 1 / (1 + np.exp(-u))))}
    if torch_impl is not None:
        attrs["torch"] = staticmethod(torch_impl)
    return type(name, (sp.Function,), attrs)


class softsign(sp.Function):
    """u/(1 + |u|), a module-level user function."""

    nargs = 1

    def fdiff(self, argindex=1):
        return 1 / (1 + sp.Abs(self.args[0])) ** 2

    numpy = staticmethod(lambda u: u / (1 + np.abs(u)))
    torch = staticmethod(lambda u: u / (1 + torch.abs(u)))


def _entries(cache):
    return {p: p.read_text() for p in cache.rglob("*.py")}


@given(st.floats(-30, 30), st.floats(0.1, 3))
def test_numpy_and_torch_call_the_implementations(u, a):
    expr = softsign(a * x) ** 2 + sp.diff(softsign(a * x), x)
    ref = (a * u / (1 + abs(a * u))) ** 2 + a / (1 + abs(a * u)) ** 2
    assert float(generate([x], [expr])(u)[0]) == pytest.approx(ref, rel=1e-13, abs=1e-15)
    t = torch.tensor(u, dtype=torch.float64, requires_grad=True)
    (val,) = generate([x], [softsign(a * x)], backend="torch")(t)
    val.backward()
    assert float(val.detach()) == pytest.approx(a * u / (1 + abs(a * u)), rel=1e-13, abs=1e-15)
    assert float(t.grad) == pytest.approx(a / (1 + abs(a * u)) ** 2, rel=1e-12)


def test_the_source_names_the_function_and_holds_none_of_its_code(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))
    generate([x], [softsign(x) * 3])
    (text,) = _entries(tmp_path).values()
    ident = implementation_name(softsign)
    assert re.fullmatch(r"_fn_softsign_[0-9a-f]{12}", ident)
    assert f"{ident}(x)" in text
    assert "abs" not in text and "lambda" not in text        # the implementation is not printed


def test_the_implementation_comes_from_the_class_when_the_source_is_read_back(tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))
    cls = _sigmoid_class("sg_reload")
    assert float(generate([x], [cls(x)])(0.3)[0]) == pytest.approx(1 / (1 + np.exp(-0.3)))
    before = _entries(tmp_path)
    cls.numpy = staticmethod(lambda u: 2 * u)          # the user edits the implementation
    assert float(generate([x], [cls(x)])(0.3)[0]) == pytest.approx(0.6)
    assert _entries(tmp_path) == before                # the same cached source, read back


def test_two_functions_of_one_name_never_share_an_entry_or_an_identifier(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))
    a = _sigmoid_class("twin", "user_module_a", numpy_impl=lambda u: u + 1)
    b = _sigmoid_class("twin", "user_module_b", numpy_impl=lambda u: u + 2)
    assert implementation_name(a) != implementation_name(b)
    assert expression_key([a(x)]) != expression_key([b(x)])
    assert float(generate([x], [a(x)])(0.0)[0]) == 1.0
    assert float(generate([x], [b(x)])(0.0)[0]) == 2.0
    assert float(generate([x], [a(x) * b(x)])(0.0)[0]) == 2.0
    assert len(_entries(tmp_path)) == 3
    c = _sigmoid_class("twin", "user_module_a", numpy_impl=lambda u: u + 3)   # same name as a
    with pytest.raises(UnsupportedFunction, match="two different functions are named "
                                                  "user_module_a.twin"):
        generate([x], [a(x) + c(x)])


def test_a_function_named_like_a_known_one_calls_its_own_implementation():
    own_tanh = _sigmoid_class("tanh", numpy_impl=lambda u: u * 10, torch_impl=lambda u: u * 10)
    assert float(generate([x], [own_tanh(x)])(0.5)[0]) == 5.0
    assert float(generate([x], [own_tanh(x)], backend="torch")(0.5)[0]) == 5.0
    assert float(generate([x], [sp.tanh(x)])(0.5)[0]) == pytest.approx(np.tanh(0.5))


def test_expectation_nodes_integrate_a_users_function_by_gauss_hermite():
    cls = _sigmoid_class("sg_node")
    a = sp.Symbol("a", positive=True)
    law = GaussianLaw((z,), sp.Matrix([0.2]), sp.Matrix([[1.0]]))
    e = expect(z * cls(a * z), law)       # Stein: 0.2·E σ(a z) + a·E σ′(a z)
    assert e.has(GaussianExpectation)
    same = expect(z / (1 + sp.exp(-a * z)), law)
    for backend in ("numpy", "torch"):
        got, ref = (float(generate([a], [v], backend=backend)(1.3)[0]) for v in (e, same))
        assert got == pytest.approx(ref, rel=1e-12)


def test_a_function_without_an_implementation_is_refused_in_one_line():
    plain = type("plain", (sp.Function,), {"fdiff": lambda self, i=1: sp.S.One})
    with pytest.raises(UnsupportedFunction) as info:
        generate([x], [plain(x) + sp.sin(x)])
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("function plain has no numpy implementation")
    assert "docs/functions.md" in msg
    numpy_only = _sigmoid_class("sg_numpy_only", torch_impl=None)
    assert float(generate([x], [numpy_only(x)])(0.0)[0]) == 0.5
    with pytest.raises(UnsupportedFunction, match="function sg_numpy_only has no torch "
                                                  "implementation"):
        generate([x], [numpy_only(x)], backend="torch")


def test_a_derivative_sympy_does_not_know_is_refused_in_one_line():
    f = sp.Function("f")
    with pytest.raises(UnsupportedFunction, match="the derivative of f is not known"):
        generate([x], [sp.diff(f(x**2), x)])
    law = GaussianLaw((z,), sp.Matrix([0]), sp.Matrix([[1]]))
    with pytest.raises(UnknownDerivative, match="the derivative of f is not known") as info:
        expect(z * f(2 * z), law)           # Stein's identity needs f′
    assert "\n" not in str(info.value) and isinstance(info.value, ValueError)
