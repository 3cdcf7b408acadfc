"""Sec. IV of Sagitova, Duranthon, Zdeborová (2026), the Bayes side: the Bayes estimator
(Prop. IV.1) and B-softmax attaining it for a discrete prior (Prop. IV.2)."""

from __future__ import annotations


from numerics.multihead import bayes_posterior
from theory.models.sagitova2026 import bsoftmax_bayes_parameters
from ...checks import conclude, estimate_vs_theory, exact, legs_summary, panel_trend
from ...declare import claim
from ...domain import Choice, Domain, Integers, Interval
from ...stats import finite
from ...simulations.sagitova2026.sec4_bayes import (bias_norm_factor, bias_norm_sign,
                                                    bias_without_log_prior, iv1_losses,
                                                    iv2_risks, plugin_posterior, tempered_posterior,
                                                    uniform_posterior)
from ._common import PAPER, quantile_text


IV2_DOMAIN = Domain({"H": Integers(1, 8), "F": Integers(1, 4), "L": Integers(2, 8),
                     "signal": Interval(0.25, 4.0, log=True)})
"""Prop. IV.2 holds for any discrete prior: H support points (= heads) in R^F, L tokens, the
support points' scale ``signal`` (θ_h ~ N(0, signal²·I_F)). Δ only adds Δ² to both risks."""


POINTWISE_ATOL = 1e-10
"""The tolerance of Prop. IV.2's pointwise identity: the attention weights and the posterior are
both computed in double precision on the same inputs (no sampling error enters their
difference); rounding leaves ≈ 1e-15 (the quick run's largest: 6.7e-16), so a difference above
this is a different estimator."""

POINTWISE_FAMILY = "max |B-softmax weights − posterior| over the inputs"


@claim(f"{PAPER}:prop-iv2-bsoftmax-bayes", "Prop. IV.2",
       "For a discrete prior with H support points, B-softmax with k_h = Σ_f θ_hf k*_f and "
       "b_h = −‖θ_h‖²/2 + log P_θ(θ_h) equals the Bayes estimator and attains the Bayes risk.",
       statistical=False,
       reading="reduced description (D → ∞: m_h = θ_h, r = 0); Bayes estimator of Prop. IV.1; "
               "at each setting (H, F, L, signal) one random discrete prior: H support points "
               "θ_h ~ N(0, signal²·I_F), Dirichlet(1) weights; pointwise comparison "
               "of the attention weights w_ℓ with P(ε = ℓ | X) on random inputs, risks by Monte "
               "Carlo with common random numbers. An exact check: the identity must hold on every "
               "input to 1e-10 (double precision; no sampling error enters it); pointwise equal "
               "estimators have equal risks on the same draws, so the risks are recorded, not "
               "judged. The noise Δ is not a coordinate: it adds Δ² to both risks.",
       domain=IV2_DOMAIN,
       points=[{"H": H, "F": F, "L": 4, "signal": 1.5} for H, F in ((2, 2), (3, 2), (4, 3), (3, 3))],
       mutations={"log P_θ(θ_h) dropped from b_h": lambda: {"parameters": bias_without_log_prior},
                  "‖θ_h‖²/2 in b_h ×1.1": lambda: {"parameters": bias_norm_factor},
                  "sign of ‖θ_h‖²/2 in b_h flipped": lambda: {"parameters": bias_norm_sign}})
def prop_iv2(ctx, H, F, L, signal, parameters=bsoftmax_bayes_parameters):
    """Prop. IV.2: B-softmax with the stated keys and biases is the Bayes estimator, for one
    random discrete prior with H points in R^F at this setting."""
    n = ctx.pick(20_000, 200_000)
    row, = ctx.map(iv2_risks, [{"parameters": parameters, "H": H, "F": F, "L": L, "signal": signal,
                                "n": n, "prior_seed": ctx.claim_seed("iv2"),
                                "draw_seed": ctx.claim_seed("iv2:draws")}])
    finite(row["bayes_risk"], row["bsoftmax_risk"], row["paired_difference"])
    gap = row["max_pointwise_difference"]
    pointwise = exact(ctx, [gap], [0.0], atol=POINTWISE_ATOL, name=POINTWISE_FAMILY,
                     labels=[f"H={H}, F={F}, L={L}"])
    evidence = {"rows": [row], "L": L, "n": n, "tolerance": POINTWISE_ATOL,
                "pointwise_check": pointwise.evidence()}
    points = f"{H} point{'s' if H > 1 else ''}"
    return conclude(
        {"pointwise identity": pointwise}, evidence=evidence,
        says={"refuted": f"B-softmax differs from the Bayes posterior by {gap:.3g} (prior with "
                         f"{H} points, F={F}); risks {row['bsoftmax_risk']:.4f} vs Bayes "
                         f"{row['bayes_risk']:.4f}",
              "confirmed": f"B-softmax = posterior mean pointwise (max |Δ| {gap:.1e}) for a "
                           f"random discrete prior with {points} in R^{F}; equal risks"})


IV1_DOMAIN = Domain({"prior": Choice("gaussian", "flipping-spike", "discrete-3"),
                     "L": Integers(2, 8), "signal": Interval(0.25, 4.0, log=True)},
                    reference={"signal": 1.0})
"""Prop. IV.1 holds for any prior and L: three prior families, L tokens, θ scaled by
``signal`` (1: the priors as first checked). Δ only adds Δ² to every risk."""

CALIBRATION = "posterior calibration gap"
OPTIMALITY = "excess risk of the closest panel estimator"
PANEL_BELOW = "excess risks of the panel below 0 (Bonferroni over the panel)"


def judge_optimality(ctx, optimality):
    """'No estimator of the panel has lower risk' as the direction of each paired excess risk
    Δ_i = R_i − R_Bayes > 0: confirmed on the smallest Δ_i/se_i (``checks.trend``, sign +1; "every
    Δ_i > z₁·se_i" is an intersection–union test, valid at α without a Bonferroni factor), refuted
    only when some Δ_i < −z_n·se_i (z_n Bonferroni over the n estimators: the smallest of n is
    selected), else undecided. A direction, not a value: the excess risks are not 0, so a
    comparison with 0 would have nothing to resolve.

    The refutation: when the trend is below 0 at z₁ (and calibration has not moved its claimed
    effect), the panel's effects sign·Δ_i are judged against the bound 0 at z_n
    (``checks.bound`` with their standard errors, family ``PANEL_BELOW``): refuted when some
    lies below it by more than z_n·se_i, else undecided (below 0 at z₁ only: the selected
    smallest of n is no evidence at z₁). Returns (the check that decides the leg, the index of
    the estimator the trend judged)."""
    return panel_trend(ctx, [o["difference"] for o in optimality],
                       [o["se"] for o in optimality], name=OPTIMALITY, panel_name=PANEL_BELOW,
                       labels=[o["estimator"] for o in optimality])


@claim(f"{PAPER}:prop-iv1-bayes", "Prop. IV.1",
       "The Bayes estimator is ŷ = Σ_ℓ P(ε = ℓ | X)·z_ℓ with P(ε = ℓ | X) ∝ E_θ exp(θᵀχ*_ℓ − "
       "‖θ‖²/2); no estimator has lower risk.",
       reading="Two legs, one family each (the claim spends 2α). (i) The posterior formula "
               f"('{CALIBRATION}'): for the true posterior, E Σ_ℓ(1[ε = ℓ] − P_ℓ)² = "
               "E Σ_ℓ P_ℓ(1 − P_ℓ) (calibration; fails for a wrong posterior): their difference "
               "against 0, two-sided, one comparison per prior, its resolution relative to the "
               f"Bayes risk. (ii) Optimality ('{OPTIMALITY}'): a panel of attention estimators "
               "(uniform, softmax, softmax-1, B-softmax; random and prior-informed parameters) "
               "never has lower risk: paired Monte Carlo excess risks Δ_i = R_i − R_Bayes with "
               "common random numbers, judged as a direction on the smallest Δ_i/se_i (confirmed "
               "when it is > 0 at z, an intersection–union test; refuted when some Δ_i < −z·se_i "
               "with z Bonferroni over the panel; else inconclusive), its resolution relative to "
               "that excess risk. Neither leg must resolve a stated size (no resolve): the claim "
               "is an identity and an inequality. Priors (a coordinate): Gaussian N(0.5·1, "
               "diag(2, 0.5)), flipping spike (2, 1), a random 3-point prior, θ scaled by the "
               "coordinate 'signal'; L a coordinate, Δ = 0 (Δ adds Δ² to every risk).",
       domain=IV1_DOMAIN,
       points=[{"prior": p, "L": 4, "signal": 1.0}
               for p in ("gaussian", "flipping-spike", "discrete-3")],
       mutations={"tempered-posterior": lambda: {"posterior": tempered_posterior},
                  "plug-in posterior (E_θ dropped)": lambda: {"posterior": plugin_posterior},
                  "uniform posterior (evidence dropped)": lambda: {"posterior": uniform_posterior}})
def prop_iv1(ctx, prior, L, signal, posterior=bayes_posterior):
    n = ctx.pick(40_000, 400_000)
    calib, optimality = ctx.map(iv1_losses, [{
        "posterior": posterior, "prior": prior, "L": L, "signal": signal, "n": n,
        "rng_seed": ctx.claim_seed("iv1"), "draw_seed": ctx.claim_seed(f"iv1:{prior}")}])[0]
    finite([o["difference"] for o in optimality])
    c = calib[0]
    cal = estimate_vs_theory(ctx, [c["mean"]], [c["se"]], [0.0], name=CALIBRATION,
                             scale=[c["bayes_risk"]], labels=[prior])
    opt, i = judge_optimality(ctx, optimality)
    closest = optimality[i]
    legs = {"calibration leg": cal, "optimality leg": opt}
    summary = legs_summary(list(legs.values()), list(legs))
    evidence = {"calibration": calib, "optimality": optimality, "n": n, "L": L, "signal": signal,
                "legs_summary": summary, "calibration_check": cal.evidence(),
                "optimality_check": opt.evidence()}
    if cal.decision == "refuted":
        says = (f"posterior not calibrated ({prior}): E Σ_ℓ(1[ε=ℓ] − P_ℓ)² − E Σ_ℓ P_ℓ(1 − P_ℓ) "
                f"= {c['mean']:.4g} ± {c['se']:.2g} ({quantile_text(cal)}); {summary}")
    elif opt.decision == "refuted":
        w = min(optimality, key=lambda o: o["difference"] / max(o["se"], 1e-300))
        says = (f"{w['estimator']} beats the Bayes estimator ({prior}): risk {w['risk']:.4f} vs "
                f"{w['bayes_risk']:.4f} (Δ = {w['difference']:.3g} ± {w['se']:.2g}); {summary}")
    else:
        needs = "; ".join(x.needs for x in legs.values() if x.needs)
        says = (f"posterior calibrated ({prior} prior): gap {c['mean']:.2g} ± {c['se']:.2g}; none "
                f"of {len(optimality)} estimators beats it (closest: {closest['estimator']}, "
                f"Δ = {closest['difference']:.3g} ± {closest['se']:.2g}); {summary}"
                + (f": needs {needs}" if needs else ""))
    return conclude(legs, says=says, evidence=evidence)
