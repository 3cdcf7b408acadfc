"""Claims of Dohmatob (NeurIPS 2025), softmax attention in the random-energy-model regime.
Spec: shared/spec/dohmatob2025.md. Every claim of the spec, in the order of the file:

* REM constants (Eqs. 14–18), Gibbs averages (Props. 12–13): extreme-value sampling, d → ∞;
* Prop. 1 per link, Cor. 1, Prop. 2 per link (+ the phase diagram): Monte Carlo at
  L − 1 = e^{αd} tokens against the paper's R̄, extrapolated in d;
* Props. 3, 5, 6 per link: symbolic, on the flow the engine derives from R̄;
* Props. 7, 9, 10 per link: stationary points on M by exact arithmetic at several d;
* Prop. 4: root finding on the full overlap flow; Sec. 5 global convergence: the flow in
  vector coordinates; the rebuttal's descent lemma: PGD in R^d; Fig. 2: PGD on an empirical
  risk in R^d against R̄ along the trajectory.

R̄ and its flow come from the reduced model the command line shows
(``numerics.reduced.registry.dohmatob_reduced``: the overlap flow on the Gram structure of
(u, v; u*, v*)); the symbolic checks use its derivations, the numerical ones code generated
from them at exact parameter values (in vector coordinates: the engine's frame flow of its
geometry and risk)."""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from numerics.rem import extreme_value_sample, gibbs_average
from theory.model import Param
from theory.models.dohmatob2025 import PAPER_BETA_C, PAPER_PSI, PAPER_R, alpha, beta
from theory.rem import rem_constants
from .. import checks as _checks
from ..checks import FINITE_SIZE_TERMS, estimate_vs_theory, limit, realisable
from ..registry import Outcome, claim
from ..stats import finite

PAPER = "dohmatob2025"
LINK_NAMES = ("linear", "quadratic", "relu")
PHASES = [(0.5, 0.5), (0.2, 0.3), (0.5, 2.0), (0.2, 1.5)]   # two below β_c, two above
NUMERICAL_FLOOR = 1e-9   # float64 resolution of the log-space sampler and quadrature


def _fit_intercept(dims, y, basis=("1/d",)):
    """Unweighted least-squares intercept of y ≈ a + Σ c_k·f_k(d) (a location, not judged
    statistically: the exact stationary points of Prop. 10 carry no sampling error)."""
    d = np.asarray(dims, float)
    X = np.stack([np.ones_like(d)] + [FINITE_SIZE_TERMS[b](d) for b in basis], 1)
    return float(np.linalg.lstsq(X, np.asarray(y, float), rcond=None)[0][0])


def _limit_decision(check):
    """(decision, index of the deciding column or None) of a ``checks.limit`` family: a poor
    fit decides nothing for its own column (the library marks it ok), so the refuting column is
    the worst failing one among those with a good fit."""
    if check.decision != "refuted":
        return check.decision, None
    failing = np.flatnonzero(~check.ok)
    return "refuted", int(failing[np.argmax(check.score[failing])])


def _self_comparison(phase):
    """In the high-temperature phase the sampler's bulk (w_bulk ≈ 1) is the analytic tilted
    Gaussian law whose limit is the paper's value by construction: its d → ∞ limit compared
    with that value compares the analytic bulk with itself (se ~1e-13) and shows nothing."""
    return phase == "high-temperature"


def _per_link(name, label, statement, check, statistical=True, reading="", mutations=None):
    """Register one sub-claim ``<name>[link=…]`` per link; ``check(ctx, link, **overrides)``;
    ``mutations(link)``: that link's declared formula mutations."""
    for link in LINK_NAMES:
        claim(f"{PAPER}:{name}[link={link}]", label, statement.format(link=link),
              statistical=statistical, reading=reading,
              mutations=None if mutations is None else mutations(link)
              )(functools.partial(check, link=link))


def _limit_summary(check, labels, i=None):
    """Text for column i (default: the worst) of a ``limit`` check."""
    i = int(check.details["worst_index"]) if i is None else i
    return (f"{labels[i]}: d → ∞ limit {check.details['limit'][i]:.5g} ± "
            f"{check.details['limit_stderr'][i]:.2g} ({check.score[i]:.1f} se, z = {check.z:.2f})")


def _rem_phase_columns(ctx, dims, n):
    """Per phase: (βd)⁻¹ log Z and the Gibbs mean at each d (means, standard errors)."""
    out = []
    for i, (a_, b_) in enumerate(PHASES):
        means, ses = [], []
        for dv in dims:
            s = extreme_value_sample(a_, b_, dv, n, seed=ctx.claim_seed(f"rem:{a_}:{b_}:{dv}"))
            finite(s.free_energy, s.gibbs_mean)
            means.append([s.free_energy.mean(), s.gibbs_mean.mean()])
            ses.append([s.free_energy.std(ddof=1) / np.sqrt(n), s.gibbs_mean.std(ddof=1) / np.sqrt(n)])
        out.append((a_, b_, np.array(means), np.array(ses)))
        ctx.tick((i + 1) / len(PHASES))
    return out


@claim(f"{PAPER}:rem-constants", "Eqs. 14–18",
       "ψ(β, α) = α/β + β/2 for β ≤ β_c = √(2α) and √(2α) above; (βd)⁻¹ log Z → ψ and the "
       "Gibbs mean of x_ℓᵀu/√d → r = min(β, √(2α)), in both phases.",
       reading="Z sums e^{βE_ℓ} over N = e^{αd} i.i.d. levels E_ℓ ~ N(0, d) (the dummy tokens); "
               "frozen phase: the limits are extrapolated from d = 10²…3·10³ (quick) with the "
               "REM's finite-size terms log(d)/d and 1/d fitted explicitly (one family, a poor fit "
               "→ inconclusive). High-temperature phase: the sampler's bulk is the analytic "
               "tilted law, so its limit equals the paper's value by construction (a "
               "self-comparison, recorded, not judged); there the paper's ψ and r are compared "
               "exactly with the engine's Laplace-method derivation.",
       mutations={"psi: beta/4 instead of beta/2": lambda: {"psi": sp.Piecewise(
                      (alpha / beta + beta / 4, beta <= PAPER_BETA_C), (PAPER_BETA_C, True))},
                  "r: frozen phase dropped (r = beta)": lambda: {"r": beta}})
def rem_constants_claim(ctx, psi=PAPER_PSI, r=PAPER_R):
    """Frozen phase: extreme-value sampling of log Z and the Gibbs mean at growing d,
    extrapolated to d → ∞ (``checks.limit``) against the paper's ψ and r. High-temperature
    phase: exact comparison with the engine's own Laplace-method derivation; the sampler's
    values are recorded as a self-comparison."""
    dims = ctx.pick([100, 200, 400, 800, 1600, 3200], [100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600])
    n = ctx.pick(1000, 4000)
    derived = rem_constants()
    rows, exact, sampled, labels, Y, SE, theory = [], [], [], [], [], [], []
    for a_, b_, means, ses in _rem_phase_columns(ctx, dims, n):
        at = {alpha: sp.nsimplify(a_), beta: sp.nsimplify(b_)}
        phase = "high-temperature" if b_ < np.sqrt(2 * a_) else "frozen"
        for k, (name, paper_e, engine_e) in enumerate((("psi", psi, derived["psi"]),
                                                       ("r", r, derived["r"]))):
            paper_v, engine_v = paper_e.subs(at), engine_e.subs(at)
            row = {"alpha": a_, "beta": b_, "phase": phase, "quantity": name,
                   "paper": float(paper_v), "engine_laplace": float(engine_v),
                   "largest_d_value": float(means[-1, k])}
            if _self_comparison(phase):
                row.update(exact_equal=bool(sp.simplify(paper_v - engine_v) == 0),
                           sampler_values=means[:, k].tolist(), sampler_stderr=ses[:, k].tolist(),
                           note="self-comparison: the sampler's bulk is the analytic law, not judged")
                exact.append(row)
            else:
                sampled.append(row)
                labels.append(f"{name} at α={a_}, β={b_} ({phase})")
                Y.append(means[:, k])
                SE.append(ses[:, k])
                theory.append(float(paper_v))
        rows.append({"alpha": a_, "beta": b_, "phase": phase, "d": dims, "free_energy": means[:, 0],
                     "free_energy_se": ses[:, 0], "gibbs_mean": means[:, 1],
                     "gibbs_mean_se": ses[:, 1]})
    check = limit(ctx, dims, np.array(Y).T, np.array(SE).T, theory, terms=("log(d)/d", "1/d"),
                  bias=NUMERICAL_FLOOR, name="frozen-phase d → ∞ limits of ψ and r")
    for i, row in enumerate(sampled):
        row.update(extrapolated=check.details["limit"][i], stderr=check.details["limit_stderr"][i],
                   z_score=float(check.score[i]), ok=bool(check.ok[i]))
    evidence = {"checks": sampled, "high_temperature_exact": exact, "rows": rows,
                "check": check.evidence(), "numerical_floor": NUMERICAL_FLOOR, "n_samples": n,
                "paper_psi": str(psi), "paper_r": str(r),
                "engine_psi": str(derived["psi"]), "engine_r": str(derived["r"])}
    tracked = {f"{c['quantity']}[a={c['alpha']},b={c['beta']}]": (c["extrapolated"],
               check.z * c["stderr"] + 1e-6) for c in sampled}
    figs = {"rem_constants": _draw_rem(rows, psi, r)}
    bad_exact = [c for c in exact if not c["exact_equal"]]
    if bad_exact:
        w = bad_exact[0]
        return Outcome("refuted", f"{w['quantity']} at α={w['alpha']}, β={w['beta']} ({w['phase']}): "
                       f"paper {w['paper']:.6g} ≠ Laplace-method value {w['engine_laplace']:.6g} "
                       "(exact)", evidence, tracked, figures=figs)
    decision, k = _limit_decision(check)
    if decision == "refuted":
        return Outcome("refuted", _limit_summary(check, labels, k) + f" vs paper {theory[k]:.5f}",
                       evidence, tracked, figures=figs)
    if decision == "inconclusive":
        return Outcome("inconclusive", f"frozen phase: {check.needs}; high-temperature phase: "
                       "ψ, r equal the Laplace-method values exactly", evidence, tracked,
                       figures=figs)
    return Outcome("confirmed", f"frozen phase: ψ and r match the d → ∞ limits at "
                   f"{len(sampled) // 2} (α, β) ({_limit_summary(check, labels)}); high-temperature "
                   f"phase: equal to the Laplace-method derivation exactly (the sampler's values "
                   "there are a self-comparison, not judged)", evidence, tracked, figures=figs)


def _draw_rem(rows, psi, r):
    def draw(fig):
        ax1, ax2 = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        for row in rows:
            lab = f"α={row['alpha']}, β={row['beta']}"
            l1, = ax1.semilogx(row["d"], row["free_energy"], "o-", ms=3, label=lab)
            ax1.axhline(float(psi.subs({alpha: row["alpha"], beta: row["beta"]})), ls="--",
                        color=l1.get_color(), lw=0.8)
            l2, = ax2.semilogx(row["d"], row["gibbs_mean"], "o-", ms=3, label=lab)
            ax2.axhline(float(r.subs({alpha: row["alpha"], beta: row["beta"]})), ls="--",
                        color=l2.get_color(), lw=0.8)
        ax1.set_title("(βd)⁻¹ log Z vs ψ (dashed)", fontsize=9)
        ax2.set_title("Gibbs mean vs r (dashed)", fontsize=9)
        ax1.set_xlabel("d")
        ax2.set_xlabel("d")
        ax1.legend(fontsize=6)
    return draw


TEST_FUNCTIONS = {"t": lambda t: t, "t^2": lambda t: t**2, "tanh": np.tanh}


def _paper_prop12(F, rho_, r_value):
    return F(rho_ * r_value)


@claim(f"{PAPER}:prop12-gibbs-average", "Prop. 12–13",
       "Gibbs averages of F(x_ℓᵀv/√d) over the non-secret tokens converge to F(ρ·r).",
       reading="F ∈ {t, t², tanh}, ρ = uᵀv ∈ {0.6, −0.4}; Gibbs weights q_ℓ ∝ e^{β√d·x_ℓᵀu} "
               "over e^{αd} tokens; frozen phase: limits extrapolated in d with explicit log(d)/d "
               "and 1/d terms (one family, a poor fit → inconclusive). High-temperature phase: "
               "the sampler's bulk is the analytic tilted law whose limit is F(ρβ) by "
               "construction, a self-comparison (recorded, not judged): that phase is unchecked.",
       mutations={"limit F(1.05·ρr)": lambda: {"limit": lambda F, rho, r: F(rho * 1.05 * r)},
                  "limit F(−ρr)": lambda: {"limit": lambda F, rho, r: F(-rho * r)}})
def prop12_gibbs_average(ctx, limit=_paper_prop12):
    dims = ctx.pick([100, 200, 400, 800, 1600, 3200], [100, 200, 400, 800, 1600, 3200, 6400, 12800])
    n = ctx.pick(600, 3000)
    rhos = (0.6, -0.4)
    sampled, unchecked, rows, Y, SE, theory, labels = [], [], [], [], [], [], []
    total = len(PHASES) * len(rhos)
    for i, (a_, b_) in enumerate(PHASES):
        r_value = float(PAPER_R.subs({alpha: a_, beta: b_}))
        phase = "high-temperature" if b_ < np.sqrt(2 * a_) else "frozen"
        for j, rho_ in enumerate(rhos):
            means, ses = [], []
            for dv in dims:
                seed = ctx.claim_seed(f"gibbs:{a_}:{b_}:{rho_}:{dv}")
                vals = [gibbs_average(F, a_, b_, dv, rho_, n, seed) for F in TEST_FUNCTIONS.values()]
                finite(*vals)
                means.append([v.mean() for v in vals])
                ses.append([v.std(ddof=1) / np.sqrt(n) for v in vals])
            means, ses = np.array(means), np.array(ses)
            for k, (name, F) in enumerate(TEST_FUNCTIONS.items()):
                row = {"alpha": a_, "beta": b_, "phase": phase, "rho": rho_, "F": name,
                       "paper_limit": float(limit(F, rho_, r_value)),
                       "largest_d_value": float(means[-1, k])}
                if _self_comparison(phase):
                    row.update(sampler_values=means[:, k].tolist(),
                               sampler_stderr=ses[:, k].tolist(),
                               note="self-comparison: the sampler's bulk is the analytic law, "
                                    "not judged")
                    unchecked.append(row)
                    continue
                sampled.append(row)
                labels.append(f"F={name}, α={a_}, β={b_}, ρ={rho_}")
                Y.append(means[:, k])
                SE.append(ses[:, k])
                theory.append(row["paper_limit"])
            rows.append({"alpha": a_, "beta": b_, "rho": rho_, "d": dims, "means": means})
            ctx.tick((i * len(rhos) + j + 1) / total)
    check = _checks.limit(ctx, dims, np.array(Y).T, np.array(SE).T, theory,
                          terms=("log(d)/d", "1/d"), bias=NUMERICAL_FLOOR,
                          name="frozen-phase Gibbs averages, d → ∞")
    for i, row in enumerate(sampled):
        row.update(extrapolated=check.details["limit"][i], stderr=check.details["limit_stderr"][i],
                   z_score=float(check.score[i]), ok=bool(check.ok[i]))
    evidence = {"checks": sampled, "high_temperature_self_comparison": unchecked, "rows": rows,
                "check": check.evidence(), "n_samples": n, "numerical_floor": NUMERICAL_FLOOR}
    decision, k = _limit_decision(check)
    if decision == "refuted":
        return Outcome("refuted", _limit_summary(check, labels, k) + f" vs F(ρr) = {theory[k]:.5f}",
                       evidence)
    frozen = ("frozen phase: " + check.needs if decision == "inconclusive" else
              f"frozen phase: {len(sampled)} Gibbs averages extrapolate to F(ρ·r) "
              f"({_limit_summary(check, labels)})")
    return Outcome("inconclusive", f"{frozen}; high-temperature phase unchecked: the sampler's "
                   "bulk there is the analytic tilted law, so its limit equals F(ρβ) by "
                   "construction (a self-comparison; an independent sampler of all e^{αd} levels "
                   "at growing d would decide)", evidence)


# -------------------------------------------------------------------------------------------
from numerics.codegen import generate  # noqa: E402
from numerics.reduced import OverlapReduced  # noqa: E402
from numerics.reduced.registry import dohmatob_reduced  # noqa: E402
from theory.gaussian import GaussianExpectation, evaluate  # noqa: E402
from theory.models import dohmatob2025 as dm  # noqa: E402


@functools.cache
def _paper_reduced(link: str) -> OverlapReduced:
    return dohmatob_reduced(link)


def _reduced(link: str, risk: sp.Expr | None = None,
             extra_params: tuple[Param, ...] = ()) -> OverlapReduced:
    """Dohmatob's reduced model (``numerics.reduced``, the model the CLI shows): the overlap
    flow of R̄ with link σ (Prop. 1), or of ``risk`` in its place (a deliberately wrong formula).
    Parameters stay unbound: the claims substitute exact values into its derivations. The
    paper's R̄ is integrated once per link (cached)."""
    if risk is None and not extra_params:
        return _paper_reduced(link)
    return dohmatob_reduced(link, risk, extra_params=extra_params)


def _rbar(link: str) -> sp.Expr:
    """R̄ of Prop. 1 for link σ: the reduced model's risk."""
    return _reduced(link).derivation.risk


PROP1_PHASES = [(0.1, 0.3), (0.1, 1.0)]          # β_c = 0.447: high-temperature, frozen
PROP1_GAMMA = 0.6                                # c = 0.8 > ψ in both: learnable
PROP1_POINTS = [  # (µ, ν, ζ, η, ρ): on M with the attention off (p ≈ 0) and on (p ≈ 1), off M
    (0.2, 0.5, 0.0, 0.0, 0.0), (0.95, 0.7, 0.0, 0.0, 0.0),
    (0.2, 0.4, 0.3, 0.1, 0.4), (0.9, 0.6, 0.2, -0.1, 0.3)]
NP_LINKS = {"linear": lambda t: t, "quadratic": lambda t: t**2, "relu": lambda t: np.maximum(t, 0.0)}


def _risk_mc(ctx, link, *args, **kw):
    """The e^{αd}-token risk Monte Carlo in torch on the run's device (numerics.rem_torch)."""
    import torch
    from numerics.rem_torch import softmax_risk_mc_torch
    tl = {"linear": lambda t: t, "quadratic": lambda t: t**2, "relu": torch.relu}[link]
    return softmax_risk_mc_torch(tl, *args, device=ctx.device, **kw)


_SYMS = (dm.alpha, dm.beta, dm.gamma, dm.d, dm.mu, dm.nu, dm.zeta, dm.eta, dm.rho)


def _numeric(expr):
    """R(α, β, γ, d, µ, ν, ζ, η, ρ) as a float function: generated code when closed-form,
    else with the remaining Gaussian-expectation nodes integrated by adaptive quadrature."""
    if not expr.has(GaussianExpectation):
        fn = generate(_SYMS, [expr])
        return lambda *x: fn(*x)[0]
    return lambda *x: evaluate(expr, dict(zip(_SYMS, x)))


def _prop1_check(ctx, link, formula=None):
    dims = ctx.pick([100, 200, 400, 800], [100, 200, 400, 800, 1600, 3200])
    n = ctx.pick(4_000, 40_000)
    top_k = ctx.pick(300, 2000)
    R = formula if formula is not None else _rbar(link)
    Rf = _numeric(R)
    points, checks = [], []
    total = len(PROP1_PHASES) * len(PROP1_POINTS)
    for i, (a_, b_) in enumerate(PROP1_PHASES):
        for j, (m_, n_, z_, e_, r_) in enumerate(PROP1_POINTS):
            ov = dict(mu=m_, nu=n_, zeta=z_, eta=e_, rho=r_)
            rel, rel_se = [], []
            for dv in dims:
                th = float(Rf(a_, b_, PROP1_GAMMA, dv, m_, n_, z_, e_, r_))
                mc, se = _risk_mc(ctx, link, a_, b_, PROP1_GAMMA, dv, ov, n,
                                         seed=ctx.claim_seed(f"p1:{link}:{a_}:{b_}:{j}:{dv}"),
                                         top_k=top_k)
                finite(th, mc, se)
                points.append({"link": link, "d": dv, "alpha": a_, "beta": b_,
                               "gamma": PROP1_GAMMA, **ov, "theory": th, "mc": mc,
                               "mc_stderr": se})
                rel.append(mc / th - 1)
                rel_se.append(se / abs(th))
            checks.append({"alpha": a_, "beta": b_, "overlaps": ov,
                           "phase": "high-temperature" if b_ < np.sqrt(2 * a_) else "frozen",
                           "relative_deviation_by_d": rel, "relative_stderr_by_d": rel_se})
            ctx.tick((i * len(PROP1_POINTS) + j + 1) / total)
    # p(µ) is smeared over |cµ − ψ| ≲ γ/√d: corrections in 1/√d; one family over all points
    check = limit(ctx, dims, np.array([c["relative_deviation_by_d"] for c in checks]).T,
                  np.array([c["relative_stderr_by_d"] for c in checks]).T, 0.0,
                  terms=("1/sqrt(d)",), name="R_mc/R̄ − 1 at d → ∞", scale=1.0)
    for k, c in enumerate(checks):
        c.update(limit=check.details["limit"][k], stderr=check.details["limit_stderr"][k],
                 z_score=float(check.score[k]), ok=bool(check.ok[k]))
    evidence = {"points": points, "checks": checks, "z": check.z, "check": check.evidence(),
                "n_mc": n, "statistic": "R_mc / R_paper − 1, extrapolated to d → ∞"}
    figs = {"theory_vs_mc": _draw_prop1(points, link)}
    decision, k = _limit_decision(check)
    if decision == "refuted":
        w = checks[k]
        last = [p for p in points if p["alpha"] == w["alpha"] and p["beta"] == w["beta"]
                and p["mu"] == w["overlaps"]["mu"] and p["rho"] == w["overlaps"]["rho"]][-1]
        return Outcome("refuted", f"{link}: R/R̄ − 1 → {w['limit']:+.3f} ± {w['stderr']:.2g} at "
                       f"{w['phase']} α={w['alpha']}, β={w['beta']}, (µ,ν,ζ,η,ρ)="
                       f"{tuple(w['overlaps'].values())} ({w['z_score']:.1f} se, z = {check.z:.2f}, "
                       f"fit χ² p = {check.details['gof_p'][k]:.2g}); "
                       f"at d={last['d']}: MC {last['mc']:.4g} ± {last['mc_stderr']:.2g} vs R̄ "
                       f"{last['theory']:.4g}", evidence, figures=figs)
    if decision == "inconclusive":
        return Outcome("inconclusive", f"{link}: {check.needs}", evidence, figures=figs)
    return Outcome("confirmed", f"{link}: R/R̄ → 1 at all {len(checks)} points, both phases "
                   f"(resolution {check.resolution:.2g})", evidence, figures=figs)


def _draw_prop1(points, link):
    def draw(fig):
        ax = fig.add_subplot()
        th = np.array([p["theory"] for p in points])
        mc = np.array([p["mc"] for p in points])
        se = np.array([p["mc_stderr"] for p in points])
        dd = np.array([p["d"] for p in points])
        sc = ax.scatter(th, mc, c=np.log2(dd), s=12, cmap="viridis")
        ax.errorbar(th, mc, yerr=2 * se, fmt="none", ecolor="grey", alpha=0.5)
        lo, hi = min(th.min(), mc.min()), max(th.max(), mc.max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        ax.set_xscale("symlog")
        ax.set_yscale("symlog")
        ax.set_xlabel("Prop. 1 R̄ (paper)")
        ax.set_ylabel("Monte Carlo risk at L − 1 = e^{αd}")
        ax.set_title(f"Dohmatob Prop. 1, {link} link (colour: log2 d)", fontsize=9)
        fig.colorbar(sc, ax=ax)
    return draw


_per_link("prop1-risk", "Prop. 1",
          "For every link satisfying Condition 1 and all unit u, v, R(u, v) ≃ "
          "R̄(µ, ν, ζ, ρ) = p²H1(1, ζ, ρ) − 2pH2(ν, ζ, ρ) + H1(1, 0, ρ); here σ = {link}.",
          _prop1_check,
          reading="'≃' read as R/R̄ → 1 as d → ∞ (the rebuttal's notation); ε² removed; "
                  "α = 0.1 with β = 0.3 (high temperature) and β = 1 (frozen), γ = 0.6; "
                  "points on M (ζ = η = ρ = 0) and off it, with p(µ) ≈ 0 and ≈ 1; the limit "
                  "from one weighted fit in 1/√d over all points (a poor fit → inconclusive).",
          mutations=lambda link: {"R̄ × 1.2": lambda: {"formula": sp.Rational(6, 5) * _rbar(link)}})


@claim(f"{PAPER}:cor1-linear", "Cor. 1",
       "For the linear link, R̄ reduces to (p·c·ζ + (1 − p)·ρ·r)²·d + γ²(p² − 2pν + 1).",
       statistical=False,
       mutations={"extra γ²ν term": lambda: {"formula": dm.paper_cor1_linear() + dm.gamma**2 * dm.nu}})
def cor1_linear(ctx, formula=None):
    """Exact symbolic comparison of Cor. 1 with Prop. 1's R̄ at σ(t) = t (H1, H2 integrated by
    the engine)."""
    formula = dm.paper_cor1_linear() if formula is None else formula
    prop1 = _rbar("linear")
    diff = sp.simplify(prop1 - formula)
    evidence = {"prop1_linear": str(prop1), "cor1": str(formula), "difference": str(diff)}
    if diff == 0:
        return Outcome("confirmed", "Cor. 1 equals Prop. 1's R̄ at σ(t) = t identically", evidence)
    vals = {dm.alpha: 0.1, dm.beta: 1.0, dm.gamma: 0.6, dm.d: 100, dm.mu: 0.5, dm.nu: 0.3,
            dm.zeta: 0.2, dm.eta: 0.1, dm.rho: 0.3}
    evidence["at"] = {str(k): v for k, v in vals.items()}
    evidence["values"] = {"prop1": float(prop1.subs(vals)), "cor1": float(formula.subs(vals))}
    return Outcome("refuted", f"Cor. 1 differs from Prop. 1 at σ(t) = t: "
                   f"{evidence['values']['cor1']:.6g} vs {evidence['values']['prop1']:.6g}", evidence)


# -------------------------------------------------------------------------------------------
PROP2_SETTINGS = [  # (α, β): c = 0.8 at γ = 0.6
    (0.1, 0.3, "learnable"), (0.1, 1.0, "learnable"),        # ψ = 0.483, 0.447 < c
    (0.5, 0.5, "unlearnable"), (0.5, 2.0, "unlearnable")]    # ψ = 1.25, 1.0 > c
ORACLE = dict(mu=1.0, nu=1.0, zeta=0.0, eta=0.0, rho=0.0)


def _prop2_check(ctx, link, oracle_formula=None):
    """(i) symbolic: Prop. 1's R̄ at the oracle equals (1 − p(1))²·σ̄_γ(1); (ii) the learnability
    transition: Monte Carlo R(u*, v*) at e^{αd} tokens → 0 where c > ψ and → σ̄_γ(1) where
    c < ψ, extrapolated in d (1/√d corrections, model dependence in the error bar). Global
    minimality of the oracle is not checked here."""
    formula = dm.paper_oracle_risk(link) if oracle_formula is None else oracle_formula
    prop1_at_oracle = _rbar(link).subs({dm.mu: 1, dm.nu: 1, dm.zeta: 0, dm.rho: 0})
    identity = sp.simplify(prop1_at_oracle - formula)
    sbar = float(dm.dual_kernel(link, 1).subs(dm.gamma, PROP1_GAMMA))
    dims = ctx.pick([100, 200, 400, 800], [100, 200, 400, 800, 1600, 3200])
    n, top_k = ctx.pick(4_000, 40_000), ctx.pick(300, 2000)
    checks = []
    for i, (a_, b_, side) in enumerate(PROP2_SETTINGS):
        values, ses = [], []
        for dv in dims:
            mc, se = _risk_mc(ctx, link, a_, b_, PROP1_GAMMA, dv, ORACLE, n,
                                     seed=ctx.claim_seed(f"p2:{link}:{a_}:{b_}:{dv}"), top_k=top_k)
            finite(mc, se)
            values.append(mc)
            ses.append(se)
        target = 0.0 if side == "learnable" else sbar
        psi_v = float(PAPER_PSI.subs({alpha: a_, beta: b_}))
        checks.append({"alpha": a_, "beta": b_, "psi": psi_v, "c": float(np.sqrt(1 - PROP1_GAMMA**2)),
                       "side": side, "phase": "high-temperature" if b_ < np.sqrt(2 * a_) else "frozen",
                       "paper_limit": target, "d": dims, "mc": values, "mc_stderr": ses})
        ctx.tick((i + 1) / len(PROP2_SETTINGS))
    # one family: R(u*, v*) at each setting, 1/√d corrections fitted explicitly. On the
    # learnable side R(u*, v*) falls below float64 resolution (every sample exactly 0, se 0):
    # the sampler's resolution NUMERICAL_FLOOR is added in quadrature to each standard error
    # (negligible elsewhere: se ~1e-2), so that such points carry a finite weight.
    se_eff = np.hypot(np.array([c["mc_stderr"] for c in checks]).T, NUMERICAL_FLOOR)
    check = limit(ctx, dims, np.array([c["mc"] for c in checks]).T, se_eff,
                  [c["paper_limit"] for c in checks], terms=("1/sqrt(d)",),
                  name="R(u*, v*) at d → ∞", scale=sbar)
    for k, c in enumerate(checks):
        c.update(extrapolated=check.details["limit"][k], stderr=check.details["limit_stderr"][k],
                 z_score=float(check.score[k]), ok=bool(check.ok[k]))
    z = check.z
    evidence = {"link": link, "gamma": PROP1_GAMMA, "sigma_bar_1": sbar,
                "prop1_at_oracle_minus_formula": str(identity), "checks": checks, "z": z,
                "check": check.evidence(), "not_checked": "global minimality of the oracle"}
    figs = {"oracle_risk_vs_d": _draw_prop2(checks, link)}
    arrays = {}
    if link == "linear":
        grid = _phase_grid(ctx, link, sbar_fn=lambda g: float(dm.dual_kernel(link, 1).subs(dm.gamma, g)))
        arrays = {f"phase_{k}": v for k, v in grid.items()}
        evidence["phase_diagram"] = {"beta": grid["beta"].tolist(), "d": int(grid["d"]),
                                     "n_samples": int(grid["n"])}
        figs["phase_diagram"] = _draw_phase(grid)
    if identity != 0:
        return Outcome("refuted", f"{link}: (1 − p(1))²·σ̄_γ(1) ≠ Prop. 1's R̄ at the oracle "
                       f"(difference {identity})", evidence, arrays=arrays, figures=figs)
    decision, k = _limit_decision(check)
    if decision == "refuted":
        w = checks[k]
        return Outcome("refuted", f"{link}: R(u*, v*) → {w['extrapolated']:.4f} ± {w['stderr']:.2g} "
                       f"({w['side']}, {w['phase']}, α={w['alpha']}, β={w['beta']}), paper: "
                       f"{w['paper_limit']:.4f} ({w['z_score']:.1f} se, z = {z:.2f})", evidence,
                       arrays=arrays, figures=figs)
    if decision == "inconclusive":
        return Outcome("inconclusive", f"{link}: the identity at the oracle holds; the learnability "
                       f"limits: {check.needs}", evidence, arrays=arrays, figures=figs)
    return Outcome("confirmed", f"{link}: R(u*, v*) → 0 where c > ψ and → σ̄_γ(1) = {sbar:.4g} "
                   f"where c < ψ, both phases", evidence, arrays=arrays, figures=figs)


def _phase_grid(ctx, link, sbar_fn, beta_=1.0):
    """Monte Carlo R(u*, v*)/σ̄_γ(1) over a (α, γ) grid at one d (the phase diagram's dots)."""
    dv, n = ctx.pick(200, 800), ctx.pick(1000, 4000)
    alphas = np.linspace(0.02, 0.7, ctx.pick(12, 24))
    gammas = np.linspace(0.1, 0.95, ctx.pick(12, 24))
    ratio = np.zeros((len(alphas), len(gammas)))
    se = np.zeros_like(ratio)
    for i, a_ in enumerate(alphas):
        for j, g_ in enumerate(gammas):
            m, s_ = _risk_mc(ctx, link, a_, beta_, g_, dv, ORACLE, n,
                                    seed=ctx.claim_seed(f"phase:{i}:{j}"), top_k=300)
            finite(m, s_)
            ratio[i, j], se[i, j] = m / sbar_fn(g_), s_ / sbar_fn(g_)
    return {"alpha": alphas, "gamma": gammas, "ratio": ratio, "ratio_se": se,
            "beta": np.array([beta_]), "d": np.array(dv), "n": np.array(n)}


def _draw_phase(grid):
    def draw(fig):
        ax = fig.add_subplot()
        A, G = np.meshgrid(grid["alpha"], grid["gamma"], indexing="ij")
        sc = ax.scatter(A.ravel(), G.ravel(), c=grid["ratio"].ravel(), cmap="viridis", s=25,
                        vmin=0, vmax=2)
        b = float(grid["beta"][0])
        a = np.linspace(1e-3, grid["alpha"].max(), 300)
        psi = np.array([float(PAPER_PSI.subs({alpha: x, beta: b})) for x in a])
        ok = psi < 1
        ax.plot(a[ok], np.sqrt(1 - psi[ok] ** 2), "r-", label="paper: c = √(1−γ²) = ψ(β, α)")
        ax.set_xlabel("α  (L − 1 = e^{αd})")
        ax.set_ylabel("γ")
        ax.set_title(f"Dohmatob phase diagram, β = {b:g}, d = {int(grid['d'])}: colour = "
                     "MC R(u*, v*)/σ̄_γ(1) (paper: 0 below the line, 1 above)", fontsize=8)
        ax.legend(fontsize=7, loc="lower left")
        fig.colorbar(sc, ax=ax, extend="max", label="clipped at 2")
    return draw


def _draw_prop2(checks, link):
    def draw(fig):
        ax = fig.add_subplot()
        for c in checks:
            line = ax.errorbar(c["d"], c["mc"], yerr=2 * np.array(c["mc_stderr"]), fmt="o-", ms=3,
                               label=f"{c['side']}, α={c['alpha']}, β={c['beta']} (ψ={c['psi']:.2f})")
            ax.axhline(c["paper_limit"], ls="--", lw=0.8, color=line[0].get_color())
        ax.set_xscale("log")
        ax.set_xlabel("d")
        ax.set_ylabel("R(u*, v*)")
        ax.set_title(f"Dohmatob Prop. 2, {link} link: dashed = paper's limit (c = 0.8)", fontsize=9)
        ax.legend(fontsize=6)
    return draw


_per_link("prop2-oracle", "Prop. 2",
          "The oracle (u*, v*) minimises R; R(u*, v*) ≃ (1 − p(1))²·σ̄_γ(1); if c ≥ (1+δ)ψ "
          "then R(u*, v*) → 0, and if c ≤ (1−δ)ψ then R(u*, v*) → σ̄_γ(1) > 0 (a sharp "
          "learnability transition at c = ψ); here σ = {link}.",
          _prop2_check,
          reading="γ = 0.6 (c = 0.8); c > ψ at α = 0.1 (β = 0.3, 1), c < ψ at α = 0.5 "
                  "(β = 0.5, 2): each side in both REM phases; limits from one weighted fit in "
                  "1/√d (a poor fit → inconclusive). Global minimality is not "
                  "checked (recorded in the evidence).",
          mutations=lambda link: {"oracle risk without the square on (1 − p)": lambda: {
              "oracle_formula": (1 - dm.paper_localisation().subs(dm.mu, 1))
              * dm.dual_kernel(link, 1)}})


# -------------------------------------------------------------------------------------------
def _invariance_check(ctx, link, risk=None):
    flow = _reduced(link, risk).derivation.flow
    off = {str(q): sp.simplify(r.subs(dm.MANIFOLD)) for q, r in flow.as_dict().items()
           if q in dm.MANIFOLD}
    evidence = {"link": link, "flow_off_M_on_M": {k: str(v) for k, v in off.items()}}
    bad = {k: v for k, v in off.items() if v != 0}
    if not bad:
        return Outcome("confirmed", f"{link}: dζ/dt, dη/dt, dρ/dt vanish identically on M "
                       "(symbolic)", evidence)
    # a concrete point where the flow leaves M
    vals = {dm.alpha: 0.1, dm.beta: 1.0, dm.gamma: 0.6, dm.d: 100, dm.mu: 0.5, dm.nu: 0.3}
    k, v = next(iter(bad.items()))
    evidence["counterexample"] = {**{str(s): x for s, x in vals.items()},
                                  f"d{k}/dt": float(v.subs(vals))}
    return Outcome("refuted", f"{link}: d{k}/dt ≠ 0 on M, e.g. {float(v.subs(vals)):.4g} at "
                   "α=0.1, β=1, γ=0.6, d=100, µ=0.5, ν=0.3", evidence)


def _two_d_check(ctx, link, risk=None):
    reduced = _reduced(link, risk)
    if any(sp.simplify(r.subs(dm.MANIFOLD)) != 0 for q, r in reduced.derivation.flow.as_dict().items()
           if q in dm.MANIFOLD):
        return Outcome("refuted", f"{link}: M is not invariant, so no closed 2-D flow on it",
                       {"link": link})
    flow2 = reduced.restrict(dm.MANIFOLD).derivation.flow
    extra = sorted(str(s) for r in flow2.rhs for s in r.free_symbols
                   if s in (dm.zeta, dm.eta, dm.rho))
    evidence = {"link": link, "state": [str(s) for s in flow2.state],
                "rhs": [str(r) for r in flow2.rhs],
                "rhs_latex": [sp.latex(r) for r in flow2.rhs]}
    if extra:
        return Outcome("refuted", f"{link}: the restricted flow still depends on {extra}", evidence)
    return Outcome("confirmed", f"{link}: on M the derived flow closes on (µ, ν): "
                   f"dµ/dt, dν/dt depend on µ, ν and the parameters only", evidence)


_per_link("prop5-invariance", "Prop. 5",
          "The dynamics leave M = {{η = ζ = ρ = 0}} invariant; here σ = {link}.",
          _invariance_check, statistical=False,
          reading="dynamics = projected gradient flow on the paper's R̄ (Prop. 1), derived by "
                  "the engine's Gram-matrix chain rule.")
_per_link("prop6-2d-flow", "Prop. 6",
          "On M the flow reduces to the 2-D system in (µ, ν) obtained by restricting the "
          "overlap flow; here σ = {link}.", _two_d_check, statistical=False)


def _gradient_span_check(ctx, link, risk=None):
    """∇_u R = Σ_w ∂R/∂(uᵀw)·w over w ∈ {v, u*, v*} (Gram chain rule): it lies in span{u*, v*}
    iff the coefficient of v, ∂R/∂ρ, vanishes; likewise for ∇_v R (coefficient of u). Checked
    symbolically at r = 0, ρ = 0, with r kept as a free symbol in R̄."""
    from theory.dynamics import vector_gradients
    r_sym = sp.Symbol("r", nonnegative=True)
    r_param = Param(r_sym, 0, math.inf, open_high=True, doc="REM constant r, kept symbolic")
    reduced = _reduced(link, dm.paper_risk(link, r=r_sym) if risk is None else risk, (r_param,))
    grads = vector_gradients(reduced.geometry, reduced.derivation.risk)
    at = {r_sym: 0, dm.rho: 0}
    coeffs = {"grad_u along v": sp.simplify(grads["u"]["v"].subs(at)),
              "grad_v along u": sp.simplify(grads["v"]["u"].subs(at))}
    evidence = {"link": link, "coefficients_at_r0_rho0": {k: str(v) for k, v in coeffs.items()}}
    bad = {k: v for k, v in coeffs.items() if v != 0}
    if bad:
        k, v = next(iter(bad.items()))
        return Outcome("refuted", f"{link}: {k} = {v} ≠ 0 at r = ρ = 0", evidence)
    return Outcome("confirmed", f"{link}: at r = ρ = 0 both gradients have no component along "
                   "the other student vector: they lie in span{u*, v*}", evidence)


_per_link("prop3-gradient-span", "Prop. 3",
          "With r = 0 and ρ = 0, ∇_u R and ∇_v R lie in span{{u*, v*}}; here σ = {link}.",
          _gradient_span_check, statistical=False,
          reading="R = the paper's R̄ with r kept symbolic; gradients by the Gram-matrix chain "
                  "rule (their components along u* and v* are unconstrained).")


# -------------------------------------------------------------------------------------------
# Stationary points on M (Props. 7, 9, 10): exact arithmetic, several d
from theory.stationary import (classify_exact, factor_roots, find_stationary_points,  # noqa: E402
                               refine_root, stationary_points_exact)

STATIONARY_SETTINGS = [  # exact parameters; ψ < c < 1 (learnable) and c < ψ < 1
    {"alpha": sp.Rational(1, 10), "beta": sp.Integer(1), "gamma": sp.Rational(3, 5)},
    {"alpha": sp.Rational(1, 5), "beta": sp.Rational(3, 2), "gamma": sp.Rational(9, 10)}]
BOX = ((-1, 1), (-1, 1))


def _setting_values(setting, dv):
    return {dm.alpha: setting["alpha"], dm.beta: setting["beta"], dm.gamma: setting["gamma"],
            dm.d: sp.Integer(dv)}


def _setting_text(setting):
    a, b, g = (setting[k] for k in ("alpha", "beta", "gamma"))
    psi = PAPER_PSI.subs({alpha: a, beta: b})
    return {"alpha": float(a), "beta": float(b), "gamma": float(g),
            "psi": float(psi), "c": float(sp.sqrt(1 - g**2))}


@functools.cache
def _flow_on_M(link, risk=None):
    """The 2-D flow on M: the reduced model restricted to ζ = η = ρ = 0 (Prop. 6)."""
    return _reduced(link, risk).restrict(dm.MANIFOLD).derivation.flow


@functools.cache
def _m_invariant(link, risk=None):
    """Whether dζ/dt, dη/dt, dρ/dt of the full overlap flow vanish identically on M (Prop. 5):
    only then is the 2-D restriction (Prop. 6) the flow on M."""
    flow = _reduced(link, risk).derivation.flow
    return all(sp.simplify(r.subs(dm.MANIFOLD)) == 0 for q, r in flow.as_dict().items()
               if q in dm.MANIFOLD)


def _full_velocity(link, risk, setting, dv, point, dps=30):
    """The full 5-D overlap flow's velocity (µ̇, ν̇, ζ̇, η̇, ρ̇) at (µ, ν, 0, 0, 0), parameters
    exact, the point given exactly (strings of the exact roots), evaluated to ``dps`` digits."""
    flow = _reduced(link, risk).derivation.flow
    at = {**_setting_values(setting, dv), dm.zeta: 0, dm.eta: 0, dm.rho: 0,
          dm.mu: sp.sympify(point[0]), dm.nu: sp.sympify(point[1])}
    return {str(q): sp.N(r.subs(at), dps) for q, r in flow.as_dict().items()}


def _full_flow_stationarity(ctx, link, risk, points_by_setting_d, what):
    """Where M is not invariant, the 2-D restriction is not the flow on M: the points the claim
    names are checked in the full flow instead. A point is stationary there only if every
    component of the full velocity vanishes; one that does not is exact evidence (the
    restriction cannot say)."""
    rows, moving = [], []
    for (setting, dv), pts in points_by_setting_d:
        for pt in pts:
            vel = _full_velocity(link, risk, setting, dv, pt)
            # off M only ((µ̇, ν̇) vanish there by the 2-D check); an exact point is moving when
            # a component is nonzero at 30 digits, a float root (15 digits) above 1e-8
            exact = all(isinstance(x, sp.Rational) for x in pt)
            tol = 1e-25 if exact else 1e-8
            big = {k: float(v) for k, v in vel.items()
                   if k in ("zeta", "eta", "rho") and v != 0 and abs(v) > tol}
            row = {**_setting_text(setting), "d": dv, "point": [str(x) for x in pt],
                   "point_exact": exact, "tolerance": tol,
                   "full_velocity": {k: _mp_str(v) for k, v in vel.items()},
                   "stationary_in_full_flow": not big}
            rows.append(row)
            if big:
                moving.append((row, big))
    evidence = {"link": link, "M_invariant": False, "judged_on": "the full 5-D overlap flow",
                "why": f"M is not invariant for σ = {link} (Prop. 5 refuted there): the 2-D "
                       "restriction is not the flow on M", "points": rows, "checked": what}
    return rows, moving, evidence


_STATIONARY_CACHE = {}


def _engine_stationary(flow2, setting, dv):
    """Stationary points of the derived 2-D flow on M at one (setting, d), each classified
    (memoised on the flow's expressions: Props. 7 and 10 share the work)."""
    key = (flow2.rhs, tuple(sorted((k, str(v)) for k, v in setting.items())), dv)
    if key not in _STATIONARY_CACHE:
        _STATIONARY_CACHE[key] = _engine_stationary_uncached(flow2, setting, dv)
    return _STATIONARY_CACHE[key]


def _engine_stationary_uncached(flow2, setting, dv):
    vals = _setting_values(setting, dv)
    rhs = [r.subs(vals) for r in flow2.rhs]
    points, unresolved, curves = stationary_points_exact(rhs, (dm.mu, dm.nu), BOX)
    out = []
    for pt in points:
        c = classify_exact(rhs, (dm.mu, dm.nu), pt, BOX)
        out.append({"mu": float(pt[0]), "nu": float(pt[1]), "exact": [str(x) for x in pt],
                    "eigenvalues": [_mp_str(v) for v in c.eigenvalues],
                    "exact_zero_eigenvalue": list(c.exact_zero), "class": c.kind})
    return out, [(str(f), str(g)) for f, g in unresolved], curves


def _mp_str(v):
    return sp.sstr(sp.N(sp.sympify(str(v)), 6)) if v != 0 else "0"


def _near(p, q, tol=1e-9):
    return abs(p[0] - q[0]) <= tol and abs(p[1] - q[1]) <= tol


def _equation_roots(expr, var):
    """Zeros of expr(var) on [−1, 1]: the numerator is factored first (as the engine does for
    its flow), so that cancellations such as p(µ) − 1 = −e^{−x}/(1 + e^{−x}) are exact and
    not lost below the working precision at large d."""
    return sorted({float(r) for r in factor_roots(expr, var, -1, 1, dps=50, grid=2000)})


def _paper_e_sets(link, setting, dv):
    """Prop. 7's sets from the paper's p(µ) and σ̄_γ: E1 = {(±1, ±1)}; E2 = {(±1, ν):
    σ̄′(ν) = 0}; E3 = {(µ, ±1): p(µ)σ̄(1) = σ̄(±1)}; E4 = interior points with p(µ)σ̄(1) =
    σ̄(ν) and σ̄′(ν) = 0 — each equation solved with the same exact root finder."""
    vals = _setting_values(setting, dv)
    sbar = dm.dual_kernel(link, dm.nu).subs(vals)
    dsbar = sp.diff(sbar, dm.nu)
    p = dm.paper_localisation().subs(vals)
    s1 = sbar.subs(dm.nu, 1)
    sets = {"E1": [(s, t) for s in (-1.0, 1.0) for t in (-1.0, 1.0)], "E2": [], "E3": [], "E4": []}
    nu_roots = _equation_roots(dsbar, dm.nu)
    sets["E2"] = [(s, t) for s in (-1.0, 1.0) for t in nu_roots]
    for t in (-1, 1):
        sets["E3"] += [(m, float(t)) for m in _equation_roots(p * s1 - sbar.subs(dm.nu, t), dm.mu)]
    for t in nu_roots:
        if -1 < t < 1:
            eq = p * s1 - sbar.subs(dm.nu, sp.nsimplify(t, rational=True, tolerance=1e-30))
            sets["E4"] += [(m, t) for m in _equation_roots(eq, dm.mu) if -1 < m < 1]
    return sets


def _fastest(moving):
    """(row, coordinate, velocity) of the largest off-rest velocity among ``moving`` points."""
    w, big = max(moving, key=lambda m: max(map(abs, m[1].values())))
    k, v = max(big.items(), key=lambda kv: abs(kv[1]))
    return w, k, v


def _prop7_full_flow(ctx, link, risk, dims):
    """Prop. 7 where M is not invariant: the stationary points on M are those of the 2-D
    restriction whose off-M velocity also vanishes, so the claimed sets must consist of points
    at which the full flow is at rest."""
    pts = [((st, dv), list(dict.fromkeys(tuple(sp.Integer(int(x)) if abs(x) == 1 else repr(x)
                                               for x in q)
                                         for e in _paper_e_sets(link, st, dv).values() for q in e)))
           for st in STATIONARY_SETTINGS for dv in dims]
    rows, moving, evidence = _full_flow_stationarity(ctx, link, risk, pts, "E1 ∪ E2 ∪ E3 ∪ E4")
    if moving:
        w, k, v = _fastest(moving)
        return Outcome("refuted", f"{link}: M is not invariant, and in the full flow "
                       f"{len(moving)}/{len(rows)} points of E1 ∪ … ∪ E4 are not stationary, e.g. "
                       f"({w['point'][0]}, {w['point'][1]}) has d{k}/dt = {v:.4g} at α={w['alpha']}, "
                       f"β={w['beta']}, γ={w['gamma']}, d={w['d']} (exact parameters, 30 digits)",
                       evidence)
    return Outcome("inconclusive", f"{link}: M is not invariant; every point of E1 ∪ … ∪ E4 is at "
                   "rest in the full flow, but the stationary set on M was not searched in the "
                   "full flow (the 2-D restriction is not the flow on M)", evidence)


def _prop7_check(ctx, link, risk=None):
    if not _m_invariant(link, risk):
        return _prop7_full_flow(ctx, link, risk, ctx.pick([50, 100, 200], [50, 100, 200, 400, 800]))
    flow2 = _flow_on_M(link, risk)
    dims = ctx.pick([50, 100, 200], [50, 100, 200, 400, 800])
    rows, bad = [], []
    total = len(STATIONARY_SETTINGS) * len(dims)
    for i, setting in enumerate(STATIONARY_SETTINGS):
        for j, dv in enumerate(dims):
            found, unresolved, curves = _engine_stationary(flow2, setting, dv)
            sets = _paper_e_sets(link, setting, dv)
            paper = [q for e in sets.values() for q in e]
            engine = [(f["mu"], f["nu"]) for f in found]
            missing = [q for q in paper if not any(_near(q, e) for e in engine)]
            extra = [e for e in engine if not any(_near(q, e) for q in paper)]
            row = {**_setting_text(setting), "d": dv, "engine": found,
                   "paper_sets": {k: [list(q) for q in v] for k, v in sets.items()},
                   "missing_from_engine": missing, "not_in_paper_sets": extra,
                   "unresolved_factor_pairs": unresolved, "curves": [list(map(str, c)) for c in curves]}
            rows.append(row)
            if missing or extra or unresolved or curves:
                bad.append(row)
            ctx.tick((i * len(dims) + j + 1) / total)
    evidence = {"link": link, "rows": rows}
    if bad:
        w = bad[0]
        return Outcome("refuted", f"{link}: at α={w['alpha']}, β={w['beta']}, γ={w['gamma']}, "
                       f"d={w['d']}: stationary points not in E1∪…∪E4: {w['not_in_paper_sets']}; "
                       f"in E1∪…∪E4 but not stationary: {w['missing_from_engine']}", evidence)
    n = sum(len(r["engine"]) for r in rows)
    return Outcome("confirmed", f"{link}: the derived flow's stationary set on M equals "
                   f"E1 ∪ E2 ∪ E3 ∪ E4 at {len(rows)} (setting, d) ({n} points)", evidence)


_per_link("prop7-stationary-set", "Prop. 7",
          "The stationary points on M are exactly E1 ∪ E2 ∪ E3 ∪ E4: E1 = {{(±1, ±1)}}; "
          "E2 = {{(±1, ν): σ̄′_γ(ν) = 0}}; E3 = {{(µ, ±1): p(µ)σ̄_γ(1) = σ̄_γ(±1)}}; E4 = "
          "interior points with p(µ)σ̄_γ(1) = σ̄_γ(ν) and σ̄′_γ(ν) = 0; here σ = {link}.",
          _prop7_check, statistical=False,
          reading="at finite d (p(µ) as the paper defines it), exact arithmetic: the engine "
                  "factors its derived 2-D flow and solves every factor pair in 50-digit "
                  "precision; the paper's sets are solved from its own equations. "
                  "(α, β, γ) = (0.1, 1, 0.6) [ψ < c] and (0.2, 1.5, 0.9) [c < ψ < 1].")


def _prop9_check(ctx, link, risk=None):
    dims = ctx.pick([50, 100, 200], [50, 100, 200, 400, 800])
    if not _m_invariant(link, risk):
        pts = [((st, dv), [(sp.Integer(1), sp.Integer(1))]) for st in STATIONARY_SETTINGS
               for dv in dims]
        rows, moving, evidence = _full_flow_stationarity(ctx, link, risk, pts, "the oracle (1, 1)")
        if moving:
            w, k, v = _fastest(moving)
            return Outcome("refuted", f"{link}: M is not invariant, and the oracle (1, 1, 0, 0, 0) "
                           f"is not stationary in the full flow at {len(moving)}/{len(rows)} "
                           f"(setting, d), e.g. d{k}/dt = {v:.4g} at α={w['alpha']}, β={w['beta']}, "
                           f"γ={w['gamma']}, d={w['d']} (exact parameters, 30 digits)", evidence)
        return Outcome("inconclusive", f"{link}: M is not invariant; the oracle is at rest in the "
                       "full flow, but its class there (at the edge of the realisable set) is not "
                       "checked, and the 2-D restriction's class is not valid", evidence)
    flow2 = _flow_on_M(link, risk)
    rows, bad = [], []
    for setting in STATIONARY_SETTINGS:
        for dv in dims:
            vals = _setting_values(setting, dv)
            rhs = [r.subs(vals) for r in flow2.rhs]
            residual = [sp.simplify(r.subs({dm.mu: 1, dm.nu: 1})) for r in rhs]
            c = classify_exact(rhs, (dm.mu, dm.nu), (sp.Integer(1), sp.Integer(1)), BOX)
            row = {**_setting_text(setting), "d": dv, "rhs_at_oracle": [str(x) for x in residual],
                   "eigenvalues": [_mp_str(v) for v in c.eigenvalues], "class": c.kind}
            rows.append(row)
            if any(x != 0 for x in residual) or c.kind != "sink":
                bad.append(row)
    evidence = {"link": link, "rows": rows}
    if bad:
        w = bad[0]
        what = "not stationary" if any(x != "0" for x in w["rhs_at_oracle"]) else "a " + w["class"]
        return Outcome("refuted", f"{link}: (1, 1) is {what} "
                       f"at α={w['alpha']}, β={w['beta']}, γ={w['gamma']}, d={w['d']} "
                       f"(eigenvalues {w['eigenvalues']})", evidence)
    slow = min(rows, key=lambda r: abs(float(r["eigenvalues"][0])))
    return Outcome("confirmed", f"{link}: (1, 1) is a sink at all {len(rows)} (setting, d); "
                   f"its slowest rate is exponentially small in d (e.g. {slow['eigenvalues'][0]} "
                   f"at d={slow['d']})", evidence)


_per_link("prop9-oracle-sink", "Prop. 9",
          "(µ, ν) = (1, 1) is a sink for every link satisfying Condition 1; here σ = {link}.",
          _prop9_check, statistical=False,
          reading="sink = both Jacobian eigenvalues of the derived 2-D flow on M negative, "
                  "evaluated exactly at finite d (they are exponentially small in d along µ).")


PROP10_CLAIMED = {  # the paper's list: (µ, ν) → class; 'psi' marks the point (ψ, 0)
    "linear": ([((1, 1), "sink"), ((1, -1), "source"), ((-1, 1), "saddle"), ((-1, -1), "saddle")], True),
    "quadratic": ([((1, 1), "sink"), ((1, -1), "sink"), ((-1, 1), "saddle"), ((-1, -1), "saddle"),
                   ((-1, 0), "saddle"), (("psi", 0), "saddle"), ((1, 0), "source")], True),
    "relu": ([((1, 1), "sink"), ((1, -1), "saddle"), ((1, -1), "degenerate"),
              ((-1, -1), "degenerate")], False),
}


def _prop10_targets(listed, st):
    """(location, listed point, class) for each listed point; (ψ, 0) only where feasible
    (ψ < 1, the paper's condition)."""
    feasible_psi = st["psi"] < 1
    return [((st["psi"] if loc[0] == "psi" else loc[0], loc[1]), loc, cls) for loc, cls in listed
            if not (loc[0] == "psi" and not feasible_psi)]


def _nearest_by_d(per_d, target):
    """Per d: distance (L¹) to the found point nearest to target, its class and eigenvalues."""
    dist, classes, eig = [], [], []
    for found in per_d:
        f = min(found, key=lambda f: abs(f["mu"] - target[0]) + abs(f["nu"] - target[1]),
                default=None)
        dist.append(np.inf if f is None else abs(f["mu"] - target[0]) + abs(f["nu"] - target[1]))
        classes.append(None if f is None else f["class"])
        eig.append(None if f is None else f["eigenvalues"])
    return dist, classes, eig


def _distance_limit(dims, dist):
    """d → ∞ limit of the distance from its 1/d extrapolation (the largest distance when it
    cannot be fitted)."""
    if all(np.isfinite(dist)) and max(dist) > 0:
        return _fit_intercept(dims, dist, basis=("1/d",))
    return float(max(dist))


def _prop10_entry(st, loc, cls, target, per_d, dims):
    dist, classes, eig = _nearest_by_d(per_d, target)
    limit = _distance_limit(dims, dist)
    ok_loc = limit <= 1e-3
    ok_cls = all(c == cls for c in classes)
    return {**st, "point_claimed": [str(loc[0]), loc[1]], "location_claimed": list(target),
            "distance_by_d": dist, "distance_limit": limit, "class_claimed": cls,
            "class_found_by_d": classes, "eigenvalues_by_d": eig, "d": dims,
            "ok": bool(ok_loc and ok_cls)}


def _unlisted(st, dims, per_d, locations):
    """Found stationary points farther than 0.05 from every listed location."""
    return [{**st, "d": dv, "unlisted_stationary_point": f}
            for dv, found in zip(dims, per_d) for f in found
            if not any(_near((f["mu"], f["nu"]), q, 0.05) for q in locations)]


def _prop10_problem_text(problems):
    txt = []
    for p in problems[:3]:
        if "unlisted_stationary_point" in p:
            f = p["unlisted_stationary_point"]
            txt.append(f"unlisted {f['class']} at ({f['mu']:.4g}, {f['nu']:.4g}) "
                       f"[α={p['alpha']}, β={p['beta']}, γ={p['gamma']}, d={p['d']}]")
        else:
            txt.append(f"({', '.join(p['point_claimed'][:1] + [str(p['point_claimed'][1])])}) "
                       f"claimed {p['class_claimed']}: found {p['class_found_by_d'][-1]} at "
                       f"distance {p['distance_by_d'][-1]:.3g} (→ {p['distance_limit']:.3g}) "
                       f"[α={p['alpha']}, β={p['beta']}, γ={p['gamma']}, ψ={p['psi']:.3f}, "
                       f"c={p['c']:.3f}]")
    return "; ".join(txt) + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")


def _prop10_check(ctx, link, claimed=None):
    """Every listed point must be a stationary point of the derived flow with the listed class
    at every d (a listed location is matched by the nearest found point; for (ψ, 0) the
    distance must vanish as d grows, judged from its 1/d extrapolation); where the paper's list
    is complete (linear, quadratic) no other stationary point may exist."""
    listed, complete = PROP10_CLAIMED[link] if claimed is None else claimed
    flow2 = _flow_on_M(link)
    dims = ctx.pick([50, 100, 200], [50, 100, 200, 400, 800])
    rows, problems, by_setting = [], [], []
    for setting in STATIONARY_SETTINGS:
        st = _setting_text(setting)
        per_d = []
        for dv in dims:
            found, _, _ = _engine_stationary(flow2, setting, dv)
            per_d.append(found)
            rows.append({**st, "d": dv, "found": found})
        targets = _prop10_targets(listed, st)
        for target, loc, cls in targets:
            entry = _prop10_entry(st, loc, cls, target, per_d, dims)
            by_setting.append(entry)
            if not entry["ok"]:
                problems.append(entry)
        if complete:
            problems += _unlisted(st, dims, per_d, [t for t, _, _ in targets])
    evidence = {"link": link, "claimed": [[list(map(str, l)), c] for l, c in listed],
                "list_is_complete": complete, "checks": by_setting, "stationary_by_d": rows}
    figs = {"flow_on_M": _draw_flow_on_M(link, flow2, rows)}
    if problems:
        return Outcome("refuted", f"{link}: " + _prop10_problem_text(problems), evidence,
                       figures=figs)
    return Outcome("confirmed", f"{link}: every listed point found with its class at every d, "
                   f"{'and no other' if complete else 'list not exhaustive'}", evidence, figures=figs)


def _draw_flow_on_M(link, flow2, rows):
    setting, dv = STATIONARY_SETTINGS[0], 100
    vals = _setting_values(setting, dv)
    f = generate((dm.mu, dm.nu), [r.subs(vals) for r in flow2.rhs])
    found = next((r["found"] for r in rows if r["d"] == dv and r["alpha"] == float(setting["alpha"])),
                 rows[0]["found"])
    colours = {"sink": "tab:blue", "source": "tab:red", "saddle": "tab:orange", "degenerate": "grey"}

    def draw(fig):
        ax = fig.add_subplot()
        m, n = np.meshgrid(np.linspace(-0.999, 0.999, 41), np.linspace(-0.999, 0.999, 41))
        with np.errstate(all="ignore"):
            U, V = (np.broadcast_to(np.asarray(x, float), m.shape) for x in f(m, n))
        # directions only: the µ-rates span hundreds of orders of magnitude
        U, V = np.sign(U) * (np.abs(U) > 0), np.sign(V) * (np.abs(V) > 0)
        norm = np.hypot(U, V) + 1e-300
        ax.streamplot(m, n, U / norm, V / norm, density=0.8, color="0.6", linewidth=0.7)
        for s in found:
            ax.scatter(s["mu"], s["nu"], s=60, color=colours[s["class"]], zorder=3,
                       edgecolor="k", label=s["class"])
        h, l = ax.get_legend_handles_labels()
        uniq = dict(zip(l, h))
        ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
        st = _setting_text(setting)
        ax.axvline(st["psi"] / st["c"], ls=":", color="k", lw=0.8)
        ax.set_xlabel("µ = uᵀu*")
        ax.set_ylabel("ν = vᵀv*")
        ax.set_title(f"Dohmatob: derived flow on M, {link} link (signs of µ̇, ν̇)\n"
                     f"α={st['alpha']}, β={st['beta']}, γ={st['gamma']}, d={dv}; dotted: µ = ψ/c",
                     fontsize=8)
    return draw


_per_link("prop10-classification", "Prop. 10",
          "Linear: stationary points (±1, ±1); (1, 1) sink, (1, −1) source, (−1, ±1) saddles. "
          "Quadratic: (±1, ±1), (±1, 0) and (ψ, 0) (feasible iff ψ < 1); (1, ±1) sinks, "
          "(−1, ±1), (−1, 0) and (ψ, 0) saddles, (1, 0) source. ReLU: (1, 1) sink, (1, −1) "
          "saddle, (±1, −1) degenerate. Here σ = {link}.",
          _prop10_check, statistical=False,
          reading="classes from the exact Jacobian eigenvalues of the derived 2-D flow on M at "
                  "d = 50, 100, 200 (full: to 800) for (α, β, γ) = (0.1, 1, 0.6) and (0.2, 1.5, "
                  "0.9); the ReLU list names (1, −1) twice (saddle and degenerate) and is not "
                  "exhaustive: each listed pair is checked as stated.")


# -------------------------------------------------------------------------------------------
GRAM_TOL = 1e-8    # float64 roots at the edge of the realisable set, e.g. (−1, 1 + 7e-10, …)


def _realisable(reduced, y, tol=GRAM_TOL):
    """Whether the overlaps y (the reduced model's state order) are realisable by unit vectors:
    the Gram matrix of (u, v, u*, v*) that the model's geometry builds from them has no
    eigenvalue below −tol (this also bounds every overlap by 1 + tol). ``check_state`` would
    apply tighter tolerances (1e-10 on each overlap, 1e-9 on the Gram matrix), which reject
    float64 roots that refine to genuine roots on the edge of the realisable set."""
    gram = reduced.geometry.gram_values(reduced.unpack(y))
    return bool(np.linalg.eigvalsh(gram).min() > -tol)


def _prop4_roots(reduced, setting, dv, n_starts, seed):
    """Realisable stationary points of the overlap flow at one d: roots from Sobol starts
    (generated float code of the reduced model's flow at the exact parameters, symbolic
    Jacobian), kept when realisable (Gram PSD) and still roots after refinement to 40 digits
    (residual < 1e-25; a refinement that fails discards it)."""
    flow = reduced.derivation.flow
    state = flow.state
    order = [state.index(s) for s in (dm.mu, dm.nu, dm.zeta, dm.eta, dm.rho)]
    rhs = [r.subs(_setting_values(setting, dv)) for r in flow.rhs]
    n = len(state)
    f = generate(state, rhs)
    jf = generate(state, list(sp.Matrix(rhs).jacobian(sp.Matrix(state))))
    with np.errstate(all="ignore"):
        pts = find_stationary_points(lambda x: np.array(f(*x), float),
                                     lambda x: np.array(jf(*x), float).reshape(n, n),
                                     [(-1, 1)] * n, n_starts=n_starts, tol=1e-11, seed=seed)
    rows, dropped = [], []
    for p in pts:
        q = tuple(p.x[k] for k in order)
        if not _realisable(reduced, reduced.pack(dict(zip(map(str, state), p.x)))):
            continue
        ref = refine_root(rhs, state, p.x, dps=40, tol=1e-30)
        point = {"d": dv, "mu": q[0], "nu": q[1], "zeta": q[2], "eta": q[3], "rho": q[4],
                 "residual_float64": p.residual, "class": p.kind}
        if not (ref.residual < 1e-25):
            # undecided: the 40-digit refinement failed (or did not reach a root): counted
            dropped.append({**point, "residual_40_digits": ref.residual,
                            "refinement": getattr(ref, "message", "") or "residual ≥ 1e-25"})
            continue
        rows.append({**point, "residual_40_digits": ref.residual,
                     "eigenvalues": [complex(e).real for e in p.eigenvalues]})
    return rows, dropped


def _on_M(r):
    return abs(r["zeta"]) + abs(r["eta"]) + abs(r["rho"]) < 1e-6


def _prop4_judge(rows, evidence, dropped=()):
    """Every realisable stationary point on M at (±1, ±1), the oracle the only sink. Float64
    roots whose 40-digit refinement failed (``dropped``) are counted: with any, the claim is
    not confirmed on the rest (inconclusive), and a refutation says how many are undecided."""
    dropped = list(dropped)
    evidence["refinement_failed"] = dropped
    evidence["refinement_failed_count"] = len(dropped)
    undecided = (f"; {len(dropped)} float64 root(s) undecided (40-digit refinement failed)"
                 if dropped else "")
    off_M = [r for r in rows if not _on_M(r)]
    on_M_extra = [r for r in rows if _on_M(r)
                  and not (abs(abs(r["mu"]) - 1) < 1e-6 and abs(abs(r["nu"]) - 1) < 1e-6)]
    other_sinks = [r for r in rows if r["class"] == "sink"
                   and not (abs(r["mu"] - 1) < 1e-6 and abs(r["nu"] - 1) < 1e-6 and _on_M(r))]
    oracle = [r for r in rows if abs(r["mu"] - 1) < 1e-6 and abs(r["nu"] - 1) < 1e-6 and _on_M(r)]
    evidence.update({"stationary_points": rows, "off_M": off_M, "on_M_not_pm1": on_M_extra,
                     "sinks_other_than_oracle": other_sinks,
                     "oracle_classes": [r["class"] for r in oracle]})
    if off_M or on_M_extra or other_sinks:
        w = (off_M or on_M_extra or other_sinks)[0]
        return Outcome("refuted", f"{len(off_M)} stationary points off M (and {len(other_sinks)} "
                       f"other sinks), e.g. (µ, ν, ζ, η, ρ) = ({w['mu']:.4f}, {w['nu']:.4f}, "
                       f"{w['zeta']:.4f}, {w['eta']:.4f}, {w['rho']:.4f}) at d={w['d']}, a {w['class']} "
                       f"(residual {w['residual_40_digits']:.1e} at 40 digits, Gram PSD){undecided}",
                       evidence)
    if not oracle or any(r["class"] != "sink" for r in oracle):
        return Outcome("refuted" if oracle else "inconclusive" if dropped else "refuted",
                       "(1, 1, 0, 0, 0) is not found as a sink "
                       f"(classes {evidence['oracle_classes']}){undecided}", evidence)
    if dropped:
        w = dropped[0]
        return Outcome("inconclusive", f"the {len(rows)} refined stationary points lie on M at "
                       f"(±1, ±1) with the oracle the only sink, but {len(dropped)} float64 "
                       f"root(s) could not be refined to 40 digits, e.g. (µ, ν, ζ, η, ρ) = "
                       f"({w['mu']:.4f}, {w['nu']:.4f}, {w['zeta']:.4f}, {w['eta']:.4f}, "
                       f"{w['rho']:.4f}) at d={w['d']} ({w['refinement']}): they may lie off M; "
                       "more digits or another refinement would decide", evidence)
    return Outcome("confirmed", f"all {len(rows)} realisable stationary points lie on M at "
                   f"(±1, ±1); (1, 1, 0, 0, 0) is the only sink", evidence)


def _prop4_check(ctx, risk=None, setting=None):
    """Root-finding on the full derived overlap flow (µ, ν, ζ, η, ρ) from scrambled-Sobol starts,
    each root refined to 40 digits (mpmath) and kept only if realisable (Gram of (u, v, u*, v*)
    PSD); classified from the Jacobian's eigenvalues."""
    reduced = _reduced("linear", risk)
    setting = STATIONARY_SETTINGS[0] if setting is None else setting
    dims = ctx.pick([10, 20], [10, 20, 40])
    n_starts = ctx.pick(512, 2048)
    rows, dropped = [], []
    for i, dv in enumerate(dims):
        r, dr = _prop4_roots(reduced, setting, dv, n_starts, seed=ctx.claim_seed(f"p4:{dv}") % 2**31)
        rows += r
        dropped += dr
        ctx.tick((i + 1) / len(dims))
    evidence = {**_setting_text(setting), "d": dims, "n_starts": n_starts}
    return _prop4_judge(rows, evidence, dropped)


claim(f"{PAPER}:prop4-linear-stationary", "Prop. 4",
      "Linear link: M contains every stationary point of the overlap flow; the only ones are "
      "(µ, ν, η, ζ) = (±1, ±1, 0, 0); (1, 1, 0, 0) is the unique attractor.",
      statistical=False,
      reading="the overlap flow (µ, ν, ζ, η, ρ) of projected gradient flow on the paper's R̄ "
              "(Cor. 1), derived by the engine; roots from Sobol starts over the box, kept when "
              "they are roots at 40 digits and realisable (Gram PSD); d = 10, 20 (full: 40), "
              "(α, β, γ) = (0.1, 1, 0.6). Larger d makes the rates exponentially small and "
              "float64 root finding unreliable. Roots whose 40-digit refinement fails are counted "
              "(with any, no confirmation).",
      mutations={"ascending flow (−R̄)": lambda: {"risk": -dm.paper_risk("linear")}})(_prop4_check)


# -------------------------------------------------------------------------------------------
FIG2 = {"d": 100, "L": 20, "beta": 1.0, "gamma": 1 / np.sqrt(2), "eps": 0.1, "step": 0.01,
        "n_train": 1000, "n_test": 10_000}


def _fig2_check(ctx, formula=None, link="linear"):
    """One PGD run on the empirical risk at the paper's Fig. 2 settings; at every record the
    test risk (10⁴ fresh samples, standard error) against Prop. 1's R̄ at the current overlaps
    with α = log(L − 1)/d. Agreement: |R_test − R̄| ≤ z·se + R̄/√d, the last term an explicit
    finite-size allowance (R̄ is a d → ∞ limit; 10% at d = 100)."""
    from numerics.softmax_attention import pgd_empirical
    import torch
    torch_link = {"linear": lambda t: t, "quadratic": lambda t: t**2, "relu": torch.relu}[link]
    n_steps = ctx.pick(1000, 3000)
    rec = pgd_empirical(FIG2["d"], FIG2["L"], FIG2["beta"], FIG2["gamma"], FIG2["eps"], torch_link,
                        FIG2["n_train"], FIG2["n_test"], FIG2["step"], n_steps, ctx.pick(50, 100),
                        seed=ctx.claim_seed("fig2"))
    R = _rbar(link) if formula is None else formula
    Rf = _numeric(R)
    a_ = float(np.log(FIG2["L"] - 1) / FIG2["d"])
    theory = np.array([float(Rf(a_, FIG2["beta"], FIG2["gamma"], FIG2["d"], *q)) for q in rec["overlaps"]])
    finite(theory, rec["test_risk"], rec["test_se"])
    allowance = theory / np.sqrt(FIG2["d"])
    check = estimate_vs_theory(ctx, rec["test_risk"], rec["test_se"], theory, bias=allowance,
                               name="test risk vs R̄ along PGD")
    z, ok = check.z, check.ok
    gap = np.abs(rec["test_risk"] - theory)
    points = [{"step": int(k), **dict(zip(("mu", "nu", "zeta", "eta", "rho"), map(float, q))),
               "test_risk": float(t), "test_se": float(s), "theory": float(th), "ok": bool(o)}
              for k, q, t, s, th, o in zip(rec["step"], rec["overlaps"], rec["test_risk"],
                                           rec["test_se"], theory, ok)]
    evidence = {**{k: float(v) for k, v in FIG2.items()}, "alpha": a_, "link": link, "z": z,
                "allowance": "R̄/√d", "points": points, "check": check.evidence(),
                "final_train_risk": float(rec["train_risk"][-1])}
    arrays = {"steps": rec["step"], "overlaps": rec["overlaps"], "test_risk": rec["test_risk"],
              "test_se": rec["test_se"], "theory": theory}
    figs = {"fig2_reproduction": _draw_fig2(rec, theory)}
    if not ok.all():
        i = int(np.argmax(gap / (z * rec["test_se"] + allowance)))
        p = points[i]
        return Outcome("refuted", f"{int((~ok).sum())}/{len(ok)} records disagree; worst at step "
                       f"{p['step']}: test risk {p['test_risk']:.4g} ± {p['test_se']:.2g} vs R̄ "
                       f"{p['theory']:.4g} at (µ, ν, ζ, η, ρ) = ({p['mu']:.3f}, {p['nu']:.3f}, "
                       f"{p['zeta']:.3f}, {p['eta']:.3f}, {p['rho']:.3f})", evidence,
                       arrays=arrays, figures=figs)
    return Outcome("confirmed", f"test risk agrees with R̄ at all {len(ok)} records along PGD "
                   f"(z = {z:.2f}, allowance R̄/√d)", evidence, arrays=arrays, figures=figs)


def _draw_fig2(rec, theory):
    def draw(fig):
        ax = fig.add_subplot()
        ax.errorbar(rec["step"], rec["test_risk"], yerr=2 * rec["test_se"], fmt="o", ms=3,
                    label="test risk (10⁴ samples, ±2 se)")
        ax.plot(rec["step"], theory, "k-", label="Prop. 1 R̄ at the current overlaps")
        ax.plot(rec["step"], rec["train_risk"] - FIG2["eps"] ** 2, ":", label="train risk − ε²")
        ax.set_yscale("log")
        ax.set_xlabel("PGD step (s = 0.01)")
        ax.set_ylabel("risk")
        ax.set_title("Dohmatob Fig. 2 reproduction: d=100, L=20, β=1, γ=1/√2, n=1000", fontsize=9)
        ax.legend(fontsize=7)
    return draw


claim(f"{PAPER}:fig2-agreement", "Fig. 2",
      "With d = 100, L = 20, β = 1, γ = 1/√2, ε = 0.1, PGD with s = 0.01 on the empirical risk "
      "of n = 1000 samples, the test risk (10⁴ samples) along the whole trajectory agrees with "
      "Prop. 1 evaluated at the current overlaps.",
      reading="linear link (the paper's Fig. 2 setting as we read it); random initialisation; "
              "α = log(L − 1)/d; test risk against noise-free labels (= risk − ε²); "
              "agreement within z·se plus an explicit finite-size allowance R̄/√d; 1000 steps "
              "(full: 3000).",
      mutations={"R̄ × 1.5": lambda: {"formula": sp.Rational(3, 2) * _rbar("linear")}})(_fig2_check)


# -------------------------------------------------------------------------------------------
from numerics.frame import compile_frame_flow  # noqa: E402
from numerics.ode import integrate  # noqa: E402
from numerics.pgd import project_gradient, projected_gradient_descent  # noqa: E402
from theory.frame import frame_flow  # noqa: E402


def _frame(reduced, vals):
    """The reduced model's projected gradient flow for (u, v) written in the frame
    (u*, v*, e3, e4) (the engine's frame flow of its geometry and risk, parameters ``vals``
    substituted: state y = (u, v) ∈ R⁸, µ = u₁, ν = v₂, ζ = v₁, η = u₂, ρ = uᵀv), compiled.
    Integrating vectors rather than overlaps keeps every state realisable and resolves tiny
    departures from an edge such as u = −u*, which overlap coordinates lose."""
    return compile_frame_flow(frame_flow(reduced.geometry, reduced.derivation.risk, vals))


SPHERE_TOL = 1e-7     # |‖w‖ − 1| along a run above this: the run left the realisable set


def _on_spheres(flow, tol=SPHERE_TOL):
    """A state check for ``checks.realisable``: y finite with each trainable vector of unit norm
    within ``tol`` (u, v ∈ S^{d−1}); a ValueError names the vector otherwise."""
    def check(y):
        y = np.asarray(y, float)
        if not np.all(np.isfinite(y)):
            raise ValueError("non-finite coordinates; allowed: finite reals")
        for k, (a, b, _) in enumerate(flow.blocks):
            dev = abs(float(np.linalg.norm(y[a:b])) - 1)
            if dev > tol:
                raise ValueError(f"vector #{k} has |‖w‖ − 1| = {dev:.3g}; allowed: ≤ {tol:g} "
                                 "(unit sphere)")
    return check


def _integrate_on_spheres(flow, y0, t_eval):
    """LSODA (BDF, Radau as fallbacks); a run that leaves the spheres is redone once with
    tolerances 100× tighter, and if it still leaves them ``checks.realisable`` raises
    OutsideRealisableSet: no verdict rests on it."""
    tr = None
    for rtol, atol in ((1e-9, 1e-14), (1e-11, 1e-16)):
        tr = integrate(flow.rhs, y0, t_eval, jac=flow.jacobian, method="LSODA",
                       fallback=("BDF", "Radau"), rtol=rtol, atol=atol, max_nfev=100_000)
        if not tr.ok:
            return tr
        if _norm_deviation(flow, tr.y).max() <= SPHERE_TOL:    # False for non-finite states
            return tr
    return tr


def _norm_deviation(flow, Y):
    return np.max([np.abs(np.linalg.norm(Y[:, a:b], axis=1) - 1) for a, b, _ in flow.blocks], axis=0)


def _global_run(flow, dv, kind, y0, t_eval):
    """One run of the flow from y0: LSODA, then BDF and Radau (symbolic Jacobian) when a
    solver exceeds 10⁵ right-hand-side evaluations (LSODA occasionally stalls on the slow
    edges); every state of the run checked on the spheres (``checks.realisable``, raising
    OutsideRealisableSet → verdict ``error``); its final overlaps, distance to the oracle and
    speed."""
    tr = _integrate_on_spheres(flow, y0, t_eval)
    if not tr.ok:
        return {"d": dv, "start": kind, "outcome": "solver failed", "solvers_tried": list(tr.tried),
                "status": tr.status, "message": tr.message}
    # validity guard: the verdict may only rest on states of S^{d-1} × S^{d-1}
    realisable(tr.y, _on_spheres(flow), what=f"state of the run from {kind} at d={dv}")
    final, q0 = flow.overlaps(tr.final), flow.overlaps(y0)
    vec = flow.vectors(tr.final)
    off_sphere = float(_norm_deviation(flow, tr.y).max())
    dist = abs(final["mu"] - 1) + abs(final["nu"] - 1) + sum(abs(final[k]) for k in ("zeta", "eta", "rho"))
    speed = float(np.max(np.abs(flow.rhs(tr.final))))
    outcome = ("oracle" if dist < 1e-6 else "stationary elsewhere" if speed < 1e-12
               else "not converged")
    return {"d": dv, "start": kind, "initial": {k: float(x) for k, x in q0.items()},
            "final": {k: float(x) for k, x in final.items()},
            "norms": [float(np.linalg.norm(vec["u"])), float(np.linalg.norm(vec["v"]))],
            "max_norm_deviation": off_sphere,
            "distance_to_oracle": dist, "final_speed": speed, "nfev": int(tr.nfev),
            "solver": tr.method, "outcome": outcome}


def _global_convergence_check(ctx, risk=None, setting=None, horizon=1e14):
    """Projected gradient flow (the s → 0 limit of PGD) on the linear-link R̄, integrated with
    LSODA (stiff switching; vector coordinates keep tiny departures from an edge such as
    u = −u* resolved, which overlap coordinates lose) to t = 10¹⁴ from random initialisations
    (u, v uniform on the sphere of span{u*, v*, e3, e4}) and from small perturbations of the
    other stationary points on M (the saddles (−1, ±1) and the source (1, −1))."""
    reduced = _reduced("linear", risk)
    setting = STATIONARY_SETTINGS[0] if setting is None else setting
    dims = ctx.pick([10, 20], [10, 20, 40])
    n_random = ctx.pick(6, 24)
    rng = ctx.rng("global-convergence")
    t_eval = np.r_[0, np.logspace(-2, np.log10(horizon), 33)]
    runs = []
    for i, dv in enumerate(dims):
        flow = _frame(reduced, _setting_values(setting, dv))
        starts = [("random", rng.standard_normal(4), rng.standard_normal(4)) for _ in range(n_random)]
        for su, sv in ((-1, 1), (-1, -1), (1, -1)):
            starts.append((f"near ({su}, {sv}, 0, 0, 0)",
                           np.array([su, 0, 0, 0.0]) + rng.standard_normal(4) * 1e-3,
                           np.array([0, sv, 0, 0.0]) + rng.standard_normal(4) * 1e-3))
        for kind, u, v in starts:
            y0 = np.concatenate([u / np.linalg.norm(u), v / np.linalg.norm(v)])
            runs.append(_global_run(flow, dv, kind, y0, t_eval))
        ctx.tick((i + 1) / len(dims))
    evidence = {**_setting_text(setting), "runs": runs, "horizon": horizon}
    elsewhere = [r for r in runs if r["outcome"] == "stationary elsewhere"]
    pending = [r for r in runs if r["outcome"] == "not converged"]
    failed = [r for r in runs if r["outcome"] == "solver failed"]
    if elsewhere:
        w = elsewhere[0]
        return Outcome("refuted", f"{len(elsewhere)}/{len(runs)} runs end at another stationary "
                       f"point, e.g. from {w['start']} at d={w['d']}: final "
                       f"{ {k: round(v, 4) for k, v in w['final'].items()} }", evidence)
    if failed:
        return Outcome("inconclusive", f"{len(failed)}/{len(runs)} runs could not be integrated "
                       f"(solvers {failed[0]['solvers_tried']}: {failed[0]['status']}, "
                       f"{failed[0]['message']}); the other "
                       f"{len(runs) - len(failed)} converge to (1, 1, 0, 0, 0)", evidence)
    if pending:
        w = pending[0]
        return Outcome("inconclusive", f"{len(pending)}/{len(runs)} runs still moving at "
                       f"t = {horizon:g}, e.g. from {w['start']} at d={w['d']}: "
                       f"{ {k: round(v, 4) for k, v in w['final'].items()} }", evidence)
    return Outcome("confirmed", f"all {len(runs)} runs (random starts and perturbed saddles/"
                   f"source, d = {dims}) converge to (1, 1, 0, 0, 0)", evidence)


claim(f"{PAPER}:global-convergence-linear", "Sec. 5",
      "For σ(t) = t, PGD converges to (u*, v*) from any initialisation.", statistical=False,
      reading="PGD read in its s → 0 limit (projected gradient flow) on the paper's R̄, i.e. the "
              "engine's overlap flow, integrated to t = 10¹⁴ (the rates are e^{−O(d)}); every "
              "state checked on the unit spheres (a run that leaves them is redone with tighter "
              "tolerances, then the claim says error); "
              "'any initialisation' tested by random starts and perturbed unstable stationary "
              "points; d = 10, 20 (full: 40); (α, β, γ) = (0.1, 1, 0.6).",
      mutations={"ascending flow (−R̄)": lambda: {"risk": -dm.paper_risk("linear"),
                                                  "horizon": 1e6}})(_global_convergence_check)


# -------------------------------------------------------------------------------------------
def _step_bound(flow, pts, delta):
    """L̂ = max |eig ∇²R| and M̂ = max ‖P⊥∇R‖ over the sampled points (lower bounds of the
    smoothness and gradient constants), L_δ = 4L̂/(1 − δ)² and the step bound
    min(1/(2L_δ), 1/M̂) of the rebuttal."""
    with np.errstate(all="ignore"):
        L_hat = float(np.abs(np.linalg.eigvalsh(flow.hessian(pts))).max(axis=1).max())
        M_hat = float(np.linalg.norm(project_gradient(flow.gradient(pts), pts, flow.blocks), axis=1).max())
    L_delta = 4 * L_hat / (1 - delta) ** 2
    return L_hat, M_hat, L_delta, min(1 / (2 * L_delta), 1 / M_hat)


def _sample_points(rng):
    """3000 random points of S³ × S³ and a grid along M (µ ∈ [−1, 1], ν = 0.3)."""
    pts = rng.standard_normal((3000, 8))
    grid = np.linspace(-1, 1, 401)
    onM = np.zeros((len(grid), 8))
    onM[:, 0], onM[:, 2] = grid, np.sqrt(1 - grid**2)
    onM[:, 5], onM[:, 7] = 0.3, np.sqrt(1 - 0.09)
    pts = np.concatenate([pts, onM])
    pts[:, :4] /= np.linalg.norm(pts[:, :4], axis=1, keepdims=True)
    pts[:, 4:] /= np.linalg.norm(pts[:, 4:], axis=1, keepdims=True)
    return pts


def _descent_runs(flow, mu0, nu0, s, n_steps, L_delta):
    """PGD from (µ₀, ν₀) on M (one run per start); per run the largest relative one-step
    increase of R and whether the rebuttal's R_{k+1} ≤ R_k − (sL_δ/4)‖g_k‖² held at every step."""
    Y0 = np.zeros((len(mu0), 8))
    Y0[:, 0], Y0[:, 2], Y0[:, 5], Y0[:, 7] = mu0, np.sqrt(1 - mu0**2), nu0, np.sqrt(1 - nu0**2)
    run = projected_gradient_descent(flow.risk, flow.gradient, Y0, s, n_steps, flow.blocks)
    r, g2 = run.risk, run.gradient_sq
    bound_ok = np.all(r[1:] <= r[:-1] - s * L_delta / 4 * g2[:-1] + 1e-15 * np.abs(r[:-1]), axis=0)
    finite(run.y, r[-1])
    return run, run.largest_relative_increase(), bound_ok


def _descent_lemma_check(ctx, risk=None, step_factors=(0.5, 0.05), delta=0.01):
    """The rebuttal's descent lemma for σ(t) = t (C², σ′ = 1, σ″ = 0): PGD from (u₀, v₀) ∈ M
    with 0 < s < min(1/(2L_δ), 1/M_δ), L_δ = 4L/(1 − δ)², decreases R at every step and
    converges to a stationary point. L (smoothness of R on S²) and M_δ (gradient bound) are
    estimated from below by their maxima over sampled points (random and along M), so the
    steps used are s = factor × the estimated bound; runs that have not reached a stationary
    point after the step budget are reported as not converged."""
    reduced = _reduced("linear", risk)
    setting = STATIONARY_SETTINGS[0]
    dims = ctx.pick([10], [10, 20])
    n_steps = ctx.pick(20_000, 100_000)
    rng = ctx.rng("descent-lemma")
    rows, bad_increase, not_converged = [], [], []
    for dv in dims:
        flow = _frame(reduced, _setting_values(setting, dv))
        L_hat, M_hat, L_delta, s_bound = _step_bound(flow, _sample_points(rng), delta)
        found = _engine_stationary(_flow_on_M("linear"), setting, dv)[0] if risk is None else []
        mu0, nu0 = rng.uniform(-0.95, 0.95, 6), rng.uniform(-0.95, 0.95, 6)
        for factor in step_factors:
            s = factor * s_bound
            run, worst_increase, bound_ok = _descent_runs(flow, mu0, nu0, s, n_steps, L_delta)
            final = flow.overlaps(run.y)
            gnorm = np.linalg.norm(run.gradient, axis=1)
            for j in range(len(mu0)):
                mu_, nu_ = final["mu"][j], final["nu"][j]
                near = min((abs(f["mu"] - mu_) + abs(f["nu"] - nu_) for f in found), default=np.nan)
                row = {"d": dv, "step": s, "step_factor": factor, "L_hat": L_hat, "M_hat": M_hat,
                       "L_delta": L_delta, "delta": delta, "mu0": float(mu0[j]), "nu0": float(nu0[j]),
                       "final_mu": float(mu_), "final_nu": float(nu_), "final_risk": float(run.risk[-1, j]),
                       "final_grad_norm": float(gnorm[j]), "distance_to_stationary": float(near),
                       "largest_relative_increase": float(worst_increase[j]),
                       "rebuttal_bound_held_every_step": bool(bound_ok[j])}
                rows.append(row)
                if worst_increase[j] > 1e-12:
                    bad_increase.append(row)
                if not (gnorm[j] < 1e-6 and near < 1e-3):
                    not_converged.append(row)
        ctx.tick(len(rows) / (6 * len(step_factors) * len(dims)))
    evidence = {**_setting_text(setting), "runs": rows, "n_steps": n_steps,
                "note": "R_{k+1} ≤ R_k − (sL_δ/4)‖g_k‖² (the rebuttal's display) is recorded per run, "
                        "not judged: the spec's statement is descent plus convergence."}
    if bad_increase:
        w = bad_increase[0]
        return Outcome("refuted", f"the risk increased (relative {w['largest_relative_increase']:.2e}) "
                       f"along PGD with s = {w['step']:.3g} ({w['step_factor']:g} × the estimated step bound "
                       f"min(1/(2L_δ), 1/M_δ)) from (µ₀, ν₀) = "
                       f"({w['mu0']:.3f}, {w['nu0']:.3f}) at d={w['d']}", evidence)
    if not_converged:
        w = not_converged[0]
        return Outcome("inconclusive", f"descent held at every step of every run; "
                       f"{len(not_converged)}/{len(rows)} runs not at a stationary point after "
                       f"{n_steps} steps (e.g. (µ, ν) = ({w['final_mu']:.4f}, {w['final_nu']:.4f}), "
                       f"‖g‖ = {w['final_grad_norm']:.1e})", evidence)
    return Outcome("confirmed", f"R decreased at every step of all {len(rows)} runs (steps "
                   f"{step_factors} × min(1/(2L_δ), 1/M_δ)) and each reached a stationary point",
                   evidence)


claim(f"{PAPER}:descent-lemma", "rebuttal",
      "With a C² link with bounded σ′, σ″ and step 0 < s < min(1/(2L_δ), 1/M_δ), PGD decreases R "
      "at every step, and its iterates converge to a stationary point.", statistical=False,
      reading="σ(t) = t (C², σ′ = 1, σ″ = 0); R = the paper's R̄; (u₀, v₀) on M as in the "
              "rebuttal's claim; L and M_δ estimated as maxima over 3000 random points and a grid "
              "on M (lower bounds of the true constants), steps 0.5× and 0.05× the resulting bound, "
              "δ = 0.01; d = 10 (full: 10, 20); 2·10⁴ steps (full 10⁵).")(_descent_lemma_check)
