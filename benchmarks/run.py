"""Speed ratios, measured side by side in one run (machines are shared and noisy: only ratios
of interleaved measurements mean anything). Writes benchmarks/results.json.

    python benchmarks/run.py [--out benchmarks/results.json] [--repeats 5]

(a) batched-seed SGD vs the same simulation as a Python loop over seeds (d=1000, L=4, batch 1,
    32 seeds); (b) one batched SGD step vs drawing the same Gaussians alone (the floor);
(c) generated code (CSE) vs plain lambdify without CSE vs SymPy evalf, risk + overlap flow of
    Marion et al. on 10^4 points (evalf timed on a subset, per point);
(d) Gram-matrix SGD at d = 10^3 vs d = 10^9, and against direct SGD at d = 4000;
(e) Dohmatob's risk Monte Carlo at e^{αd} tokens, d = 200: extreme-value sampling vs R^d;
(f) Sagitova's reduced ODE for H = 4, F = 3, L = 4 integrated to τ = 100 (RK45, 2^14 antithetic
    quasi-Monte Carlo draws): wall time and right-hand-side evaluations, numpy vs torch code;
(g) multi-head Gram-matrix SGD at D = 10^3 vs 10^9, and against direct SGD at D = 4000.
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
import sympy as sp  # noqa: E402
import torch  # noqa: E402

from numerics import SimulationConfig  # noqa: E402
from timing import interleaved  # noqa: E402
from numerics.sgd import DirectSGD  # noqa: E402
from theory import derive  # noqa: E402
from theory.models.marion2025 import MODEL  # noqa: E402

PARAMS = dict(d=1000, L=4, lam=0.7, gamma=0.8, eps=0.3)
INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)


def bench_sgd(repeats, dtype):
    seeds = 32
    cfg = SimulationConfig(lr=0.5 / 1000, steps=1, seeds=seeds, batch=1, init=INIT,
                           device="cpu", dtype=dtype)
    batched = DirectSGD(MODEL, PARAMS, cfg)
    singles = [DirectSGD(MODEL, PARAMS, SimulationConfig(**{**cfg.__dict__, "seeds": 1, "seed": s}))
               for s in range(seeds)]
    gen = torch.Generator().manual_seed(0)
    dt = getattr(torch, dtype)

    def floor():
        torch.randn(seeds, 1, 4, 1000, generator=gen, dtype=dt)
        torch.randint(4, (seeds, 1), generator=gen)
        torch.randn(seeds, 1, generator=gen, dtype=dt)

    def loop():
        for s in singles:
            s.step()

    with torch.no_grad():
        for f in (batched.step, loop, floor):
            f()
        t = interleaved({"batched_step": batched.step, "loop_over_seeds": loop,
                         "sampling_floor": floor}, n=50, repeats=repeats)
    return {"seconds": t, "batched_vs_loop": t["loop_over_seeds"] / t["batched_step"],
            "step_over_floor": t["batched_step"] / t["sampling_floor"]}


def bench_gram(repeats):
    """Gram-matrix SGD: cost per step at d = 10^3 vs 10^9 (32 seeds), and against direct SGD
    at d = 4000 (same model, batch 1, float64) for 32 and 1024 seeds: the Gram step is bound
    by per-operation overhead at few seeds, so its advantage grows with the seed count."""
    from numerics.sgd import GramSGD

    def make(simulator, d, seeds):
        return simulator(MODEL, {**PARAMS, "d": d}, SimulationConfig(
            lr=0.5 / d, steps=1, seeds=seeds, batch=1, init=INIT, device="cpu", dtype="float64"))

    out = {}
    with torch.no_grad():
        g3, g9 = make(GramSGD, 10**3, 32), make(GramSGD, 10**9, 32)
        g3.step(), g9.step()
        t = interleaved({"gram_d1e3": g3.step, "gram_d1e9": g9.step}, n=50, repeats=repeats)
        out["d_independence"] = {"seconds_per_step": t,
                                 "cost_d1e9_over_d1e3": t["gram_d1e9"] / t["gram_d1e3"]}
        for seeds, n in ((32, 20), (1024, 2)):
            g, direct = make(GramSGD, 4000, seeds), make(DirectSGD, 4000, seeds)
            g.step(), direct.step()
            t = interleaved({"gram": g.step, "direct": direct.step}, n=n, repeats=repeats)
            out[f"d4000_seeds{seeds}"] = {"seconds_per_step": t,
                                          "direct_over_gram": t["direct"] / t["gram"]}
    return out


def bench_rem(repeats):
    """Dohmatob risk Monte Carlo at L − 1 = e^{αd} tokens, d = 200 (α = 0.04: 2981 dummies),
    per sample: extreme-value sampling of the projections vs whole tokens in R^d."""
    from numerics.rem import direct_softmax_risk, softmax_risk_mc
    from numerics.rem_torch import softmax_risk_mc_torch
    ov = dict(mu=0.8, nu=0.5, zeta=0.2, eta=0.1, rho=0.3)
    link = lambda t: t
    n_ev, n_direct = 2000, 40
    t = interleaved({
        "extreme_value": lambda: softmax_risk_mc(link, 0.04, 1.0, 0.6, 200, ov, n_ev, 0, top_k=300),
        "extreme_value_torch": lambda: softmax_risk_mc_torch(link, 0.04, 1.0, 0.6, 200, ov, n_ev, 0,
                                                             top_k=300, device="cpu"),
        "extreme_value_torch_quadrature": lambda: softmax_risk_mc_torch(
            link, 0.04, 1.0, 0.6, 200, ov, n_ev, 0, top_k=300, device="cpu", quadrature_error=True),
        "direct_d_dim": lambda: direct_softmax_risk(link, 0.04, 1.0, 0.6, 200, ov, n_direct, 0)},
        n=1, repeats=repeats)
    per = {"extreme_value": t["extreme_value"] / n_ev,
           "extreme_value_torch": t["extreme_value_torch"] / n_ev,
           "direct_d_dim": t["direct_d_dim"] / n_direct}
    return {"seconds_per_sample": per,
            "direct_over_extreme_value": per["direct_d_dim"] / per["extreme_value"],
            "direct_over_extreme_value_torch": per["direct_d_dim"] / per["extreme_value_torch"],
            # the bulk rule's error (its doubled rule on the same draws) against the value alone
            "quadrature_error_cost_ratio_torch": t["extreme_value_torch_quadrature"]
            / t["extreme_value_torch"]}


def bench_codegen(repeats):
    der = derive(MODEL)
    outputs = [der.risk, *der.flow.rhs]
    args = der.args
    rng = np.random.default_rng(0)
    n = 10_000
    q = rng.uniform(-0.3, 0.3, (n, 5))
    pv = [20.0, 3.0, 0.7, 0.8, 0.3]
    from numerics import generate
    gen = generate(args, outputs)
    from scipy.special import owens_t
    plain = sp.lambdify(args, outputs, modules=[{"OwensT": owens_t}, "scipy", "numpy"], cse=False)
    cols = list(q.T)
    gen(*pv, *cols), plain(*pv, *cols)
    t = interleaved({"generated": lambda: gen(*pv, *cols),
                     "lambdify_no_cse": lambda: plain(*pv, *cols)}, n=3, repeats=repeats)
    # evalf: per point on a subset, scaled to the same 10^4 points
    m = 10
    start = time.perf_counter()
    for i in range(m):
        subs = dict(zip(args, pv + list(q[i])))
        [sp.N(o.subs(subs), 15) for o in outputs]
    t["evalf_extrapolated"] = (time.perf_counter() - start) / m * n
    check = np.max(np.abs(np.array(gen(*pv, *cols)) - np.array(plain(*pv, *cols))))
    return {"seconds_for_1e4_points": t, "points": n, "evalf_points_timed": m,
            "generated_vs_lambdify": t["lambdify_no_cse"] / t["generated"],
            "generated_vs_evalf": t["evalf_extrapolated"] / t["generated"],
            "max_abs_difference_generated_vs_lambdify": float(check)}


def bench_heads_ode():
    """Reduced ODE of the multi-head model, H = 4, F = 3, L = 4, to τ = 100 from a small
    initialisation; one integration per backend (each takes seconds), alternated twice."""
    from numerics.multihead import HeadState, ReducedFlow
    from theory.models.sagitova2026 import GaussianPrior
    from theory.multihead import MultiHeadModel
    md = MultiHeadModel(4, 4, 3, "softmax")
    prior = GaussianPrior([0.0, 0.0, 0.0], np.diag([4.0, 2.5, 1.5]))
    st = HeadState.make(np.random.default_rng(0).standard_normal((4, 3)) * 1e-3, 1e-2 * np.eye(4))
    out = {}
    for _repeat in range(2):
        for backend in ("numpy", "torch"):
            fl = ReducedFlow(md, prior, n=2**14, seed=1, backend=backend)
            fl.derivative(st)                                   # code generation, not timed
            t0 = time.perf_counter()
            tr = fl.integrate(st, np.linspace(0, 100, 101), rtol=1e-5, atol=1e-8)
            dt = time.perf_counter() - t0
            prev = out.get(backend)
            if prev is None or dt < prev["seconds"]:
                out[backend] = {"seconds": dt, "rhs_evaluations": int(tr.nfev),
                                "final_loss": float(fl.loss(HeadState.unpack(tr.final, 4, 3))[0])}
    out["numpy_over_torch"] = out["numpy"]["seconds"] / out["torch"]["seconds"]
    return out


def bench_heads_gram(repeats):
    """Multi-head SGD (H = 2, F = 2, L = 4, softmax, batch 8): Gram simulator at D = 10^3 vs 10^9
    (64 seeds) and against the direct simulator at D = 4000 (64 seeds)."""
    from numerics.sgd import MultiHeadGramSGD, MultiHeadSGD
    from theory.models.sagitova2026 import GaussianPrior
    from theory.multihead import MultiHeadModel
    md = MultiHeadModel(2, 4, 2, "softmax")
    prior = GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5]))

    def make(simulator, D):
        return simulator(md, {"D": D, "prior": prior}, SimulationConfig(
            lr=2.0 / D, steps=1, batch=8, seeds=64, init=0.1, device="cpu"))
    out = {}
    with torch.no_grad():
        g3, g9 = make(MultiHeadGramSGD, 10**3), make(MultiHeadGramSGD, 10**9)
        g3.step(), g9.step()
        t = interleaved({"gram_D1e3": g3.step, "gram_D1e9": g9.step}, n=50, repeats=repeats)
        out["d_independence"] = {"seconds_per_step": t,
                                 "cost_D1e9_over_D1e3": t["gram_D1e9"] / t["gram_D1e3"]}
        g, direct = make(MultiHeadGramSGD, 4000), make(MultiHeadSGD, 4000)
        g.step(), direct.step()
        t = interleaved({"gram": g.step, "direct": direct.step}, n=5, repeats=repeats)
        out["D4000_seeds64"] = {"seconds_per_step": t, "direct_over_gram": t["direct"] / t["gram"]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results.json")))
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    torch.set_num_threads(os.cpu_count() or 1)
    results = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                           "torch": torch.__version__, "threads": torch.get_num_threads()},
               "sgd_float64": bench_sgd(args.repeats, "float64"),
               "sgd_float32": bench_sgd(args.repeats, "float32"),
               "codegen": bench_codegen(args.repeats),
               "gram": bench_gram(args.repeats),
               "rem_risk": bench_rem(args.repeats),
               "heads_ode": bench_heads_ode(),
               "heads_gram": bench_heads_gram(args.repeats)}
    from numerics.codegen.cache import atomic_write_text
    atomic_write_text(Path(args.out), json.dumps(results, indent=2) + "\n")
    for k in ("sgd_float64", "sgd_float32"):
        r = results[k]
        print(f"{k}: batched vs loop over seeds {r['batched_vs_loop']:.1f}x; "
              f"step / sampling floor {r['step_over_floor']:.2f}")
    c = results["codegen"]
    print(f"codegen: generated vs lambdify(no CSE) {c['generated_vs_lambdify']:.1f}x; "
          f"vs evalf {c['generated_vs_evalf']:.0f}x")
    g = results["gram"]
    print(f"gram SGD: cost at d=1e9 / d=1e3 = {g['d_independence']['cost_d1e9_over_d1e3']:.2f}; "
          f"direct / gram at d=4000: {g['d4000_seeds32']['direct_over_gram']:.1f}x (32 seeds), "
          f"{g['d4000_seeds1024']['direct_over_gram']:.0f}x (1024 seeds)")
    print(f"Dohmatob risk MC at d=200, e^(αd) tokens: direct / extreme-value per sample "
          f"{results['rem_risk']['direct_over_extreme_value']:.0f}x (numpy), "
          f"{results['rem_risk']['direct_over_extreme_value_torch']:.0f}x (torch, CPU)")
    h = results["heads_ode"]
    print(f"Sagitova ODE H=4, F=3, L=4 to τ=100: numpy {h['numpy']['seconds']:.1f}s, torch "
          f"{h['torch']['seconds']:.1f}s ({h['torch']['rhs_evaluations']} rhs evaluations; "
          f"numpy/torch {h['numpy_over_torch']:.1f}x)")
    hg = results["heads_gram"]
    print(f"multi-head Gram SGD: cost at D=1e9 / D=1e3 = {hg['d_independence']['cost_D1e9_over_D1e3']:.2f}; "
          f"direct / gram at D=4000: {hg['D4000_seeds64']['direct_over_gram']:.0f}x (64 seeds)")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
