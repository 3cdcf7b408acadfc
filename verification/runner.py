"""Runs claims on the engine, gives each a verdict with evidence, writes the report. One claim's
run (``run_claim``) is in ``verification.tasks``: what a task computes, as opposed to where and
when it runs and what is written afterwards."""

from __future__ import annotations

from collections.abc import Sequence
import datetime as _dt
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .context import PROFILES
from .report import verdict_table, write_figures, write_html, write_json, write_markdown, write_npz
from .store import ResultStore, check_folder, open_store
from .tasks import SUITE_VERSION, contract_of, environment, run_claim  # noqa: F401 (public here too)

if TYPE_CHECKING:
    from rich.console import Console

    from .registry import Claim

__all__ = ["run_claim", "run", "environment", "contract_of", "SUITE_VERSION"]


def run(claims: Sequence[Claim], profile: str = "quick", seed: int = 0, device: str = "auto",
        out: str | Path | None = None, show: bool = True, figures: bool = True,
        console: Console | None = None, calibration: str | Path | None = "default",
        workers: int | None = 0, scheduler: str | None = None,
        store: str | Path | ResultStore | None = None, force: bool = False) -> dict:
    """Run ``claims`` and return the report (the report.json schema).

    out: also write report.json/.npz/.md/.html and figures/ there; report.json and report.npz
    are rewritten (atomically) after every claim, with ``"complete": false`` until the end.
    workers/scheduler: where the claims run (``verification.engine.Engine``: 0 = this process,
    the default here; the CLI's default is every core). store: the result store
    (``verification.store``: a folder, else $ATTNV_STORE, else ``<out>/store``; none without
    ``out``); a claim whose result is stored under the same content hash is not recomputed
    (``force``: recompute all). show: progress bar and verdict table on ``console``.
    calibration: a calibration.json whose records of these claims the report quotes
    ("default": the committed ``calibration/<profile>.json``; None: none).

    No global state is touched (no pyplot backend, no global seeds), so a notebook can call
    it: ``run(claims_for("marion2025"), show=False)``. Options and folders are validated
    before any claim runs (ValueError naming the option)."""
    from numerics.sgd.base import resolve_device

    from .engine import Engine
    from .engine import run_claim_tasks
    from .tasks import ClaimTask

    device = resolve_device(device)
    if profile not in PROFILES:
        raise ValueError(f"--profile {profile!r}; allowed: {PROFILES}")
    if out is not None:
        out = check_folder(out, "--out")
    store = open_store(store, out, force)
    engine = Engine(workers, scheduler)
    specs = [ClaimTask.make(c, profile, seed, device, figures=figures, store=store) for c in claims]
    report = {"suite_version": SUITE_VERSION,
              "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
              "profile": profile, "device": device, "seed": int(seed),
              "environment": environment(), "complete": False,
              "engine": engine.describe(), "claims": []}
    if store is not None:
        report["store"] = str(store.root)
    results: dict[int, dict] = {}
    with _progress(show, console) as progress:
        overall = progress.add_task("claims", total=len(claims)) if progress else None

        def finished(i: int, result: dict) -> None:
            results[i] = result
            report["claims"] = [results[j]["entry"] for j in sorted(results)]
            if out is not None:
                _write_partial(out, report, results)
            if progress:
                progress.update(overall, advance=1, description=f"claims (last: {claims[i].id})")

        hints = _expected_seconds(out, profile)
        run_claim_tasks(specs, engine, finished, [hints.get(c.id, 0.0) for c in claims])
    report["complete"] = True
    if store is not None:
        report["store_damaged"] = list(store.damaged)
        report["reused"] = sum(bool(r.get("reused")) for r in results.values())
    _attach_calibration(report, calibration, profile, claims)
    if out is not None:
        _write_final(out, report, results, figures)
    if show:
        verdict_table(report, console)
    return report


def _expected_seconds(out: Path | None, profile: str) -> dict[str, float]:
    """Seconds each claim took last time (the previous report in ``out``, else the committed
    baseline): the longest claims are started first."""
    from .guard import DEFAULT_BASELINE
    for path in ([out / "report.json"] if out is not None else []) + [DEFAULT_BASELINE(profile)]:
        try:
            rep = json.loads(Path(path).read_text())
            return {c["id"]: float(c.get("seconds") or 0) for c in rep["claims"]}
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {}


def _arrays(results: dict[int, dict]) -> dict:
    return {f"{r['entry']['id']}/{k}": v for r in results.values() for k, v in r["arrays"].items()}


def _write_partial(out: Path, report: dict, results: dict[int, dict]) -> None:
    write_json(out / "report.json", report)
    arrays = _arrays(results)
    if arrays:
        write_npz(out / "report.npz", arrays)


def _write_final(out: Path, report: dict, results: dict[int, dict], figures: bool) -> None:
    fig_paths = {}
    if figures:
        pngs = {f"{r['entry']['id']}/{k}": v for r in results.values()
                for k, v in r.get("figures", {}).items()}
        fig_paths = write_figures(pngs, out / "figures")
        errors = [f"{r['entry']['id']}: {r['figure_error']}" for r in results.values()
                  if r.get("figure_error")]
        if errors:
            report["figure_error"] = "; ".join(errors)
    _write_partial(out, report, results)
    write_markdown(out / "report.md", report, fig_paths)
    write_html(out / "report.html", report, fig_paths)


def _attach_calibration(report: dict, calibration, profile: str, claims: Sequence[Claim]) -> None:
    if calibration is None:
        return
    from .calibrate import DEFAULT_CALIBRATION, load_calibration
    path = DEFAULT_CALIBRATION / f"{profile}.json" if calibration == "default" else calibration
    cal = load_calibration(path, [c.id for c in claims])
    if cal is not None and cal["claims"]:
        report["calibration"] = cal


class _Null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def _progress(show, console):
    if not show:
        return _Null()
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                    console=console, transient=True)
