"""LaTeX for the derived expressions: symbols spelled in ASCII in the code print as the papers'
letters (``lam`` → λ, ``eps`` → ε; SymPy already prints ``gamma``, ``kappa``, ``nu1``, ... as
Greek). Add a model's own spellings to ``LATEX_NAMES``. A symbol named like a state coordinate,
``NAME[i,j]`` (the multi-head model's m[0,1], mu[0], S[0,1]), prints with its indices as a
subscript, unchanged: m_{0,1}, \\mu_{0}, S_{0,1}."""

from __future__ import annotations

import re

import sympy as sp

__all__ = ["LATEX_NAMES", "latex"]

LATEX_NAMES: dict[str, str] = {"lam": r"\lambda", "eps": r"\varepsilon", "Delta": r"\Delta",
                               "delta": r"\delta"}


_INDEXED = re.compile(r"([A-Za-z][A-Za-z0-9]*)\[([0-9]+(?:,[0-9]+)*)\]")
"""A symbol named like a state coordinate: NAME[i] or NAME[i,j,...]."""


def _latex_name(name: str) -> str | None:
    if name in LATEX_NAMES:
        return LATEX_NAMES[name]
    indexed = _INDEXED.fullmatch(name)
    if indexed:
        base, index = indexed.groups()
        return f"{LATEX_NAMES.get(base) or sp.latex(sp.Symbol(base))}_{{{index}}}"
    return None


def latex(expr, **settings) -> str:
    """``sympy.latex(expr)`` with the symbols named in ``LATEX_NAMES`` printed as given and
    those named NAME[i,j] as NAME_{i,j}."""
    if not isinstance(expr, (sp.Basic, sp.MatrixBase)):
        return sp.latex(expr, **settings)
    names = {s: _latex_name(s.name) for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    names = {s: n for s, n in names.items() if n is not None}
    if names:
        settings = {**settings, "symbol_names": {**names, **settings.get("symbol_names", {})}}
    return sp.latex(expr, **settings)
