"""The documentation site's generated pages, written from the code and the committed records
before every build (``conf.py`` calls ``write_all``) into ``docs/reference/`` (not committed):

- ``claims.md``: the claims catalogue from the registry (id, statement, domain, verdict in
  ``baselines/quick.json``, the committed map if any);
- ``api.md`` and one autosummary page per public name of ``theory``, ``numerics`` and
  ``verification`` (their ``__all__``);
- ``benchmarks.md``: every ``benchmarks/*.json`` as tables.

Run alone (``python docs/pages.py``) it only writes them."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
import sys

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
OUT = DOCS / "reference"
PACKAGES = ("theory", "numerics", "verification")
MAX_ROWS = 60
"""A benchmark file with more numbers than this shows its first ones and says how many."""


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _domain(claim) -> str:
    coords = claim.domain.coordinates
    if not coords:
        return "—"
    return "; ".join(f"{name} ∈ {c.describe()}" for name, c in coords.items())


def _maps() -> dict[str, str]:
    """{claim id: the committed map's page, relative to docs/reference/}."""
    out = {}
    for path in sorted((DOCS / "maps").glob("*/map.json")):
        out[json.loads(path.read_text())["claim"]] = f"../maps/{path.parent.name}/map.md"
    return out


def claims_page() -> str:
    sys.path.insert(0, str(ROOT))
    from verification.catalogue import load_all
    baseline = json.loads((ROOT / "baselines" / "quick.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in baseline["claims"]}
    maps = _maps()
    claims = sorted(load_all().values(), key=lambda c: (c.paper, c.id))
    counts: dict[str, int] = {}
    for c in claims:
        v = verdicts.get(c.id, "not in the baseline")
        counts[v] = counts.get(v, 0) + 1
    lines = ["# Claims catalogue", "",
             f"Every claim of the registry ({len(claims)}), generated from the code: its statement, "
             "the domain it quantifies over, its verdict in the quick profile's committed "
             "baseline (`baselines/quick.json`, seed 0) and its map where one is committed. "
             "Counts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + ".", ""]
    for paper in sorted({c.paper for c in claims}):
        lines += [f"## {paper}", "", "| claim | statement | domain | verdict (quick) | map |",
                  "|---|---|---|---|---|"]
        for c in (c for c in claims if c.paper == paper):
            link = f"[map]({maps[c.id]})" if c.id in maps else ""
            lines.append(f"| `{c.id}` | {_cell(c.statement)} | {_cell(_domain(c))} | "
                         f"{verdicts.get(c.id, 'not in the baseline')} | {link} |")
        lines.append("")
    return "\n".join(lines)


def api_pages() -> dict[str, str]:
    sys.path.insert(0, str(ROOT))
    pages = {}
    lines = ["# API reference", "",
             "The public names of the three packages (their `__all__`), documented from their "
             "docstrings.", ""]
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        doc = (mod.__doc__ or "").strip().split("\n\n")[0]
        lines += [f"## `{pkg}`", "", doc, "", "```{eval-rst}", f".. currentmodule:: {pkg}", "",
                  ".. autosummary::", "   :toctree: api", ""]
        lines += [f"   {name}" for name in mod.__all__]
        lines += ["```", ""]
    pages["api.md"] = "\n".join(lines)
    return pages


def _leaves(tree, prefix: str = ""):
    """(dotted path, value) for every number, string or boolean of a JSON tree."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _leaves(v, f"{prefix}[{i}]")
    elif tree is not None:
        yield prefix, tree


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return _cell(v)


def benchmarks_page() -> str:
    lines = ["# Benchmarks", "",
             "Every record in `benchmarks/` as written by its script (`python benchmarks/NAME.py`); "
             "speed is measured as side-by-side ratios on one machine, and each record names its "
             "machine. Dated notes on what changed the numbers: `benchmarks/NOTES.md`, shown "
             "[below](#notes).", ""]
    for path in sorted((ROOT / "benchmarks").glob("*.json")):
        rows = list(_leaves(json.loads(path.read_text())))
        lines += [f"## `{path.name}`", "", "| quantity | value |", "|---|---|"]
        lines += [f"| `{_cell(k)}` | {_fmt(v)} |" for k, v in rows[:MAX_ROWS]]
        if len(rows) > MAX_ROWS:
            lines += ["", f"({len(rows) - MAX_ROWS} more values in the file.)"]
        lines.append("")
    lines += ["(notes)=", "## Notes", "", "```{include} ../../benchmarks/NOTES.md", ":heading-offset: 2",
              "```", ""]
    return "\n".join(lines)


def write_all() -> list[Path]:
    """Write every generated page whose text changed; the paths written."""
    OUT.mkdir(exist_ok=True)
    pages = {"claims.md": claims_page(), "benchmarks.md": benchmarks_page(), **api_pages()}
    written = []
    for name, text in pages.items():
        path = OUT / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written


if __name__ == "__main__":
    for p in write_all():
        print(p.relative_to(ROOT))
