"""The generated blocks of a model page (between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``: finding, reading and replacing them) and the Markdown/TeX pieces the
generator writes them with. ``generate.py`` fills them from the code."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
import re

import sympy as sp

HERE = Path(__file__).resolve().parent
BEGIN = re.compile(r"^<!-- generated: ([a-z0-9-]+) -->$")
END = "<!-- end generated -->"


# --- blocks in a page ------------------------------------------------------------------------
def page_path(stem: str) -> Path:
    """The page of ``stem`` (a paper, or 'README' for the index)."""
    return HERE / f"{stem}.md"


def _spans(text: str) -> list[tuple[str, int, int]]:
    """(name, first content line, end-marker line) of every generated block, 0-based line
    numbers; a ValueError for a block never closed, a nested or stray marker, a repeated name."""
    lines, out, open_ = text.split("\n"), [], None
    for i, line in enumerate(lines):
        begin = BEGIN.match(line.strip())
        if begin:
            if open_ is not None:
                raise ValueError(f"line {i + 1}: block {begin.group(1)!r} starts inside block "
                                 f"{open_[0]!r}")
            open_ = (begin.group(1), i + 1)
        elif line.strip() == END:
            if open_ is None:
                raise ValueError(f"line {i + 1}: {END} without a block")
            out.append((open_[0], open_[1], i))
            open_ = None
    if open_ is not None:
        raise ValueError(f"block {open_[0]!r} is never closed by {END}")
    names = [n for n, _, _ in out]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"blocks {repeated} appear more than once")
    return out


def parse_blocks(text: str) -> dict[str, str]:
    """{name: content} of the generated blocks of a page (content without the marker lines)."""
    lines = text.split("\n")
    return {name: "\n".join(lines[a:b]) for name, a, b in _spans(text)}


def render(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with the content of each generated block replaced by ``blocks[name]``; a
    ValueError when the page and ``blocks`` do not name the same blocks."""
    spans = _spans(text)
    names = {n for n, _, _ in spans}
    if names != set(blocks):
        raise ValueError(f"the page has blocks {sorted(names)}, the generator makes "
                         f"{sorted(blocks)}")
    lines = text.split("\n")
    for name, a, b in sorted(spans, key=lambda s: -s[1]):
        lines[a:b] = blocks[name].split("\n")
    return "\n".join(lines)


# --- formatting helpers ----------------------------------------------------------------------
def tex(expr, **names) -> str:
    """LaTeX of a SymPy object (``theory.printing.latex``: lam → λ, eps → ε, ...); ``names``
    maps symbol names to LaTeX."""
    from theory.printing import latex
    if not names:
        return latex(expr)
    symbols = {s: names[s.name] for s in sp.sympify(expr).free_symbols
               if isinstance(s, sp.Symbol) and s.name in names}
    return latex(expr, symbol_names=symbols)


def math(tex: str) -> str:
    return f"```math\n{tex}\n```"


def table(header: tuple[str, ...], rows: list[tuple]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


_MD_SPECIAL = re.compile(r"([\\`*_<$])")


def md(text: str) -> str:
    """Plain text (a claim's statement) made safe for Markdown: no emphasis, code, HTML or math."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def vector(name: str) -> str:
    """A vector's name as the pages write it: k_star → k*."""
    return name.replace("_star", "*")


def vector_tex(name: str) -> str:
    return name.replace("_star", "^{*}")
