"""Run ``python -m verification calibrate`` for groups of claims in parallel processes (one
thread each) and merge their calibration.json files into one. Used to produce
calibration/quick.json on a many-core machine until calibrate runs on Dask (issue 13).

    python calibration/parallel.py --out calibration/quick.json --seeds 10 --budget 480 \
        --group "marion2025:thm1-risk marion2025:saddle" --group "..."

Each group shares one process (and its in-process caches). Processes still running when the
wall-clock budget is spent are stopped; their finished claims are kept (calibrate writes after
every claim) and the merged file says "complete": false.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def not_calibrated(wanted: list[str], records: list[dict]) -> list[str]:
    """The ids (or stems, selecting every ``stem[...]`` variant) of ``wanted`` with no record."""
    done = {r["id"] for r in records}
    return [w for w in wanted if not any(d == w or d.startswith(w + "[") for d in done)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=float, default=480.0, help="wall-clock seconds")
    ap.add_argument("--group", action="append", required=True, help="claim ids, space-separated")
    args = ap.parse_args()
    if args.seeds < 1 or args.budget <= 0:
        ap.error("--seeds must be ≥ 1 and --budget > 0")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    work = Path(tempfile.mkdtemp(prefix="calibrate-"))
    procs = []
    start = time.time()
    for i, group in enumerate(args.group):
        cmd = [sys.executable, "-m", "verification", "calibrate", "--seeds", str(args.seeds),
               "--device", "cpu", "--out", str(work / f"g{i}")]
        for cid in group.split():
            cmd += ["--claim", cid]
        log = (work / f"g{i}.log").open("w")  # noqa: SIM115 (open while the process runs)
        procs.append(subprocess.Popen(cmd, env={**env, "ATTNV_CACHE_DIR": str(work / f"cache{i}")},
                                      stdout=log, stderr=subprocess.STDOUT))
    while any(p.poll() is None for p in procs) and time.time() - start < args.budget:
        time.sleep(2)
    stopped = [i for i, p in enumerate(procs) if p.poll() is None]
    for i in stopped:
        procs[i].kill()
    claims, complete = [], not stopped
    for i in range(len(procs)):
        f = work / f"g{i}" / "calibration.json"
        if f.exists():
            claims += json.loads(f.read_text())["claims"]
        else:
            complete = False
    from numerics.codegen.cache import atomic_write_text
    from verification.runner import SUITE_VERSION, environment
    wanted = [c for g in args.group for c in g.split()]
    missing = not_calibrated(wanted, claims)
    result = {"suite_version": SUITE_VERSION, "profile": "quick", "seeds": args.seeds,
              "complete": complete and not missing, "environment": environment(),
              "wall_seconds": time.time() - start, "processes": len(procs),
              "not_calibrated": missing, "claims": claims}
    atomic_write_text(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(f"{len(claims)} claims calibrated, {len(result['not_calibrated'])} not; "
          f"{result['wall_seconds']:.0f} s; logs in {work}")


if __name__ == "__main__":
    main()
