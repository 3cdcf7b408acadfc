"""Batched trajectories of the multi-head reduced flow against one-by-one integration, side by
side in one process (one torch thread), on the set-ups of Conj. III.1 and Result III.1 (quick
profile: 2^11 quasi-Monte Carlo draws, RK45 at rtol 1e-4, solver restarted every 100 output
intervals). Writes benchmarks/batched_flow.json.

    python benchmarks/batched_flow.py [--repeats 3] [--out FILE.json]

* ``rhs``: seconds per right-hand side per state, ``ReducedFlow.rhs_batch`` on K states against
  K calls of ``ReducedFlow.rhs`` (H = 2 and H = 4 heads);
* ``conj_block``: the 8 fresh initial draws at one D (D = 10⁶) of a Conj. III.1 subtask,
  integrated to escape (‖m‖_F ≥ 0.3) one by one (``numerics.ode.integrate`` with RK45 on each
  state alone, as the claim did before batching) and as one batch (the same front door on the
  2-D batch, ``ReducedFlow.rhs_batch``, as the claim does now);
* ``result_draws``: Result III.1's flow (H = 4, θ ~ N(0, diag(6, 3))) from 3 initial draws at
  D = 10², 10³, 10⁴ until both features are specialized (max_h |m_hf| ≥ 0.5), 9 trajectories.

Each case also records the largest difference of the first-passage times between the two ways.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import interleaved  # noqa: E402


def _setups():
    from numerics.reduced import HeadReduced
    from theory.models.sagitova2026 import GaussianPrior
    from theory.multihead import MultiHeadModel
    from verification.claims.sagitova2026 import small_init
    escape = HeadReduced(MultiHeadModel(2, 4, 2, "softmax"), GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5])),
                         n=2**11, seed=11, backend="torch")
    special = HeadReduced(MultiHeadModel(4, 4, 2, "softmax"), GaussianPrior([0.0, 0.0], np.diag([6.0, 3.0])),
                          n=2**11, seed=12, backend="torch")
    rng = np.random.default_rng(0)
    conj = np.array([escape.pack(small_init(rng.standard_normal((2, 2)), 1e6)) for _ in range(8)])
    draws = [rng.standard_normal((4, 2)) for _ in range(3)]
    result = np.array([special.pack(small_init(g, D)) for g in draws for D in (1e2, 1e3, 1e4)])
    return escape, special, conj, result


def _first_passages(runs, value, threshold):
    from numerics.multihead import first_passage
    return np.array([first_passage(t, [value(v) for v in y], threshold) for t, y in runs])


def _rhs_case(rm, Y, repeats):
    t = interleaved({"one_by_one": lambda: [rm.flow.rhs(y) for y in Y],
                     "batched": lambda: rm.flow.rhs_batch(Y)}, n=20, repeats=repeats)
    return {"one_by_one_s_per_state": t["one_by_one"] / len(Y), "batched_s_per_state": t["batched"] / len(Y),
            "ratio_batched_vs_one_by_one": t["batched"] / t["one_by_one"]}


def _integration_case(rm, Y0, t_eval, value, threshold, reached, repeats):
    from numerics.ode import integrate
    res = {}
    event = lambda t, y: reached(y)
    opts = dict(method="RK45", rtol=1e-4, atol=1e-12, reached=event, chunk=100)
    pairs = lambda runs: [(tr.t, tr.y) for tr in runs]
    one = lambda: res.__setitem__("one", pairs([integrate(rm.flow.rhs, y, t_eval, **opts) for y in Y0]))
    bat = lambda: res.__setitem__("bat", pairs(integrate(rm.flow.rhs_batch, np.asarray(Y0), t_eval, **opts)))
    start = time.perf_counter()
    t = interleaved({"one_by_one": one, "batched": bat}, n=1, repeats=repeats)
    tau_one, tau_bat = (_first_passages(res[k], value, threshold) for k in ("one", "bat"))
    return {"trajectories": len(Y0), "one_by_one_s": t["one_by_one"], "batched_s": t["batched"],
            "ratio_batched_vs_one_by_one": t["batched"] / t["one_by_one"],
            "max_first_passage_difference": float(np.max(np.abs(tau_one - tau_bat))),
            "first_passage_times": tau_one.tolist(), "wall_s": time.perf_counter() - start}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).with_name("batched_flow.json")))
    args = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    from numerics.codegen.cache import atomic_write_text
    escape, special, conj, result = _setups()
    out = {"machine_cores": len(os.sched_getaffinity(0)), "torch_threads": 1, "repeats": args.repeats,
           "rhs": {}}

    for name, rm, Y in (("H2", escape, conj), ("H4", special, result)):
        for K in (1, 4, 8):
            out["rhs"][f"{name}_K{K}"] = _rhs_case(rm, np.resize(Y, (K, Y.shape[1])), args.repeats)
    cases = {
        "conj_block": (escape, conj, np.linspace(0, 60, 601), lambda y: float(np.linalg.norm(y[:4])),
                       0.3, lambda y: np.linalg.norm(y[:4]) >= 0.3),
        "result_draws": (special, result, np.linspace(0, 800, 1601),
                         lambda y: float(np.abs(y[:8].reshape(4, 2)).max(0).min()),
                         0.5, lambda y: bool(np.all(np.abs(y[:8].reshape(4, 2)).max(0) >= 0.5))),
    }
    for name, case in cases.items():
        out[name] = _integration_case(*case, args.repeats)
        print(name, json.dumps(out[name]), flush=True)
    print(json.dumps(out["rhs"], indent=1))
    atomic_write_text(Path(args.out), json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
