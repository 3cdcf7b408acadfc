"""Reports: report.json (the spec's schema), report.npz, Markdown and HTML with figures,
and the terminal verdict table. Files are written atomically (``verification.records``): a
write that fails (a full disk) leaves the earlier file as it was and raises an OSError naming
the file."""

from __future__ import annotations

from collections.abc import Callable, Mapping
import html
import json
from pathlib import Path
import shutil
from typing import TYPE_CHECKING

from .records import (cannot_write, summary_rows, to_jsonable, write_bytes as _write_bytes,
                      write_json, write_npz)
from .tasks import render_png

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.console import Console

__all__ = ["to_jsonable", "write_json", "write_npz", "write_markdown", "write_html",
           "render_figures", "render_png", "write_figures", "cannot_write",
           "verdict_table", "KATEX_DIR", "copy_katex"]

KATEX_DIR = Path(__file__).resolve().parent / "static" / "katex"
"""KaTeX shipped with the package (MIT licence in its LICENSE): report.html renders the
statements' and the derived equations' mathematics from a copy next to it, offline."""
_KATEX_HEAD = (
    "<link rel='stylesheet' href='katex/katex.min.css'>"
    "<script defer src='katex/katex.min.js'></script>"
    "<script defer src='katex/contrib/auto-render.min.js' onload=\"renderMathInElement("
    "document.body, {delimiters: [{left: '$$', right: '$$', display: true}, "
    "{left: '\\\\[', right: '\\\\]', display: true}, {left: '$', right: '$', display: false}, "
    "{left: '\\\\(', right: '\\\\)', display: false}], throwOnError: false})\"></script>")

COLOURS = {"confirmed": "green", "refuted": "red", "inconclusive": "yellow", "error": "magenta"}


def write_figures(pngs: Mapping[str, bytes], folder: Path) -> dict[str, str]:
    """The PNG files in ``folder`` (atomically); returns {name: path relative to its parent}."""
    out = {}
    for name, data in pngs.items():
        fname = name.replace(":", "_").replace("/", "_").replace("[", "_").replace("]", "") + ".png"
        _write_bytes(folder / fname, data)
        out[name] = f"{folder.name}/{fname}"
    return out


def render_figures(figures: Mapping[str, Callable[[Figure], object]], folder: Path) -> dict[str, str]:
    """Draw each figure callable into a PNG file in ``folder``; returns {name: relative path}."""
    return write_figures(render_png(figures), folder)


def _fmt_evidence(ev: dict, limit=1500) -> str:
    text = json.dumps(to_jsonable({k: v for k, v in ev.items() if k != "points"}), indent=1)
    return text if len(text) <= limit else text[:limit] + "\n…"


def contract_text(c: dict) -> tuple[str, str]:
    """(α, resolution) of a report entry as short text: 'exact' for exact checks, '—' where a
    statistical claim has not stated its contract."""
    k = c.get("contract")
    if not k:
        return "—", "—"
    if k.get("exact"):
        return "0 (exact)", "—"
    alpha = "—" if k.get("alpha") is None else f"{k['alpha']:.0e}"
    res = k.get("resolution")
    res = "—" if res is None else ("∞" if res == float("inf") else f"{100 * res:.3g} %")
    return alpha, res


def _calibration_lines(report: dict) -> list[str]:
    cal = report.get("calibration")
    if not cal:
        return []
    return ["", f"## Calibration ({cal['seeds']} seeds per claim, from `{cal['source']}`"
            f"{'' if cal.get('complete') else ', incomplete'})", "", *summary_rows(cal)]


def _run_line(report: dict) -> str:
    """Where the run ran and what it reused ("" for a report without these keys)."""
    opts = report.get("options") or {}
    parts = [f"engine: {report['engine']}"] if report.get("engine") else []
    if report.get("store"):
        reused = report.get("reused")
        parts.append(f"store {report['store']}" + (f" ({reused} of {len(report['claims'])} "
                                                   "claims reused)" if reused else ""))
    if opts.get("force"):
        parts.append("every claim recomputed (force)")
    if not report.get("complete", True):
        parts.append(f"incomplete ({report.get('interrupted') or 'running'})")
    return " · ".join(parts)


def write_markdown(path: str | Path, report: dict, figure_paths: Mapping[str, str]) -> None:
    """report.md: the verdict table, then per claim its statement, reading, figures, evidence."""
    lines = ["# Claim verification report", "",
             f"suite {report['suite_version']} · profile `{report['profile']}` · seed "
             f"{report['seed']} · device {report['device']} · started {report['started']}", "",
             *([_run_line(report), ""] if _run_line(report) else []),
             "| claim | label | verdict | α | resolution | summary | s |",
             "|---|---|---|---|---|---|---|"]
    for c in report["claims"]:
        alpha, res = contract_text(c)
        lines.append(f"| `{c['id']}` | {c['label']} | **{c['verdict']}** | {alpha} | {res} | "
                     f"{c['summary'].replace('|', '/')} | {c['seconds']:.1f} |")
    lines += _calibration_lines(report)
    for c in report["claims"]:
        lines += ["", f"## `{c['id']}` — {c['label']}: {c['verdict']}", "", f"> {c['statement']}",
                  "", c["summary"], ""]
        if c.get("reading"):
            lines += [f"*Reading chosen:* {c['reading']}", ""]
        for name, rel in figure_paths.items():
            if name.startswith(c["id"]):
                lines += [f"![{name}]({rel})", ""]
        lines += ["<details><summary>evidence</summary>", "", "```json",
                  _fmt_evidence(c["evidence"]), "```", "</details>"]
    _write_bytes(path, ("\n".join(lines) + "\n").encode())


def _calibration_html(report: dict) -> str:
    lines = _calibration_lines(report)
    if not lines:
        return ""
    head, rows = lines[1], [r for r in lines[3:] if not r.startswith("|---")]
    cells = ["".join(f"<td>{html.escape(x.strip())}</td>" for x in r.strip("|").split("|"))
             for r in rows]
    return (f"<h2>{html.escape(head.lstrip('# '))}</h2><table>"
            + "".join(f"<tr>{c}</tr>" for c in cells) + "</table>")


def copy_katex(folder: str | Path) -> Path:
    """Copy the shipped KaTeX to ``folder/katex`` (what report.html loads); its path."""
    dest = Path(folder) / "katex"
    try:
        shutil.copytree(KATEX_DIR, dest, dirs_exist_ok=True)
    except OSError as exc:              # shutil.Error too: copytree's failures, file by file
        raise cannot_write(dest, exc) from exc
    return dest


def _equations_html(evidence: dict) -> str:
    """Display mathematics for an evidence entry ``latex``: {LaTeX lhs: LaTeX rhs} (e.g. a
    reduced model's ``latex()``) or one LaTeX string."""
    eqs = evidence.get("latex") if isinstance(evidence, dict) else None
    if isinstance(eqs, str):
        eqs = {"": eqs}
    if not isinstance(eqs, dict) or not all(isinstance(v, str) for v in eqs.values()):
        return ""
    rows = "".join(f"<div class='math'>$${html.escape(f'{k} = {v}' if k else v)}$$</div>"
                   for k, v in eqs.items())
    return f"<details open><summary>derived equations</summary>{rows}</details>"


def write_html(path: str | Path, report: dict, figure_paths: Mapping[str, str]) -> None:
    """report.html: the same content as ``write_markdown``, self-contained but for the figures
    and the KaTeX copy written next to it (``katex/``): statements' ``$...$`` (and ``\\(...\\)``,
    ``$$...$$``) and the derived equations of an evidence entry ``latex`` are typeset, with no
    network needed to view the page."""
    rows = "".join(
        f"<tr><td><code>{html.escape(c['id'])}</code></td><td>{html.escape(c['label'])}</td>"
        f"<td style='color:{COLOURS[c['verdict']]}'><b>{c['verdict']}</b></td>"
        + "".join(f"<td>{html.escape(t)}</td>" for t in contract_text(c))
        + f"<td>{html.escape(c['summary'])}</td><td>{c['seconds']:.1f}</td></tr>"
        for c in report["claims"])
    sections = []
    for c in report["claims"]:
        figs = "".join(f"<img src='{html.escape(rel)}' style='max-width:640px'>"
                       for name, rel in figure_paths.items() if name.startswith(c["id"]))
        sections.append(
            f"<h2 id='{html.escape(c['id'])}'>{html.escape(c['id'])} — {html.escape(c['label'])}: "
            f"<span style='color:{COLOURS[c['verdict']]}'>{c['verdict']}</span></h2>"
            f"<blockquote class='statement'>{html.escape(c['statement'])}</blockquote>"
            f"<p>{html.escape(c['summary'])}</p>{_equations_html(c.get('evidence', {}))}"
            f"{figs}<details><summary>evidence</summary><pre>"
            f"{html.escape(_fmt_evidence(c['evidence'], 4000))}</pre></details>")
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>Claim verification report"
           f"</title><style>body{{font-family:sans-serif;max-width:1000px;margin:auto}}"
           f"td,th{{border-bottom:1px solid #ddd;padding:4px}}</style>{_KATEX_HEAD}</head><body>"
           f"<h1>Claim verification report</h1><p>profile {report['profile']} · seed "
           f"{report['seed']} · device {html.escape(report['device'])} · {report['started']}</p>"
           f"{f'<p>{html.escape(_run_line(report))}</p>' if _run_line(report) else ''}"
           f"<table><tr><th>claim</th><th>label</th><th>verdict</th><th>α</th><th>resolution</th>"
           f"<th>summary</th><th>s</th></tr>"
           f"{rows}</table>{_calibration_html(report)}{''.join(sections)}</body></html>")
    copy_katex(Path(path).parent)
    _write_bytes(path, doc.encode())


def verdict_table(report: dict, console: Console | None = None) -> None:
    """Print the run's verdicts as a rich table (on ``console``, default a new one)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    table = Table(title=f"verdicts ({report['profile']} profile, seed {report['seed']})")
    for col in ("claim", "label", "verdict", "α", "resolution", "summary", "s"):
        table.add_column(col, overflow="fold")
    for c in report["claims"]:
        table.add_row(escape(c["id"]), escape(c["label"]),
                      f"[{COLOURS[c['verdict']]}]{c['verdict']}[/]", *contract_text(c),
                      escape(c["summary"]), f"{c['seconds']:.1f}")
    console.print(table)
