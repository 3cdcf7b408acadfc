"""Sec. III of Sagitova, Duranthon, Zdeborová (2026), sequential specialization along the
eigenvectors of Cov θ (Result III.1), decided by the sequential policy over batches of initial
draws."""

from __future__ import annotations

import functools
import math

import numpy as np

from ... import checks
from ...declare import claim
from ...domain import Integers, Interval
from ...simulations.sagitova2026.common import SIGMA0
from ...simulations.sagitova2026.sec3_specialization import (iii1_kappa_ode, iii1_sgd,
                                                             iii1_specialization)
from ._common import MIN_FIT_ROWS, PAPER, mean_row_slope


III1_POINT = {"H": 4, "nu1": 6.0, "nu2": 3.0}
"""Result III.1's setting as first checked (its quick and full point)."""


def _draw_staircase(t_ode, m_ode, t_sgd, sgd_alignment, D_sgd, fig):
    ax = fig.add_subplot(1, 1, 1)
    for f, c in zip(range(m_ode.shape[2]), ("C0", "C1"), strict=False):
        ax.plot(t_ode, np.abs(m_ode[:, :, f]).max(1), color=c, lw=2, label=f"ODE max_h |m_h{f + 1}|")
        for s in range(sgd_alignment.shape[1]):
            ax.plot(t_sgd, sgd_alignment[:, s, f], color=c, lw=0.6, alpha=0.5)
    ax.set(xlabel="τ", ylabel="head–feature alignment",
           title=f"Result III.1: specialization staircase, D = {D_sgd} (thin: SGD seeds)")
    ax.legend()


III1_BATCH = 4
"""Result III.1: initial draws per batch of the sequential check (one ``ctx.map`` call)."""
III1_MIN_DRAWS = 8
"""Draws before the sequential check may decide: its confidence sequence uses the plug-in σ
of the per-draw slopes, which a handful of draws does not pin down."""
III1_BUDGET = {"quick": 32, "full": 64}
"""The sequential check's budget of initial draws."""


@claim(f"{PAPER}:result-iii1-sequential", "Result III.1",
       "Heads specialize sequentially: along the eigenvectors of Cov θ, largest eigenvalue "
       "first. With N(0, diag(ν_1, ν_2)), ν_1 > ν_2, the f = 1 alignment grows first and f = 2 "
       "follows after a delay of order log D.",
       reading="at each setting (H, ν₁, ν₂): softmax, F = 2, L = 4, θ ~ N(0, diag(ν₁, ν₂)); "
               "keys ~ N(0, σ₀²I/D), "
               "σ₀ = 0.02; τ_f = first τ with max_h |m_hf| ≥ 0.5. D swept inside the setting "
               "(the statement's log D delay). ODE at D = 10², 10³, 10⁴ "
               "(quick; 10²…10⁸ full), integrated until both features are specialized or "
               "τ = 800 (2000 full), from independent initial draws: τ₁ < τ₂ in every run (a "
               "run whose f = 2 is not specialized by the horizon is censored: it refutes only "
               "where f = 1 was not first, else leaves the claim inconclusive, naming a longer "
               "horizon), and "
               "the delay τ₂ − τ₁ grows linearly in ln D, judged by the sequential policy as a "
               "direction (each draw's least-squares slope of τ₂ − τ₁ in ln D is one sample; "
               "claimed: their mean > 0): batches of 4 draws are added until the anytime-valid "
               "confidence sequence for the mean slope lies above 0 (confirmed) or below it "
               "(refuted), at least 8 draws before any decision (the sequence's plug-in σ needs "
               "them), within a budget of 32 draws (quick; 64 full), after which it says "
               "inconclusive and how far it was. Cost (quick, measured): about 2 s of one core "
               "per draw (the three D's of a draw integrated together), about 40 s for the "
               "claim when it decides at 8 draws and 1.5 minutes at the budget; the per-draw "
               "slopes vary by about 25 % (mean ≈ 7.6, sd ≈ 2 over 32 draws), so the check "
               "usually decides at 8 draws. Online SGD "
               "(Gram-matrix simulator, exact in law; D = 100, 400 quick, to 6400 full; 8 seeds "
               "quick, 32 full; κ = 1, N_b = 16): f = 1 first on average at every D, the mean "
               "paired gap τ₂ − τ₁ over seeds against 0 (Student t with seeds − 1 dof, "
               "Bonferroni over D; a seed not specialized by the horizon enters at it, so its "
               "gap is a bound that decides only the way it supports), a required leg at full "
               "and a guard at quick (a leg only when it refutes: 8 seeds resolve only a "
               "reversal larger than the reference's gap); its "
               "delay's slope in ln D reported; the staircase figure overlays SGD at the "
               "smallest D with the ODE carrying the same κ-noise term. Horizons (ODE τ ≤ 800, "
               "SGD τ ≤ 400 quick) stretched by (ν₂⁰/H⁰)/(ν₂/H) where the second direction's "
               "saddle rate, ∝ ν₂/H (Lemma III.1's block), is below the profiles' (ν₂⁰/H⁰ = "
               "3/4). Domain: ν₁ ≥ 1.5·ν₂, a gap between the eigenvalues that the finite D "
               "range resolves (the delay ∝ ln D·(1/ν₂ − 1/ν₁) against O(1) terms from the "
               "initial draw). Profiles: H = 4, (ν₁, ν₂) = (6, 3).",
       domain={"H": Integers(2, 6), "nu1": Interval(2.0, 12.0, log=True),
               "nu2": Interval(1.0, 8.0, log=True)},
       where={"ν₁ ≥ 1.5·ν₂": lambda nu1, nu2: nu1 >= 1.5 * nu2},
       reference=III1_POINT, points=[III1_POINT],
       mutations={"variances swapped": lambda: {"nu": (3.0, 6.0)},
                  "equal variances (no preferred eigenvector)": lambda: {"nu": (4.5, 4.5)}})
def result_iii1(ctx, H, nu1, nu2, nu=None, dims=None, batch=None, budget=None, sgd_dims=None):
    """``nu``: (ν₁, ν₂) judged instead of the setting's (mutations); ``dims``, ``batch``,
    ``budget``, ``sgd_dims``: fewer runs (tests)."""
    nu = tuple(nu) if nu is not None else (nu1, nu2)
    dims = dims or ctx.pick([1e2, 1e3, 1e4], [1e2, 1e4, 1e6, 1e8])
    batch = batch or III1_BATCH
    budget = budget or ctx.pick(III1_BUDGET["quick"], III1_BUDGET["full"])
    stretch = _iii1_stretch(H, nu)
    t_max = ctx.pick(800.0, 2000.0) * stretch
    model = {"nu": [float(v) for v in nu], "H": int(H), "ode_seed": ctx.claim_seed("iii1:ode")}

    def ode_runs(first, count):
        """(τ₁, τ₂) per D of the initial draws first … first + count − 1 (stored simulations)."""
        out = ctx.map(iii1_specialization, [
            {**model, "draw": i, "init_seed": ctx.claim_seed(f"iii1:init:{i}"),
             "dims": [float(D) for D in dims], "t_max": t_max}
            for i in range(first, first + count)])
        if first == 0:
            curves.update(out[0][1])
        return np.array([t for t, _ in out], float)
    curves = {}
    first = ode_runs(0, batch)              # the first batch: the order checks and the figure
    why = _order_problem(first, t_max) or _censoring(first, t_max)
    if why:                                 # decided (refuted) or undecidable by the ODE alone
        return checks.conclude(
            _order_legs(ctx, first, t_max), says=why, arrays={"ode_times": first},
            evidence={"dims": dims, "nu": list(nu), "H": H,
                      "order_ok": _order_problem(first, t_max) is None,
                      "censored": _censoring(first, t_max) is not None,
                      "tau_1_tau_2": first.tolist(), "draws_used": len(first), "t_max": t_max})
    # SGD (Gram simulator, exact in law) at several D; the staircase figure shows the smallest
    kappa, B, sgd_seeds = 1.0, 16, ctx.pick(8, 32)
    sgd_t_end = ctx.pick(400.0, 1000.0) * stretch
    sgd_dims = sgd_dims or ctx.pick([100, 400], [100, 400, 1600, 6400])
    runs = ctx.map(iii1_sgd, [{"nu": model["nu"], "H": int(H), "D": D, "kappa": kappa, "batch": B,
                               "seeds": sgd_seeds, "t_end": sgd_t_end,
                               "seed": ctx.claim_seed(f"iii1:sgd:{D}")} for D in sgd_dims])
    sgd_times = np.full((sgd_seeds, len(sgd_dims), 2), np.nan)
    for j, run in enumerate(runs):
        sgd_times[:, j] = run["times"]
    sgd_last = [float(run["t"][-1]) for run in runs]     # a seed not specialized: beyond this
    res, D_sgd = runs[0], sgd_dims[0]
    sgdA = np.abs(res["m"]).max(2)
    # the staircase figure's κ-ODE up to 1.3× the last SGD specialization it is drawn with: past
    # specialization this flow turns stiff for RK45 (to τ = 282 it took 400 s, to 120 8 s)
    tau2 = sgd_times[:, 0, 1]
    horizon = (np.nanmax(tau2) if np.isfinite(tau2).any()
               else first[0, 0, 1] if np.isfinite(first[0, 0, 1]) else 150.0)
    ode_noise, = ctx.map(iii1_kappa_ode, [{**model, "D": D_sgd, "kappa": kappa,
                                           "init_seed": ctx.claim_seed("iii1:init:0"),
                                           "t_end": min(1.3 * float(horizon), t_max)}])
    ok = np.all(np.isfinite(sgd_times), axis=(1, 2))
    sgd_delay = sgd_times[ok, :, 1] - sgd_times[ok, :, 0]
    sgd_fit = (mean_row_slope(np.log(sgd_dims), sgd_delay) if int(ok.sum()) >= MIN_FIT_ROWS
               else (np.nan, np.nan, []))
    evidence = {"dims": dims, "nu": list(nu), "H": H, "horizon_stretch": stretch,
                "sgd_dims": list(sgd_dims), "sgd_kappa": kappa, "sgd_batch": B,
                "sgd_tau_1_tau_2": sgd_times.tolist(), "sgd_seeds_specialized": int(ok.sum()),
                "sgd_delay_slope": sgd_fit[0], "sgd_delay_slope_se": sgd_fit[1],
                "threshold": 0.5, "sigma0": SIGMA0}
    figs = {"staircase": functools.partial(_draw_staircase, ode_noise["t"], ode_noise["m"], res["t"],
                                           sgdA, D_sgd)}
    arrays = {"sgd_times": sgd_times, **{f"ode_m_D{int(D)}": c for D, c in curves.items()},
              "sgd_tau": res["t"], "sgd_m": res["m"]}
    return judge_sequential(ctx, lambda start, count: first if start == 0 else ode_runs(start, count),
                            sgd_times, sgd_fit, dims, sgd_dims, t_max, evidence, arrays, figs,
                            sgd_t_end=sgd_last, batch=batch, budget=budget)


def _iii1_stretch(H, nu):
    """How much Result III.1's τ horizons are stretched: the profiles' rate of the second
    direction over this one's, (3/4)/(ν₂/H) (the head-difference rate ∝ ν_f/H, Lemma III.1),
    at least 1."""
    return max(1.0, (III1_POINT["nu2"] / III1_POINT["H"]) / (min(nu) / H))


class _Unfinished(Exception):
    """A draw of a later batch in which a feature had not specialized within the horizon."""


def delay_slopes(times, dims) -> np.ndarray:
    """Each draw's least-squares slope of τ₂ − τ₁ in ln D (``times``: draw × D × F)."""
    x = np.log(np.asarray(dims, float))
    delay = np.asarray(times, float)[..., 1] - np.asarray(times, float)[..., 0]
    return np.array([np.polyfit(x, d, 1)[0] for d in delay])


def _order_counts(times):
    """(runs (draw, D) the horizon censors: f = 2 not specialized within it, so that whether
    and when it follows f = 1 is unknown; runs in which f = 2 specialized first, with f = 1, or
    while f = 1 never did) of the ODE runs ``times`` (draw × D × F; not finite: not within
    the horizon)."""
    times = np.asarray(times, float)
    t1, t2 = times[..., 0], times[..., 1]
    late = ~np.isfinite(t2)
    return int(np.sum(late)), int(np.sum(~late & ~(t1 < t2)))


def _order_problem(times, t_max):
    """None, or why the ODE runs (draw × D × F) refute the claim's order (the leg "f = 1 first"
    of ``_order_legs`` refutes exactly then)."""
    if _order_counts(times)[1]:
        return ("f = 2 specialized before f = 1 (or with it, or while f = 1 never did) in some "
                f"run (τ₁, τ₂ = {np.asarray(times).tolist()}; not finite: not within τ = {t_max:.0f})")
    return None


def _censoring(times, t_max):
    """None, or what the ODE runs (draw × D × F) leave undecided: runs in which f = 2 had not
    specialized by the horizon (a finite horizon censors; it refutes nothing)."""
    late = _order_counts(times)[0]
    if not late:
        return None
    times = np.asarray(times, float)
    t1 = times[..., 0]
    lost = int(np.sum(~np.isfinite(times[..., 1]) & ~np.isfinite(t1)))
    return (f"in {late} of {t1.size} ODE runs (draw, D) f = 2 had not specialized by the horizon "
            f"τ = {t_max:.0f} ({lost} of them without f = 1 either): a longer horizon would "
            "decide")


def _order_legs(ctx, times, t_max):
    """The ODE's order, exactly (counts of runs, bound 0): f = 1 strictly first in every (draw,
    D), refuting; every feature specialized within the horizon, a goal whose failure leaves
    the claim undecided (censoring, see ``_order_counts``)."""
    late, wrong = _order_counts(times)
    return {"every feature specialized (ODE)": checks.bound(
                ctx, [late], upper=0, refutes=False, needs=_censoring(times, t_max) or "",
                name="ODE runs in which f = 2 had not specialized within the horizon"),
            "f = 1 first (ODE)": checks.bound(
                ctx, [wrong], upper=0, name="ODE runs in which f = 1 was not first")}


def _per_d(t_end, sgd_dims_count):
    """The SGD horizon per D (one number for every D, or one per D)."""
    return np.broadcast_to(np.asarray(t_end, float), (sgd_dims_count,))


def _sgd_gaps(sgd_times, t_end):
    """Per D, SGD's paired gap τ₂ − τ₁ over seeds (seed × D × F; not finite: not by
    ``t_end``, one τ or the last recorded τ per D), as (mean, standard error, may refute, may
    confirm). A seed not specialized enters at the horizon, so its gap is a bound: at least
    (τ₂ or t_end) − τ₁ where only f = 2's time is censored (the mean may confirm f = 1 first
    but not refute it), at most τ₂ − (τ₁ or t_end) where only f = 1's is (the reverse); a D
    with both kinds supports neither."""
    t = np.asarray(sgd_times, float)
    h = _per_d(t_end, t.shape[1])[None, :]
    late1, late2 = ~np.isfinite(t[..., 0]), ~np.isfinite(t[..., 1])
    gap = np.where(late2, h, t[..., 1]) - np.where(late1, h, t[..., 0])
    se = gap.std(0, ddof=1) / np.sqrt(gap.shape[0])
    return gap.mean(0), se, ~late2.any(0), ~late1.any(0)


def _sgd_censoring(sgd_times, sgd_dims, t_end):
    """None, or at which D the SGD horizon bounds the gaps (what would decide there)."""
    _, _, refutes, confirms = _sgd_gaps(sgd_times, t_end)
    bounded = [D for D, r, c in zip(sgd_dims, refutes, confirms, strict=True) if not (r and c)]
    if not bounded:
        return None
    late = np.sum(~np.isfinite(np.asarray(sgd_times, float)), axis=0).tolist()
    horizon = np.round(_per_d(t_end, len(sgd_dims)), 0).tolist()
    return (f"SGD at D = {bounded}: seeds had not specialized by τ = {horizon} per D (per D, "
            f"seeds without (f = 1, f = 2): {late}), so their gaps τ₂ − τ₁ are bounds: a longer "
            "SGD horizon would decide")


SGD_REQUIRED = {"quick": False, "full": True}
"""Whether SGD's order is a required leg at the profile, else a guard (a leg only when it
refutes). Measured at the reference, the paired gap's t over seeds is about 4 and 6 at
D = 100, 400 with the quick profile's 8 seeds, against a critical t₇ of 8.8 at the claim's α
over 2 D: there it can refute only a reversal larger than the effect itself. With the full
profile's 32 seeds it is about 9 and 10 against 4.7, so there it is asked to resolve the
order."""


def _sgd_order_leg(ctx, sgd_times, sgd_dims, t_end):
    """SGD's order as a family over D: the mean paired gap τ₂ − τ₁ over seeds > 0 at every D
    (Student t, seeds − 1 dof, Bonferroni over D), a censored gap deciding only the way its
    bound supports (``_sgd_gaps``)."""
    mean, se, refutes, confirms = _sgd_gaps(sgd_times, t_end)
    return {"f = 1 first on average (SGD)": checks.bound(
        ctx, mean, lower=0.0, stderr=se, dof=np.asarray(sgd_times).shape[0] - 1,
        refutes=refutes, confirms=confirms, name="SGD mean gap τ₂ − τ₁ per D",
        labels=[f"D={D}" for D in sgd_dims])}


def _sgd_refutation(check, sgd_dims):
    """Why the SGD leg refutes: the D's whose mean gap lies below 0 beyond z·se."""
    col = check.columns
    where = [f"D = {D}: {col['value'][j]:.1f} ± {col['se'][j]:.1f}"
             for j, D in enumerate(sgd_dims) if check.score[j] > check.z]
    return (f"in SGD f = 1 is not first on average: mean gap τ₂ − τ₁ over seeds {'; '.join(where)} "
            f"(below 0 beyond {check.z:.2f} se)")


def judge_sequential(ctx, runs, sgd_times, sgd_fit, dims, sgd_dims, t_max, evidence, arrays, figs,
                     *, sgd_t_end, batch=III1_BATCH, budget=III1_BUDGET["quick"],
                     min_draws=III1_MIN_DRAWS):
    """Result III.1's verdict, see the claim's reading. ``runs(first, count)``: the ODE's (τ₁,
    τ₂) per D of the initial draws first … first + count − 1 (draw × D × F; not finite: not
    within ``t_max``); batches of ``batch`` draws are taken from it by the sequential check (at
    least ``min_draws`` before it decides, at most ``budget``), the first batch before, for the
    order checks. ``sgd_times``: seed × D × F, not finite: not by ``sgd_t_end`` (one τ, or
    the last recorded τ per D). Its legs: SGD's order (the mean gap per D), the sequential
    check of the delay's growth, and the order in the ODE runs drawn (exact, judged once on
    every draw the verdict rests on). A horizon that censors a run leaves the claim
    inconclusive (a longer horizon decides), never refuted."""
    drawn = [np.asarray(runs(0, batch), float)]
    sgd_check, = _sgd_order_leg(ctx, sgd_times, sgd_dims, sgd_t_end).values()
    sgd_refuted = sgd_check.decision == "refuted"
    required = SGD_REQUIRED[ctx.profile]
    sgd_leg = {"f = 1 first on average (SGD)": sgd_check} if sgd_refuted or required else {}
    sgd_censored = _sgd_censoring(sgd_times, sgd_dims, sgd_t_end)
    evidence.update({"t_max": t_max, "sgd_t_end": _per_d(sgd_t_end, len(sgd_dims)).tolist(),
                     "sgd_gap": sgd_check.columns["value"].tolist(),
                     "sgd_gap_se": sgd_check.columns["se"].tolist(),
                     "sgd_check": sgd_check.evidence(), "sgd_required": required,
                     "sgd_censoring": sgd_censored})

    def stopped(check=None):
        """The outcome when the order decides or the horizon stops the delay's check."""
        times = np.concatenate(drawn)
        evidence.update({"tau_1_tau_2": times.tolist(), "draws_used": len(times),
                         "order_ok": not (_order_problem(times, t_max) or sgd_refuted),
                         "censored": bool(_censoring(times, t_max)
                                          or sgd_censored)})
        legs = {**({"ODE delay slope in ln D": check} if check is not None else {}),
                **_order_legs(ctx, times, t_max), **sgd_leg}
        says = {"refuted": _order_problem(times, t_max)
                or (_sgd_refutation(sgd_check, sgd_dims) if sgd_refuted else ""),
                "inconclusive": _censoring(times, t_max) or ""}
        return checks.conclude(legs, says=says, evidence=evidence,
                               arrays={**arrays, "ode_times": times}, figures=figs)
    if _order_problem(drawn[0], t_max) or _censoring(drawn[0], t_max) or sgd_refuted:
        return stopped()

    def slopes(k, size):
        if k:
            drawn.append(np.asarray(runs(k * size, size), float))
        if not np.all(np.isfinite(drawn[k])):
            raise _Unfinished
        return delay_slopes(drawn[k], dims)
    # the delay's growth in ln D as a direction: each draw's slope one sample, the mean's
    # anytime-valid confidence sequence above 0 confirms, below 0 refutes
    try:
        check = checks.sequential(ctx, slopes, 0.0, sign=+1, batch=batch, budget=budget,
                                  min_batches=-(-min_draws // batch),
                                  name="ODE delay τ₂ − τ₁ slope in ln D (per draw)")
    except _Unfinished:
        ctx.ledger.set_resolution(math.inf)           # the sequence stopped before deciding
        return stopped()
    times = np.concatenate(drawn)
    if _order_problem(times, t_max):
        return stopped(check)
    per = delay_slopes(times, dims)
    evidence.update({"tau_1_tau_2": times.tolist(), "delay_slope": float(per.mean()),
                     "delay_slope_sd": float(per.std(ddof=1)), "per_seed_delay_slopes": per.tolist(),
                     "draws_used": len(times), "draw_budget": budget, "draw_batch": batch,
                     "delay_check": check.evidence(), "z": check.z, "order_ok": True,
                     "censored": sgd_censored is not None})
    legs = {"ODE delay slope in ln D": check, **_order_legs(ctx, times, t_max), **sgd_leg}
    return _sequential_outcome(legs, check, len(times), budget, dims, sgd_dims, sgd_fit, evidence,
                               {**arrays, "ode_times": times}, figs)


def _sequential_outcome(legs, check, n, budget, dims, sgd_dims, sgd_fit, evidence, arrays, figs):
    d = check.details
    tail = (f"mean per-draw slope {d['mean']:.2f} per unit ln D, confidence-sequence radius "
            f"{d['radius']:.2f} (σ = {d['sigma']:.2f}), {n} initial draws of a budget of {budget}")
    return checks.conclude(legs, evidence=evidence, arrays=arrays, figures=figs, says={
        "refuted": f"the delay τ₂ − τ₁ shrinks with ln D ({tail})",
        "inconclusive": f"f = 1 first in every run, but the delay's growth with ln D is not "
                        f"resolved ({tail}): the per-draw slopes spread too much for the "
                        f"confidence sequence to exclude 0 within the budget; needs {check.needs}"
                        if check.decision == "inconclusive" else
                        f"f = 1 first in every ODE run and the delay's growth with ln D "
                        f"{check.decision} ({tail}), but SGD's order is not resolved: "
                        f"{_sgd_text(evidence, sgd_dims)}",
        "confirmed": f"f = 1 first in every run; the delay grows by {d['mean']:.2f} per unit ln D "
                     f"(ODE, D = {dims[0]:.0e}…{dims[-1]:.0e}; confidence sequence "
                     f"[{d['mean'] - d['radius']:.2f}, {d['mean'] + d['radius']:.2f}] after {n} "
                     f"initial draws of a budget of {budget}); {_sgd_text(evidence, sgd_dims)}, "
                     f"{_sgd_slope_text(sgd_fit, evidence)}"})


def _sgd_text(evidence, sgd_dims):
    """SGD's order as the summary states it: its role at the profile, each D's mean gap with
    its error, its decision, and a negative gap named as such (never passed off as the
    order)."""
    c = evidence["sgd_check"]
    role = ("" if evidence["sgd_required"] else
            f", a guard at this profile: it refutes only a reversal beyond t = {c['z']:.2f}")
    negative = [D for D, g in zip(sgd_dims, evidence["sgd_gap"], strict=True) if g <= 0]
    return (f"SGD (D = {sgd_dims[0]}…{sgd_dims[-1]}{role}): mean gap τ₂ − τ₁ per D "
            f"{_gap_text(evidence)}, {c['decision']} at t = {c['z']:.2f}"
            + (f"; the gap is not positive at D = {negative} (f = 1 not first there on "
               "average, within the seeds' noise)" if negative else "")
            + (f"; {evidence['sgd_censoring']}" if evidence.get("sgd_censoring") else ""))


def _gap_text(evidence):
    return ", ".join(f"{g:.1f} ± {e:.1f}" for g, e in zip(evidence["sgd_gap"],
                                                           evidence["sgd_gap_se"], strict=True))


def _sgd_slope_text(sgd_fit, evidence):
    if np.isfinite(sgd_fit[0]) and np.isfinite(sgd_fit[1]):
        return f"delay slope {sgd_fit[0]:.1f} ± {sgd_fit[1]:.1f}"
    return (f"delay slope not estimable ({evidence.get('sgd_seeds_specialized', 0)} seeds "
            "specialized both features at every D)")
