"""Regression guard: compare a run's report with a stored baseline.

A difference is any claim whose verdict changed, any claim missing from the current run, or
any tracked value {value, tol} that moved by more than its tolerance."""

from __future__ import annotations

import json
from pathlib import Path

from .records import DEFAULT_BASELINE, read_json

__all__ = ["compare", "save_baseline", "load_report", "slim", "DEFAULT_BASELINE"]


def load_report(path: str | Path) -> dict:
    """A report.json, given the file or the run folder holding it."""
    path = Path(path)
    if path.is_dir():
        path = path / "report.json"
    if not path.exists():
        raise FileNotFoundError(f"no report at {path}")
    return read_json(path)


def slim(report: dict) -> dict:
    """What the guard compares (per claim: verdict, tracked values, contract) and the seconds
    that order the next run's tasks; the evidence stays in the report."""
    keep = ("suite_version", "profile", "seed", "device", "environment")
    claims = [{"id": c["id"], "verdict": c["verdict"], "summary": c["summary"],
               "contract": c.get("contract"), "seconds": round(float(c.get("seconds") or 0), 2),
               "evidence": {"tracked": c.get("evidence", {}).get("tracked", {})}}
              for c in report["claims"]]
    return {**{k: report[k] for k in keep if k in report}, "claims": claims}


def save_baseline(report_path: str | Path, baseline_path: str | Path) -> None:
    """Store a run's report (file or folder) as the baseline ``compare`` reads (``slim``)."""
    from numerics.codegen.cache import atomic_write_text
    report = load_report(report_path)
    if not report.get("complete", True):
        raise ValueError(f"{report_path} is an incomplete run (\"complete\": false); "
                         "finish it (run again with the same options: it resumes) first")
    atomic_write_text(Path(baseline_path), json.dumps(slim(report), indent=1) + "\n")


def compare(baseline: dict, current: dict) -> list[str]:
    """List of human-readable differences (empty when the run matches the baseline)."""
    diffs = []
    if current.get("complete") is False:
        diffs.append("the run is incomplete (\"complete\": false): it was interrupted")
    cur = {c["id"]: c for c in current["claims"]}
    for b in baseline["claims"]:
        c = cur.get(b["id"])
        if c is None:
            diffs.append(f"{b['id']}: missing from the current run")
            continue
        if c["verdict"] != b["verdict"]:
            diffs.append(f"{b['id']}: verdict {b['verdict']} -> {c['verdict']}")
        bt = b.get("evidence", {}).get("tracked", {})
        ct = c.get("evidence", {}).get("tracked", {})
        for name, rec in bt.items():
            if name not in ct:
                diffs.append(f"{b['id']}: tracked value {name} missing")
                continue
            bv, cv, tol = rec["value"], ct[name]["value"], rec["tol"]
            if bv is None or cv is None:
                if bv != cv:
                    diffs.append(f"{b['id']}: {name} {bv} -> {cv}")
                continue
            if abs(cv - bv) > tol:
                diffs.append(f"{b['id']}: {name} drifted {bv:.6g} -> {cv:.6g} (tol {tol:.3g})")
    return diffs
