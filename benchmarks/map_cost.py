"""What a map costs, and what simulate-once-judge-many saves calibration, measured side by side
in one session (fresh ``python -m verification`` processes, each with an empty result store; the
code cache warmed first by a run of the same claims, so code generation is not measured):

- per claim: the quick-profile ``run`` (its settings) and a ``map --points N`` (N sampled
  settings, then boundary bisection and shrinking), both on ``--workers W``; the ratio of the
  map's wall time to N × the run's wall time per setting it judged, and to N × the whole run;
- calibration (``calibrate --seeds K``) of the same claims on this checkout and on another
  (``--before PATH``: a checkout of the code before the reuse, e.g. ``git worktree add``),
  alternating, each with an empty store.

    python benchmarks/map_cost.py [--claims ID ...] [--points 32] [--workers 2] [--no-refine]
                                  [--before PATH --calibrate ID ...] [--seeds 2]
                                  [--out benchmarks/map_cost.json]
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
DEFAULT_CLAIMS = ["marion2025:thm1-risk", "marion2025:sgd-tracks-flow"]


def _timed(cmd: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def _cli(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "verification", *args]


def measure_map(claim: str, points: int, workers: int, env: dict, tmp: Path,
                refine: bool = True) -> dict:
    run_out = tmp / f"run-{claim.replace(':', '_')}"
    run_s = _timed(_cli(ROOT, "run", "--claim", claim, "--workers", str(workers), "--out",
                        str(run_out), "--no-figures"), ROOT, env)
    report = json.loads((run_out / "report.json").read_text())
    entry = report["claims"][0]
    settings = len((entry.get("domain") or {}).get("settings") or [None])
    map_out = tmp / f"map-{claim.replace(':', '_')}"
    map_s = _timed(_cli(ROOT, "map", claim, "--points", str(points), "--workers", str(workers),
                        "--out", str(map_out), "--no-figures",
                        *([] if refine else ["--no-refine"])), ROOT, env)
    doc = json.loads((map_out / "map.json").read_text())
    return {"claim": claim, "refine": refine, "run_s": round(run_s, 2), "run_settings": settings,
            "run_verdict": entry["verdict"], "map_s": round(map_s, 2),
            "map_judgements": len(doc["points"]), "map_sampled": doc.get("sampled"),
            "holds_at": doc["holds_at"], "boundary_points": len(doc["boundary"]),
            "counterexample": doc["counterexample"],
            "ratio_to_points_x_run": round(map_s / (points * run_s), 4),
            "ratio_to_points_x_setting": round(map_s / (points * run_s / settings), 3)}


def measure_calibration(root: Path, claims: list[str], seeds: int, workers: int, env: dict,
                        tmp: Path, tag: str) -> float:
    out = tmp / f"cal-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = _cli(root, "calibrate", "--seeds", str(seeds), "--workers", str(workers), "--out",
               str(out))
    for c in claims:
        cmd += ["--claim", c]
    return _timed(cmd, root, {**env, "PYTHONPATH": str(root)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", nargs="+", default=DEFAULT_CLAIMS)
    ap.add_argument("--points", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--calibrate", nargs="+", default=["dohmatob2025:rem-constants"],
                    help="the claims calibrated on both checkouts")
    ap.add_argument("--skip-map", action="store_true")
    ap.add_argument("--no-refine", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "map_cost.json")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="attnv-map-bench-"))
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp / "cache")}
    env.pop("ATTNV_STORE", None)
    # warm the code cache (both checkouts' generated code is keyed by its source)
    warm = args.calibrate if args.skip_map else args.claims + args.calibrate
    subprocess.run(_cli(ROOT, "run", "--workers", "0", "--out", str(tmp / "warm"),
                        "--no-figures", *sum((["--claim", c] for c in warm), [])),
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)
    result = {"date": time.strftime("%Y-%m-%d"), "workers": args.workers, "points": args.points,
              "maps": [], "calibration": None}
    if not args.skip_map:
        for c in args.claims:
            result["maps"].append(measure_map(c, args.points, args.workers, env, tmp,
                                              not args.no_refine))
            print(json.dumps(result["maps"][-1]))
    if args.before is not None:
        times = {"before": [], "after": []}
        for tag, root in (("before", args.before.resolve()), ("after", ROOT)):
            times[tag].append(measure_calibration(root, args.calibrate, args.seeds,
                                                  args.workers, env, tmp, tag))
            print(tag, times[tag][-1])
        result["calibration"] = {"claims": args.calibrate, "seeds": args.seeds,
                                 "before_s": times["before"], "after_s": times["after"],
                                 "ratio_after_before": round(times["after"][0]
                                                             / times["before"][0], 3),
                                 "before_checkout": str(args.before)}
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    maps = {m["claim"]: m for m in old.get("maps", []) + result["maps"]}
    result = {**old, **{k: v for k, v in result.items() if v}}     # keep the other part's
    result["maps"] = list(maps.values())
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
