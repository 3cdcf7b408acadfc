"""LaTeX for the derived expressions: symbols spelled in ASCII in the code print as the papers'
letters (``lam`` → λ, ``eps`` → ε; SymPy already prints ``gamma``, ``kappa``, ``nu1``, ... as
Greek). Add a model's own spellings to ``LATEX_NAMES``."""

from __future__ import annotations

import sympy as sp

__all__ = ["LATEX_NAMES", "latex"]

LATEX_NAMES: dict[str, str] = {"lam": r"\lambda", "eps": r"\varepsilon", "Delta": r"\Delta",
                               "delta": r"\delta"}


def latex(expr, **settings) -> str:
    """``sympy.latex(expr)`` with the symbols named in ``LATEX_NAMES`` printed as given."""
    if not isinstance(expr, sp.Basic):
        return sp.latex(expr, **settings)
    names = {s: LATEX_NAMES[s.name] for s in expr.free_symbols
             if isinstance(s, sp.Symbol) and s.name in LATEX_NAMES}
    if names:
        settings = {**settings, "symbol_names": {**names, **settings.get("symbol_names", {})}}
    return sp.latex(expr, **settings)
