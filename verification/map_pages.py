"""What a map writes (``verification.mapping``'s last pass): one figure per pair of ranged
coordinates, map.md and map.html, and the one-line summary the command prints."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .domain import setting_key

# --- what is written -------------------------------------------------------------------------
COLOURS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#9a6700",
           "error": "#6e7781"}


BOUNDARY_MARKERS = {
    # kind: (scatter style, legend text); a boundary judged at one seed only counts as unreplicated
    "decided": (dict(marker="x", s=34, c="k", linewidths=1.4),
                "boundary: both sides decided and replicated"),
    "inconclusive": (dict(marker="o", s=30, facecolors="none", edgecolors="#6e7781",
                          linewidths=1.0), "boundary: a side inconclusive"),
    "unreplicated": (dict(marker="s", s=26, facecolors="none", edgecolors="#6e7781",
                          linewidths=1.0), "boundary: a side not kept at another seed"),
    "error": (dict(marker="x", s=26, c="#6e7781", linewidths=1.0),
              "boundary: an error between")}
PAPER_STYLES = (("#0969da", "-"), ("#8250df", "--"), ("#bf3989", ":"))
"""Colour and line style of the paper's boundaries, in their declared order."""
GRID = 241
"""Points per axis at which a paper boundary's function is evaluated for its contour."""


JUDGED = ("confirmed", "refuted", "inconclusive")
"""The verdicts a judgement can reach (an ``error`` is none of them)."""


def decision(point: dict) -> dict:
    """What a map point decided: its own judgement, or, when it was inconclusive and the map
    escalated it, the judgement at the larger profile ({"verdict", "summary", "contract",
    "profile"}; ``profile`` None: the map's). An escalation that failed (an error) leaves the
    map's own verdict standing."""
    e = point.get("escalated")
    if e is None or e["verdict"] not in JUDGED:
        return {"verdict": point["verdict"], "summary": point.get("summary", ""),
                "contract": point.get("contract"), "profile": None}
    return {"verdict": e["verdict"], "summary": e.get("summary", ""),
            "contract": e.get("contract"), "profile": e["profile"]}


def verdict_of(point: dict) -> str:
    """The verdict a map point counts with (``decision``)."""
    return decision(point)["verdict"]


def boundary_kind(b: dict) -> str:
    """'decided' (both sides confirmed or refuted and each kept at the replicate seeds),
    'inconclusive' (a side is), 'unreplicated' (a side's verdict not kept, or never
    replicated) or 'error' (no verdict between)."""
    if "error_between" in b:
        return "error"
    if any(v not in ("confirmed", "refuted") for v in b["between"]):
        return "inconclusive"
    reps = b.get("replication")
    return "decided" if reps and all(r["replicated"] for r in reps) else "unreplicated"


def draw_pair(fig, doc: dict, x: str, y: str, boundaries: Sequence = ()) -> None:
    """One panel: the sampled and refined settings projected on (x, y), coloured by verdict;
    boundary points marked by kind (``boundary_kind``), the minimal counterexample as a star,
    and each of the paper's ``boundaries`` (``PaperBoundary``) as the zero contour of its
    function over (x, y), the other coordinates at their fixed or reference value."""
    ax = fig.add_subplot()
    coords = doc["domain"]["coordinates"]
    for verdict, colour in COLOURS.items():
        pts = [p["setting"] for p in doc["points"] if verdict_of(p) == verdict]
        if pts:
            ax.scatter([s[x] for s in pts], [s[y] for s in pts], s=18, c=colour, label=verdict,
                       alpha=0.85, edgecolors="none")
    for kind, (style, text) in BOUNDARY_MARKERS.items():
        pts = [b["setting"] for b in doc["boundary"] if boundary_kind(b) == kind]
        if pts:
            ax.scatter([s[x] for s in pts], [s[y] for s in pts], label=text, zorder=4, **style)
    ce = doc.get("counterexample")
    if ce:
        ax.scatter([ce["setting"][x]], [ce["setting"][y]], marker="*", s=220, c="#cf222e",
                   edgecolors="k", linewidths=0.8, label="minimal counterexample", zorder=5)
    ref = doc["reference"]          # above the star: a counterexample near it must not hide it
    ax.scatter([ref[x]], [ref[y]], marker="D", s=40, facecolors="none", edgecolors="k",
               linewidths=1.5, label="reference", zorder=6)
    for b, (colour, ls) in zip(boundaries, PAPER_STYLES):
        _draw_paper_boundary(ax, doc, b, x, y, colour, ls)
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    for scale, axis, name in ((ax.set_xscale, ax.xaxis, x), (ax.set_yscale, ax.yaxis, y)):
        if coords[name].get("log"):     # 1, 2, 5 per decade as plain numbers, no minor labels
            scale("log")
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{doc['claim']}: {x} × {y}" + _others(doc, x, y), fontsize=9)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _axis_grid(c: dict):
    import numpy as np
    lo, hi = float(c["lo"]), float(c["hi"])
    return np.geomspace(lo, hi, GRID) if c.get("log") else np.linspace(lo, hi, GRID)


def _draw_paper_boundary(ax, doc: dict, b, x: str, y: str, colour: str, ls: str) -> None:
    """``b``'s zero contour over the panel's ranges (nothing when it depends on neither x nor
    y, or does not cross the panel); its legend entry names the values the other coordinates
    take."""
    import numpy as np
    if x not in b.coordinates and y not in b.coordinates:
        return
    coords = doc["domain"]["coordinates"]
    gx, gy = np.meshgrid(_axis_grid(coords[x]), _axis_grid(coords[y]))
    held = _held(doc, x, y)
    values = {k: held[k][0] for k in b.coordinates if k not in (x, y)}
    z = b(**{**values, **{k: g for k, g in ((x, gx), (y, gy)) if k in b.coordinates}})
    z = np.broadcast_to(z, gx.shape)
    if not (np.nanmin(z) < 0 < np.nanmax(z)):
        return
    ax.contour(gx, gy, z, levels=[0.0], colors=[colour], linestyles=[ls], linewidths=1.3)
    at = ", ".join(f"{k} = {v:.3g} ({held[k][1]})" for k, v in values.items())
    ax.plot([], [], color=colour, ls=ls, lw=1.3,
            label=f"paper: {b.statement}" + (f"\nat {at}" if at else ""))


def _held(doc: dict, x: str, y: str) -> dict[str, tuple]:
    """Each coordinate a panel does not show: (its value, 'fixed') when it takes one value over
    every judged setting, else (its reference value, 'reference')."""
    out = {}
    for k in doc["domain"]["coordinates"]:
        if k in (x, y):
            continue
        values = {p["setting"].get(k) for p in doc["points"]}
        out[k] = (next(iter(values)), "fixed") if len(values) == 1 else (doc["reference"][k],
                                                                          "reference")
    return out


def _others(doc: dict, x: str, y: str) -> str:
    """How a panel treats the coordinates it does not show: a coordinate that takes one value
    over every judged setting is named as fixed at it, the others as projected over."""
    held = _held(doc, x, y)
    varied = [k for k, (_, how) in held.items() if how == "reference"]
    fixed = [f"{k} = {v} fixed" for k, (v, how) in held.items() if how == "fixed"]
    parts = ([f"projected over {', '.join(varied)}"] if varied else []) + fixed
    return f"\n({'; '.join(parts)})" if parts else ""


def _pairs_of(doc: dict) -> list[tuple[str, str]]:
    ranged = [k for k, c in doc["domain"]["coordinates"].items() if c["kind"] != "choice"]
    return [(a, b) for i, a in enumerate(ranged) for b in ranged[i + 1:]]


def write_map(out: Path, doc: dict, figures: bool = True, boundaries: Sequence = ()) -> list[str]:
    """map.md, map.html and figures/<x>-<y>.png (one per pair of ranged coordinates; the
    claim's ``boundaries``, ``PaperBoundary``, drawn on each)."""
    from numerics.storage import atomic_write_bytes, atomic_write_text, owned_folder
    written, pngs = [], {}
    if figures:
        from .tasks import render_png
        import functools
        draws = {f"{x}-{y}": functools.partial(draw_pair, doc=doc, x=x, y=y,
                                                   boundaries=boundaries)
                 for x, y in _pairs_of(doc)}
        pngs = render_png(draws)
        owned_folder(out / "figures")     # a link planted there is refused, never written through
        for name, data in pngs.items():
            atomic_write_bytes(out / "figures" / f"{name}.png", data)
            written.append(f"figures/{name}.png")
    atomic_write_text(out / "map.md", map_markdown(doc, [f"figures/{n}.png" for n in pngs]))
    atomic_write_text(out / "map.html", map_html(doc, pngs))
    doc["files"] = ["map.json", "map.md", "map.html", *written]
    return written


def sequential_cost(doc: dict) -> dict | None:
    """What the map's sequential checks drew against their budgets, escalated judgements
    included (None: none ran)."""
    judged = [*doc["points"], *(p["escalated"] for p in doc["points"] if p.get("escalated"))]
    pts = [p for p in judged if p.get("sequential")]
    if not pts:
        return None
    samples = sum(d["samples"] for p in pts for d in p["sequential"].values())
    budget = sum(d["budget"] for p in pts for d in p["sequential"].values())
    return {"points": len(pts), "samples": samples, "budget": budget,
            "fraction": samples / budget if budget else 1.0}


def map_summary(doc: dict) -> str:
    """One line: where the claim holds over what was sampled, and its minimal counterexample."""
    n = doc.get("sampled") or len(doc["points"])
    holds = doc.get("holds_at")
    ce = doc.get("counterexample")
    line = (f"{doc['claim']}: holds at {100 * holds:.0f} % of {n} sampled settings"
            if holds is not None else f"{doc['claim']}: no sampled setting could be judged")
    line += f"; {len(doc['boundary'])} boundary points"
    if ce:
        line += f"; minimal counterexample {setting_key(ce['setting'])}"
    else:
        line += "; no counterexample"
    return line


def map_markdown(doc: dict, figures: Sequence[str]) -> str:
    lines = [f"# Map of {doc['claim']}", "", f"> {doc['statement']}", "",
             f"- {map_summary(doc)}",
             "- domain: " + ", ".join(f"{k} {_describe(c)}"
                                       for k, c in doc["domain"]["coordinates"].items())
             + "".join(f"; {w}" for w in doc["domain"]["where"]),
             f"- reference: {setting_key(doc['reference'])}",
             f"- profile {doc['profile']}"
             + (f" (inconclusive settings escalated to {doc['escalate_to']})"
                if doc.get("escalate_to") else "")
             + f", seed {doc['seed']}, {len(doc['points'])} judgements, "
             f"{doc['seconds']:.1f} s" + ("" if doc["complete"] else " (incomplete)"), ""]
    counts: dict[str, int] = {}
    for p in doc["points"]:
        if p["stage"] == "sample":
            counts[verdict_of(p)] = counts.get(verdict_of(p), 0) + 1
    lines += ["| verdict | sampled settings |", "|---|---|"]
    lines += [f"| {v} | {counts[v]} |" for v in sorted(counts)]
    if drawn := sequential_cost(doc):
        lines += ["", f"Sequential checks drew {drawn['samples']} samples over "
                  f"{drawn['points']} judgements, {100 * drawn['fraction']:.0f} % of the "
                  f"{drawn['budget']} their budgets allow: each setting stops when decided."]
    ce = doc.get("counterexample")
    if ce:
        lines += ["", "## Minimal counterexample", "", f"`{setting_key(ce['setting'])}`: "
                  f"{ce['summary']}"]
    if doc.get("paper_boundaries"):
        lines += ["", "## The paper's boundaries", "", "Drawn on each panel as a contour, the "
                  "coordinates a panel does not show at their fixed or reference value:", ""]
        lines += [f"- {b['statement']}: {b['where']}" for b in doc["paper_boundaries"]]
    if doc["boundary"]:
        lines += ["", "## Boundary", "", _KINDS_TEXT, "",
                  "| setting | between | kind | resolution | replicated at seeds |",
                  "|---|---|---|---|---|"]
        lines += [f"| {setting_key(b['setting'])} | {_between_text(b)} | "
                  f"{boundary_kind(b)} | {_resolutions(b)} | {_replication_text(b)} |"
                  for b in doc["boundary"]]
    lines += ["", "## Figures", ""] + [f"![{f}]({f})" for f in figures]
    lines += ["", "## Settings judged", "", "| stage | setting | verdict | summary |",
              "|---|---|---|---|"]
    lines += [f"| {p['stage']} | {setting_key(p['setting'])} | {_verdict_text(p)} | "
              f"{decision(p)['summary'].replace('|', '/')[:160]} |" for p in doc["points"]]
    return "\n".join(lines) + "\n"


_KINDS_TEXT = ("Kind: decided, both bracketing settings confirmed or refuted and each "
               "keeping its verdict at the replicate seeds (×); inconclusive, a side "
               "undecided (○); unreplicated, a side that changed verdict at another seed (□). "
               "A verdict marked (full) was decided at the full profile, the setting being "
               "inconclusive at the map's (--escalate).")


def _verdict_text(p: dict) -> str:
    e = p.get("escalated")
    return p["verdict"] if e is None else f"{p['verdict']} → {e['verdict']} ({e['profile']})"


def _between_text(b: dict) -> str:
    profiles = b.get("profiles") or [None] * len(b["between"])
    return " / ".join(v + (f" ({pr})" if pr else "") for v, pr in zip(b["between"], profiles))


def _resolutions(b: dict) -> str:
    return " / ".join("–" if r is None else f"{r:.2g}" for r in b.get("resolution") or ())


def _replication_text(b: dict) -> str:
    """Each side's replicate seeds and verdicts, e.g. 'refuted: 1 refuted, 2 refuted'."""
    reps = b.get("replication")
    if not reps:
        return "not replicated"
    return "; ".join("exact" if r.get("exact") else
                     f"{v}: " + ", ".join(f"{s} {w}" for s, w in zip(r["seeds"], r["verdicts"]))
                     for v, r in zip(b["between"], reps))


def redraw(folder: Path, boundaries: Sequence | None = None) -> list[str]:
    """map.md, map.html and figures rewritten from ``folder``/map.json alone (no judgement),
    with the paper's boundaries of the claim it names when it is registered (``boundaries``:
    those instead)."""
    from .records import read_json
    folder = Path(folder)
    doc = read_json(folder / "map.json")
    if boundaries is None:
        from .catalogue import load_all
        registered = load_all().get(doc["claim"])
        boundaries = registered.boundaries if registered is not None else ()
    doc["paper_boundaries"] = [b.to_json() for b in boundaries]
    for b in doc["boundary"]:
        b["kind"] = boundary_kind(b)
    written = write_map(folder, doc, True, boundaries)
    from .records import write_json
    write_json(folder / "map.json", doc)
    return written


def _describe(c: dict) -> str:
    if c["kind"] == "choice":
        return "∈ {" + ", ".join(map(str, c["options"])) + "}"
    return f"∈ [{c['lo']:g}, {c['hi']:g}]" + (" (log)" if c.get("log") else "") + (
        " integer" if c["kind"] == "integer" else "")


def map_html(doc: dict, pngs: dict[str, bytes]) -> str:
    import base64
    import html
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(p['stage'])}</td><td><code>{esc(setting_key(p['setting']))}</code></td>"
        f"<td style='color:{COLOURS.get(verdict_of(p), '#000')}'><b>{esc(_verdict_text(p))}</b>"
        f"</td><td>{esc(decision(p)['summary'][:240])}</td></tr>" for p in doc["points"])
    figs = "".join(f"<figure><img alt='{esc(n)}' src='data:image/png;base64,"
                   f"{base64.b64encode(b).decode()}'><figcaption>{esc(n)}</figcaption></figure>"
                   for n, b in pngs.items())
    ce = doc.get("counterexample")
    kinds = {}
    for b in doc["boundary"]:
        kinds[boundary_kind(b)] = kinds.get(boundary_kind(b), 0) + 1
    paper = "".join(f"<li>{esc(b['statement'])}: {esc(b['where'])}</li>"
                    for b in doc.get("paper_boundaries") or ())
    extra = ((f"<p>The paper's boundaries, drawn as contours:</p><ul>{paper}</ul>" if paper
              else "") + ("<p>Boundary points by kind: " + ", ".join(
                  f"{n} {k}" for k, n in sorted(kinds.items())) + f". {esc(_KINDS_TEXT)}</p>"
                  if kinds else ""))
    ce_html = (f"<p><b>Minimal counterexample</b> (★): <code>{esc(setting_key(ce['setting']))}"
               f"</code>: {esc(ce['summary'])}</p>" if ce else "<p>No counterexample.</p>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Map of {esc(doc['claim'])}"
            "</title><style>body{font-family:sans-serif;max-width:70em;margin:auto}"
            "td,th{border-bottom:1px solid #ddd;padding:2px 6px;font-size:90%}"
            "img{max-width:100%}.scroll{overflow-x:auto}td code{overflow-wrap:anywhere}"
            "</style></head><body>"
            f"<h1>Map of {esc(doc['claim'])}</h1><blockquote>{esc(doc['statement'])}</blockquote>"
            f"<p>{esc(map_summary(doc))}</p>{ce_html}{extra}{figs}"
            f"<div class='scroll'><table><tr><th>stage</th><th>setting</th><th>verdict</th>"
            f"<th>summary</th></tr>{rows}</table></div></body></html>\n")
