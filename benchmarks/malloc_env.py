"""A local worker's malloc environment: dask's nanny default (``MALLOC_TRIM_THRESHOLD_=65536``,
which pins glibc's mmap threshold at 128 KiB) against the engine's (``worker_environ``: the
threshold left to glibc), side by side in one session. Each side runs each claim in a fresh
one-worker LocalCluster, as a quick run does, and reads the worker's own CPU times and minor page
faults (getrusage) around the claim; the code cache is warmed first. The sides alternate order
over repeats.

    python benchmarks/malloc_env.py [--repeats 2] [--claims ID ...] [--out benchmarks/malloc_env.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_CLAIMS = ["marion2025:sgd-tracks-flow", "sagitova2026:prop-iii2-sgd-flow",
                  "dohmatob2025:global-convergence-linear"]


def _claim_in_worker(claim_id: str) -> dict:
    import resource
    import time
    from verification.context import Context
    from verification.engine import single_thread
    from verification.catalogue import claims_for
    from verification.declare import REGISTRY
    from verification.tasks import run_claim
    claims_for()                                 # registers every paper's claims
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    with single_thread():
        entry, _ = run_claim(REGISTRY[claim_id], Context(profile="quick", seed=0, device="cpu"))
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall_s": time.perf_counter() - start, "user_s": after.ru_utime - before.ru_utime,
            "sys_s": after.ru_stime - before.ru_stime,
            "minor_faults": after.ru_minflt - before.ru_minflt, "verdict": entry["verdict"]}


def _run(claim_id: str, environ: dict) -> dict:
    import dask
    from distributed import Client, LocalCluster
    from verification.engine import environ_restored
    config = {"distributed.nanny.pre-spawn-environ": environ,
              "distributed.worker.profile.enabled": False}
    with dask.config.set(config), environ_restored(), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                         dashboard_address=":0") as cluster, Client(cluster) as client:
        return client.submit(_claim_in_worker, claim_id, pure=False).result()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--claims", nargs="*", default=DEFAULT_CLAIMS)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("malloc_env.json"))
    args = ap.parse_args()
    import dask
    from numerics.codegen.cache import atomic_write_text
    from verification.engine import worker_environ
    engine_env = worker_environ()                   # imports distributed: its config defaults
    sides = {"dask_default": dict(dask.config.get("distributed.nanny.pre-spawn-environ")),
             "engine": engine_env}
    out = {"environments": sides, "repeats": args.repeats, "claims": {}}
    for claim_id in args.claims:
        _run(claim_id, sides["engine"])                     # warms the code cache
        rows = {name: [] for name in sides}
        for r in range(args.repeats):
            for name in (sides if r % 2 == 0 else reversed(list(sides))):
                rows[name].append(_run(claim_id, sides[name]))
        best = {name: min(rows[name], key=lambda x: x["wall_s"]) for name in sides}
        out["claims"][claim_id] = {
            "runs": rows,
            "wall_ratio_engine_vs_dask_default": best["engine"]["wall_s"] / best["dask_default"]["wall_s"],
            "fault_ratio_engine_vs_dask_default":
                best["engine"]["minor_faults"] / best["dask_default"]["minor_faults"]}
        print(claim_id, json.dumps({k: round(v, 3) for k, v in out["claims"][claim_id].items()
                                    if k != "runs"}), flush=True)
    atomic_write_text(args.out, json.dumps(out, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
