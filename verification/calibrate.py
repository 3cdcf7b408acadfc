"""Calibration: each claim's measured record of false refutations and power.

For each claim, K runs under the true model with fresh seeds (1, …, K; seed 0 is the default
run's) count false refutations; runs under mutations count refutations (the power). The
mutations are

- ``relative change at resolution``: every claimed value multiplied by 1 + δ, δ the claim's own
  stated resolution from the unmutated run of the same seed (``ctx.perturbation``);
- ``sign flip``: every claimed value (or claimed direction of a trend) negated;
- the formula mutations the claim declares (``@claim(mutations=...)``: a dropped term, a wrong
  factor, a wrong model), passed to the claim as overrides.

The first two act through the check library (``verification.checks``); a claim whose
comparisons do not go through it gets no such runs (they are listed as not applicable).

Output: ``calibration.json`` = {"suite_version", "profile", "seeds", "claims": [{"id", "alpha",
"resolution", "runs", "false_refutations", "verdicts", "mutations": [{"name", "runs",
"refuted"}]}], "seconds"} and ``calibration.md``, both written atomically.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
import json
import math
from pathlib import Path
import time
from typing import Any

from .context import Context
from .registry import Claim
from .runner import SUITE_VERSION, run_claim

__all__ = ["calibrate", "calibrate_claim", "summary_rows", "write_calibration", "load_calibration",
           "DEFAULT_CALIBRATION"]

DEFAULT_CALIBRATION = Path(__file__).resolve().parents[1] / "calibration"
"""Where the committed calibration lives (``<profile>.json``); a run's report quotes it."""


def _run(claim: Claim, profile: str, seed: int, device: str, perturbation=None,
         **overrides: Any) -> dict:
    ctx = Context(profile=profile, seed=seed, device=device, perturbation=perturbation)
    entry, _ = run_claim(claim, ctx, **overrides)
    return entry


def _resolution_of(entry: dict) -> float | None:
    r = (entry.get("contract") or {}).get("resolution")
    return r if r is not None and math.isfinite(r) and r > 0 else None


def calibrate_claim(claim: Claim, seeds: int, profile: str = "quick", device: str = "cpu",
                    progress: Callable[[str], object] | None = None) -> dict:
    """One claim's calibration record (see the module docstring)."""
    true_runs = []
    for s in range(1, seeds + 1):
        true_runs.append(_run(claim, profile, s, device))
        if progress:
            progress(f"{claim.id}: seed {s}/{seeds}")
    verdicts = Counter(e["verdict"] for e in true_runs)
    contract = true_runs[0].get("contract", {})
    mutations = []
    uses_library = any((e.get("contract") or {}).get("stated", True) and
                       not (e.get("contract") or {}).get("exact", False) for e in true_runs)
    if uses_library:
        rel = {"name": "relative change at resolution", "runs": 0, "refuted": 0}
        sign = {"name": "sign flip", "runs": 0, "refuted": 0}
        for s, base in enumerate(true_runs, start=1):
            res = _resolution_of(base)
            if res is not None:
                e = _run(claim, profile, s, device, perturbation=("relative", res))
                rel["runs"] += 1
                rel["refuted"] += e["verdict"] == "refuted"
            e = _run(claim, profile, s, device, perturbation=("sign",))
            sign["runs"] += 1
            sign["refuted"] += e["verdict"] == "refuted"
            if progress:
                progress(f"{claim.id}: perturbed seed {s}/{seeds}")
        mutations += [rel, sign]
    for name, make in (claim.mutations or {}).items():
        rec = {"name": name, "runs": 0, "refuted": 0}
        for s in range(1, seeds + 1):
            e = _run(claim, profile, s, device, **make())
            rec["runs"] += 1
            rec["refuted"] += e["verdict"] == "refuted"
        mutations.append(rec)
        if progress:
            progress(f"{claim.id}: mutation {name}")
    return {"id": claim.id, "alpha": contract.get("alpha"), "resolution": contract.get("resolution"),
            "exact": bool(contract.get("exact")), "runs": len(true_runs),
            "false_refutations": verdicts.get("refuted", 0), "verdicts": dict(verdicts),
            "mutations": mutations,
            "not_applicable": [] if uses_library else ["relative change at resolution",
                                                       "sign flip"]}


def calibrate(claims: Sequence[Claim], seeds: int = 10, profile: str = "quick",
              device: str = "cpu", out: str | Path | None = None,
              progress: Callable[[str], object] | None = None) -> dict:
    """Calibrate ``claims`` (``seeds`` runs each under the true model and each mutation);
    write calibration.json and calibration.md to ``out`` after every claim (atomically)."""
    if not (isinstance(seeds, int) and seeds >= 1):
        raise ValueError(f"seeds={seeds!r}; allowed: an integer ≥ 1")
    start = time.perf_counter()
    result = {"suite_version": SUITE_VERSION, "profile": profile, "seeds": seeds, "claims": [],
              "complete": False}
    for c in claims:
        result["claims"].append(calibrate_claim(c, seeds, profile, device, progress))
        result["seconds"] = time.perf_counter() - start
        if out is not None:
            write_calibration(out, result)
    result["complete"] = True
    if out is not None:
        write_calibration(out, result)
    return result


def summary_rows(result: dict) -> list[str]:
    rows = ["| claim | α | resolution | false refutations | mutations refuted |",
            "|---|---|---|---|---|"]
    for c in result["claims"]:
        muts = ", ".join(f"{m['name']}: {m['refuted']}/{m['runs']}" for m in c["mutations"]) or "—"
        alpha = "0 (exact)" if c.get("exact") else ("—" if c["alpha"] is None else f"{c['alpha']:.0e}")
        res = c["resolution"]
        res = "—" if res is None else ("∞" if res == math.inf else f"{100 * res:.3g} %")
        rows.append(f"| `{c['id']}` | {alpha} | {res} | {c['false_refutations']}/{c['runs']} | "
                    f"{muts} |")
    return rows


def write_calibration(out: str | Path, result: dict) -> None:
    """calibration.json and calibration.md in the folder ``out``."""
    from numerics.codegen.cache import atomic_write_text

    from .report import to_jsonable
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "calibration.json", json.dumps(to_jsonable(result), indent=2) + "\n")
    head = [f"# Calibration ({result['profile']} profile, {result['seeds']} seeds per claim"
            f"{'' if result.get('complete') else ', incomplete'})", ""]
    atomic_write_text(out / "calibration.md", "\n".join(head + summary_rows(result)) + "\n")


def load_calibration(path: str | Path, ids: Sequence[str] | None = None) -> dict | None:
    """The calibration in ``path`` restricted to the claims ``ids`` (all when None), for a
    report's calibration section; None when the file is absent or damaged (never trusted
    half-read: every record must have the fields calibrate writes)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
        records = data["claims"]
        needed = {"id", "alpha", "resolution", "runs", "false_refutations", "mutations"}
        if not all(needed <= set(r) for r in records):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    keep = [r for r in records if ids is None or r["id"] in set(ids)]
    return {"source": str(path), "profile": data.get("profile"), "seeds": data.get("seeds"),
            "complete": data.get("complete", False), "claims": keep}
