"""Sec. IV of Sagitova, Duranthon, Zdeborová (2026), what each attention can reach against the
Bayes risk: softmax's gap (Prop. IV.3) and softmax-1 switching irrelevant heads off.

Best risks come from minimising the reduced loss (L-BFGS-B on the exact gradient of the
common-random-number estimate, several starts; ``simulations.sagitova2026.common.best_risk``)
and are re-evaluated on fresh draws, so the optimisation does not bias them low; Bayes risks
from the exact posterior (Prop. IV.1)."""

from __future__ import annotations

import numpy as np

from ...checks import (bound, combine, conclude, critical_value, estimate_vs_theory, legs_summary,
                      not_judged, panel_trend, trend)
from ...declare import claim
from ...domain import Domain, Integers, Interval
from ...stats import finite
from ...simulations.sagitova2026.sec4_expressivity import risk_piece
from ._common import L, PAPER


def best_seeds(ctx, tag):
    """The seeds of ``common.best_risk`` for the optimisation named ``tag``: its random starts,
    the draws it optimises on, the fresh draws it is re-evaluated on."""
    return {"best": ctx.claim_seed(f"best:{tag}"), "opt": ctx.claim_seed(f"opt:{tag}"),
            "fresh": ctx.claim_seed(f"fresh:{tag}")}


def _risk_table(ctx, signals, acts, H, mass=0.5):
    """Per signal s: the Bayes risk and the best risk of each (activation, output) of ``acts``
    with H heads (each a stored simulation, ``risk_piece``)."""
    items = []
    for s in signals:
        items.append({"kind": "bayes", "signal": s, "mass": mass, "seed": ctx.claim_seed(f"bayes:{s}")})
        items += [{"kind": "best", "signal": s, "mass": mass, "activation": act, "output": out,
                   "H": H, "seeds": best_seeds(ctx, f"{act}:{out}:{H}:{s}")} for act, out in acts]
    pieces = iter(ctx.map(risk_piece, items))
    rows = []
    for s in signals:
        b = next(pieces)
        row = {"signal": s, "bayes": b["bayes"], "bayes_se": b["bayes_se"]}
        for act, out in acts:
            p = next(pieces)
            finite(p["risk"], p["se"])
            row[f"{act}/{out}"] = p["risk"]
            row[f"{act}/{out}_se"] = p["se"]
            row[f"{act}/{out}_state"] = p["state"]
        rows.append(row)
    return rows


def _risk_figure(rows, acts, title):
    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        s = [r["signal"] for r in rows]
        ax.plot(s, [r["bayes"] for r in rows], "k-o", label="Bayes")
        for act, out in acts:
            ax.errorbar(s, [r[f"{act}/{out}"] for r in rows], yerr=[r[f"{act}/{out}_se"] for r in rows],
                        fmt="o--", label=f"best {act} (ŷ = {'(1/H)Σ_h' if out == 'mean' else 'Σ_h'})")
        ax.set(xlabel="signal strength s (θ = ±s)", ylabel="risk − Δ²", title=title)
        ax.legend(fontsize=8)
    return draw


CONTROL_FAMILY = "b-softmax risk vs the Bayes risk"
GAP_FAMILY = "softmax gap above the Bayes risk"
GAP_BELOW_FAMILY = "softmax gap below the Bayes risk at the n-signal z"
AS_CLOSE_FAMILY = "softmax gap within the control's reach of the Bayes risk"
CONTROL_RESOLVE = 1.0
"""The resolution (relative to softmax's gap) the control leg must reach: it has to tell "reaches
the Bayes risk" from "misses it by as much as softmax does", a deviation of 100 % of the gap."""
TIE_RTOL = 1e-9
"""The as-close rule's limits are compared to double precision: softmax's upper limit g + z·se
equal to the control's Δ_c + z·se_c within this share of z·se counts as "as close" (the rule's
≤: the same estimator in both roles gives equal limits, which rounding must not split); the
bound's strict "below by more than z·se" is then g + z·se(1 − TIE_RTOL) < Δ_c + z·se_c."""
SHRINKING_FRACTION = 0.5
"""'Also as the signal grows': a last gap below this fraction of the middle one leaves the claim
undecided (the gap might tend to zero), whatever the standard errors."""


def judge_gap(ctx, rows, activation, control="b-softmax"):
    """Prop. IV.3 judged in two families at the claim's α (one row of ``rows`` per signal s).

    Control: the best ``control`` risk reaches the Bayes risk at every s, |R_c − R_B| ≤ z·se_c +
    b with b = z·se_a(s) (``checks.estimate_vs_theory``, z Bonferroni over the n signals). b is
    the scale at which ``activation`` could not be told from the Bayes risk at s, derived from
    the run's own standard errors; a control missing the Bayes risk by more refutes (the
    claim's contrast rests on it). Its resolution is relative to the gap and must reach
    ``CONTROL_RESOLVE`` (a control that passes without telling a miss as large as the gap
    leaves the claim undecided).

    Gap: g(s) = R_a(s) − R_B(s) > 0 at every s. Confirmed on the smallest standardised gap
    (``checks.trend``, sign +1): "every g(s) > z₁·se(s)" is an intersection–union test, valid
    at α without a Bonferroni factor. Refuted, at the n-point z, only at a signal where the gap
    is not shown positive (g ≤ z·se) and ``activation`` is shown as close to the Bayes risk as
    the control that reaches it (g + z·se ≤ Δ_c + z·se_c), or where the gap is negative beyond
    z·se; a gap within z·se of 0 alone is inconclusive. Confirmed also needs the last gap not
    below ``SHRINKING_FRACTION`` of the middle one (else inconclusive: the gap might tend to zero).

    As legs (their verdict is ``checks.combine``'s): the control; the gap's trend, replaced,
    when it is below 0 at z₁ (and calibration has not moved its claimed effect), by the signs
    of sign·g(s) against the bound 0 at the n-signal z (``checks.bound``, ``GAP_BELOW_FAMILY``:
    refuted below it by more than z·se, else undecided); where some gap is not shown positive
    at that z, "as close as the control", g − ℓ against the bound 0 with ℓ = min(2z·se, Δ_c +
    z·se_c) (``checks.bound``, ``AS_CLOSE_FAMILY``: below it by more than z·se is g + z·se ≤
    Δ_c + z·se_c with g ≤ z·se, ties to ``TIE_RTOL``), a leg when it refutes (only its
    refutation is the rule's); a shrinking gap an undecided leg (``checks.not_judged``).
    Returns (legs: name → Check, why)."""
    gaps = np.array([r[f"{activation}/mean"] - r["bayes"] for r in rows])
    deltas = np.array([r[f"{control}/mean"] - r["bayes"] for r in rows])
    bayes = np.array([r["bayes"] for r in rows])
    se = np.hypot([r[f"{activation}/mean_se"] for r in rows], [r["bayes_se"] for r in rows])
    ctl_se = np.hypot([r[f"{control}/mean_se"] for r in rows], [r["bayes_se"] for r in rows])
    n = len(rows)
    z_n = float(critical_value(ctx.alpha, n)[0])        # Bonferroni z over the n signals
    # resolution relative to the gap's scale (the Bayes risk vanishes at large s)
    # the families keep the paper's names whatever a mutation puts in a role (calibration
    # compares a mutated run's families with the true run's by name)
    ctl = estimate_vs_theory(ctx, bayes + deltas, ctl_se, bayes, bias=z_n * se,
                             name=CONTROL_FAMILY, scale=np.abs(gaps),
                             resolve=CONTROL_RESOLVE)
    assert abs(ctl.z - z_n) < 1e-9 * z_n
    gap, _ = panel_trend(ctx, gaps, se, name=GAP_FAMILY, panel_name=GAP_BELOW_FAMILY,
                             labels=[f"s = {r['signal']}" for r in rows])
    legs = {"control leg": ctl, "gap leg": gap}
    reach = deltas + z_n * ctl_se
    as_close = None
    if np.any(gaps <= z_n * se):                       # some gap not shown positive at z_n
        level = np.minimum(2 * z_n * se, reach)
        as_close = bound(ctx, gaps - level - TIE_RTOL * z_n * se, lower=0.0, stderr=se,
                         name=AS_CLOSE_FAMILY, labels=[f"s = {r['signal']}" for r in rows])
        if as_close.decision == "refuted":
            legs["as-close leg"] = as_close
    mid = gaps[n // 2 - 1]
    if gaps[-1] < SHRINKING_FRACTION * mid:
        legs["shrinking leg"] = not_judged(
            ctx, "shrinking leg", f"the gap shrinks ({mid:.3f} → {gaps[-1]:.3f}): larger signals "
                                  "would show whether it tends to zero")
    why = _gap_why(legs, as_close, rows, activation, control, z_n)
    return legs, f"{why}; {legs_summary(list(legs.values()), list(legs))}"


def _gap_why(legs, as_close, rows, activation, control, z_n):
    """What ``judge_gap``'s legs decided, in words (the first refuting leg, else the first
    undecided one, in the order the claim states them)."""
    ctl, gap = legs["control leg"], legs["gap leg"]
    gaps = np.array([r[f"{activation}/mean"] - r["bayes"] for r in rows])
    deltas = np.array([r[f"{control}/mean"] - r["bayes"] for r in rows])
    se = np.hypot([r[f"{activation}/mean_se"] for r in rows], [r["bayes_se"] for r in rows])
    ctl_se = np.hypot([r[f"{control}/mean_se"] for r in rows], [r["bayes_se"] for r in rows])
    with np.errstate(divide="ignore", invalid="ignore"):
        standardised = np.where(se > 0, gaps / se, np.sign(gaps) * np.inf)
    worst = int(np.argmin(standardised))
    mid = gaps[len(rows) // 2 - 1]
    s = [r["signal"] for r in rows]
    if ctl.decision == "refuted":
        i = int(np.argmin(ctl.ok))
        return (f"{control} does not reach the Bayes risk at s = {s[i]}: Δ = {deltas[i]:.3g} ± "
                f"{ctl_se[i]:.2g} (allowance z·se {ctl.z:.2f}·{ctl_se[i]:.2g} + {z_n * se[i]:.2g})")
    if as_close is not None and as_close.decision == "refuted":
        i = int(np.argmin(as_close.ok))
        reach = deltas[i] + z_n * ctl_se[i]
        return (f"{activation} is as close to the Bayes risk as {control} at s = {s[i]}: gap "
                f"{gaps[i]:.3g} ± {se[i]:.2g}, upper bound {gaps[i] + z_n * se[i]:.3g} ≤ "
                f"{control}'s {reach:.3g} (z = {z_n:.2f})")
    if gap.decision == "refuted":
        return (f"{activation}'s gap has the sign opposite to the claimed one at s = {s[worst]}: "
                f"{gaps[worst]:.3g} ± {se[worst]:.2g} (z = {z_n:.2f})")
    if gap.decision != "confirmed":
        needs = gap.needs or f"a standard error below {abs(gaps[worst]) / z_n:.3g} at s = {s[worst]}"
        return (f"{activation}'s gap at s = {s[worst]} is {gaps[worst]:.3g} ± {se[worst]:.2g}, not "
                f"shown positive at z = {gap.z:.2f} nor as small as {control}'s: needs {needs}")
    if ctl.decision != "confirmed":
        return (f"{control} passes but cannot tell reaching the Bayes risk from missing it by "
                f"{activation}'s gap: {ctl.needs}")
    if "shrinking leg" in legs:
        return f"the gap is positive but shrinking ({mid:.3f} → {gaps[-1]:.3f})"
    return (f"best {activation} risk stays {gaps[-1]:.3f} ± {se[-1]:.1g} above the Bayes risk "
            f"({rows[-1]['bayes']:.1e}) at s = {s[-1]}; gaps {', '.join(f'{g:.3f}' for g in gaps)}, "
            f"smallest {standardised[worst]:.3g} se > z = {gap.z:.2f}; {control} reaches it "
            f"(max Δ {np.max(deltas):.2g} within z·se + z·se_{activation})")


GAP_DOMAIN = Domain({"H": Integers(2, 4), "mass": Interval(0.1, 0.9)}, reference={"mass": 0.5})
"""The prior θ = ±s (F = 1) of Prop. IV.3 and the softmax-1 claim: H heads, P(θ = +s) =
``mass`` (bounded away from 0 and 1: mass on S and on −S); the signal s is swept inside a
setting (the statements' "as the signal grows")."""


@claim(f"{PAPER}:prop-iv3-softmax-gap", "Prop. IV.3",
       "If P_θ gives mass bounded away from zero to a set S and to −S, softmax attention cannot "
       "reach the Bayes risk: its best risk stays a positive distance above it, also as the "
       "signal grows.",
       reading="θ = ±s (F = 1; P(θ = +s) = mass, a coordinate, ½ as first checked), L = 4, H "
               "heads (a coordinate, 2 as first checked), ŷ = (1/H)Σ_h; best "
               "softmax risk over (m, r, b) from 6 random starts (L-BFGS-B on the reduced loss, "
               "fresh-draw re-evaluation) against the Bayes risk, s = 2, 4, 8, 12 (16 full). "
               "Two legs, one family each (the claim spends 2α). Control ('b-softmax risk vs "
               "the Bayes risk', one comparison per s): B-softmax (H heads) must reach the Bayes "
               "risk, |Δ| ≤ z·se + z·se_softmax at every s (the scale at which softmax could not "
               "be told from it); not reaching it refutes; its resolution is relative to "
               "softmax's gap and must reach 100 % of it (resolve: the control has to tell "
               "'reaches the Bayes risk' from 'misses it by as much as softmax does'), else "
               "inconclusive. Softmax's gap ('softmax gap above the Bayes risk', a direction): "
               "confirmed when it is positive at z·se at "
               "every s (judged on the smallest gap/se) and the last gap is not below half the "
               "middle one (else inconclusive: it might tend to zero); refuted when, at some s "
               "where its gap is not shown positive, softmax is shown as close to the Bayes "
               "risk as the control (gap + z·se ≤ Δ + z·se_control); a gap within z·se of 0 "
               "alone is inconclusive.",
       domain=GAP_DOMAIN, points=[{"H": 2, "mass": 0.5}],
       mutations={"softmax-as-control": lambda: {"control": "softmax"},
                  "bsoftmax-as-softmax": lambda: {"activation": "b-softmax"}})
def prop_iv3(ctx, H, mass, activation="softmax", control="b-softmax"):
    signals = ctx.pick([2.0, 4.0, 8.0, 12.0], [2.0, 4.0, 8.0, 12.0, 16.0])
    acts = [(activation, "mean"), (control, "mean")]
    rows = _risk_table(ctx, signals, acts, H, mass)
    legs, why = judge_gap(ctx, rows, activation, control)
    ctl, gap = legs["control leg"], legs["gap leg"]
    evidence = {"rows": rows, "gaps": [r[f"{activation}/mean"] - r["bayes"] for r in rows],
                "z": ctl.z, "H": H, "mass": mass, "L": L, "control": control,
                "control_minus_bayes": [r[f"{control}/mean"] - r["bayes"] for r in rows],
                "decision": combine(list(legs.values())), "control_check": ctl.evidence(),
                "gap_check": gap.evidence()}
    figs = {"risks": _risk_figure(
        rows, acts, f"Prop. IV.3: best risks vs signal, θ = ±s (P(+s) = {mass:g}), H = {H}")}
    return conclude(legs, says=why, evidence=evidence, figures=figs)


LEVEL = 0.05
"""'Goes to zero' at the largest signal: a best risk below this level (the Bayes risk there is
< 10⁻¹⁰, softmax's about 0.35); each side judged by the sign of its margin to it."""


def judge_softmax1(ctx, r1, r1_se, r0, r0_se, level=LEVEL, names=("softmax-1", "softmax")):
    """'softmax-1's best risk below ``level``, softmax's above' as the signs of level − r1 and
    r0 − level (:func:`checks.trend`, one comparison each): refuted on evidence of the opposite
    sign, inconclusive (with what would decide) when a margin is within z·se of the level.
    ``names``: the two activations as compared. Returns (decision, [check below, check above])."""
    c1 = trend(ctx, level - r1, r1_se, +1, name=f"{names[0]} best risk below the level")
    c0 = trend(ctx, r0 - level, r0_se, +1, name=f"{names[1]} best risk above the level")
    return combine([c1, c0]), [c1, c0]


@claim(f"{PAPER}:softmax1-noise", "Sec. IV",
       "softmax-1 switches irrelevant heads off: its best risk goes to zero as the signal "
       "strength grows, where softmax's does not.",
       reading="the prior of Prop. IV.3 (θ = ±s, F = 1, P(θ = +s) = mass), L = 4, H heads "
               "(mass and H coordinates: ½ and 2 as first checked); best risks of softmax-1 "
               "and softmax over (m, r, b) as in Prop. IV.3, s = 2, 4, 8, 12. Verdict under the "
               "spec's output ŷ = (1/H)Σ_h: 'goes to zero' read as best risk at the largest s "
               "below 0.05 (the Bayes risk there is < 10⁻¹⁰), 'where softmax's does not' as "
               "softmax's above 0.05, each judged by the sign of its margin at z·se (refuted "
               "only on evidence of the opposite side, inconclusive within z·se): two legs, "
               "one family each ('softmax-1 best risk below the level', 'softmax best risk "
               "above the level'; the claim spends 2α), neither with a resolution to reach "
               "beyond the sign of its margin. The same "
               "under ŷ = Σ_h is recorded beside it (a convention the paper may use: with "
               "(1/H)Σ_h a switched-off head still takes its 1/H share).",
       domain=GAP_DOMAIN, points=[{"H": 2, "mass": 0.5}],
       mutations={"softmax-as-softmax-1": lambda: {"activation": "softmax"},
                  "B-softmax in softmax's place (the side that must not reach 0)":
                  lambda: {"control": "b-softmax"}})
def softmax1_noise(ctx, H, mass, activation="softmax-1", control="softmax"):
    """``activation``: the head that should switch off; ``control``: the one that should not
    (mutations swap them)."""
    signals = ctx.pick([2.0, 4.0, 8.0, 12.0], [2.0, 4.0, 8.0, 12.0, 16.0])
    acts = [(activation, "mean"), (control, "mean"), (activation, "sum")]
    rows = _risk_table(ctx, signals, acts, H, mass)
    last = rows[-1]
    r1, r1_se = last[f"{activation}/mean"], last[f"{activation}/mean_se"]
    r0, r0_se = last[f"{control}/mean"], last[f"{control}/mean_se"]
    rsum = last[f"{activation}/sum"]
    # the paper's names for the two families whatever a mutation puts in a role
    decision, (c1, c0) = judge_softmax1(ctx, r1, r1_se, r0, r0_se)
    legs = {f"{activation} below {LEVEL}": c1, f"{control} above {LEVEL}": c0}
    summary = legs_summary(list(legs.values()), list(legs))
    evidence = {"rows": rows, "z": c1.z, "level": LEVEL, "H": H, "mass": mass, "L": L,
                "activation": activation, "control": control,
                "sum_convention_largest_signal": rsum,
                "checks": {"below": c1.evidence(), "above": c0.evidence()}}
    figs = {"risks": _risk_figure(
        rows, acts, f"{activation} vs {control}, θ = ±s, H = {H} (both output conventions)")}
    s = last["signal"]
    if c1.decision == "refuted":
        why = (f"best {activation} risk stays {r1:.4f} ± {r1_se:.1g} at s = {s} with ŷ = (1/H)Σ_h "
               f"({control} {r0:.3f}); with ŷ = Σ_h it is {rsum:.2g}: the claim holds only under the "
               "sum convention")
    elif c0.decision == "refuted":
        why = f"{control} also reaches {r0:.3g} ± {r0_se:.1g} < {LEVEL} at s = {s}"
    elif decision == "inconclusive":
        undecided = [(n, c) for n, c in ((activation, c1), (control, c0)) if c.decision != "confirmed"]
        why = "; ".join(f"{n}'s best risk is within z·se of {LEVEL} at s = {s}: {c.needs}"
                        for n, c in undecided)
    else:
        why = (f"best {activation} risk {r1:.2g} ± {r1_se:.1g} at s = {s} vs {control} {r0:.3f} ± "
               f"{r0_se:.1g}")
    return conclude(legs, says=f"{why}; {summary}", evidence=evidence, figures=figs)
