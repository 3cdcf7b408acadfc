"""The run engine's acceptance ratios, measured side by side in one session:

- the quick run with 2 workers against 1 worker, each with a cold store (target ≤ 0.6×);
- a warm re-run with unchanged code against the cold run (target ≤ 5 %).

Each run is a fresh ``python -m verification run`` process (what a user types), with its own
empty store and a shared code cache warmed beforehand by a run of the same claims (generated
code is not what is measured, and a cache filled by whichever side ran first would favour the
other). The order alternates over repeats so that a drift of the machine's load hits both sides.

    python benchmarks/engine.py [--repeats 1] [--claims ID ...] [--out benchmarks/engine.json]
                                [--keep DIR]    # keep the first cold 2-worker run's report
    python benchmarks/engine.py --timeline   # one cold 2-worker run: where the workers idle
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]


def _run(out: Path, workers: int, claims: list[str], env: dict | None = None) -> float:
    cmd = [sys.executable, "-m", "verification", "run", "--workers", str(workers), "--out",
           str(out)]
    for c in claims:
        cmd += ["--claim", c]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - start


def timeline(stream: list[dict], wall: float) -> dict:
    """Where a cluster run's wall time went: per worker, the seconds spent computing tasks (a
    seceded claim waiting on its subtasks overlaps them and is counted once), the start of the
    first task and the end of the last (seconds since the cluster started) and the idle gaps."""
    out = {"process_wall_s": wall, "workers": {}}
    for w in sorted({r["worker"] for r in stream}):
        spans = sorted((r["start"], r["stop"]) for r in stream if r["worker"] == w)
        busy, gaps, end = 0.0, [], spans[0][0]
        for a, b in spans:                      # union of intervals, and the holes between
            if a > end:
                gaps.append((round(end, 2), round(a - end, 2)))
            busy += max(0.0, b - max(a, end))
            end = max(end, b)
        out["workers"][w] = {"first_start_s": spans[0][0], "last_stop_s": end, "busy_s": busy,
                             "idle_gaps_over_0.5s": [g for g in gaps if g[1] > 0.5]}
    ends = [v["last_stop_s"] for v in out["workers"].values()]
    out["tail_s (last worker end − first worker end)"] = max(ends) - min(ends)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--claims", nargs="*", default=[], help="claim ids (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "engine.json")
    ap.add_argument("--keep", type=Path, default=None,
                    help="copy the first cold 2-worker run's output folder (report.json …) here, "
                         "e.g. to compare it with the baseline (guard compare)")
    ap.add_argument("--timeline", action="store_true",
                    help="only one cold 2-worker run (code cache as it is): its task stream")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="attnv-engine-bench-"))
    os.environ.setdefault("ATTNV_CACHE_DIR", str(work / "cache"))
    if args.timeline:
        stream = work / "stream.json"
        wall = _run(work / "timeline", 2, args.claims, {"ATTNV_TASK_STREAM": str(stream)})
        print(json.dumps(timeline(json.loads(stream.read_text()), wall), indent=1))
        return
    warmup = _run(work / "warmup", 2, args.claims)        # fills the code cache for every claim
    rows = []
    for r in range(args.repeats):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        cold = {w: _run(work / f"cold-{w}-{r}", w, args.claims) for w in order}
        warm = _run(work / f"cold-2-{r}", 2, args.claims)       # same store as the 2-worker run
        rows.append({"cold_1_worker_s": cold[1], "cold_2_workers_s": cold[2], "warm_s": warm,
                     "ratio_2_vs_1": cold[2] / cold[1], "ratio_warm_vs_cold": warm / cold[2]})
        print(json.dumps(rows[-1]))
        if args.keep is not None and r == 0:
            shutil.copytree(work / "cold-2-0", args.keep, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("store"))
    result = {"machine_cores": len(os.sched_getaffinity(0)), "claims": args.claims or "all",
              "warmup_s (2 workers, cold code cache, not compared)": warmup,
              "repeats": rows, "targets": {"ratio_2_vs_1": 0.6, "ratio_warm_vs_cold": 0.05,
                                           "cold_2_workers_s": 300}}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
