"""Expressions from ``derive --json`` (or ``heads --json``) rebuilt and evaluated, safely and
quickly.

``rebuild(expression)`` turns one expression of such a document (a dict with 'srepr' and
'classes', or the srepr text itself) back into SymPy without running any code: the srepr is
parsed as a Python expression tree and only calls of SymPy's classes, of the suite's
(``theory.special``'s OwensT and Relu, ``theory.gaussian.GaussianExpectation``) and of the
classes passed in ``functions`` (a user's own ``sympy.Function``) are built; anything else is
a ValueError. ``evaluate_json(expression, values, tol)`` rebuilds it and evaluates it at
``values`` ({name or Symbol: number}) by ``xreplace`` (``subs`` re-derives every expectation
node) with the nodes integrated adaptively, returning the value and its quadrature error
(``theory.quadrature.Integrated``). For many points at once, generate code from the rebuilt
expression: ``numerics.generate(symbols, [expr])``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

import sympy as sp

from .quadrature import Integrated, integrate

__all__ = ["rebuild", "evaluate_json"]


def _namespace(functions: Iterable[type]) -> dict:
    from .gaussian import GaussianExpectation
    from .special import OwensT, Relu
    names = {name: obj for name, obj in vars(sp).items()
             if isinstance(obj, type) and issubclass(obj, sp.Basic)}
    names.update({"OwensT": OwensT, "Relu": Relu, "GaussianExpectation": GaussianExpectation,
                  "ExprCondPair": sp.functions.elementary.piecewise.ExprCondPair,
                  "Tuple": sp.Tuple, "Dummy": sp.Dummy})
    names.update({cls.__name__: cls for cls in functions})
    return names


def _build(node, names: dict):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id not in names:
            raise ValueError(f"rebuild: {node.func.id} is not a SymPy class, the suite's or one "
                             "given in functions=; allowed: those (pass a function of your own "
                             "as functions=[cls])")
        args = [_build(a, names) for a in node.args]
        kwargs = {k.arg: _build(k.value, names) for k in node.keywords}
        return names[node.func.id](*args, **kwargs)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_build(e, names) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_build(node.operand, names)
    raise ValueError(f"rebuild: unexpected {type(node).__name__} in srepr; allowed: calls of "
                     "SymPy classes with constant arguments (sympy.srepr's form)")


def rebuild(expression: Mapping | str, functions: Iterable[type] = ()) -> sp.Expr:
    """The SymPy expression of a ``--json`` expression (its 'srepr') or of an srepr text."""
    text = expression["srepr"] if isinstance(expression, Mapping) else expression
    if not isinstance(text, str):
        raise ValueError("rebuild: no srepr (an equation stated in words); allowed: an "
                         "expression with 'srepr'")
    tree = ast.parse(text, mode="eval").body
    return sp.sympify(_build(tree, _namespace(functions)))


def evaluate_json(expression: Mapping | str | sp.Expr, values: Mapping, tol: float | None = None,
                  functions: Iterable[type] = ()) -> Integrated:
    """``expression`` (rebuilt when it is JSON) at ``values`` ({symbol name or Symbol: number}),
    with its quadrature error; a QuadratureError when ``tol`` is given and not met."""
    expr = expression if isinstance(expression, sp.Basic) else rebuild(expression, functions)
    by_name = {s.name: s for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    at = {}
    for key, value in values.items():
        sym = by_name.get(key) if isinstance(key, str) else key
        if sym is not None:
            at[sym] = sp.Float(value)
    return integrate(expr, at, tol)
