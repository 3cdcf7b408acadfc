"""The reports (``verification.report``): report.html typesets mathematics with the KaTeX shipped
in the package (the page references only the copy written next to it, so it renders offline),
and the terminal table shows sub-claim ids verbatim. report.html opens with the counts per
verdict and per paper, groups the claims by paper, and its verdict colours are readable (WCAG
contrast ≥ 4.5:1 on its background), checked in a real headless browser where one is installed."""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from verification.report import KATEX_DIR, VERDICTS, write_html

ROOT = Path(__file__).resolve().parents[2]


def _report():
    entry = {"id": "myvariant:bound", "label": "Thm. 1", "verdict": "confirmed",
             "statement": r"The risk obeys $R(\kappa) \le \lambda^2 < 1$ for every κ.",
             "summary": "holds", "seconds": 0.5, "contract": {"exact": True},
             "evidence": {"latex": {"R": r"\varepsilon^{2} + \gamma^{2}"}, "value": 0.1}}
    return {"profile": "quick", "seed": 0, "device": "cpu", "started": "now", "claims": [entry]}


def test_the_package_ships_katex_with_its_licence_and_fonts():
    for name in ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js", "LICENSE"):
        assert (KATEX_DIR / name).is_file(), name
    assert "MIT" in (KATEX_DIR / "LICENSE").read_text()
    css = (KATEX_DIR / "katex.min.css").read_text()
    woff2 = set(re.findall(r"fonts/(KaTeX_[\w-]+\.woff2)", css))
    assert woff2 and all((KATEX_DIR / "fonts" / f).is_file() for f in woff2)
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert {"static/katex/*", "static/katex/contrib/*", "static/katex/fonts/*"} <= set(data["verification"])


def test_report_html_loads_the_local_katex_and_marks_up_the_mathematics(tmp_path):
    write_html(tmp_path / "report.html", _report(), {})
    page = (tmp_path / "report.html").read_text()
    refs = re.findall(r"(?:src|href)='([^']+)'", page)
    assert {"katex/katex.min.css", "katex/katex.min.js", "katex/contrib/auto-render.min.js"} <= set(refs)
    assert not any(r.startswith(("http:", "https:", "//")) for r in refs)        # no network
    assert all((tmp_path / r).is_file() for r in refs if r.startswith("katex/"))
    assert (tmp_path / "katex" / "LICENSE").is_file() and list((tmp_path / "katex" / "fonts").glob("*.woff2"))
    assert "renderMathInElement" in page
    assert r"$R(\kappa) \le \lambda^2 &lt; 1$" in page                  # escaped, typeset in the browser
    assert r"$$R = \varepsilon^{2} + \gamma^{2}$$" in page
    write_html(tmp_path / "report.html", _report(), {})                       # a second write is fine


def test_terminal_table_shows_sub_claim_ids_verbatim():
    from io import StringIO
    from rich.console import Console
    from verification.report import verdict_table
    buf = StringIO()
    report = {"profile": "quick", "seed": 0, "claims": [
        {"id": "p:c[link=linear]", "label": "Prop. 1", "verdict": "refuted",
         "summary": "x [bold]y", "seconds": 1.0}]}
    verdict_table(report, Console(file=buf, width=200))
    assert "p:c[link=linear]" in buf.getvalue() and "[bold]" not in buf.getvalue()  # no summary
    buf = StringIO()
    verdict_table(report, Console(file=buf, width=200), wide=True)             # with summaries
    assert "p:c[link=linear]" in buf.getvalue() and "[bold]" in buf.getvalue()


# --- report.html: counts, papers, colours ---------------------------------------------------
def _entry(claim_id: str, verdict: str, **extra) -> dict:
    return {"id": claim_id, "paper": claim_id.split(":")[0], "label": f"Prop. {len(claim_id)}",
            "verdict": verdict, "statement": f"Statement of {claim_id}.",
            "summary": f"summary of {claim_id}", "seconds": 1.0, "contract": {"exact": True},
            "evidence": {}, **extra}


def _papers_report() -> dict:
    claims = [_entry("marion2025:a", "confirmed"), _entry("dohmatob2025:b[link=relu]", "refuted"),
              _entry("marion2025:c", "inconclusive"), _entry("sagitova2026:d", "error"),
              _entry("dohmatob2025:e", "confirmed", evidence={
                  "latex": {"R": r"\mu^{2}"}, "flow_on_M_symbolic": {"theta": "0", "eta": "mu*nu"}}),
              _entry("marion2025:f", "confirmed")]
    return {"profile": "quick", "seed": 0, "device": "cpu", "started": "now", "claims": claims}


COUNTS = {"count-confirmed": 3, "count-refuted": 1, "count-inconclusive": 1, "count-error": 1,
          "count-all": 6, "count-marion2025-confirmed": 2, "count-marion2025-inconclusive": 1,
          "count-marion2025-refuted": 0, "count-marion2025-all": 3, "count-dohmatob2025-refuted": 1,
          "count-dohmatob2025-all": 2, "count-sagitova2026-error": 1}
PAPERS = ["marion2025", "dohmatob2025", "sagitova2026"]        # in the order of their first claim


def _count(page: str, cell: str) -> int:
    m = re.search(rf"""id=["']{re.escape(cell)}["'][^>]*>\s*(\d+)\s*<""", page)
    assert m, cell
    return int(m.group(1))


def _heading_positions(page: str) -> list[int]:
    """Where each paper's heading starts (``<h2 ...>paper``), in the order of ``PAPERS``."""
    pos = []
    for paper in PAPERS:
        m = re.search(rf"<h2[^>]*>\s*{paper}\b", page)
        assert m, paper
        pos.append(m.start())
    return pos


def test_report_html_opens_with_the_counts_and_groups_the_claims_by_paper(tmp_path):
    report = _papers_report()
    (tmp_path / "figures").mkdir()
    write_html(tmp_path / "report.html", report, {"marion2025:c/trace": "figures/marion2025_c_trace.png"})
    page = (tmp_path / "report.html").read_text()
    assert {cell: _count(page, cell) for cell in COUNTS} == COUNTS
    assert "6 claims: 3 confirmed, 1 refuted, 1 inconclusive, 1 error" in page
    heads = _heading_positions(page)
    assert page.index("id='counts'") < heads[0] and heads == sorted(heads)     # counts first
    bounds = [*heads, len(page)]
    for c in report["claims"]:                       # each claim in its paper's section
        i = PAPERS.index(c["paper"])
        at = page.index(f"<h3 id='{c['id']}'>")
        assert bounds[i] < at < bounds[i + 1], c["id"]
    assert page.index("<h3 id='marion2025:a'>") < page.index("<h3 id='marion2025:c'>") < page.index(
        "<h3 id='marion2025:f'>")
    c_section = page[page.index("<h3 id='marion2025:c'>"):page.index("<h3 id='marion2025:f'>")]
    assert "src='figures/marion2025_c_trace.png'" in c_section                 # figures kept
    e_section = page[page.index("<h3 id='dohmatob2025:e'>"):bounds[2]]
    assert "derived equations" in e_section and r"$$R = \mu^{2}$$" in e_section   # derived equations
    assert "<code>eta: mu*nu</code>" in e_section and "flow on M" in e_section
    a_section = page[page.index("<h3 id='marion2025:a'>"):page.index("<h3 id='marion2025:c'>")]
    assert "derived equations" not in a_section                                 # none carried


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of an sRGB colour #rrggbb."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_ratio_matches_the_wcag_reference_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)     # just too light
    assert contrast("#ffff00", "#ffffff") < 1.1                                 # yellow on white


def test_report_html_verdict_colours_are_readable_on_its_background(tmp_path):
    write_html(tmp_path / "report.html", _papers_report(), {})
    page = (tmp_path / "report.html").read_text()
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    background = re.search(r"body\{[^}]*background:(#[0-9a-fA-F]{6})", css).group(1)
    text = re.search(r"body\{[^}]*[{;]?color:(#[0-9a-fA-F]{6})", css).group(1)
    assert contrast(text, background) >= 4.5
    for verdict in VERDICTS:
        colour = re.search(rf"\.v-{verdict}\{{color:(#[0-9a-fA-F]{{6}})\}}", css)
        assert colour, verdict
        assert contrast(colour.group(1), background) >= 4.5, (verdict, colour.group(1))
        assert f"<span class='verdict v-{verdict}'>{verdict}</span>" in page   # the class is used
    assert "yellow" not in page and "style='color:" not in page                 # no inline colours


BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def test_report_html_shows_the_counts_and_paper_headings_in_a_headless_browser(tmp_path):
    browser = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if browser is None:
        pytest.skip(f"no browser on PATH ({', '.join(BROWSERS)})")
    write_html(tmp_path / "report.html", _papers_report(), {})
    res = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
                          "--dump-dom", (tmp_path / "report.html").as_uri()],
                         capture_output=True, text=True, timeout=120)
    dom = res.stdout
    assert res.returncode == 0 and "<body" in dom, res.stderr[-2000:]
    assert {cell: _count(dom, cell) for cell in COUNTS} == COUNTS
    assert "6 claims: 3 confirmed, 1 refuted, 1 inconclusive, 1 error" in dom
    heads = _heading_positions(dom)
    assert dom.index("Counts") < heads[0] and heads == sorted(heads)
