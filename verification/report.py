"""Reports: report.json (the spec's schema), report.npz, Markdown and HTML with figures,
and the terminal verdict table. Files are written atomically (``verification.records``): a
write that fails (a full disk) leaves the earlier file as it was and raises an OSError naming
the file."""

from __future__ import annotations

from collections.abc import Callable, Mapping
import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

from numerics.storage import copy_tree, owned_folder

from .records import (cannot_write, percent_text, summary_rows, to_jsonable, write_bytes as _write_bytes,
                      write_json, write_npz)
from .tasks import render_png

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.console import Console

__all__ = ["to_jsonable", "write_json", "write_npz", "write_markdown", "write_html",
           "render_figures", "render_png", "write_figures", "cannot_write",
           "verdict_table", "verdict_counts", "report_lines", "KATEX_DIR", "copy_katex"]

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

VERDICTS = ("confirmed", "refuted", "inconclusive", "error")
COLOURS = {"confirmed": "green", "refuted": "red", "inconclusive": "yellow", "error": "magenta"}


def write_figures(pngs: Mapping[str, bytes], folder: Path) -> dict[str, str]:
    """The PNG files in ``folder`` (atomically); returns {name: path relative to its parent}."""
    out = {}
    try:
        owned_folder(folder)               # a link planted at figures/ is not written through
    except OSError as exc:
        raise cannot_write(folder, exc) from exc
    for name, data in pngs.items():
        fname = name.replace(":", "_").replace("/", "_").replace("[", "_").replace("]", "") + ".png"
        _write_bytes(folder / fname, data)
        out[name] = f"{folder.name}/{fname}"
    return out


def render_figures(figures: Mapping[str, Callable[[Figure], object]], folder: Path) -> dict[str, str]:
    """Draw each figure callable into a PNG file in ``folder``; returns {name: relative path}."""
    return write_figures(render_png(figures), folder)


def _excerpt(value):
    """The evidence without its bulk: each check's per-comparison table (``comparisons``) is
    replaced by its size (it is whole in report.json and report.npz)."""
    if isinstance(value, Mapping):
        return {k: (f"{v.get('count', '?')} comparisons: report.json, report.npz"
                    if k == "comparisons" and isinstance(v, Mapping) else _excerpt(v))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_excerpt(v) for v in value]
    return value


def _fmt_evidence(ev: dict, limit=1500) -> str:
    shown = _excerpt({k: v for k, v in ev.items() if k != "points"})
    text = json.dumps(to_jsonable(shown), indent=1)
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
    return alpha, percent_text(k.get("resolution"))


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
        stages = [c.get("stage") for c in report["claims"]]
        said = [f"{n} of {len(stages)} claims {what}" for what, n in
                (("reused", stages.count("reused")),
                 ("re-judged from stored simulations", stages.count("rejudged"))) if n]
        parts.append(f"store {report['store']}" + (f" ({', '.join(said)})" if said else ""))
    if opts.get("force"):
        parts.append("every claim recomputed (force)")
    if opts.get("rejudge"):
        parts.append("every claim judged again (rejudge)")
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
        if c.get("domain"):
            lines += [f"*Domain:* {domain_text(c['domain'])}", ""]
        if fams := families_text(c.get("contract")):
            lines += [f"*Families:* {fams}", ""]
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
    out, table = [f"<h2>{html.escape(lines[1].lstrip('# '))}</h2>"], []
    for r in lines[3:] + [""]:                 # tables (claims, families) and the text between
        if r.startswith("|"):
            if not r.startswith("|---"):
                table.append("".join(f"<td>{html.escape(x.strip())}</td>"
                                     for x in r.strip("|").split("|")))
            continue
        if table:
            out.append("<table>" + "".join(f"<tr>{c}</tr>" for c in table) + "</table>")
            table = []
        if r.strip():
            out.append(f"<p>{html.escape(r)}</p>")
    return "".join(out)


def families_text(contract: dict | None) -> str:
    """The contract's families in one line: name (policy, comparisons, resolution[, the
    resolution it must reach]); "" without statistical families."""
    parts = []
    for f in (contract or {}).get("families") or []:
        if f.get("exact"):
            continue
        req = f", must resolve {percent_text(f['required'])}" if f.get("required") else ""
        parts.append(f"{f['name']} ({f.get('policy') or 'policy not named'}, "
                     f"{f['comparisons']} comparisons, resolves "
                     f"{percent_text(f.get('resolution'))}{req})")
    return "; ".join(parts)


def copy_katex(folder: str | Path) -> Path:
    """Copy the shipped KaTeX to ``folder/katex`` (what report.html loads); its path."""
    dest = Path(folder) / "katex"
    try:                     # file by file, atomically: no link planted in katex/ is followed
        copy_tree(KATEX_DIR, dest)
    except OSError as exc:
        raise cannot_write(dest, exc) from exc
    return dest


def _equations_html(evidence: dict) -> str:
    """The derived equations an evidence entry carries: ``latex`` ({LaTeX lhs: LaTeX rhs}, e.g. a
    reduced model's ``latex()``, or one LaTeX string) typeset as display mathematics, and the
    symbolic results of the form ``<name>_symbolic`` (a SymPy expression, or {name: expression},
    as text: e.g. ``flow_on_M_symbolic``) as code; "" when there are none."""
    if not isinstance(evidence, dict):
        return ""
    eqs = evidence.get("latex")
    if isinstance(eqs, str):
        eqs = {"": eqs}
    rows = ""
    if isinstance(eqs, dict) and all(isinstance(v, str) for v in eqs.values()):
        rows = "".join(f"<div class='math'>$${html.escape(f'{k} = {v}' if k else v)}$$</div>"
                       for k, v in eqs.items())
    for key, value in evidence.items():
        if not (isinstance(key, str) and key.endswith("_symbolic")):
            continue
        items = {"": value} if isinstance(value, str) else value
        if not isinstance(items, dict) or not all(isinstance(v, str) for v in items.values()):
            continue
        name = key.removesuffix("_symbolic").replace("_", " ")
        rows += (f"<div class='symbolic'>{html.escape(name)}: " + "; ".join(
            f"<code>{html.escape(f'{k}: {v}' if k else v)}</code>" for k, v in items.items())
            + "</div>")
    return f"<details open><summary>derived equations</summary>{rows}</details>" if rows else ""


HTML_BACKGROUND = "#ffffff"
HTML_TEXT = "#1f2328"
HTML_COLOURS = {"confirmed": "#1a7f37", "refuted": "#b42318", "inconclusive": "#8a5a00",
                "error": "#8e24aa"}
"""report.html's verdict colours, each with a WCAG contrast ratio of at least 4.5:1 against
the page's background (the yellow of the terminal's 'inconclusive' is unreadable on white)."""

_CSS = (f"body{{font-family:sans-serif;max-width:1000px;margin:auto;padding:0 1em;"
        f"background:{HTML_BACKGROUND};color:{HTML_TEXT}}}"
        "td,th{border-bottom:1px solid #ddd;padding:4px;text-align:left;vertical-align:top}"
        "table.counts td,table.counts th.n{text-align:right}"
        # a table wider than the window scrolls inside it rather than widening the page
        "table{display:block;max-width:100%;overflow-x:auto}"
        "code{overflow-wrap:anywhere}.verdict{font-weight:bold}"
        + "".join(f".v-{v}{{color:{c}}}" for v, c in HTML_COLOURS.items()))


def _paper(c: dict) -> str:
    return c.get("paper") or c["id"].partition(":")[0]


def _by_paper(claims: list[dict]) -> dict[str, list[dict]]:
    """The claims per paper, papers in the order of their first claim."""
    out: dict[str, list[dict]] = {}
    for c in claims:
        out.setdefault(_paper(c), []).append(c)
    return out


def _verdict_html(verdict: str) -> str:
    return f"<span class='verdict v-{verdict}'>{html.escape(verdict)}</span>"


def _counts_html(claims: list[dict]) -> str:
    """Counts per verdict (ids ``count-<verdict>``, ``count-all``) and per paper (a row each,
    ``counts-<paper>``, linking to the paper's section)."""
    def cells(cs: list[dict], prefix: str) -> str:
        n = verdict_counts(cs)
        return ("".join(f"<td id='{prefix}-{v}' class='v-{v}'>{n[v]}</td>" if n[v] else
                        f"<td id='{prefix}-{v}'>0</td>" for v in VERDICTS)
                + f"<td id='{prefix}-all'>{len(cs)}</td>")
    head = "".join(f"<th class='n'>{v}</th>" for v in VERDICTS)
    rows = "".join(f"<tr id='counts-{html.escape(p)}'><th><a href='#paper-{html.escape(p)}'>"
                   f"{html.escape(p)}</a></th>{cells(cs, f'count-{html.escape(p)}')}</tr>"
                   for p, cs in _by_paper(claims).items())
    return (f"<section id='counts'><h2>Counts</h2><p class='total'>{html.escape(_counts_text(claims))}"
            f"</p><table class='counts'><tr><th>paper</th>{head}<th class='n'>claims</th></tr>"
            f"{rows}<tr id='counts-total'><th>all papers</th>{cells(claims, 'count')}</tr>"
            "</table></section>")


def domain_text(domain: dict) -> str:
    """What a verdict covers: the claim's domain, its reference and the settings judged (a map,
    ``python -m verification map``, judges the rest)."""
    coords = []
    for k, c in domain["coordinates"].items():
        if c["kind"] == "choice":
            coords.append(f"{k} ∈ {{{', '.join(map(str, c['options']))}}}")
        else:
            coords.append(f"{k} ∈ [{c['lo']:g}, {c['hi']:g}]" + (" (log)" if c.get("log") else ""))
    n = len(domain.get("settings", []))
    ref = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in domain["reference"].items())
    return ("; ".join(coords + list(domain.get("where", []))) + f"; reference {ref}; "
            f"judged at {n} setting{'s' if n != 1 else ''} (map the rest with "
            "`python -m verification map`)")


def _claim_html(c: dict, figure_paths: Mapping[str, str]) -> str:
    figs = "".join(f"<img src='{html.escape(rel)}' style='max-width:640px'>"
                   for name, rel in figure_paths.items() if name.startswith(c["id"]))
    return (f"<h3 id='{html.escape(c['id'])}'>{html.escape(c['id'])} — {html.escape(c['label'])}: "
            f"{_verdict_html(c['verdict'])}</h3>"
            f"<blockquote class='statement'>{html.escape(c['statement'])}</blockquote>"
            f"<p>{html.escape(c['summary'])}</p>"
            + (f"<p><i>Domain:</i> {html.escape(domain_text(c['domain']))}</p>"
               if c.get("domain") else "")
            + (f"<p><i>Families:</i> {html.escape(fams)}</p>"
               if (fams := families_text(c.get("contract"))) else "")
            + f"{_equations_html(c.get('evidence', {}))}"
            f"{figs}<details><summary>evidence</summary><pre>"
            f"{html.escape(_fmt_evidence(c['evidence'], 4000))}</pre></details>")


def _paper_html(paper: str, claims: list[dict], figure_paths: Mapping[str, str]) -> str:
    """A paper's section: its heading (with its counts), its verdict table, its claims."""
    rows = "".join(
        f"<tr><td><a href='#{html.escape(c['id'])}'><code>{html.escape(c['id'])}</code></a></td>"
        f"<td>{html.escape(c['label'])}</td><td>{_verdict_html(c['verdict'])}</td>"
        + "".join(f"<td>{html.escape(t)}</td>" for t in contract_text(c))
        + f"<td>{html.escape(c['summary'])}</td><td>{c['seconds']:.1f}</td></tr>"
        for c in claims)
    return (f"<section class='paper' id='paper-{html.escape(paper)}'><h2>{html.escape(paper)} "
            f"<small>({html.escape(_counts_text(claims))})</small></h2>"
            "<table><tr><th>claim</th><th>label</th><th>verdict</th><th>α</th><th>resolution</th>"
            f"<th>summary</th><th>s</th></tr>{rows}</table>"
            + "".join(_claim_html(c, figure_paths) for c in claims) + "</section>")


def write_html(path: str | Path, report: dict, figure_paths: Mapping[str, str]) -> None:
    """report.html: the counts per verdict and per paper first, then a section per paper (its
    verdict table, then each claim's statement, summary, derived equations, figures and
    evidence), then the calibration. Self-contained but for the figures and the KaTeX copy
    written next to it (``katex/``): statements' ``$...$`` (and ``\\(...\\)``, ``$$...$$``) and the
    derived equations of an evidence entry ``latex`` are typeset, with no network needed to
    view the page. Verdict colours: ``HTML_COLOURS`` (readable on the page's background)."""
    claims = report["claims"]
    papers = "".join(_paper_html(p, cs, figure_paths) for p, cs in _by_paper(claims).items())
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>Claim verification report"
           f"</title><style>{_CSS}</style>{_KATEX_HEAD}</head><body>"
           f"<h1>Claim verification report</h1><p>profile {html.escape(str(report['profile']))} · "
           f"seed {report['seed']} · device {html.escape(report['device'])} · "
           f"{html.escape(str(report['started']))}</p>"
           f"{f'<p>{html.escape(_run_line(report))}</p>' if _run_line(report) else ''}"
           f"{_counts_html(claims)}{papers}{_calibration_html(report)}</body></html>")
    copy_katex(Path(path).parent)
    _write_bytes(path, doc.encode())


def report_lines(out: Path, report: dict, n_claims: int, width: int | None = None) -> list[str]:
    """What ``run`` says of the files it wrote: 'report: OUT/report.json (also report.md, ...);
    N of M claims reused from the store', on one line where it fits ``width`` (default: the
    console's, $COLUMNS), else the folder and the reuse on lines of their own, no line wider
    (a folder name longer than a line is broken across lines)."""
    import textwrap
    if width is None:
        from rich.console import Console
        width = Console().width
    others = [f for f in report.get("files", []) if f.startswith("report.") and f != "report.json"]
    also = f" (also {', '.join(others)})" if others else ""
    reused = (f"{report['reused']} of {n_claims} claims reused from the store"
              if report.get("reused") else "")
    line = f"report: {Path(out) / 'report.json'}{also}"
    if len(line) + len(f"; {reused}") * bool(reused) <= width:
        return [line + (f"; {reused}" if reused else "")]
    wrap = textwrap.TextWrapper(max(width, 8), break_on_hyphens=False, subsequent_indent="  ")
    lines = [line] if len(line) <= width else [*wrap.wrap(f"report: report.json{also} in"),
                                               *wrap.wrap(f"  {out}")]
    return lines + (wrap.wrap(f"  {reused}") if reused else [])


def verdict_counts(claims: list[dict]) -> dict[str, int]:
    """How many of ``claims`` have each verdict, in the order of ``VERDICTS``."""
    return {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}


def _counts_text(claims: list[dict]) -> str:
    """'4 claims: 3 confirmed, 1 inconclusive' (the verdicts that occur)."""
    counts = [f"{n} {v}" for v, n in verdict_counts(claims).items() if n]
    return f"{len(claims)} claim{'s' * (len(claims) != 1)}" + (f": {', '.join(counts)}" if counts else "")


_MIN_CLAIM_WIDTH = 22
"""The claim column's width below which a narrow console's table drops resolution, then α,
then seconds (22: the longest piece of a built-in claim id, 'prop10-classification')."""


def _id_lines(claim_id: str, width: int) -> str:
    """A claim id that fits ``width`` cells as it is, else broken after its ':' and before a
    '[' (``paper:`` / ``claim`` / ``[variant]``), the pieces packed greedily on lines; a piece
    still wider than ``width`` is left for the table to end with an ellipsis."""
    from rich.cells import cell_len
    if cell_len(claim_id) <= width:
        return claim_id
    paper, sep, rest = claim_id.partition(":")
    pieces = [paper + sep] if sep else []
    name, bracket, variant = rest.partition("[") if sep else claim_id.partition("[")
    pieces += [name] + ([bracket + variant] if bracket else [])
    lines: list[str] = []
    for piece in filter(None, pieces):
        if lines and cell_len(lines[-1] + piece) <= width:
            lines[-1] += piece
        else:
            lines.append(piece)
    return "\n".join(lines)


def verdict_table(report: dict, console: Console | None = None, wide: bool = False) -> None:
    """Print the run's verdicts as a rich table (on ``console``, default a new one), within the
    console's width (rich's Console follows $COLUMNS): claim, verdict, α, resolution and seconds,
    claim ids kept whole where they fit (else broken after ':' and before '[', and only then
    cut with an ellipsis); the counts per verdict below. ``wide``: label and summary too (the
    summaries are always in report.md and report.html)."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    claims = report["claims"]
    table = Table(title=f"verdicts ({report['profile']} profile, seed {report['seed']})",
                  caption=_counts_text(claims))
    if wide:
        for col in ("claim", "label", "verdict", "α", "resolution", "summary", "s"):
            short = col in ("verdict", "α", "resolution", "s")
            table.add_column(col, overflow="ellipsis" if short else "fold", no_wrap=short,
                             justify="right" if col == "s" else "left")
        for c in claims:
            table.add_row(escape(c["id"]), escape(c["label"]),
                          f"[{COLOURS[c['verdict']]}]{c['verdict']}[/]", *contract_text(c),
                          escape(c["summary"]), f"{c['seconds']:.1f}")
        console.print(table)
        return
    cols = {"verdict": [c["verdict"] for c in claims],
            "α": [contract_text(c)[0] for c in claims],
            "resolution": [contract_text(c)[1] for c in claims],
            "s": [f"{c['seconds']:.1f}" for c in claims]}
    widths = {h: max([cell_len(h), *map(cell_len, v)]) for h, v in cols.items()}

    def room() -> int:       # the claim column's width: the rest, less borders and padding
        return console.width - sum(widths[h] for h in cols) - 3 * (len(cols) + 1) - 1

    for h in ("resolution", "α", "s"):          # a narrow console: the least needed go first
        if room() >= _MIN_CLAIM_WIDTH:
            break
        del cols[h]
    width = max(room(), len("claim"))
    table.add_column("claim", no_wrap=True, overflow="ellipsis", max_width=width)
    for h in cols:
        table.add_column(h, no_wrap=True, overflow="ellipsis", justify="right" if h == "s" else "left")
    for i, c in enumerate(claims):
        table.add_row(Text(_id_lines(c["id"], width)),
                      *(Text(v[i], style=COLOURS[v[i]] if h == "verdict" else "")
                        for h, v in cols.items()))
    console.print(table)
