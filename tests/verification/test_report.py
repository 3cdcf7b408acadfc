"""The reports (``verification.report``): report.html typesets mathematics with the KaTeX shipped
in the package (the page references only the copy written next to it, so it renders offline),
and the terminal table shows sub-claim ids verbatim."""

import re
import tomllib
from pathlib import Path

from verification.report import KATEX_DIR, write_html

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
    assert "p:c[link=linear]" in buf.getvalue() and "[bold]" in buf.getvalue()
