"""GPU speed ratios, measured side by side in one run on a machine with CUDA (the same
simulation on the GPU and on the CPU cores, alternated). Writes benchmarks/gpu_results.json.

    python benchmarks/gpu.py [--out benchmarks/gpu_results.json] [--repeats 3]

(a) token-sum direct SGD (Marion et al., L = 4, batch 1) at d = 4000, 256 seeds: one step on the
    CPU vs on CUDA, float64 and float32;
(b) direct SGD on CUDA at d = 10^4, 10^5, 10^6 (64 seeds, float32) against the Gram simulator
    (cost independent of d): where the direct simulator stops being affordable;
(c) multi-head direct SGD (H = 2, F = 2, L = 4, softmax, batch 8) at D = 4000, 64 seeds: CPU vs
    CUDA; and at D = 10^5 on CUDA;
(d) Dohmatob's risk Monte Carlo (extreme-value sampling, torch) per sample: CPU vs CUDA.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import platform
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from numerics import SimulationConfig  # noqa: E402
from timing import interleaved as _interleaved  # noqa: E402
from numerics.sgd import DirectSGD, GramSGD  # noqa: E402
from theory.models.marion2025 import MODEL  # noqa: E402

PARAMS = dict(L=4, lam=0.7, gamma=0.8, eps=0.3)
INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)


def interleaved(fns: dict, n: int, repeats: int) -> dict:
    """``timing.interleaved`` with the GPU synchronised around each timed block."""
    return _interleaved(fns, n, repeats, sync=torch.cuda.synchronize if torch.cuda.is_available() else None)


def _token(simulator, d, seeds, device, dtype):
    return simulator(MODEL, {**PARAMS, "d": d}, SimulationConfig(
        lr=0.5 / d, steps=1, seeds=seeds, batch=1, init=INIT, device=device, dtype=dtype))


def bench_token_sum(repeats):
    out = {}
    for dtype in ("float64", "float32"):
        cpu = _token(DirectSGD, 4000, 256, "cpu", dtype)
        gpu = _token(DirectSGD, 4000, 256, "cuda", dtype)
        cpu.step(), gpu.step()
        t = interleaved({"cpu": cpu.step, "cuda": gpu.step}, n=10, repeats=repeats)
        out[f"d4000_seeds256_{dtype}"] = {"seconds_per_step": t, "cpu_over_cuda": t["cpu"] / t["cuda"]}
    return out


def bench_direct_scaling(repeats):
    out = {}
    for d in (10**4, 10**5, 10**6):
        direct = _token(DirectSGD, d, 64, "cuda", "float32")
        gram = _token(GramSGD, d, 64, "cuda", "float32")
        direct.step(), gram.step()
        t = interleaved({"direct": direct.step, "gram": gram.step}, n=20, repeats=repeats)
        out[f"d{d:.0e}"] = {"seconds_per_step": t, "direct_over_gram": t["direct"] / t["gram"]}
        del direct, gram
        torch.cuda.empty_cache()
    return out


def bench_heads(repeats):
    from numerics.sgd import MultiHeadSGD
    from theory.models.sagitova2026 import GaussianPrior
    from theory.multihead import MultiHeadModel
    md = MultiHeadModel(2, 4, 2, "softmax")
    prior = GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5]))

    def heads(D, device):
        return MultiHeadSGD(md, {"D": D, "prior": prior}, SimulationConfig(
            lr=2.0 / D, steps=1, batch=8, seeds=64, init=0.1, device=device))
    cpu, gpu = heads(4000, "cpu"), heads(4000, "cuda")
    cpu.step(), gpu.step()
    t = interleaved({"cpu": cpu.step, "cuda": gpu.step}, n=5, repeats=repeats)
    out = {"D4000_seeds64": {"seconds_per_step": t, "cpu_over_cuda": t["cpu"] / t["cuda"]}}
    big = heads(10**5, "cuda")
    big.step()
    out["D1e5_seeds64_cuda_seconds_per_step"] = interleaved({"cuda": big.step}, n=10,
                                                           repeats=repeats)["cuda"]
    return out


def bench_rem(repeats):
    from numerics.rem_torch import softmax_risk_mc_torch
    ov = dict(mu=0.8, nu=0.5, zeta=0.2, eta=0.1, rho=0.3)
    n = 20000

    def run(device):
        return lambda: softmax_risk_mc_torch(lambda s: s, 0.04, 1.0, 0.6, 200, ov, n, 0, top_k=300,
                                             device=device)
    t = interleaved({"cpu": run("cpu"), "cuda": run("cuda")}, n=1, repeats=repeats)
    per = {k: v / n for k, v in t.items()}
    return {"seconds_per_sample": per, "cpu_over_cuda": per["cpu"] / per["cuda"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(Path(__file__).with_name("gpu_results.json")))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if not torch.cuda.is_available():
        ap.error("no CUDA device: this benchmark compares the CPU with a GPU")
    torch.set_num_threads(os.cpu_count() or 1)
    results = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                           "torch": torch.__version__, "threads": torch.get_num_threads(),
                           "gpu": torch.cuda.get_device_name(0)}}
    from numerics.codegen.cache import atomic_write_text
    with torch.no_grad():
        for name, bench in (("token_sum_cpu_vs_cuda", bench_token_sum),
                            ("direct_vs_gram_on_cuda", bench_direct_scaling),
                            ("multihead_cpu_vs_cuda", bench_heads),
                            ("rem_risk_cpu_vs_cuda", bench_rem)):
            t0 = time.perf_counter()
            try:
                results[name] = bench(args.repeats)
            except Exception as exc:               # keep what the other sections measured
                results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"{name} ({time.perf_counter() - t0:.0f} s): {json.dumps(results[name])}",
                  flush=True)
            atomic_write_text(Path(args.out), json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
