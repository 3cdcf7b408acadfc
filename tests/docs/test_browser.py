"""report.html, a map's map.html and the documentation site opened in headless chromium: no
console error, every figure loaded, the mathematics rendered by KaTeX (no raw ``$…$`` left),
tables that fit at 1280 px and 800 px (screenshots under results/browser/), and the verdict
counts the report shows equal to report.json's. A deliberately broken report (a missing
figure, a formula KaTeX cannot read, KaTeX itself missing) must fail the same checks."""

from __future__ import annotations

import json
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

from tests.docs.browser import chromium, problems, served, text_of
from tests.docs.sitebuild import built_site
from verification.report import VERDICTS, write_html
from verification.tasks import render_png

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "maps" / "dohmatob2025-prop1-linear"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("browser")) as d:
        yield d


def _counts_shown(driver) -> dict[str, int]:
    return {v: int(text_of(driver, f"count-{v}")) for v in VERDICTS} | {
        "all": int(text_of(driver, "count-all"))}


def _counts_of(report: dict) -> dict[str, int]:
    counts = {v: sum(c["verdict"] == v for c in report["claims"]) for v in VERDICTS}
    return counts | {"all": len(report["claims"])}


def test_a_real_run_report_reads_in_a_browser(driver, tmp_path):
    """A small real run (two of Marion et al.'s claims, one with a figure)."""
    out = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "verification", "run", "--claim",
                          "marion2025:thm1-risk", "--claim", "marion2025:manifold-invariant",
                          "--workers", "0", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert list((out / "figures").glob("*.png")), "the run drew no figure to check"
    with served(out) as url:
        found = problems(driver, url + "report.html", "report-run", math=False)
        shown = _counts_shown(driver)
    assert found == []
    assert shown == _counts_of(json.loads((out / "report.json").read_text()))


def _fixture_report(folder: Path, statement: str) -> dict:
    """A report of four verdicts whose statements and derived equations are mathematics, with
    one figure drawn as the suite draws its figures."""
    def entry(cid, verdict, **extra):
        return {"id": cid, "paper": cid.split(":")[0], "label": "Prop. 1", "verdict": verdict,
                "statement": statement, "summary": f"summary of {cid}", "seconds": 1.0,
                "contract": {"exact": True}, "evidence": {}, **extra}
    report = {"profile": "quick", "seed": 0, "device": "cpu", "started": "now", "claims": [
        entry("marion2025:a", "confirmed",
              evidence={"latex": {r"\bar R": r"\gamma^{2}(p^{2} - 2 p \nu + 1)"}}),
        entry("dohmatob2025:b", "refuted"), entry("marion2025:c", "inconclusive"),
        entry("sagitova2026:d", "error",       # a long unbreakable cell: the table must still fit
              summary="closest to " + ",".join(f"x{i}=0.5573771884288645" for i in range(12)))]}
    (folder / "figures").mkdir(parents=True)
    png = render_png({"trace": lambda fig: fig.add_subplot().plot([0, 1, 2], [1, 0, 1])})["trace"]
    (folder / "figures" / "trace.png").write_bytes(png)
    write_html(folder / "report.html", report, {"marion2025:c/trace": "figures/trace.png"})
    (folder / "report.json").write_text(json.dumps(report))
    return report


def test_report_mathematics_figures_and_counts_in_a_browser(driver, tmp_path):
    report = _fixture_report(tmp_path, r"The risk is $\bar R = \gamma^{2}(p^{2} - 2p\nu + 1)$ "
                                       r"for every $d \geq 1$.")
    with served(tmp_path) as url:
        found = problems(driver, url + "report.html", "report-fixture")
        shown = _counts_shown(driver)
    assert found == []
    assert shown == _counts_of(report) == {"confirmed": 1, "refuted": 1, "inconclusive": 1,
                                           "error": 1, "all": 4}


def test_a_broken_report_fails_the_checks(driver, tmp_path):
    """The test of the test: a figure that is missing and a formula KaTeX cannot read are
    found; without KaTeX, the raw formulas and the failed script are found."""
    _fixture_report(tmp_path, r"A formula KaTeX cannot read: $\frac{1}{$ and one it can: $x^2$.")
    (tmp_path / "figures" / "trace.png").unlink()
    with served(tmp_path) as url:
        found = problems(driver, url + "report.html", "report-broken")
    assert any("figure did not load" in f for f in found), found
    assert any("KaTeX error" in f or "not rendered" in f for f in found), found

    shutil.rmtree(tmp_path / "katex")
    with served(tmp_path) as url:
        found = problems(driver, url + "report.html", "report-no-katex")
    assert any("mathematics not rendered" in f for f in found), found
    assert any("console" in f for f in found), found


def test_a_committed_map_page_reads_in_a_browser(driver):
    assert (MAP / "map.html").is_file()
    with served(MAP) as url:
        found = problems(driver, url + "map.html", "map", math=False)
        n_images = driver.execute_script("return document.images.length")
    assert found == []
    assert n_images == len(list((MAP / "figures").glob("*.png")))


@pytest.mark.parametrize("page,math", [("index.html", True), ("reference/claims.html", False),
                                       ("maps/dohmatob2025-prop1-linear/map.html", False),
                                       ("models/dohmatob2025.html", True)])
def test_the_documentation_site_reads_in_a_browser(driver, page, math):
    site = built_site()
    assert site.returncode == 0, site.warnings
    with served(site.html) as url:
        found = problems(driver, url + page, "docs-" + page.replace("/", "-").removesuffix(".html"),
                         math=math)
    assert found == []
