"""SGD step times of two checkouts of the suite, measured alternately (A, B, A, B, …) in fresh
processes, one torch thread each: the ratio of medians B/A says whether a refactor changed the
cost of a step (the machines are shared and noisy: only interleaved ratios mean anything).

    python benchmarks/compare_checkouts.py PATH_A PATH_B [--rounds 3] [--out FILE.json]

Simulators timed: token-sum direct (d = 1000, L = 4, 32 seeds) and Gram; multi-head direct
and Gram (H = 2, F = 2, L = 4, D = 1000, 64 seeds, batch 8).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

PROBE = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
from numerics.sgd import DirectSGD, GramSGD, MultiHeadGramSGD, MultiHeadSGD
from theory.models.marion2025 import MODEL
from theory.models.sagitova2026 import flipping_spike
from theory.multihead import MultiHeadModel

def per_step(sim, n):
    sim.step()
    t0 = time.perf_counter()
    for _ in range(n):
        sim.step()
    return (time.perf_counter() - t0) / n

P = dict(d=1000, L=4, lam=0.7, gamma=0.8, eps=0.3)
INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)
md, prior = MultiHeadModel(2, 4, 2, "softmax"), flipping_spike(4.0, 1.5)
try:                                  # one calling convention: (model, params, config)
    from numerics.sgd import SimulationConfig
    cfg = SimulationConfig(lr=1e-3, steps=10, seeds=32, init=INIT, device="cpu")
    hc = SimulationConfig(lr=1e-3, steps=10, seeds=64, batch=8, init=0.1, device="cpu")
    sims = {"direct": DirectSGD(MODEL, P, cfg), "gram": GramSGD(MODEL, P, cfg),
            "heads_direct": MultiHeadSGD(md, {"D": 1000, "prior": prior}, hc),
            "heads_gram": MultiHeadGramSGD(md, {"D": 1000, "prior": prior}, hc)}
except TypeError:                     # a checkout from before it
    from numerics.sgd import HeadSGDConfig, SGDConfig
    cfg = SGDConfig(params=P, lr=1e-3, steps=10, seeds=32, init=INIT, device="cpu")
    hc = HeadSGDConfig(D=1000, lr=1e-3, steps=10, seeds=64, batch=8, init=0.1, device="cpu")
    sims = {"direct": DirectSGD(MODEL, cfg), "gram": GramSGD(MODEL, cfg),
            "heads_direct": MultiHeadSGD(md, prior, hc), "heads_gram": MultiHeadGramSGD(md, prior, hc)}
print(json.dumps({k: per_step(sim, 200 if k in ("direct", "gram") else 100)
                  for k, sim in sims.items()}))
'''


def probe(path: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, path], capture_output=True, text=True,
                         check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="checkout A (e.g. before a refactor)")
    ap.add_argument("b", help="checkout B (after)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds} must be >= 1")
    for p in (args.a, args.b):
        if not (Path(p) / "numerics" / "sgd").is_dir():
            ap.error(f"{p} is not a checkout of the suite (no numerics/sgd)")
    runs = {"a": [], "b": []}
    for _ in range(args.rounds):
        runs["a"].append(probe(args.a))
        runs["b"].append(probe(args.b))
    ratios = {k: statistics.median(r[k] for r in runs["b"]) / statistics.median(r[k] for r in runs["a"])
              for k in runs["a"][0]}
    for k, v in ratios.items():
        print(f"{k}: step time B/A = {v:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"a": args.a, "b": args.b, "runs": runs,
                                              "ratio_b_over_a": ratios}, indent=2) + "\n")


if __name__ == "__main__":
    main()
