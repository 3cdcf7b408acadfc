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
comparisons do not go through it gets no such runs, and one on which they change nothing (a
sign flip of a claimed 0, a relative change of a claimed direction) gets no count for them:
both are listed as not applicable. A claim left with fewer than ``MIN_MUTATIONS`` mutations
that apply is flagged in the table (it needs more declared mutations).

Output: ``calibration.json`` = {"suite_version", "profile", "seeds", "claims": [{"id", "alpha",
"resolution", "runs", "false_refutations", "verdicts", "mutations": [{"name", "runs",
"refuted"}], "code"}], "seconds"} and ``calibration.md``, both written atomically. ``code`` is
the content hash of the claim's code (``claim_code``): a record is the claim's record only while
it is unchanged, and reports and sweeps say so when it is not (``"current": false``).
Calibrations run in parts (per paper on a cluster's jobs, or resumed after the store was lost)
are combined by ``merge_calibrations`` (``calibrate --merge A.json B.json``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
import functools
import json
import math
from pathlib import Path
import time
from typing import Any

from .declare import Claim
from .records import (DEFAULT_CALIBRATION, MIN_MUTATIONS, claim_code, expected_seconds,
                      load_calibration, summary_rows, to_jsonable, whole_records)
from .tasks import SUITE_VERSION

__all__ = ["calibrate", "calibrate_claim", "write_calibration", "merge_calibrations",
           # the calibration record's format and reading are ``verification.records``'s:
           "summary_rows", "load_calibration", "claim_code", "DEFAULT_CALIBRATION", "MIN_MUTATIONS"]


def _resolution_of(entry: dict) -> float | None:
    r = (entry.get("contract") or {}).get("resolution")
    return r if r is not None and math.isfinite(r) and r > 0 else None


def _uses_library(entry: dict) -> bool:
    c = entry.get("contract") or {}
    return bool(c.get("stated", True)) and not c.get("exact", False) and entry["verdict"] != "error"


class _ClaimRecord:
    """What the runs of one claim have shown so far."""

    def __init__(self, claim: Claim, seeds: int):
        self.claim, self.seeds = claim, seeds
        self.true: dict[int, dict] = {}
        self.mutations: dict[str, list[str]] = {
            "relative change at resolution": [], "sign flip": [],
            **{name: [] for name in (claim.mutations or {})}}
        self.not_applied: Counter[str] = Counter()

    def add(self, name: str | None, seed: int, entry: dict) -> list[tuple]:
        """Record one run; returns the perturbed runs it calls for: [(perturbation, name)]. A
        perturbed run whose perturbation changed no claimed value (a sign flip of a claimed 0,
        a relative change of a claimed direction) is not a mutation: counted apart."""
        if name is not None:
            if entry.get("perturbation_applied") is False:
                self.not_applied[name] += 1
            else:
                self.mutations[name].append(entry["verdict"])
            return []
        self.true[seed] = entry
        if not _uses_library(entry):
            return []
        follow = [(("sign",), "sign flip")]
        if (r := _resolution_of(entry)) is not None:
            follow.append((("relative", r), "relative change at resolution"))
        return follow

    def to_json(self) -> dict:
        runs = [self.true[s] for s in sorted(self.true)]
        verdicts = Counter(e["verdict"] for e in runs)
        contract = (runs[0].get("contract") or {}) if runs else {}
        library = any(_uses_library(e) for e in runs)
        generic = ("relative change at resolution", "sign flip")
        muts = [{"name": n, "runs": len(v), "refuted": sum(x == "refuted" for x in v),
                 **({"not_applied": self.not_applied[n]} if self.not_applied[n] else {})}
                for n, v in self.mutations.items()
                if (library or n not in generic) and (v or not self.not_applied[n])]
        no_op = [n for n in generic if self.not_applied[n] and not self.mutations[n]]
        return {"id": self.claim.id, "alpha": contract.get("alpha"),
                "resolution": contract.get("resolution"), "exact": bool(contract.get("exact")),
                "runs": len(runs), "false_refutations": verdicts.get("refuted", 0),
                "verdicts": dict(verdicts), "mutations": muts,
                "not_applicable": no_op if library or not runs else list(generic),
                "code": claim_code(self.claim)}


def calibrate_claim(claim: Claim, seeds: int, profile: str = "quick", device: str = "cpu",
                    progress: Callable[[str], object] | None = None) -> dict:
    """One claim's calibration record (see the module docstring), in this process."""
    return calibrate([claim], seeds, profile, device, progress=progress)["claims"][0]


def calibrate(claims: Sequence[Claim], seeds: int = 10, profile: str = "quick",
              device: str = "cpu", out: str | Path | None = None,
              progress: Callable[[str], object] | None = None, workers: int | None = 0,
              scheduler: str | None = None, store: Any = None, force: bool = False,
              dashboard: bool = False, tls: dict | None = None) -> dict:
    """Calibrate ``claims`` (``seeds`` runs each under the true model and each mutation) on the
    run engine (``workers``/``scheduler`` as in ``verification.runner.run``) and its result
    store (``store``: a folder, else $ATTNV_STORE, else ``<out>/store``), so an interrupted
    calibration resumes and a perturbed run reuses its unperturbed run's simulations; write
    calibration.json and calibration.md to ``out`` after every finished run (atomically).
    dashboard, tls: as for ``verification.engine.Engine``."""
    from .campaign import Campaign
    from .tasks import claim_task

    if not (isinstance(seeds, int) and seeds >= 1):
        raise ValueError(f"--seeds {seeds!r}; allowed: an integer ≥ 1")
    campaign = Campaign(profile, device, out, store, force, workers, scheduler, dashboard, tls)
    out, engine = campaign.out, campaign.engine
    start = time.perf_counter()
    records = [_ClaimRecord(c, seeds) for c in claims]
    result = {"suite_version": SUITE_VERSION, "profile": profile, "seeds": seeds, "claims": [],
              "complete": False, "engine": engine.describe()}
    meta: dict[int, tuple[int, str | None, int]] = {}

    def submit(i: int, seed: int, mutation=None, perturbation=None, name=None, priority=0.0):
        spec = campaign.task(claims[i], seed, mutation=mutation, perturbation=perturbation)
        meta[engine.submit(claim_task, spec, priority=priority).index] = (i, name, seed)

    # The cheapest claims run first, and a perturbed run (cheap: it reuses its unperturbed
    # run's simulations) before any new run, so that the claims finish one after the other and
    # an interrupted calibration leaves whole records behind.
    rank = {i: r for r, i in enumerate(sorted(range(len(claims)),
                                              key=lambda i: _expected_cost(claims[i], profile)))}
    with campaign.locked(), engine:
        for i, c in enumerate(claims):
            for s in range(1, seeds + 1):
                submit(i, s, priority=-rank[i])
                for name in c.mutations or {}:
                    submit(i, s, mutation=name, name=name, priority=-rank[i])
        for handle, res in engine.completed():
            i, name, s = meta.pop(handle.index)
            entry = res["entry"] if isinstance(res, dict) else {"verdict": "error"}
            for perturbation, follow in records[i].add(name, s, entry):
                submit(i, s, perturbation=perturbation, name=follow, priority=1.0)
            if progress:
                progress(f"{claims[i].id}: seed {s} {name or 'true model'} → {entry['verdict']}")
            _update(result, records, start, out)
    result["complete"] = True
    return _update(result, records, start, out)


def _expected_cost(claim: Claim, profile: str) -> float:
    """Seconds of one seed's runs (true model and declared mutations) by the committed
    baseline's timing of the claim; 0 for a claim it does not time (a user's: it goes first)."""
    return _baseline_seconds(profile).get(claim.id, 0.0) * (1 + len(claim.mutations or {}))


@functools.cache
def _baseline_seconds(profile: str) -> dict[str, float]:
    return expected_seconds(None, profile)


def _update(result: dict, records: list[_ClaimRecord], start: float, out: Path | None) -> dict:
    result["claims"] = [r.to_json() for r in records]
    result["seconds"] = time.perf_counter() - start
    if out is not None:
        write_calibration(out, result)
    return result


def write_calibration(out: str | Path, result: dict) -> None:
    """calibration.json and calibration.md in the folder ``out``."""
    from numerics.codegen.cache import atomic_write_text

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "calibration.json", json.dumps(to_jsonable(result), indent=2) + "\n")
    head = [f"# Calibration ({result['profile']} profile, {result['seeds']} seeds per claim"
            f"{'' if result.get('complete') else ', incomplete'})", ""]
    atomic_write_text(out / "calibration.md", "\n".join(head + summary_rows(result)) + "\n")


def merge_calibrations(paths: Sequence[str | Path]) -> dict:
    """One calibration from several files of the same suite version, profile and K: each
    claim's record from the last file that has run it (a later part supersedes an earlier one,
    records with no runs never replace one with runs); ``seconds`` is the sum of the parts'
    wall times and ``parts`` lists each file's claims and seconds. A file that is not a
    calibration, or that disagrees on version, profile or K, is a ValueError naming it."""
    parts, merged, order = [], {}, []
    for path in paths:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
            records = data["claims"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"--merge {path}: not a calibration.json ({exc})") from None
        if not whole_records(records):
            raise ValueError(f"--merge {path}: a record lacks the fields calibrate writes")
        head = {k: data.get(k) for k in ("suite_version", "profile", "seeds")}
        if parts and head != parts[0]["head"]:
            raise ValueError(f"--merge {path}: {head} differs from {parts[0]['head']} of "
                             f"{parts[0]['path']}; only parts of one calibration merge")
        parts.append({"path": str(path), "head": head, "seconds": data.get("seconds"),
                      "complete": bool(data.get("complete")),
                      "claims": [r["id"] for r in records if r["runs"]]})
        for r in records:
            if r["id"] not in merged:
                order.append(r["id"])
            if r["runs"] or r["id"] not in merged:
                merged[r["id"]] = r
    seconds = [p["seconds"] for p in parts]
    return {**parts[0]["head"], "claims": [merged[i] for i in order],
            "complete": all(merged[i]["runs"] >= parts[0]["head"]["seeds"] for i in order),
            "engine": "merged parts",
            "seconds": sum(seconds) if all(isinstance(x, (int, float)) for x in seconds) else None,
            "parts": [{k: p[k] for k in ("path", "seconds", "complete", "claims")} for p in parts]}
