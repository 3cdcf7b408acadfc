"""Sphinx configuration of the documentation site.

Why Sphinx with MyST and furo: the pages are Markdown already (the tutorial, the check library,
the model pages, the maps), MyST reads them as they are; autodoc and autosummary document the
public names from their docstrings, the way numpy, SciPy, SymPy and dedalus do; ``-W`` turns
every broken link or reference into an error. Mathematics is rendered by the KaTeX the package
ships (``verification/static/katex``), so the site works offline and no page loads a script
from elsewhere. Build: ``python -m sphinx -W -b html docs docs/_build/html``."""

from __future__ import annotations

from pathlib import Path
import re
import sys

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS)]

import pages  # noqa: E402  (docs/pages.py: the generated pages)

project = "attention-verification"
author = "the attention-verification authors"
copyright = "the attention-verification authors, MIT licence"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.autosummary",
              "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}   # .rst: autosummary's pages
root_doc = "index"
exclude_patterns = ["_build", "**/generate.py", "**/page_blocks.py"]
myst_enable_extensions = ["dollarmath", "colon_fence", "attrs_inline"]
myst_heading_anchors = 4
myst_fence_as_directive = ["math"]   # the model pages' ```math blocks (as GitHub reads them)
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
add_module_names = False
suppress_warnings = ["myst.header"]   # the maps' pages start at level-2 headings below their title
html_theme = "furo"
html_title = "attention-verification"
html_static_path = ["_static", "../verification/static"]
html_css_files = ["katex/katex.min.css"]
html_js_files = [("katex/katex.min.js", {"defer": "defer"}),
                 ("katex/contrib/auto-render.min.js", {"defer": "defer"}),
                 ("katex-render.js", {"defer": "defer"})]
html_math_renderer = "katex"
html_show_sourcelink = False
nitpicky = False


def _katex_renderer(app) -> None:
    """Sphinx's own \\(..\\) and \\[..\\] markup (as for MathJax), rendered by the shipped
    KaTeX (``_static/katex-render.js``) instead of a script from a CDN."""
    from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math
    app.add_html_math_renderer("katex", (html_visit_math, None),
                               (html_visit_displaymath, None))


_FIELD = re.compile(r":[\w ]+:(\s|$)")
_LITERAL = re.compile(r"(``.+?``)")
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,2}[^\s*][^*]*?(?<=[^\s*])\*{1,2}(?![\w*])")


def _escape(text: str) -> str:
    """``|`` and stray ``*`` escaped outside double-backquoted literals: the docstrings are
    plain text in which |x| is an absolute value and * a product, not reST markup."""
    out = []
    for i, part in enumerate(_LITERAL.split(text)):
        if i % 2 == 0:
            part = part.replace("|", "\\|")
            keep = [(m.start(), m.end()) for m in _EMPHASIS.finditer(part)]
            part = "".join("\\*" if ch == "*" and not any(a <= j < b for a, b in keep) else ch
                           for j, ch in enumerate(part))
        out.append(part)
    return "".join(out)


def _flatten(lines: list[str]) -> list[str]:
    """A line indented past the line before it continues that paragraph (the docstrings wrap
    that way), unless the line before opens a list item, a field or a literal block."""
    out: list[str] = []
    for line in lines:
        prev = out[-1] if out else ""
        indent, before = len(line) - len(line.lstrip()), len(prev) - len(prev.lstrip())
        opens = (prev.lstrip().startswith(("- ", "* ", ">>>", "...")) or _FIELD.match(prev.lstrip())
                 or prev.rstrip().endswith("::"))
        if line.strip() and prev.strip() and indent > before and not opens:
            line = " " * before + line.lstrip()
        out.append(line)
    return out


def _join_split_literals(lines: list[str]) -> list[str]:
    """A ``literal`` broken across two lines (after a dotted name's dot) joined on one, so that
    a summary cut at the first sentence does not cut it."""
    out: list[str] = []
    for line in lines:
        if out and out[-1].count("``") % 2:
            out[-1] += ("" if out[-1].endswith(".") else " ") + line.lstrip()
        else:
            out.append(line)
    return out


def _plain_docstring(app, what, name, obj, options, lines) -> None:
    """The package's docstrings as reST: plain-text wrapping and symbols made safe, and a
    container's inherited class docstring (dict's, for a registry) replaced by what it is."""
    doc = type(obj).__doc__
    inherited = doc.strip().splitlines()[:1] if isinstance(doc, str) else []
    if what in ("data", "attribute") and lines and inherited and lines[0].strip() == inherited[0].strip():
        lines[:] = [f"A ``{type(obj).__name__}`` (its contents: where it is defined)."]
        return
    lines[:] = _flatten(_join_split_literals(lines))
    in_literal = False
    for i, line in enumerate(lines):
        if line.rstrip().endswith("::"):
            in_literal = True
        elif in_literal and line.strip() and not line.startswith((" ", "\t")):
            in_literal = False
        bullet = re.match(r"\s*[*-] ", line)
        head, body = (line[:bullet.end()], line[bullet.end():]) if bullet else ("", line)
        lines[i] = line if in_literal or line.lstrip().startswith(">>>") else head + _escape(body)


def _generate(app, config) -> None:
    pages.write_all()


def setup(app):
    _katex_renderer(app)
    app.connect("config-inited", _generate)
    app.connect("autodoc-process-docstring", _plain_docstring)
