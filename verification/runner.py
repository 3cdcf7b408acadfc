"""Runs claims on the engine, gives each a verdict with evidence, writes the report. One claim's
run (``run_claim``) is in ``verification.tasks``: what a task computes, as opposed to where and
when it runs and what is written afterwards."""

from __future__ import annotations

from collections.abc import Sequence
import contextlib
import datetime as _dt
from pathlib import Path
import shutil
import time
from typing import TYPE_CHECKING, Any

from .records import (DEFAULT_CALIBRATION, cannot_write, expected_seconds, load_calibration,
                      write_json, write_npz)
from .report import verdict_table, write_figures, write_html, write_markdown
from .store import ResultStore
from .tasks import SUITE_VERSION, contract_of, environment, run_claim  # noqa: F401 (public here too)

if TYPE_CHECKING:
    from rich.console import Console

    from .campaign import Campaign, CampaignOptions
    from .declare import Claim
    from .engine import Engine

__all__ = ["run_claim", "run", "environment", "contract_of", "SUITE_VERSION", "REPORT_FILES"]

REPORT_FILES = ("report.json", "report.npz", "report.md", "report.html", "figures")
"""What a run writes in its ``out`` folder (and removes there first: an earlier run's): not
``store`` (the default result store), ``katex`` (the same for every run) or anything else."""


def run(claims: Sequence[Claim], options: CampaignOptions | None = None, *, seed: int = 0,
        out: str | Path | None = None, show: bool = True, figures: bool = True,
        console: Console | None = None, calibration: str | Path | None = "default",
        wide: bool = False, **option_fields: Any) -> dict:
    """Run ``claims`` and return the report (the report.json schema).

    out: also write report.json/.npz/.md/.html and figures/ there. The run locks ``out``
    (another run on it: ValueError naming its pid), removes what an earlier run wrote there
    (``REPORT_FILES``; the store and anything else stay) and writes report.json before the
    first claim starts; report.json (and report.npz, when there are arrays) are rewritten,
    atomically, after every claim that ran (claims reused whole from the store at most every
    ``REUSED_WRITE_EVERY`` seconds), with ``"complete": false`` until the end. An exception
    reaching the run (Ctrl-C, SystemExit, a failed write) rewrites it once more with
    ``"interrupted": "<what>"`` and propagates; a write that fails (a full disk) raises an
    OSError naming the file and leaves the files written before it intact.
    ``report["files"]``: the files written, relative to ``out``.
    options (``verification.campaign.CampaignOptions``, or its fields as keywords: profile,
    device, workers, scheduler, store, force, rejudge, ...): the effort, where the claims run
    (``workers`` 0 = this process, the default here; the CLI's default is every core) and the
    result store (none without ``out`` unless given); a claim whose result is stored under the
    same content hash is not recomputed (``force``: recompute all; ``rejudge``: judge every
    claim again, reusing its stored simulations). show: progress bar and verdict table on
    ``console`` (within its width; ``wide``: with each claim's label and summary,
    ``verification.report.verdict_table``).
    calibration: a calibration.json whose records of these claims the report quotes
    ("default": the committed ``calibration/<profile>.json``; None: none).

    No global state is touched (no pyplot backend, no global seeds), so a notebook can call
    it: ``run(claims_for("marion2025"), show=False)``. Options and folders are validated
    before any claim runs (ValueError naming the option)."""
    from .campaign import Campaign, CampaignOptions

    options = CampaignOptions.of(options, **option_fields)
    campaign = Campaign(options, out)
    profile, device, out, store, engine = (options.profile, campaign.device, campaign.out,
                                           campaign.store, campaign.engine)
    specs = [campaign.task(c, seed, figures=figures) for c in claims]
    report = _header(profile, seed, device, engine, store)
    report["options"] = {"claims": [c.id for c in claims], **options.to_json(),
                         "workers": engine.workers, "store": report.get("store"),
                         "figures": bool(figures),
                         "calibration": None if calibration is None else str(calibration)}
    with campaign.locked():
        hints = expected_seconds(out, profile)      # the previous report's, before it is replaced
        try:
            results = _run_all(claims, specs, campaign, hints, report, out, show, console)
            _replicate(claims, results, campaign, seed, report)
            report["complete"] = True
            if store is not None:
                report["store_damaged"] = list(store.damaged)
                report["reused"] = sum(bool(r.get("reused")) for r in results.values())
            _attach_calibration(report, calibration, profile, claims)
            if out is not None:
                _write_final(out, report, results, figures)
        except BaseException as exc:
            _interrupted(out, report, exc)
            raise
    if show:
        verdict_table(report, console, wide=wide)
    return report


def _header(profile: str, seed: int, device: str, engine: Engine, store: ResultStore | None) -> dict:
    """Which run this is (report.json before any claim has run)."""
    report = {"suite_version": SUITE_VERSION,
              "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
              "profile": profile, "device": device, "seed": int(seed),
              "environment": environment(), "complete": False,
              "engine": engine.describe(), "claims": [], "files": []}
    if store is not None:
        report["store"] = str(store.root)
    return report


def _run_all(claims: Sequence[Claim], specs: list, campaign: Campaign, hints: dict[str, float],
             report: dict, out: Path | None, show: bool, console: Console | None) -> dict[int, dict]:
    """Clear ``out`` of an earlier run's files, write the report header, run the claims
    (report.json rewritten after each); their results by index. Ctrl-C stops the run (a
    KeyboardInterrupt that a claim raises itself is that claim's error: ``interrupt_guard``)."""
    from .engine import interrupt_guard, user_interrupted
    results: dict[int, dict] = {}
    if out is not None:
        _clear_previous(out)
        _write_partial(out, report, results)
    last_write = [time.monotonic()]
    with interrupt_guard(), _progress(show, console) as progress:
        overall = progress.add_task("claims", total=len(claims)) if progress else None

        def finished(i: int, result: dict) -> None:
            if user_interrupted():      # a Ctrl-C that a claim's code swallowed still stops
                raise KeyboardInterrupt
            entry = {**result["entry"], "stage": result.get("stage", "simulated")}
            if result.get("simulations"):
                entry["simulations"] = result["simulations"]
            results[i] = {**result, "entry": entry}
            report["claims"] = [results[j]["entry"] for j in sorted(results)]
            if out is not None and (not result.get("reused")
                                    or time.monotonic() - last_write[0] >= REUSED_WRITE_EVERY):
                _write_partial(out, report, results)
                last_write[0] = time.monotonic()
            if progress:
                progress.update(overall, advance=1, description=f"claims (last: {claims[i].id})")

        campaign.run(specs, finished, [hints.get(c.id, 0.0) for c in claims])
    return results


def _replicate(claims: Sequence[Claim], results: dict[int, dict], campaign, seed: int,
               report: dict) -> None:
    """Judge each refutation that depends on its seed again at ``options.replicate``
    independent seeds (``verification.replication``) before it is reported; the report lists
    what moved."""
    from .replication import replicate

    def run_tasks(pairs: list[tuple[int, int]]) -> dict[tuple[int, int], dict]:
        got: dict[tuple[int, int], dict] = {}

        def done(k: int, result: dict) -> None:
            got[pairs[k]] = result["entry"]
        campaign.run([campaign.task(claims[i], s) for i, s in pairs], done)
        return got

    moved = replicate(claims, results, seed, campaign.options.replicate, run_tasks)
    report["claims"] = [results[j]["entry"] for j in sorted(results)]
    report["replication"] = {"replicates": campaign.options.replicate,
                             "not_replicated": [claims[i].id for i in moved]}


REUSED_WRITE_EVERY = 2.0
"""Seconds between rewrites of report.json while claims come back whole from the store: a
claim that ran is written at once; one reused waits (the store keeps it), so that a warm run
does not rewrite a growing report once per claim."""


def _clear_previous(out: Path) -> None:
    """Remove what an earlier run wrote in ``out`` (``REPORT_FILES`` and the temporary files of
    an atomic write that was killed), so that no older report.npz or figure sits beside this
    run's report; report.json is removed last (it is the previous run's until then)."""
    for path in [*out.glob("report.*.tmp"), *(out / n for n in reversed(REPORT_FILES))]:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as exc:
            raise cannot_write(path, exc, "remove") from exc


def _interrupted(out: Path | None, report: dict, exc: BaseException) -> None:
    """The report marked incomplete and interrupted by ``exc``, rewritten in ``out`` once more
    (a write that fails again, a full disk, is left: the exception that ended the run is the
    one reported)."""
    report["complete"] = False
    report["interrupted"] = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if out is not None:
        with contextlib.suppress(OSError):
            write_json(out / "report.json", report)


def _arrays(results: dict[int, dict]) -> dict:
    return {f"{r['entry']['id']}/{k}": v for r in results.values() for k, v in r["arrays"].items()}


def _written(report: dict, *names: str) -> None:
    report["files"] += [n for n in names if n not in report["files"]]


def _write_partial(out: Path, report: dict, results: dict[int, dict]) -> None:
    """report.npz (when there are arrays), then report.json: the report lists only files that
    are there."""
    arrays = _arrays(results)
    if arrays:
        write_npz(out / "report.npz", arrays)
        _written(report, "report.npz")
    report["files"] = ["report.json", *(f for f in report["files"] if f != "report.json")]
    write_json(out / "report.json", report)


def _write_final(out: Path, report: dict, results: dict[int, dict], figures: bool) -> None:
    """Figures, report.npz, report.md and report.html, then report.json (complete) last."""
    fig_paths: dict[str, str] = {}
    if figures:
        pngs = {f"{r['entry']['id']}/{k}": v for r in results.values()
                for k, v in r.get("figures", {}).items()}
        for name, data in pngs.items():
            fig_paths.update(write_figures({name: data}, out / "figures"))
            _written(report, fig_paths[name])
        errors = [f"{r['entry']['id']}: {r['figure_error']}" for r in results.values()
                  if r.get("figure_error")]
        if errors:
            report["figure_error"] = "; ".join(errors)
    write_markdown(out / "report.md", report, fig_paths)
    _written(report, "report.md")
    write_html(out / "report.html", report, fig_paths)
    _written(report, "report.html")
    _write_partial(out, report, results)


def _attach_calibration(report: dict, calibration, profile: str, claims: Sequence[Claim]) -> None:
    if calibration is None:
        return
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
