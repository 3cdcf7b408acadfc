"""What an edit of a judge costs the calibration: re-judging every stale record of a calibration
file from the stored simulations (``calibrate --rejudge``), timed as a whole command, and the
records compared with the ones before, apart from what re-judging may change (the code hashes,
how each run was computed, the wall times).

Typical use, after a calibration whose simulations are in STORE (``calibrate ... --store STORE``)
and an edit of a judge (a policy of the check library, a claim's summarising code):

    python benchmarks/rejudge.py --calibration calibration/quick.json --store STORE \\
        --workers 2 --edit "estimate_vs_theory: scale broadcast once; limit's report text" \\
        [--before-seconds 10591] [--cold-seconds 3671] [--out benchmarks/rejudge.json]

The calibration file is copied and re-judged in a temporary folder (the committed one is not
touched). ``--before-seconds``: what the same records took to measure on the code before
simulations were stored apart (every edit of a judge meant that again); ``--cold-seconds``:
what they took on this code from an empty store; each quoted beside the re-judging time as a
ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
RUN_DETAILS = {"code", "stages"}
"""A record's fields that re-judging may change (its numbers may not)."""
TOP_DETAILS = {"seconds", "engine", "rejudged", "parts", "complete"}


def comparable(data: dict) -> dict:
    """A calibration without its run details: what must be byte-identical after re-judging."""
    return {**{k: v for k, v in data.items() if k not in TOP_DETAILS},
            "claims": [{k: v for k, v in r.items() if k not in RUN_DETAILS}
                       for r in data["claims"]]}


def differences(before: dict, after: dict) -> list[str]:
    """The records (by id) whose numbers moved."""
    a = {r["id"]: r for r in comparable(before)["claims"]}
    b = {r["id"]: r for r in comparable(after)["claims"]}
    out = sorted(set(a) ^ set(b))
    out += [i for i in sorted(set(a) & set(b))
            if json.dumps(a[i], sort_keys=True) != json.dumps(b[i], sort_keys=True)]
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calibration", type=Path, default=ROOT / "calibration" / "quick.json")
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--edit", default="", help="what judge edit is being re-judged (recorded)")
    ap.add_argument("--before-seconds", type=float, default=None,
                    help="the same records measured on the code before simulations were stored "
                         "apart (wall time)")
    ap.add_argument("--cold-seconds", type=float, default=None,
                    help="the same records measured on this code from an empty store")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "rejudge.json")
    args = ap.parse_args(argv)

    before = json.loads(args.calibration.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "calibration.json"
        shutil.copy(args.calibration, copy)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "verification", "calibrate", "--rejudge",
                               str(copy), "--store", str(args.store), "--workers",
                               str(args.workers)], cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"calibrate --rejudge failed ({done.returncode}): {done.stderr[-2000:]}")
        after = json.loads(copy.read_text())
    stages = {k: sum((r.get("stages") or {}).get(k, 0) for r in after["claims"])
              for k in ("simulated", "rejudged", "reused")}
    result = {"date": dt.date.today().isoformat(), "edit": args.edit, "workers": args.workers,
              "records": len(after["claims"]), "seeds": after.get("seeds"),
              "rejudged_records": len((after.get("rejudged") or {}).get("claims") or []),
              "runs_by_stage": stages, "rejudge_seconds": round(seconds, 1),
              "output": done.stdout.strip().splitlines()[:3],
              "records_that_moved": differences(before, after)}
    if args.before_seconds:
        result["before_seconds"] = args.before_seconds
        result["speed_up_over_before"] = round(args.before_seconds / seconds, 1)
    if args.cold_seconds:
        result["cold_seconds"] = args.cold_seconds
        result["speed_up_over_cold"] = round(args.cold_seconds / seconds, 1)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
