"""The quick run, cold (an empty result store) and warm (the same run again), on this checkout
and on another (``--before PATH``: a checkout of the code before simulations were stored apart
from judgements, e.g. ``git worktree add /tmp/before a42066e``), alternating A B A B so that the
machine's drift falls on both; the ratio after/before pair by pair. The code cache is warmed
first by one run of each checkout, so code generation is not measured. A third figure, after
only: a re-judging run (``run --rejudge``), the cost of a changed judge.

    python benchmarks/split_cold_warm.py --before /tmp/before [--pairs 2] [--workers 2]
                                         [--out benchmarks/split_cold_warm.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]


def timed_run(checkout: Path, out: Path, store: Path, workers: int, *extra: str) -> float:
    cmd = [sys.executable, "-m", "verification", "run", "--workers", str(workers), "--out",
           str(out), "--store", str(store), "--no-figures", *extra]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=checkout, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})
    return time.perf_counter() - start


def verdicts(out: Path) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in json.loads((out / "report.json").read_text())["claims"]}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "split_cold_warm.json")
    args = ap.parse_args(argv)
    checkouts = {"before": args.before.resolve(), "after": ROOT}
    rows: dict[str, dict[str, list[float]]] = {k: {"cold": [], "warm": []} for k in checkouts}
    rejudge: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, checkout in checkouts.items():        # warm the code cache
            timed_run(checkout, tmp / f"warmup-{name}", tmp / f"warmup-store-{name}", args.workers)
        for i in range(args.pairs):
            for name, checkout in checkouts.items():
                store = tmp / f"store-{name}-{i}"
                rows[name]["cold"].append(timed_run(checkout, tmp / f"cold-{name}-{i}", store,
                                                    args.workers))
                rows[name]["warm"].append(timed_run(checkout, tmp / f"warm-{name}-{i}", store,
                                                    args.workers))
                if name == "after":
                    rejudge.append(timed_run(checkout, tmp / f"rejudge-{i}", store, args.workers,
                                             "--rejudge"))
        same = verdicts(tmp / "cold-before-0") == verdicts(tmp / "cold-after-0")
    ratios = {kind: [round(a / b, 3) for a, b in zip(rows["after"][kind], rows["before"][kind])]
              for kind in ("cold", "warm")}
    result = {"date": dt.date.today().isoformat(), "workers": args.workers, "pairs": args.pairs,
              "seconds": {k: {kind: [round(x, 1) for x in v] for kind, v in r.items()}
                          for k, r in rows.items()},
              "ratio_after_over_before": ratios,
              "median_ratio": {k: statistics.median(v) for k, v in ratios.items()},
              "rejudge_seconds_after": [round(x, 1) for x in rejudge],
              "same_verdicts": same}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
