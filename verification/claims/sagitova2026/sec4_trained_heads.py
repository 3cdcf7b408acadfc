"""Sec. IV of Sagitova, Duranthon, Zdeborová (2026), trained heads: which directions they learn
(softmax: mixtures, B-softmax: pure) and how many can be pruned. "Trained" heads come from
integrating the derived gradient flow (``HeadReduced.integrate``) or from minimising the
reduced loss (``simulations.sagitova2026.common.best_risk``)."""

from __future__ import annotations

import functools

import numpy as np

from theory.models.sagitova2026 import DiscretePrior
from ...checks import bound, conclude, trend
from ...declare import claim
from ...domain import Choice, Domain, Integers, Interval
from ...simulations.sagitova2026.common import bayes_risk
from ...simulations.sagitova2026.sec4_trained_heads import pruning_piece, trained_piece
from ._common import L, PAPER
from .sec4_expressivity import best_seeds


# --- trained heads ---------------------------------------------------------------------------
def _four_point_prior(s1=3.0, s2=2.0):
    return DiscretePrior([[s1, 0.0], [-s1, 0.0], [0.0, s2], [0.0, -s2]], [0.25] * 4)


def _bayes_risk(ctx, prior, n, name):
    """The Bayes risk of ``prior`` (n draws from the seed ``name``): (risk, se)."""
    out, = ctx.map(bayes_risk, [{"prior": prior, "L": L, "n": n, "seed": ctx.claim_seed(name)}])
    return out["risk"], out["se"]


def _draw_head_cosines(sm, bs, fig):
    for k, (row, name) in enumerate(((sm, "softmax"), (bs, "B-softmax"))):
        ax = fig.add_subplot(1, 2, k + 1)
        im = ax.imshow(np.array(row["head_cosines"]), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set(title=f"{name}: head cosines\npurity {np.round(row['purity'], 2).tolist()}",
               xlabel="head", ylabel="head")
    fig.colorbar(im, ax=fig.axes, shrink=0.7)


def _simulate_trained_heads(ctx, prior, runs, H=4):
    """Heads trained by the flow for each (activation, τ_start, doublings) of ``runs`` (τ doubled
    while the heads move), with their norms, purities, head cosines and fresh-draw risks (each
    run a stored simulation, ``trained_piece``)."""
    items = []
    for i, (act, tau, doublings) in enumerate(runs):
        tag = f"mix:{act if isinstance(act, str) else act.name}"
        items.append({"activation": act, "tau": tau, "doublings": doublings, "H": H,
                      "prior": prior, "settled": SETTLED_DEGREES, "share": SMALL_SHARE,
                      "floor": NORM_FLOOR, "unstable": UNSTABLE_RATE,
                      "seeds": {"train": ctx.claim_seed(f"train:{tag}"),
                                "init": ctx.claim_seed(f"train-init:{tag}"),
                                "fresh": ctx.claim_seed(f"mix-fresh:{i}"),
                                "prune": ctx.claim_seed(f"mix-prune:{i}")}})
    return ctx.map(trained_piece, items)


def _two_point_prior():
    """Mutation: one signal direction only, θ ∈ {±3e₁}: every head can only be pure."""
    return DiscretePrior([[3.0, 0.0], [-3.0, 0.0]], [0.5, 0.5])


PURE = 0.95
"""A head is pure when its purity max_f |cos(m_h, e_f)| is at least this (the claim's reading)."""
MIXTURE = 0.9
"""A head is a mixture when its purity is at most this (the claim's reading)."""
SETTLED_DEGREES = 1.0
"""The heads have stopped moving when the large heads are the same at τ/2 and τ and none
turned by more than this many degrees between τ/2, 3τ/4 and τ."""
SMALL_SHARE = 0.25
NORM_FLOOR = 0.5
"""A head is large when its norm is at least SMALL_SHARE of the largest head's and at least
NORM_FLOOR (ten times the initial scale 0.05); the stopping rule follows the large heads (a
small head's direction is that of a near-zero vector)."""
UNSTABLE_RATE = 1e-7
"""The heads rest at a saddle when the flow's Jacobian there has an eigenvalue with real part
above this (saddles the B-softmax flow rests on for thousands of time units have 3–4·10⁻⁴;
minima 10⁻¹⁴, rounding): training goes on, and no refutation rests on such a state."""
PRUNED_Z = 3.0
"""Heads are set aside (not judged) along the greedy pruning path while the risk stays within
this many standard errors of the risk with every head: what the heads learned is carried by the
heads the prediction needs (Sec. IV's own pruning)."""
SOFTMAX_FAMILY = "purity of the trained softmax heads (≤ mixture)"
BSOFTMAX_FAMILY = "purity of the trained B-softmax heads (≥ pure)"
SOFTMAX_PURE_FAMILY = "purity of the trained softmax heads (< pure)"
BSOFTMAX_MIXED_FAMILY = "purity of the trained B-softmax heads (> mixture)"
SETTLED_FAMILY = "largest turn of a large head over the last half of training (degrees)"


MIXTURE_DOMAIN = Domain({"H": Integers(4, 8), "s1": Interval(1.5, 4.0), "s2": Interval(1.5, 4.0)},
                        reference={"s1": 3.0, "s2": 2.0})
"""The prior θ ∈ {±s₁e₁, ±s₂e₂} (F = 2, equal weights) and H ≥ 4 heads."""


def _set_aside(row):
    """The heads a trained run can do without: along its greedy pruning path (``prune``), the
    heads removed while the risk stays within ``PRUNED_Z`` standard errors of the risk with
    every head (independent fresh draws). Returns (heads set aside, text for the summary: ''
    when none)."""
    path, se, order = row["prune_losses"], row["prune_losses_se"], row["prune_order"]
    k = 0
    while k + 1 < len(path) and path[k + 1] - path[0] <= PRUNED_Z * np.hypot(se[k + 1], se[0]):
        k += 1
    if k == 0:
        return [], ""
    aside = sorted(order[:k])
    return aside, (f"{k} of {len(path)} heads pruned with little loss (risk {path[k]:.4f} ± "
                   f"{se[k]:.4f} against {path[0]:.4f} ± {se[0]:.4f} with all; heads "
                   f"{aside}, norms {np.round([row['norms'][h] for h in aside], 2).tolist()}): "
                   "set aside")


def _past(purity, side, threshold):
    """Whether each purity is on the other kind's side of ``threshold`` (side +1: ≥, −1: ≤)."""
    p = np.asarray(purity, float)
    return p >= threshold if side > 0 else p <= threshold


@claim(f"{PAPER}:mixture-directions", "Sec. IV",
       "Trained softmax heads learn mixture directions ±e_1 ± e_2 …, while B-softmax heads "
       "learn the pure directions.",
       statistical=False, replicate=True,       # exact per run, but the init is seeded
       reading="discrete prior θ ∈ {±s₁e₁, ±s₂e₂} (equal weights), H heads, L = 4 (s₁, s₂, H "
               "coordinates: 3, 2, 4 as first checked; H ≥ 4, one head per support point at "
               "least, where B-softmax can be Bayes-optimal, Prop. IV.2); heads trained "
               "by the derived gradient flow from m ~ N(0, 0.05²), r = 0.05²I (softmax from "
               "τ = 300, B-softmax from τ = 3000, τ doubled while the heads still move: up to "
               "4800 and 12000); purity of a head = max_f |cos(m_h, e_f)|: pure ≥ 0.95, "
               "mixture ≤ 0.9. The heads have stopped moving when the large heads (norm at least "
               "a quarter of the largest and at least 0.5, ten times the initial scale) are "
               "the same at τ/2 and τ and none turned by more than 1° between τ/2, 3τ/4 and "
               "τ (training goes on while they move or rest at a saddle: an eigenvalue of the "
               "flow's Jacobian with real part above 10⁻⁷). What the heads learned is carried by "
               "the heads the prediction needs: heads "
               "removed along the greedy pruning path while the risk stays within 3 standard "
               "errors of the risk with every head (fresh draws; "
"Sec. IV's own pruning) are set aside, the others judged. Confirmed when the heads have "
               "stopped moving, every judged softmax head is a mixture and every judged "
               "B-softmax head pure; refuted when, stopped at no saddle (the B-softmax flow rests "
               "on saddles with mixture heads for thousands of time units), a softmax head is "
               "pure or a B-softmax head a mixture at τ and at τ/2 alike; a head between the thresholds is "
               "neither, and heads still moving at the last τ decide nothing (inconclusive). "
               "An exact check: the trained state is a deterministic function of the flow's "
               "fixed draws and the purities are compared with fixed thresholds (no sampling "
               "comparison; the risks are recorded, not judged).",
       domain=MIXTURE_DOMAIN, points=[{"H": 4, "s1": 3.0, "s2": 2.0}],
       mutations={"B-softmax normalised per head (joint normalisation dropped)":
                  lambda: {"bsoftmax": "softmax"},
                  "softmax normalised over all heads (B-softmax in its place)":
                  lambda: {"softmax": "b-softmax", "t_end": (3000.0, 3000.0),
                           "doublings": (2, 2)},
                  "one signal direction (θ ∈ {±3e₁})": lambda: {"prior": _two_point_prior()},
                  "softmax and B-softmax swapped": lambda: {
                      "softmax": "b-softmax", "bsoftmax": "softmax", "t_end": (1500.0, 300.0),
                      "doublings": (3, 4)}})
def mixture_directions(ctx, H, s1, s2, softmax="softmax", bsoftmax="b-softmax",
                       t_end=(300.0, 3000.0), doublings=(4, 2), prior=None):
    """Sec. IV (trained heads): softmax heads mix the directions, B-softmax heads are pure.
    ``t_end``/``doublings``: each activation's first training time and how often it may be
    doubled while the heads move."""
    prior = prior or _four_point_prior(s1, s2)
    sm, bs = _simulate_trained_heads(ctx, prior, ((softmax, t_end[0], doublings[0]),
                                                  (bsoftmax, t_end[1], doublings[1])), H)
    rb, rb_se = _bayes_risk(ctx, prior, 200_000, "mix:bayes")
    rows = {"softmax": sm, "b-softmax": bs}
    evidence = {**rows, "bayes_risk": rb, "bayes_risk_se": rb_se, "pure": PURE,
                "mixture": MIXTURE, "settled_degrees": SETTLED_DEGREES,
                "small_share": SMALL_SHARE, "norm_floor": NORM_FLOOR, "pruned_z": PRUNED_Z}
    figs = {"head-cosines": functools.partial(_draw_head_cosines, sm, bs)}
    # the purities are deterministic functions of the flow's fixed draws, compared with fixed
    # thresholds: exact bounds (α = 0). A head refutes only as the other kind (a softmax head
    # pure, a B-softmax head a mixture), only once the heads have stopped moving (a pure
    # softmax head at τ = 300 can be a mixture by τ = 1200) and only when it was that kind at
    # τ/2 too; between the thresholds a head is neither. Heads pruned with little loss are set
    # aside
    aside, notes = {}, []
    for k, row in rows.items():
        aside[k], text = _set_aside(row)
        row["set_aside"] = aside[k]
        if text:
            notes.append(f"{'B-softmax' if k == 'b-softmax' else k}: {text}")
    judged = {k: [h for h in range(len(row["purity"])) if h not in aside[k]]
              for k, row in rows.items()}
    labels = {k: [f"head {h}" for h in hs] for k, hs in judged.items()}
    purities = {k: [rows[k]["purity"][h] for h in hs] for k, hs in judged.items()}
    turn = {k: 90.0 if row["large_heads_changed"] else row["turn_degrees"]
            for k, row in rows.items()}
    stopped = {k: t <= SETTLED_DEGREES for k, t in turn.items()}
    # a refutation also needs a state that is no saddle: the B-softmax flow rests on saddles
    # with mixture heads for thousands of time units. Not asked of a confirmation: the softmax
    # flow has no stationary point (its norms grow), so its Jacobian has unstable directions
    # wherever it is, and so do superfluous heads at H > F
    at_rest = {k: stopped[k] and row["unstable_rate"] <= UNSTABLE_RATE
               for k, row in rows.items()}
    refutes = {k: at_rest[k] & _past([rows[k]["purity_half"][h] for h in judged[k]], side, thr)
               for k, side, thr in (("softmax", +1, PURE), ("b-softmax", -1, MIXTURE))}
    grey = f"between the thresholds (mixture ≤ {MIXTURE}, pure ≥ {PURE}) a head is neither"
    legs = {"no softmax head pure": bound(ctx, purities["softmax"], upper=PURE, strict=True,
                                          refutes=refutes["softmax"], name=SOFTMAX_PURE_FAMILY,
                                          labels=labels["softmax"]),
            "softmax heads mixed": bound(ctx, purities["softmax"], upper=MIXTURE, refutes=False,
                                         needs=f"a softmax head {grey}", name=SOFTMAX_FAMILY,
                                         labels=labels["softmax"]),
            "no B-softmax head a mixture": bound(ctx, purities["b-softmax"], lower=MIXTURE,
                                                 strict=True, refutes=refutes["b-softmax"],
                                                 name=BSOFTMAX_MIXED_FAMILY,
                                                 labels=labels["b-softmax"]),
            "B-softmax heads pure": bound(ctx, purities["b-softmax"], lower=PURE, refutes=False,
                                          needs=f"a B-softmax head {grey}", name=BSOFTMAX_FAMILY,
                                          labels=labels["b-softmax"]),
            "heads stopped moving": bound(ctx, [turn["softmax"], turn["b-softmax"]],
                                          upper=SETTLED_DEGREES, refutes=False,
                                          needs="training beyond the last τ (the heads still "
                                                "move)", name=SETTLED_FAMILY,
                                          labels=["softmax", "B-softmax"])}
    evidence["checks"] = {name: c.evidence() for name, c in legs.items()}
    sm_p, bs_p = (np.round(purities[k], 3).tolist() for k in ("softmax", "b-softmax"))
    at = f"at τ = {sm['tau']:g} (softmax) and {bs['tau']:g} (B-softmax)"
    if legs["no softmax head pure"].decision == "refuted":
        says = f"some trained softmax head is pure (purity ≥ {PURE}) {at}: purities {sm_p}"
    elif legs["no B-softmax head a mixture"].decision == "refuted":
        says = (f"some trained B-softmax head is a mixture (purity ≤ {MIXTURE}) {at}: purities "
                f"{bs_p}")
    elif all(c.decision == "confirmed" for c in legs.values()):
        says = (f"softmax heads are mixtures (purity ≤ {max(purities['softmax']):.2f}); "
                f"B-softmax heads are pure (≥ {min(purities['b-softmax']):.3f}) {at}, with risk "
                f"{bs['loss']:.4f} ± {bs['loss_se']:.4f} (Bayes {rb:.4f} ± {rb_se:.4f}; fresh "
                "draws)")
    elif not all(stopped.values()):
        says = (f"the heads still move {at} (largest turn over the last half "
                f"{turn['softmax']:.2g}°, {turn['b-softmax']:.2g}°; stopped ≤ "
                f"{SETTLED_DEGREES:g}°, 90° when the large heads changed): softmax purities "
                f"{sm_p}, B-softmax purities {bs_p}")
    elif any(np.any(_past(purities[k], side, thr)) and not at_rest[k]
             for k, side, thr in (("softmax", +1, PURE), ("b-softmax", -1, MIXTURE))):
        says = (f"a head of the other kind rests at a saddle {at} (unstable rate "
                f"{sm['unstable_rate']:.2g}, {bs['unstable_rate']:.2g}; a saddle above "
                f"{UNSTABLE_RATE:g}: the heads will move again): softmax purities {sm_p}, "
                f"B-softmax purities {bs_p}")
    elif any(legs[n].decision == "inconclusive" for n in ("no softmax head pure",
                                                          "no B-softmax head a mixture")):
        says = (f"a head of the other kind at τ was not that kind at τ/2 {at}: softmax "
                f"purities {sm_p} (at τ/2 {np.round(sm['purity_half'], 3).tolist()}), "
                f"B-softmax purities {bs_p} (at τ/2 {np.round(bs['purity_half'], 3).tolist()})")
    else:
        says = (f"a head is between the thresholds (mixture ≤ {MIXTURE}, pure ≥ {PURE}) {at}: "
                f"softmax purities {sm_p}, B-softmax purities {bs_p}")
    if notes:
        says += " [" + "; ".join(notes) + "]"
    return conclude(legs, says=says, evidence=evidence, figures=figs)


def _draw_pruning(rows, rb, H, F, fig):
    ax = fig.add_subplot(1, 1, 1)
    for r in rows:
        ax.plot(range(H), r["losses_after_pruning"], "o-", label=r["activation"])
    ax.axhline(rb, color="k", ls=":", label="Bayes")
    ax.axvline(H - F, color="0.6", ls="--")
    ax.set(xlabel="heads pruned", ylabel="risk", title=f"Head pruning (greedy), H = {H}, F = {F}")
    ax.legend()


def _simulate_pruning(ctx, activations, prior, H, uniform):
    """Per activation: its optimised heads pruned greedily (a stored simulation,
    ``pruning_piece``)."""
    items = [{"activation": act, "H": H, "prior": prior, "uniform": uniform,
              "best_seeds": best_seeds(ctx, f"prune:{act}"),
              "prune_seeds": [ctx.claim_seed(f"prune:{act}"), ctx.claim_seed(f"prune-judge:{act}")]}
             for act in activations]
    return ctx.map(pruning_piece, items)


PRUNING_DOMAIN = Domain({"activation": Choice("softmax-1", "b-softmax"), "H": Integers(2, 8),
                         "F": Integers(1, 4), "signal": Interval(1.0, 6.0)},
                        where={"H > F": lambda H, F: H > F}, reference={"signal": 3.0})
"""Softmax-1 or B-softmax (the statement names both), H heads, F signal directions θ ∈
{signal·e_f} (probability 1/F each), H > F."""


PRUNING_FAMILY = "10 % − relative loss increase after pruning H − F heads"
LITTLE_LOSS = 0.1
"""'Little loss': pruning H − F heads raises the loss by less than this share of the attainable
improvement (uniform-attention risk − trained risk)."""


def _directions_prior(F, signal):
    return DiscretePrior(signal * np.eye(F), [1.0 / F] * F)


@claim(f"{PAPER}:head-pruning", "Sec. IV",
       "With softmax-1 or B-softmax and H larger than the number of signal directions F, about "
       "H − F heads can be pruned with little loss.",
       reading="F signal directions θ ∈ {s·e_f} (probability 1/F each), H heads, L = 4 (the "
               "activation, H, F and s coordinates: softmax-1 and B-softmax at H = 4, F = 2, "
               "s = 3 as first checked); heads optimised on the reduced loss (6 random starts); "
               "greedy pruning "
               "(drop the head whose removal raises the loss least on one set of draws; the "
               "losses along that path judged on fresh draws), ŷ = (1/H)Σ_h over the kept heads. "
               "'Little loss': pruning H − F heads raises the loss by less "
               "than 10% of (uniform-attention risk − trained risk), judged by the sign of the "
               "margin 10 % − increase at z·se (refuted on evidence of an increase ≥ 10 %, "
               "inconclusive within z·se): one family over the domain (both activations: the "
               "same quantity), no resolution to reach beyond the margin's sign. The cost of "
               "pruning one more is recorded (not judged: the claim does not say more cannot go).",
       domain=PRUNING_DOMAIN,
       points=[{"activation": a, "H": 4, "F": 2, "signal": 3.0} for a in ("softmax-1", "b-softmax")],
       mutations={"one signal direction too many (F = 3)":
                  lambda: {"prior": DiscretePrior([[3.0, 0.0], [0.0, 3.0], [-3.0, -3.0]], [1 / 3] * 3),
                           "F_claimed": 2},
                  "one head too many pruned (H − F + 1 = 3)": lambda: {"F_claimed": 1},
                  "every head needed (θ ∈ {±3e₁, ±3e₂})":
                  lambda: {"prior": _four_point_prior(3.0, 3.0)}})
def head_pruning(ctx, activation, H, F, signal, prior=None, F_claimed=None):
    """Sec. IV (pruning): the margin 10 % − relative increase after pruning H − F heads, judged
    by its sign at z·se (``checks.trend``): refuted on evidence of an increase ≥ 10 %,
    inconclusive within z·se. ``prior``/``F_claimed``: a prior in place of the setting's and
    the number of directions claimed in place of F (mutations)."""
    prior = prior or _directions_prior(F, signal)
    F = F_claimed or F
    uniform = 1 - 1 / L
    rows = _simulate_pruning(ctx, (activation,), prior, H, uniform)
    rb = _bayes_risk(ctx, prior, 100_000, "prune:bayes")[0]
    # one family over the domain (the activation is a coordinate: the same quantity)
    checks = [trend(ctx, LITTLE_LOSS - r["relative_increase"][H - F],
                    r["relative_increase_se"][H - F], +1, name=PRUNING_FAMILY) for r in rows]
    evidence = {"rows": rows, "bayes_risk": rb, "uniform_risk": uniform, "H": H, "F": F,
                "threshold": LITTLE_LOSS, "checks": [c.evidence() for c in checks],
                "z": checks[0].z}
    figs = {"losses": functools.partial(_draw_pruning, rows, rb, H, F)}
    legs = {r["activation"]: c for r, c in zip(rows, checks, strict=True)}
    refuted = [(r, c) for r, c in zip(rows, checks) if c.decision == "refuted"]
    undecided = [c for c in checks if c.decision != "confirmed"]
    if refuted:
        r, c = refuted[0]
        rel, se = r["relative_increase"][H - F], r["relative_increase_se"][H - F]
        says = (f"{r['activation']}: pruning {H - F} heads raises the loss by {100 * rel:.1f} ± "
                f"{100 * se:.1f}% of the attainable improvement (≥ {100 * LITTLE_LOSS:g} % at "
                f"z = {c.z:.2f})")
    else:
        says = "; ".join(f"{r['activation']}: pruning {H - F} heads costs "
                         f"{100 * r['relative_increase'][H - F]:.1f} ± "
                         f"{100 * r['relative_increase_se'][H - F]:.1f}%"
                         + (f", one more {100 * r['relative_increase'][H - F + 1]:.0f}%"
                            if H - F + 1 < H else "") for r in rows)
        if undecided:
            says += (f"; not resolved against {100 * LITTLE_LOSS:g} % at z = {checks[0].z:.2f}: "
                     f"needs {undecided[0].needs}")
    return conclude(legs, says=says, evidence=evidence, figures=figs)
