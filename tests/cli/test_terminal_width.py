"""Results that fit a screen: ``run`` prints its whole output (table and final lines) within the
terminal's width ($COLUMNS, as rich reads it): the verdict table shows claim, verdict, α,
resolution and seconds, claim ids whole where they fit, else broken after ':' or before '[';
``--wide`` adds each claim's label and summary (always in report.md and report.html)."""

from io import StringIO
import json
import os
from pathlib import Path
import subprocess
import sys

from rich.cells import cell_len
from rich.console import Console

from verification.report import report_lines, verdict_table

ROOT = Path(__file__).resolve().parents[2]

CHEAP_LONG_IDS = ["marion2025:prop3-linear", "dohmatob2025:prop6-2d-flow[link=linear]",
                  "dohmatob2025:prop3-gradient-span[link=linear]"]
"""Cheap exact claims (seconds together), two with ids too long for an 80-column claim column."""


def _widest(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def _claim_cells(table: str) -> list[str]:
    """The claim column's cells, line by line, of a table printed by ``verdict_table``."""
    return [line.split("│")[1].strip() for line in table.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()]


def _entry(claim_id: str, verdict: str = "confirmed", seconds: float = 1.0) -> dict:
    return {"id": claim_id, "label": "Prop. 10", "verdict": verdict, "seconds": seconds,
            "summary": "a long summary " * 20, "contract": {"alpha": 1e-4, "resolution": 0.05}}


IDS = ["marion2025:prop3-linear", "dohmatob2025:prop10-classification[link=quadratic]",
       "sagitova2026:conj-iii1-sharp-transition", "p:c"]


def _pieces(claim_id: str) -> set[str]:
    """The id whole, or a run of its pieces 'paper:', 'name', '[variant]'."""
    paper, _, rest = claim_id.partition(":")
    name, bracket, variant = rest.partition("[")
    parts = [paper + ":", name, bracket + variant] if bracket else [paper + ":", name]
    return {"".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}


def _table(width: int, wide: bool = False, ids=IDS) -> str:
    report = {"profile": "quick", "seed": 0,
              "claims": [_entry(i, v) for i, v in zip(ids, ["confirmed", "inconclusive", "refuted",
                                                            "error"])]}
    buf = StringIO()
    verdict_table(report, Console(file=buf, width=width), wide=wide)
    return buf.getvalue()


def test_the_verdict_table_fits_80_columns_and_keeps_claim_ids_whole_or_broken_at_colons():
    table = _table(80)
    assert _widest(table) <= 80
    header = next(line for line in table.splitlines() if "claim" in line)
    assert [h.strip() for h in header.strip("┃").split("┃")] == ["claim", "verdict", "α",
                                                                 "resolution", "s"]
    assert "Prop. 10" not in table and "summary" not in table          # no label, no summary
    cells = _claim_cells(table)
    assert "".join(cells) == "".join(IDS)          # nothing cut, in order
    assert set(cells) <= {p for i in IDS for p in _pieces(i)}, cells   # broken at ':' or '['
    assert "marion2025:prop3-linear" in cells and "p:c" in cells        # whole where they fit
    assert "4 claims: 1 confirmed, 1 refuted, 1 inconclusive, 1 error" in table


def test_narrower_consoles_drop_columns_before_cutting_claim_ids():
    table = _table(60)
    assert _widest(table) <= 60 and "".join(_claim_cells(table)) == "".join(IDS)
    assert "resolution" not in table and "α" in table
    table = _table(40)                              # claim and verdict; a piece too long: cut
    assert _widest(table) <= 40 and "verdict" in table and "α" not in table
    assert "dohmatob2025:" in _claim_cells(table) and "sagitova2026:" in _claim_cells(table)
    for width in (20, 12):                          # too narrow for anything: still no wider
        assert _widest(_table(width)) <= width
    assert "…" in _table(80, ids=["x" * 100, *IDS[1:]])                # too long: an ellipsis


def test_the_wide_table_has_labels_and_summaries():
    table = _table(200, wide=True)
    assert "Prop. 10" in table and "a long summary" in table and "label" in table
    assert _widest(table) <= 200 and _widest(_table(80, wide=True)) <= 80


def test_the_report_line_fits_or_puts_the_folder_on_lines_of_its_own():
    report = {"files": ["report.json", "report.npz", "report.md", "report.html"], "reused": 2}
    assert report_lines(Path("results"), {"files": ["report.json", "report.md"]}, 3, 80) == [
        "report: results/report.json (also report.md)"]
    assert report_lines(Path("results"), report, 3, 80) == [
        "report: results/report.json (also report.npz, report.md, report.html)",
        "  2 of 3 claims reused from the store"]
    folder = Path("/tmp") / ("a-long-folder-name-" * 3) / "out"
    for out, width in [(folder, 80), (folder, 40), (Path("/x") / ("y" * 200), 80)]:
        lines = report_lines(out, report, 3, width)
        assert max(map(len, lines)) <= width, lines
        assert lines[0].startswith("report: report.json") and lines[-1].endswith("store")
        assert "".join(x.strip() for x in lines[1:-1]).endswith(str(out)[-20:])


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "verification", "run", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_run_prints_nothing_wider_than_80_columns_and_wide_adds_labels_and_summaries(tmp_path):
    out = tmp_path / "a-folder-whose-name-alone-takes-half-of-an-80-column-line" / "out"
    args = [a for i in CHEAP_LONG_IDS for a in ("--claim", i)] + [
        "--workers", "0", "--no-figures", "--out", str(out)]
    res = _run(args)
    assert res.returncode == 0, res.stdout + res.stderr
    whole = res.stdout + res.stderr
    assert _widest(whole) <= 80, whole
    assert "summary" not in res.stdout and "Prop. 3" not in res.stdout
    cells = _claim_cells(res.stdout)
    ids = [c["id"] for c in json.loads((out / "report.json").read_text())["claims"]]
    assert "".join(cells) == "".join(ids)            # nothing cut, in the report's order
    assert set(cells) <= {p for i in ids for p in _pieces(i)}, cells      # broken at ':' or '['
    assert "marion2025:prop3-linear" in cells and "[link=linear]" in cells
    assert "3 claims: " in res.stdout                    # the counts below the table
    # exact claims judged by the library have per-comparison columns: report.npz comes too
    assert any(line.startswith("report: report.json (also report.npz, report.md, report.html)")
               for line in res.stdout.splitlines())
    again = _run([*args, "--wide"])                 # from the store: seconds
    assert again.returncode == 0, again.stdout + again.stderr
    assert _widest(again.stdout + again.stderr) <= 80, again.stdout + again.stderr
    assert "summary" in again.stdout and "label" in again.stdout and "Prop. 3" in again.stdout
    reused = json.loads((out / "report.json").read_text())["reused"]   # 0 if the suite's code moved
    assert not reused or f"{reused} of 3 claims reused from the store" in again.stdout
