"""Runs claims, gives each a verdict with evidence, writes the report."""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import datetime as _dt
from pathlib import Path
import platform
import time
import traceback
from typing import TYPE_CHECKING, Any

from .checks import Ledger, OutsideRealisableSet
from .context import Context
from .registry import Outcome
from .report import (render_figures, verdict_table, write_html, write_json, write_markdown,
                     write_npz)
from .stats import NaNInEvidence

if TYPE_CHECKING:
    from rich.console import Console

    from .registry import Claim

SUITE_VERSION = "0.1.0"

__all__ = ["run_claim", "run", "environment", "contract_of", "SUITE_VERSION"]


def environment() -> dict[str, str | None]:
    """Versions of Python and the numerical libraries, and the platform (for the report)."""
    import mpmath
    import numpy
    import scipy
    import sympy
    env = {"python": platform.python_version(), "sympy": sympy.__version__,
           "numpy": numpy.__version__, "scipy": scipy.__version__, "mpmath": mpmath.__version__,
           "platform": platform.platform()}
    try:
        import torch
        env["torch"] = torch.__version__
    except ImportError:  # pragma: no cover
        env["torch"] = None
    return env


def run_claim(claim: Claim, ctx: Context, **overrides: Any) -> tuple[dict, Outcome]:
    """(entry for report.json, Outcome). The claim runs with its own α (if it declares one)
    and a fresh ledger, whatever ``ctx`` carried; exceptions become verdict 'error'."""
    ctx = dataclasses.replace(ctx, alpha=claim.alpha or ctx.alpha, ledger=Ledger())
    start = time.perf_counter()
    try:
        outcome = claim(ctx, **overrides)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"claim {claim.id} returned {type(outcome).__name__}, not Outcome")
    except (NaNInEvidence, OutsideRealisableSet) as exc:
        outcome = Outcome("error", f"no verdict: {exc}", {"error": str(exc)})
    except Exception as exc:  # the check itself failed to run
        outcome = Outcome("error", f"{type(exc).__name__}: {exc}",
                          {"error": str(exc), "traceback": traceback.format_exc(limit=8)})
    seconds = time.perf_counter() - start
    evidence = dict(outcome.evidence)
    if outcome.tracked:
        evidence["tracked"] = {k: {"value": v, "tol": t} for k, (v, t) in outcome.tracked.items()}
    entry = {"id": claim.id, "paper": claim.paper, "label": claim.label,
             "statement": claim.statement, "verdict": outcome.verdict,
             "summary": outcome.summary, "contract": contract_of(claim, ctx),
             "evidence": evidence, "seconds": seconds}
    if claim.reading:
        entry["reading"] = claim.reading
    return entry, outcome


def contract_of(claim: Claim, ctx: Context) -> dict[str, Any]:
    """The claim's error contract (``verification.checks``) from what its checks spent. An exact
    claim has α = 0 and no resolution; a statistical claim whose checks did not go through the
    ledger says so (``"stated": false``) rather than claiming α = 0."""
    contract = ctx.ledger.contract().to_json()
    contract["exact"] = not claim.statistical
    if claim.statistical and not ctx.ledger.families:
        contract.update(alpha=None, stated=False)
    unresolved = [f.name for f in ctx.ledger.families if f.resolution is None]
    if unresolved:
        contract["resolution_unstated"] = unresolved
    return contract


def run(claims: Sequence[Claim], profile: str = "quick", seed: int = 0, device: str = "auto",
        out: str | Path | None = None, show: bool = True, figures: bool = True,
        console: Console | None = None, calibration: str | Path | None = "default") -> dict:
    """Run ``claims`` and return the report (the report.json schema). ``out``: also write
    report.json/.npz/.md/.html and figures/ there; ``show``: progress bars and the verdict
    table on ``console``. No global state is touched (no pyplot backend, no global seeds), so
    a notebook can call it: ``run(claims_for("marion2025"), show=False)``. ``calibration``: a
    calibration.json whose records of these claims the report quotes ("default": the committed
    ``calibration/<profile>.json``; None: none)."""
    from numerics.sgd.base import resolve_device

    device = resolve_device(device)
    report = {"suite_version": SUITE_VERSION,
              "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
              "profile": profile, "device": device, "seed": int(seed),
              "environment": environment(), "claims": []}
    arrays, all_figures = {}, {}
    progress_ctx = _progress(show, console)
    with progress_ctx as progress:
        overall = progress.add_task("claims", total=len(claims)) if progress else None
        for c in claims:
            task = progress.add_task(c.id, total=1.0) if progress else None
            tick = (lambda f, task=task: progress.update(task, completed=f)) if progress else None
            ctx = Context(profile=profile, seed=seed, device=device, progress=tick)
            entry, outcome = run_claim(c, ctx)
            report["claims"].append(entry)
            arrays.update({f"{c.id}/{k}": v for k, v in outcome.arrays.items()})
            all_figures.update({f"{c.id}/{k}": v for k, v in outcome.figures.items()})
            if progress:
                progress.update(task, completed=1.0, visible=False)
                progress.update(overall, advance=1)
    if calibration is not None:
        from .calibrate import DEFAULT_CALIBRATION, load_calibration
        path = DEFAULT_CALIBRATION / f"{profile}.json" if calibration == "default" else calibration
        cal = load_calibration(path, [c.id for c in claims])
        if cal is not None and cal["claims"]:
            report["calibration"] = cal
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        fig_paths = {}
        if figures:
            try:
                fig_paths = render_figures(all_figures, out / "figures")
            except Exception as exc:  # figures are a convenience: never lose the report
                report["figure_error"] = f"{type(exc).__name__}: {exc}"
        write_json(out / "report.json", report)
        if arrays:
            write_npz(out / "report.npz", arrays)
        write_markdown(out / "report.md", report, fig_paths)
        write_html(out / "report.html", report, fig_paths)
    if show:
        verdict_table(report, console)
    return report


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
