"""Where the quick profile's CPU time goes: every claim run once in this process (seed 0, CPU,
one torch thread, the engine's subtasks run in place, so the escape runs Prop. III.4 and Conj.
III.1 share are paid by both) under cProfile, its time split by what ran. Writes
benchmarks/cost_profile.json.

    python benchmarks/cost_profile.py [--claim ID ...] [--out FILE.json]

Per claim: wall seconds under the profiler, exclusive time by kind (``generated code``: the
elementwise code SymPy's expressions were printed to; ``torch`` / ``numpy``: their kernels;
``sympy``, ``mpmath``, ``scipy``; the suite's own Python by package), and cumulative time in the
hot entry points (the multi-head flow's right-hand side, the SGD simulators' steps, code
generation including its cache key). cProfile slows Python-level code more than kernels, so
the shares are upper bounds for the Python parts; the totals are not the run's seconds.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HOT = {"multi-head flow rhs": ("numerics/multihead/flow.py", "rhs"),
       "multi-head flow loss and gradient": ("numerics/multihead/flow.py", "loss_and_gradient"),
       "SGD steps": ("numerics/sgd/", "step"),
       "code generation and its cache key": ("numerics/codegen/base.py", "compile"),
       "RK45 steps (scipy, incl. rhs)": ("scipy/integrate/_ivp/rk.py", "_step_impl")}


def _kind(key) -> str:
    """The kind of a profiled function (file, line, name) for the exclusive-time split."""
    file, _, name = key
    text = f"{file} {name}"
    if file.startswith("<generated"):
        return "generated code"
    for lib in ("torch", "sympy", "mpmath", "scipy", "numpy", "dask", "distributed"):
        if f"/{lib}/" in file or f"{lib}." in name or f"'{lib}." in text:
            return lib
    for pkg in ("numerics", "theory", "verification"):
        if f"/{pkg}/" in file:
            return f"suite: {pkg}"
    return "other (Python, builtins)"


def profile_claim(claim) -> dict:
    from verification.context import Context
    from verification.tasks import run_claim
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.enable()
    entry, _ = run_claim(claim, Context(profile="quick", seed=0, device="cpu"))
    prof.disable()
    wall = time.perf_counter() - start
    stats = pstats.Stats(prof).stats
    kinds: dict[str, float] = {}
    for key, (_, _, tt, _, _) in stats.items():
        kinds[_kind(key)] = kinds.get(_kind(key), 0.0) + tt
    hot = {}
    for label, (where, name) in HOT.items():
        hot[label] = sum(ct for (file, _, fn), (_, _, _, ct, _) in stats.items()
                         if where in file and fn == name)
    return {"verdict": entry["verdict"], "wall_s_profiled": wall,
            "exclusive_s_by_kind": dict(sorted(kinds.items(), key=lambda kv: -kv[1])), "cumulative_s_in": hot}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claim", action="append", default=None, help="claim id (repeatable; default: all)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("cost_profile.json")))
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    from numerics.codegen.cache import atomic_write_text
    from verification.catalogue import claims_for
    claims = claims_for(ids=args.claim) if args.claim else claims_for()
    out = {"profile": "quick", "seed": 0, "torch_threads": 1, "claims": {}}
    for c in claims:
        out["claims"][c.id] = profile_claim(c)
        r = out["claims"][c.id]
        print(f"{c.id}: {r['wall_s_profiled']:.1f} s, {r['verdict']}", flush=True)
        atomic_write_text(Path(args.out), json.dumps(out, indent=2) + "\n")      # partial results kept
    total: dict[str, float] = {}
    hot: dict[str, float] = {}
    for r in out["claims"].values():
        for k, v in r["exclusive_s_by_kind"].items():
            total[k] = total.get(k, 0.0) + v
        for k, v in r["cumulative_s_in"].items():
            hot[k] = hot.get(k, 0.0) + v
    out["total_wall_s_profiled"] = sum(r["wall_s_profiled"] for r in out["claims"].values())
    out["total_exclusive_s_by_kind"] = dict(sorted(total.items(), key=lambda kv: -kv[1]))
    out["total_cumulative_s_in"] = hot
    atomic_write_text(Path(args.out), json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("total_wall_s_profiled", "total_exclusive_s_by_kind",
                                          "total_cumulative_s_in")}, indent=1))


if __name__ == "__main__":
    main()
