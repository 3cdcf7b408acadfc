"""The engine's own claim on Marion et al.'s model: online SGD at finite d follows the reduced
overlap ODE, with a deviation that vanishes as d grows."""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from numerics.sgd import SGDResult
from theory import GaussianToken, SingleLocation
from theory.models.marion2025 import MODEL, gamma as _gamma
from ... import checks as checks_lib
from ...checks import combine, legs_summary, limit
from ...declare import claim, missed
from ...simulations.marion2025.sgd import flow_without_noise_tokens, ode_run, sgd_run, time_scaled_flow
from ...stats import finite
from ._common import PAPER, sub_domain

SGD_PARAMS = dict(L=3, lam=0.7, gamma=0.8, eps=0.3)
SGD_INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)
SGD_T = 2.0
OP_SYMBOLS = {"kappa": "κ", "nu": "ν", "theta": "θ", "eta": "η", "rho": "ρ"}


def _signal_std_wrong():
    """The model with its signal token's std 1.2·γ (a factor changed), for the ODE only."""
    data = MODEL.data
    return MODEL.perturbed(
        data=SingleLocation(data.L, GaussianToken(data.signal.mean, sp.Rational(6, 5) * _gamma),
                            data.noise), name="marion-ode-gamma-wrong")


def _simulate_sgd(ctx, model, flow, setting, dims, seeds):
    """SGD at each d and the ODE (``flow``: a model, or a function of the parameters returning
    a flow) on the same grid, at the setting (L, λ, γ, ε): rows, (result, ODE, risk on the ODE)
    at each d, deviations and their standard errors (recorded times after t = 0)."""
    items = []
    for dv in dims:
        lr = 0.5 / dv
        steps = int(round(SGD_T / lr))
        items.append({"model": model, "params": {"d": dv, **setting}, "lr": lr, "steps": steps,
                      "seeds": seeds, "batch": math.ceil(dv / 8), "record_every": steps // 8,
                      "n_test": ctx.pick(500, 2000), "init": SGD_INIT,
                      "seed": ctx.claim_seed(f"sgd:{dv}"), "dtype": "float32"})
    results = [SGDResult(r["t"], r["state"], r["loss"], tuple(r["names"]), r["steps_per_second"])
               for r in ctx.map(sgd_run, items)]
    odes = ctx.map(ode_run, [{"flow": flow, "params": item["params"], "init": SGD_INIT, "t": res.t}
                             for item, res in zip(items, results)])
    rows, trajectories, devs, ses = [], {}, [], []
    for dv, item, res, ode in zip(dims, items, results, odes):
        mean, se = res.mean(), res.stderr()
        finite(mean, se, ode["y"])
        dev = mean - ode["y"]
        devs.append(dev[1:].ravel())
        ses.append(se[1:].ravel())
        k = np.unravel_index(np.argmax(np.abs(dev)), dev.shape)
        rows.append({"d": dv, "lr": item["lr"], "batch": item["batch"], "steps": item["steps"],
                     "max_deviation": float(abs(dev[k])), "stderr_there": float(se[k]),
                     "at_time": float(res.t[k[0]]), "order_parameter": res.names[k[1]],
                     "steps_per_second": res.steps_per_second})
        trajectories[dv] = (res, ode["y"], ode["risk"])
    return rows, trajectories, np.array(devs), np.array(ses)


def _judge(ctx, x, devs, ses, ode_last, res_last, dof):
    """One d → ∞ family per order parameter (its deviations at every recorded time): the
    intercepts at x = 0 (time-major, as ``devs``' columns), the checks, the family names."""
    names, K = res_last.names, len(res_last.names)
    a, a_se = np.empty(devs.shape[1]), np.empty(devs.shape[1])
    checks, families = [], []
    for k, op in enumerate(names):
        family = f"SGD − ODE deviation of {OP_SYMBOLS.get(op, op)} at x → 0"
        # SGD noise, time discretisation and fluctuation bias are all O(x) = O(1/d); the next
        # order is kept explicitly (quadratic extrapolation) rather than absorbed in a tolerance
        check = limit(ctx, x, devs[:, k::K], ses[:, k::K], 0.0, terms=("x", "x^2"),
                      name=family, scale=np.abs(ode_last[1:, k]), dof=dof,
                      labels=[f"t={t:.3g}" for t in res_last.t[1:]])
        a[k::K], a_se[k::K] = check.details["limit"], check.details["limit_stderr"]
        checks.append(check)
        families.append(family)
    return a, a_se, checks, families


def _worst_intercept(a, a_se, res_last):
    score = np.abs(a) / a_se
    w = int(np.argmax(score))
    t_idx, k_idx = divmod(w, len(res_last.names))
    return {"time": float(res_last.t[t_idx + 1]), "order_parameter": res_last.names[k_idx],
            "intercept": float(a[w]), "stderr": float(a_se[w]), "z": float(score[w])}


def draw_tracks(fig, res, ode, dv, ode_risk):
    ax = fig.add_subplot(1, 2, 1)
    mean, se = res.mean(), res.stderr()
    for k, name in enumerate(res.names):
        line, = ax.plot(res.t, ode[:, k], "-", lw=1.5)
        ax.errorbar(res.t, mean[:, k], yerr=2 * se[:, k], fmt="o", ms=3,
                    color=line.get_color(), label=name)
    ax.set_xlabel("t = step · lr")
    ax.set_ylabel("overlap")
    ax.set_title(f"ODE (lines) vs SGD (dots), d={dv}", fontsize=9)
    ax.legend(fontsize=7)
    ax2 = fig.add_subplot(1, 2, 2)
    if res.loss is not None:
        ax2.errorbar(res.t, res.loss.mean(1),
                     yerr=2 * res.loss.std(1) / np.sqrt(res.loss.shape[1]),
                     fmt="o", ms=3, label="SGD test risk")
    ax2.plot(res.t, ode_risk, "-", label="risk on ODE")
    ax2.set_xlabel("t")
    ax2.set_title("risk along the trajectory", fontsize=9)
    ax2.legend(fontsize=7)


def draw_deviation(fig, dims, x, devs, ses, a, a_se):
    ax = fig.add_subplot()
    D = np.abs(devs).max(1)
    ax.plot(x, D, "o-", label="max |mean SGD − ODE| over t and overlaps")
    for xi, Di, dv in zip(x, D, dims):
        ax.annotate(f"d={dv}", (xi, Di), fontsize=7)
    ax.errorbar(np.zeros_like(a) - 0.002 * max(x), np.abs(a), yerr=2 * a_se, fmt=".",
                alpha=0.4, label="|intercept at x = 0| ± 2 se (each t, overlap)")
    ax.set_xlabel("x = lr·d/batch (SGD-noise strength)")
    ax.set_ylabel("deviation")
    ax.legend(fontsize=8)


@claim(f"{PAPER}:sgd-tracks-flow", "(engine)",
       "Online SGD on fresh samples at finite d follows the reduced overlap ODE; the deviation "
       "shrinks as d grows.",
       reading="A setting is (L, λ, γ, ε); d is swept inside it (the claim is about d growing). "
               "Step lr = 0.5/d and batch ⌈d/8⌉, so that the SGD-noise drift, of order "
               "x = lr·d/batch = 4/d, vanishes as d grows; start (κ, ν, θ, η, ρ) = (0.3, 0.2, "
               "0.1, 0.05, 0.1), horizon t = 2. At every recorded time and order "
               "parameter the seed-mean deviation from the ODE is extrapolated in x (quadratic: "
               "the finite-size terms to second order) to x = 0; the claim predicts a zero "
               "intercept everywhere. One family per order parameter (κ, ν, θ, η, ρ: its "
               "intercepts at every recorded time, Bonferroni z over them), each resolved "
               "relative to that order parameter's ODE value; the claim's verdict is composed "
               "from the five legs. The statement names no alternative flow the legs must tell "
               "apart, so no leg has a required resolution.",
       mutations={"dropped term: the label's terms of the ODE (y = εξ)":
                  lambda: {"flow_model": MODEL.perturbed(label=sp.S.Zero,
                                                         name="marion-no-label")},
                  "wrong factor: the ODE's time scale ×1.25 (right-hand side ×1.25)":
                  lambda: {"ode": functools.partial(time_scaled_flow, factor=1.25)},
                  "wrong factor: the ODE's time scale ×1.1 (right-hand side ×1.1)":
                  lambda: {"ode": functools.partial(time_scaled_flow, factor=1.1)},
                  "wrong factor: the ODE's signal-token std ×1.2":
                  lambda: {"flow_model": _signal_std_wrong()},
                  "dropped term: the noise tokens' terms of the ODE (the flow at L = 1)":
                  missed(lambda: {"ode": flow_without_noise_tokens},
                         "at this setting the noise tokens' terms move η and ρ by about a "
                         "quarter of their size by the horizon and κ, ν, θ by less, below what "
                         "the η and ρ legs resolve at the quick profile")},
       domain=sub_domain("L", "lam", "gamma", "eps"), points=[SGD_PARAMS])
def sgd_tracks_flow(ctx, L, lam, gamma, eps, model=MODEL, flow_model=None, ode=None):
    """Batched direct SGD (float32) at several d against the derived ODE (Radau with the
    symbolic Jacobian), at one setting (L, λ, γ, ε); ``flow_model`` (a model) or ``ode`` (a
    module-level function of the parameters returning a reduced flow, or a functools.partial
    of one) lets a test integrate a deliberately wrong ODE."""
    setting = dict(L=L, lam=lam, gamma=gamma, eps=eps)
    dims = ctx.pick([50, 100, 200, 400], [100, 200, 400, 800])
    seeds = ctx.pick(32, 64)
    flow = ode if ode is not None else (flow_model or model)
    rows, trajectories, devs, ses = _simulate_sgd(ctx, model, flow, setting, dims, seeds)
    x = np.array([r["lr"] * r["d"] / r["batch"] for r in rows])
    res_last, ode_last, risk_last = trajectories[dims[-1]]
    a, a_se, checks, families = _judge(ctx, x, devs, ses, ode_last, res_last,
                                       dof=seeds - 1)    # standard errors over the seeds
    worst = _worst_intercept(a, a_se, res_last)
    z = max(c.z for c in checks)
    D = np.array([r["max_deviation"] for r in rows])
    evidence = {"params": setting, "init": SGD_INIT, "T": SGD_T, "seeds": seeds, "rows": rows,
                "noise_parameter_x": x, "intercepts_at_x0": a, "intercept_stderr": a_se,
                "worst_intercept": worst, "z": z,
                "checks": {f: {k: v for k, v in c.evidence().items()
                               if k not in ("limit", "limit_stderr")}
                           for f, c in zip(families, checks)}}
    arrays = {f"sgd_q_d{dims[-1]}": res_last.stacked(), f"ode_q_d{dims[-1]}": ode_last,
              "t": res_last.t, "dims": np.array(dims), "max_deviation": D}
    figs = {"ode_vs_sgd": functools.partial(draw_tracks, res=res_last, ode=ode_last,
                                            dv=dims[-1], ode_risk=risk_last),
            "deviation_vs_d": functools.partial(draw_deviation, dims=dims, x=x, devs=devs,
                                                ses=ses, a=a, a_se=a_se)}
    tracked = {"max_deviation_largest_d": (float(D[-1]), 0.05)}
    leg_names = [f"{OP_SYMBOLS.get(n, n)} leg" for n in res_last.names]
    legs = legs_summary(checks, leg_names)
    summary = (f"max |mean SGD − ODE| = {', '.join(f'{v:.3f}' for v in D)} at d = {dims}; "
               f"largest extrapolated d → ∞ deviation {worst['intercept']:+.3g} ± "
               f"{worst['stderr']:.2g} ({worst['order_parameter']}, t={worst['time']:.2g}; "
               f"{worst['z']:.1f} se vs z = {z:.2f}); {legs}")
    tracking = combine(checks)
    needs = "; ".join(c.needs for c in checks if c.decision == "inconclusive" and c.needs)
    says = {"confirmed": summary, "refuted": f"deviation does not vanish: {summary}",
            "inconclusive": f"{needs}: {summary}" if tracking == "inconclusive"
            else f"no decrease over the d range: {summary}"}
    return checks_lib.conclude({**dict(zip(leg_names, checks)),
                                "decrease over the d range": _decrease_leg(ctx, D)},
                               says=says, evidence=evidence, tracked=tracked, arrays=arrays,
                               figures=figs)


def _decrease_leg(ctx, D):
    """The largest |mean SGD − ODE| at the largest d is below that at the smallest (the
    deviation shrinks as d grows): confirmed, else undecided (a larger d range would decide),
    never refuted by itself (the legs at x → 0 are what refutes). Judged as the exact strict
    bound D[-1] − D[0] < 0; the bound is 0 so that calibration's perturbations, which move
    claimed values, leave this guard alone."""
    return checks_lib.bound(ctx, [D[-1] - D[0]], upper=0.0, strict=True, refutes=False,
                            needs="a larger d range would decide",
                            name="max |SGD − ODE|: largest d below smallest d",
                            labels=["D(d_max) − D(d_min)"])
