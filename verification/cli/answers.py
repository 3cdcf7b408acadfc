"""How the explorer commands answer: equations as text, LaTeX or JSON (each expression with its
text, LaTeX and srepr), simplified within a budget."""

from __future__ import annotations

import math

import typer


_MAX_SIMPLIFY_OPS = 400
"""The largest expression (SymPy's count_ops) that ``derive`` simplifies (--simplify, --on):
sp.simplify's time grows fast and erratically with the size (the measurements:
benchmarks/cli_limits.md)."""


SIMPLIFY_BUDGET_ENV = "ATTNV_SIMPLIFY_BUDGET"
_SIMPLIFY_BUDGET_S = 20.0
"""Seconds ``derive`` spends simplifying (--on, --simplify), all equations together (default;
``$ATTNV_SIMPLIFY_BUDGET`` sets it): past it the rest is printed as derived, with a note."""


def _simplify_budget() -> float:
    import os
    try:
        value = float(os.environ.get(SIMPLIFY_BUDGET_ENV, _SIMPLIFY_BUDGET_S))
    except ValueError:
        return _SIMPLIFY_BUDGET_S
    return value if math.isfinite(value) and value > 0 else _SIMPLIFY_BUDGET_S


def _equation_rows(rm, latex: bool, simplify: str | None) -> list[str]:
    """The model's equations (``_equations``) as text, or LaTeX with ``latex``."""
    return [eq.text(latex) for eq in _equations(rm, simplify)]


def _equations(rm, simplify: str | None) -> list:
    """The model's equations; for the multi-head kind also the saddle Hessian (any activation,
    either output convention). ``simplify``: the option that asks to simplify them (None: as
    derived); a ValueError naming it when one is too large to simplify in reasonable time."""
    saddle = hasattr(rm, "saddle_equations")
    eqs = rm.equations(saddle=False) if saddle else rm.equations()
    if simplify:
        _check_simplifiable(eqs, simplify)
        eqs = _simplified_within_budget(eqs)
    return eqs + (rm.saddle_equations() if saddle else [])


def _simplified_within_budget(eqs) -> list:
    """Each equation simplified while the budget (``_simplify_budget``) lasts, a progress line
    on a terminal's stderr; past the budget the rest stay as derived and one note says which."""
    import sys
    import time

    from ..userfiles import time_budget
    budget = _simplify_budget()
    start, out, late = time.monotonic(), [], []
    shown = sys.stderr.isatty()
    for i, eq in enumerate(eqs):
        left = budget - (time.monotonic() - start)
        if shown:
            typer.echo(f"\rsimplifying {i + 1}/{len(eqs)}: {eq.lhs} ({max(left, 0):.0f} s left)"
                       "\033[K", err=True, nl=False)
        try:
            if left <= 0:
                raise TimeoutError
            with time_budget(left, "simplifying"):
                out.append(_simplified(eq))
        except TimeoutError:
            out.append(eq)
            late.append(eq.lhs)
    if shown:
        typer.echo("\r\033[K", err=True, nl=False)
    if late:
        typer.echo(f"note: simplifying ran past its {budget:g} s budget; printed as derived: "
                   f"{', '.join(late)} (${SIMPLIFY_BUDGET_ENV} sets the budget)", err=True)
    return out


_JSON_HELP = ("print one JSON document on stdout instead of text (errors: one line on stderr, "
              "exit 2, as without it): numbers as JSON numbers, the parameters and the state's "
              "names, every expression as 'text', 'latex' and 'srepr' (rebuild it with "
              "theory.rebuild(expression), evaluate it with theory.evaluate_json(expression, "
              "values), which states its quadrature error; 'classes' names the classes srepr "
              "uses beyond SymPy's as module:name, e.g. OwensT: theory.special:OwensT)")


def _plain(value):
    """``value`` as JSON can hold it: numbers (NumPy's and SymPy's too) as numbers, a non-finite
    one (JSON has none) as the string 'inf', '-inf' or 'nan'; mappings, sequences and arrays as
    objects and lists; anything else as its text."""
    import numpy as np
    import sympy as sp
    if value is None or isinstance(value, str | bool | np.bool_):
        return value if not isinstance(value, np.bool_) else bool(value)
    if isinstance(value, int | np.integer | sp.Integer):
        return int(value)
    if isinstance(value, float | np.floating | sp.Number):
        x = float(value)
        return x if math.isfinite(x) else str(x)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _echo_json(doc: dict) -> None:
    import json
    typer.echo(json.dumps(_plain(doc), indent=1, allow_nan=False))


def _expression(expr) -> dict:
    """A SymPy expression or Matrix as {'text', 'latex', 'srepr', 'classes'}: 'classes' names
    the classes in srepr that ``from sympy import *`` does not give (the suite's OwensT and
    GaussianExpectation, SymPy's ExprCondPair, a user's own) as {name: 'module:qualname'}, for
    parse_expr's local_dict."""
    import sympy as sp

    from theory.printing import latex
    text = sp.srepr(expr)
    return {"text": sp.sstr(expr), "latex": latex(expr), "srepr": text,
            "classes": _srepr_classes(expr, text)}


def _srepr_classes(expr, text: str) -> dict[str, str]:
    import sympy as sp
    found = {}
    for part in (list(expr) if isinstance(expr, sp.MatrixBase) else [expr]):
        for node in (sp.preorder_traversal(part) if isinstance(part, sp.Basic) else []):
            cls = type(node)
            if getattr(sp, cls.__name__, None) is not cls and f"{cls.__name__}(" in text:
                found[cls.__name__] = f"{cls.__module__}:{cls.__qualname__}"
    return dict(sorted(found.items()))


def _equation_json(eq) -> dict:
    """One equation: its name (plain and LaTeX) and its right-hand side as ``_expression``, or
    as text and LaTeX with srepr null where it is stated in words (an expectation)."""
    head = {"name": eq.lhs, "name_latex": eq.lhs_latex}
    if isinstance(eq.rhs, str):
        return {**head, "text": eq.rhs, "latex": eq.latex_rhs(), "srepr": None, "classes": {}}
    return {**head, **_expression(eq.rhs), "latex": eq.latex_rhs()}


def _check_simplifiable(eqs, option: str) -> None:
    import sympy as sp
    sizes = {eq.lhs: sp.count_ops(eq.rhs) for eq in eqs if isinstance(eq.rhs, sp.Basic)}
    big = max(sizes, key=sizes.get, default=None)
    if big is not None and sizes[big] > _MAX_SIMPLIFY_OPS:
        how = ("fix more order parameters" if option.startswith("--on") else
               "restrict with --on first, or drop --simplify")
        raise ValueError(f"{option}: {big} has {sizes[big]} operations to simplify; allowed: "
                         f"≤ {_MAX_SIMPLIFY_OPS} per equation ({how}; larger ones take minutes)")


def _simplified(eq):
    import dataclasses

    import sympy as sp
    if not isinstance(eq.rhs, sp.Basic):
        return eq
    s = sp.simplify(eq.rhs)
    return dataclasses.replace(eq, rhs=s) if sp.count_ops(s) <= sp.count_ops(eq.rhs) else eq
