"""Stationary points (spec: Props. 7, 9, 10): exact arithmetic at several d; Prop. 4 (root
finding on the full overlap flow) is ``stationary_linear``."""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp


from ...checks import bound, conclude, exact, identity, not_judged
from ...declare import missed
from ...simulations.dohmatob2025.common import exact_text, setting_text
from ...simulations.dohmatob2025.flow_on_M import m_invariant
from ...simulations.dohmatob2025.stationary_points import (e_sets, flow_directions, full_flow_rest,
                                                           oracle_class)
from ._common import (
    PARAMETERS,
    STATIONARY_SETTINGS,
    TRANSITIONS,
    chebyshev,
    fit_intercept,
    paper_stationary,
    parse,
    per_link,
    rbar_mutations,
    rbar_terms,
    stationary_item,
)


DOMAIN = PARAMETERS
"""(α, β, γ): the model's parameters (d is swept inside each check: the statements are the
d → ∞ analysis's, checked at several d)."""
SETTINGS = [{k: float(v) for k, v in st.items()} for st in STATIONARY_SETTINGS]
"""The settings the profiles judge: (0.1, 1, 0.6) [ψ < c, learnable] and (0.2, 1.5, 0.9)
[c < ψ < 1]; the first is the reference."""


MATCH_TOL = 1e-9
"""Two stationary points on M are one within this, coordinate by coordinate (both are roots
solved to 50 digits and listed as floats)."""
NO_POINT = 2.0
"""The distance to the nearest of no points: the box [−1, 1]²'s diameter coordinate by
coordinate, farther than any tolerance here."""
CLASS_CODES = {"sink": -1, "saddle": 0, "source": 1, "degenerate": 2, None: 3}
"""A stationary point's class (``theory.stationary.classify_exact``, from exact eigenvalue
signs; None: no point found) as an integer code: a computed class equals the claimed one iff
their codes are within ``CLASS_ATOL`` (``checks.exact``)."""
CLASS_ATOL = 0.5
"""Codes are integers: equal iff within ½."""


def class_leg(ctx, found, claimed, name, labels):
    """The classes ``found`` (one per point) are the ``claimed`` ones (``checks.exact`` on
    their ``CLASS_CODES``)."""
    return exact(ctx, [CLASS_CODES[c] for c in found], [CLASS_CODES[c] for c in claimed],
                 atol=CLASS_ATOL, name=name, labels=labels)


def exact_setting(alpha, beta, gamma):
    """A setting's values as exact SymPy numbers (a float's shortest decimal, read exactly:
    0.1 → 1/10), in the form of ``STATIONARY_SETTINGS``."""
    return {"alpha": sp.Rational(str(alpha)), "beta": sp.Rational(str(beta)),
            "gamma": sp.Rational(str(gamma))}


def _invariant(ctx, link, risk):
    """Whether M is invariant under the flow of ``risk`` (None: R̄) (``simulations.m_invariant``,
    Prop. 5): only then is the 2-D restriction the flow on M."""
    (invariant,) = ctx.map(m_invariant, [{"link": link, "risk": risk}])
    return invariant


def _full_flow_stationarity(ctx, link, risk, setting, points_by_d, what):
    """Where M is not invariant, the 2-D restriction is not the flow on M: the points the claim
    names are checked in the full flow instead (``simulations.full_flow_rest``, per d of
    ``points_by_d``: (d, points)). A point is stationary there only if every component of the
    full velocity vanishes; one that does not is exact evidence (the restriction cannot say)."""
    items = [{**stationary_item(link, setting, dv, risk), "points": pts} for dv, pts in points_by_d]
    rows, moving, speeds = [], [], []
    for piece in ctx.map(full_flow_rest, items):
        rows += piece["rows"]
        moving += [(row, big) for row, big in zip(piece["rows"], piece["moving"]) if big]
        speeds += [max(map(abs, big.values())) if big else _off_M_speed(row)
                   for row, big in zip(piece["rows"], piece["moving"])]
    evidence = {"link": link, "M_invariant": False, "judged_on": "the full 5-D overlap flow",
                "why": f"M is not invariant for σ = {link} (Prop. 5 refuted there): the 2-D "
                       "restriction is not the flow on M", "points": rows, "checked": what}
    leg = exact(ctx, speeds, [0.0] * len(speeds), rtol=1.0,
                scale=[row["tolerance"] for row in rows], name=f"off-M velocity at {what}",
                labels=[f"({', '.join(row['point'])}) at d={row['d']}" for row in rows])
    return rows, moving, evidence, leg


def _off_M_speed(row):
    """The largest |dζ/dt|, |dη/dt|, |dρ/dt| of a ``simulations.full_flow_rest`` row (its
    6-digit text): within the row's tolerance where the point is at rest. The check's
    tolerance per point is the simulation's (``row["tolerance"]``: 1e-25 at an exact point,
    1e-8 at a float root), given as ``scale`` with rtol = 1."""
    return max(abs(float(row["full_velocity"][k])) for k in ("zeta", "eta", "rho"))


def _paper_e_sets(ctx, link, setting, dims):
    """{d: Prop. 7's sets E1–E4} solved from the paper's equations (``simulations.e_sets``)."""
    items = [{"link": link, "setting": exact_text(setting), "d": int(dv)} for dv in dims]
    return dict(zip(dims, ctx.map(e_sets, items)))


def _exact_point(q):
    """A point of the paper's sets as an item holds it: a coordinate ±1 as an exact int, any
    other as its float's text."""
    return tuple(int(x) if abs(x) == 1 else repr(x) for x in q)


def _fastest(moving):
    """(row, coordinate, velocity) of the largest off-rest velocity among ``moving`` points."""
    w, big = max(moving, key=lambda m: max(map(abs, m[1].values())))
    k, v = max(big.items(), key=lambda kv: abs(kv[1]))
    return w, k, v


def _prop7_full_flow(ctx, link, risk, st, dims):
    """Prop. 7 where M is not invariant: the stationary points on M are those of the 2-D
    restriction whose off-M velocity also vanishes, so the claimed sets must consist of points
    at which the full flow is at rest."""
    sets_by_d = _paper_e_sets(ctx, link, st, dims)
    pts = [(dv, list(dict.fromkeys(_exact_point(q) for e in sets_by_d[dv].values() for q in e)))
           for dv in dims]
    return _at_rest_outcome(ctx, link, risk, st, pts, **AT_REST["prop7"])


AT_REST = {
    "prop7": dict(
        what="E1 ∪ E2 ∪ E3 ∪ E4", at_rest_leg="E1 ∪ … ∪ E4 at rest in the full flow leg",
        unjudged=("stationary set on M leg", "the stationary set on M in the full flow",
                  "a search of the full flow's stationary points on M"),
        moving_text=lambda m, n, w: (f"in the full flow {m}/{n} points of E1 ∪ … ∪ E4 are not "
                                     f"stationary, e.g. ({w['point'][0]}, {w['point'][1]}) has"),
        undecided="{link}: M is not invariant; every point of E1 ∪ … ∪ E4 is at rest in the full "
                  "flow, but the stationary set on M was not searched in the full flow (the 2-D "
                  "restriction is not the flow on M)"),
    "prop9": dict(
        what="the oracle (1, 1)", at_rest_leg="oracle at rest in the full flow leg",
        unjudged=("class in the full flow leg", "the oracle's class in the full flow",
                  "the oracle's class in the full flow, at the edge of the realisable set"),
        moving_text=lambda m, n, w: (f"the oracle (1, 1, 0, 0, 0) is not stationary in the full "
                                     f"flow at {m}/{n} (setting, d), e.g."),
        undecided="{link}: M is not invariant; the oracle is at rest in the full flow, but its "
                  "class there (at the edge of the realisable set) is not checked, and the 2-D "
                  "restriction's class is not valid")}
"""What Props. 7 and 9 judge where M is not invariant (``_at_rest_outcome``): the points
claimed at rest, the part the 2-D restriction cannot show, and how the verdict reads."""


def _at_rest_outcome(ctx, link, risk, setting, pts, what, at_rest_leg, unjudged, moving_text,
                     undecided):
    """Where M is not invariant: the claimed points ``pts`` judged at rest in the full flow
    (refuted when one moves, naming the fastest), with the part the 2-D restriction cannot
    show (``unjudged``: leg, name, what would decide) as an undecided leg."""
    rows, moving, evidence, leg = _full_flow_stationarity(ctx, link, risk, setting, pts, what)
    leg_name, name, why = unjudged
    legs = {at_rest_leg: leg, leg_name: not_judged(ctx, name, why)}
    refuted = ""
    if moving:
        w, k, v = _fastest(moving)
        refuted = (f"{link}: M is not invariant, and {moving_text(len(moving), len(rows), w)} "
                   f"d{k}/dt = {v:.4g} at α={w['alpha']}, β={w['beta']}, γ={w['gamma']}, "
                   f"d={w['d']} (exact parameters, 30 digits)")
    return conclude(legs, says={"inconclusive": undecided.format(link=link), "refuted": refuted},
                    evidence=evidence)


def _prop7_check(ctx, link, alpha, beta, gamma, risk=None):
    """Prop. 7 at one (α, β, γ), exactly at each d of the profile's list: the stationary set of
    the flow on M (``simulations.stationary_piece``; the paper's is shared with Prop. 10)
    against the paper's sets."""
    setting = exact_setting(alpha, beta, gamma)
    dims = ctx.pick([50, 100, 200], [50, 100, 200, 400, 800])
    if not _invariant(ctx, link, risk):
        return _prop7_full_flow(ctx, link, risk, setting, dims)
    stationary = paper_stationary(ctx, link, setting, dims, risk)
    sets_by_d = _paper_e_sets(ctx, link, setting, dims)
    rows, paper_at, engine_at = [], [], []    # (row index, point, distance to the other side)
    for dv in dims:
        found, unresolved, curves = stationary[dv]
        sets = sets_by_d[dv]
        paper = [q for e in sets.values() for q in e]
        engine = [(f["mu"], f["nu"]) for f in found]
        paper_at += [(len(rows), q, min((chebyshev(q, e) for e in engine), default=NO_POINT))
                     for q in paper]
        engine_at += [(len(rows), e, min((chebyshev(q, e) for q in paper), default=NO_POINT))
                      for e in engine]
        rows.append({**setting_text(setting), "d": dv, "engine": found,
                     "paper_sets": {k: [list(q) for q in v] for k, v in sets.items()},
                     "missing_from_engine": [], "not_in_paper_sets": [],
                     "unresolved_factor_pairs": unresolved,
                     "curves": [list(map(str, c)) for c in curves]})
    legs = {"E1 ∪ … ∪ E4 stationary leg": _match_leg(ctx, paper_at, rows, "missing_from_engine",
                                                     "distance from E1 ∪ … ∪ E4 to the stationary set")}
    if engine_at:
        legs["no other stationary point leg"] = _match_leg(
            ctx, engine_at, rows, "not_in_paper_sets",
            "distance from the stationary set to E1 ∪ … ∪ E4")
    labels = [f"d={r['d']}" for r in rows]
    legs["factor pairs resolved leg"] = bound(
        ctx, [len(r["unresolved_factor_pairs"]) for r in rows], upper=0,
        name="unresolved factor pairs of the flow on M", labels=labels)
    legs["isolated points leg"] = bound(ctx, [len(r["curves"]) for r in rows], upper=0,
                                        name="curves of stationary points on M", labels=labels)
    evidence = {"link": link, "rows": rows}
    bad = [r for r in rows if r["missing_from_engine"] or r["not_in_paper_sets"]
           or r["unresolved_factor_pairs"] or r["curves"]]
    n = sum(len(r["engine"]) for r in rows)
    refuted = ""
    if bad:
        w = bad[0]
        refuted = (f"{link}: at α={w['alpha']}, β={w['beta']}, γ={w['gamma']}, "
                   f"d={w['d']}: stationary points not in E1∪…∪E4: "
                   f"{w['not_in_paper_sets']}; in E1∪…∪E4 but not stationary: "
                   f"{w['missing_from_engine']}")
    says = {"confirmed": f"{link}: the derived flow's stationary set on M equals "
                         f"E1 ∪ E2 ∪ E3 ∪ E4 at d = {dims} ({n} points)", "refuted": refuted}
    return conclude(legs, says=says, evidence=evidence)


def _match_leg(ctx, located, rows, key, name):
    """Each point of ``located`` ((row index, point, distance to the nearest point of the other
    set)) lies within ``MATCH_TOL`` of the other set (``checks.exact`` of the distance against
    0); the points that do not are listed in their row under ``key``."""
    leg = exact(ctx, [dist for _, _, dist in located], [0.0] * len(located), atol=MATCH_TOL,
                name=name, labels=[f"d={rows[i]['d']}: {tuple(q)}" for i, q, _ in located])
    for (i, q, _), ok in zip(located, leg.ok):
        if not ok:
            rows[i][key].append(q)
    return leg


PROP7_UNSEEN_SIGN_FLIP = {"linear": (
    "the stationary set on M is the zero set of the flow, which for σ(t) = t stays "
    "E1 = {(±1, ±1)} when the sign of −2p·H2 is flipped (p(µ) = −ν has no root at finite d); "
    "the flip changes the points' classes, which Prop. 7 does not state")}
"""Links at which Prop. 7's check cannot see the sign flip of R̄'s H2 term, and why."""


def _prop7_mutations(link):
    """R̄'s term mutations, plus 0.9× on the H2 term (it moves E3 to p(µ) = 0.9·σ̄(ν)/σ̄(1))."""
    muts = rbar_mutations(link)
    if link in PROP7_UNSEEN_SIGN_FLIP:
        flip = next(k for k in muts if k.startswith("sign flip"))
        muts[flip] = missed(muts[flip], PROP7_UNSEEN_SIGN_FLIP[link])
    muts["wrong factor: 0.9·2p·H2(ν, ζ, ρ) in R̄"] = lambda: {
        "risk": rbar_terms(link, h2=sp.Rational(9, 10))}
    return muts


per_link("prop7-stationary-set", "Prop. 7",
          "The stationary points on M are exactly E1 ∪ E2 ∪ E3 ∪ E4: E1 = {{(±1, ±1)}}; "
          "E2 = {{(±1, ν): σ̄′_γ(ν) = 0}}; E3 = {{(µ, ±1): p(µ)σ̄_γ(1) = σ̄_γ(±1)}}; E4 = "
          "interior points with p(µ)σ̄_γ(1) = σ̄_γ(ν) and σ̄′_γ(ν) = 0; here σ = {link}.",
          _prop7_check, statistical=False,
          reading="at finite d (p(µ) as the paper defines it), exact arithmetic: the engine "
                  "factors its derived 2-D flow and solves every factor pair in 50-digit "
                  "precision; the paper's sets are solved from its own equations; d = 50, 100, "
                  "200 (full: to 800) at each setting. Settings (both profiles): (α, β, γ) = "
                  "(0.1, 1, 0.6) [ψ < c] and (0.2, 1.5, 0.9) [c < ψ < 1]; a setting's floats are "
                  "read as exact decimals.",
          mutations=lambda link: _prop7_mutations(link),
          domain=DOMAIN, points=SETTINGS, reference=SETTINGS[0],
          transitions=TRANSITIONS)


def _prop9_check(ctx, link, alpha, beta, gamma, risk=None):
    """Prop. 9 at one (α, β, γ), exactly at each d of the profile's list: the oracle's class
    on the flow on M (``simulations.oracle_class``), or where M is not invariant whether the
    full flow is at rest there."""
    setting = exact_setting(alpha, beta, gamma)
    dims = ctx.pick([50, 100, 200], [50, 100, 200, 400, 800])
    if not _invariant(ctx, link, risk):
        pts = [(dv, [(1, 1)]) for dv in dims]
        return _at_rest_outcome(ctx, link, risk, setting, pts, **AT_REST["prop9"])
    pieces = ctx.map(oracle_class, [stationary_item(link, setting, dv, risk) for dv in dims])
    rows = [{**setting_text(setting), "d": dv, "rhs_at_oracle": c["rhs_at_oracle"],
             "eigenvalues": c["eigenvalues"], "class": c["class"]} for dv, c in zip(dims, pieces)]
    at_rest = identity(ctx, [parse(x) for r in rows for x in r["rhs_at_oracle"]],
                       name="the flow on M at the oracle (1, 1)",
                       labels=[f"component {i} at d={r['d']}" for r in rows
                               for i, _ in enumerate(r["rhs_at_oracle"])])
    sink = class_leg(ctx, [r["class"] for r in rows], ["sink"] * len(rows),
                     "the oracle's class on M", [f"d={r['d']}" for r in rows])
    rests = np.asarray(at_rest.ok).reshape(len(rows), -1).all(axis=1)
    bad = [r for r, rest, ok in zip(rows, rests, sink.ok) if not (rest and ok)]
    evidence = {"link": link, "rows": rows}

    def says(verdict):
        if bad and verdict == "refuted":
            w = bad[0]
            what = ("not stationary" if any(x != "0" for x in w["rhs_at_oracle"])
                    else "a " + w["class"])
            return (f"{link}: (1, 1) is {what} at α={w['alpha']}, β={w['beta']}, "
                    f"γ={w['gamma']}, d={w['d']} (eigenvalues {w['eigenvalues']})")
        if verdict == "confirmed":
            slow = min(rows, key=lambda r: abs(float(r["eigenvalues"][0])))
            return (f"{link}: (1, 1) is a sink at d = {dims}; its slowest rate is exponentially "
                    f"small in d (e.g. {slow['eigenvalues'][0]} at d={slow['d']})")
        return ""
    return conclude({"oracle at rest leg": at_rest, "oracle a sink leg": sink}, says=says,
                    evidence=evidence)


per_link("prop9-oracle-sink", "Prop. 9",
          "(µ, ν) = (1, 1) is a sink for every link satisfying Condition 1; here σ = {link}.",
          _prop9_check, statistical=False,
          reading="sink = both Jacobian eigenvalues of the derived 2-D flow on M negative, "
                  "evaluated exactly at finite d (they are exponentially small in d along µ): "
                  "d = 50, 100, 200 (full: to 800) at each setting; settings as Prop. 7's.",
          mutations=rbar_mutations, domain=DOMAIN, points=SETTINGS, reference=SETTINGS[0],
          transitions=TRANSITIONS)


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
        return fit_intercept(dims, dist, basis=("1/d",))
    return float(max(dist))


LOCATION_TOL = 1e-3
"""The d → ∞ limit (1/d extrapolation) of the L¹ distance from a listed location to the
nearest stationary point found at or below which the point is found there."""
NO_POINT_L1 = 4.0
"""The L¹ distance to the nearest of no points: the box [−1, 1]²'s L¹ diameter, farther than
``LOCATION_TOL``."""
UNLISTED_TOL = 0.05
"""A found stationary point within this of a listed location (coordinate by coordinate) is
that point; one farther from every listed location is not in the list."""


def _prop10_entry(st, loc, cls, target, per_d, dims):
    dist, classes, eig = _nearest_by_d(per_d, target)
    limit = _distance_limit(dims, dist)
    return {**st, "point_claimed": [str(loc[0]), loc[1]], "location_claimed": list(target),
            "distance_by_d": dist, "distance_limit": limit, "class_claimed": cls,
            "class_found_by_d": classes, "eigenvalues_by_d": eig, "d": dims}


def _prop10_legs(ctx, entries, found_rows, locations, complete):
    """Prop. 10's legs at one setting: each listed location's distance limit within
    ``LOCATION_TOL`` (``checks.bound``, exact), each listed class found at every d (``class_leg``)
    and, where the list is complete, every found point within ``UNLISTED_TOL`` of a listed
    location (``checks.exact`` of the distance against 0). Marks each entry ``ok`` and returns
    (legs, the found points not in the list)."""
    names = [f"({e['point_claimed'][0]}, {e['point_claimed'][1]})" for e in entries]
    located = bound(ctx, [min(e["distance_limit"], NO_POINT_L1) for e in entries], upper=0,
                    atol=LOCATION_TOL, name="d → ∞ distance from a listed point to the nearest "
                                            "stationary point", labels=names)
    pairs = [(k, e["d"][i], c) for k, e in enumerate(entries)
             for i, c in enumerate(e["class_found_by_d"])]
    classes = class_leg(ctx, [c for _, _, c in pairs],
                        [entries[k]["class_claimed"] for k, _, _ in pairs],
                        "class of each listed point", [f"{names[k]} at d={dv}" for k, dv, _ in pairs])
    cls_ok = np.ones(len(entries), bool)
    for (k, _, _), ok in zip(pairs, classes.ok):
        cls_ok[k] &= bool(ok)
    for e, loc_ok, c_ok in zip(entries, located.ok, cls_ok):
        e["ok"] = bool(loc_ok and c_ok)
    legs = {"listed points located leg": located, "listed classes leg": classes}
    unlisted = []
    if complete and found_rows:
        dist = [min(chebyshev((f["mu"], f["nu"]), q) for q in locations) for _, f in found_rows]
        leg = exact(ctx, dist, [0.0] * len(dist), atol=UNLISTED_TOL,
                    name="distance from a found stationary point to the listed ones",
                    labels=[f"({f['mu']:.4g}, {f['nu']:.4g}) at d={row['d']}"
                            for row, f in found_rows])
        unlisted = [{**row, "unlisted_stationary_point": f}
                    for (row, f), ok in zip(found_rows, leg.ok) if not ok]
        legs["no unlisted point leg"] = leg
    return legs, unlisted


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


FIGURE_D = 100
"""The d at which Prop. 10's figure draws the flow on M (else the middle d of the list)."""


def _prop10_check(ctx, link, alpha, beta, gamma, claimed=None):
    """Every listed point must be a stationary point of the derived flow with the listed class
    at every d (a listed location is matched by the nearest found point; for (ψ, 0) the
    distance must vanish as d grows, judged from its 1/d extrapolation); where the paper's list
    is complete (linear, quadratic) no other stationary point may exist. At one (α, β, γ)."""
    listed, complete = PROP10_CLAIMED[link] if claimed is None else claimed
    setting = exact_setting(alpha, beta, gamma)
    dims = ctx.pick([50, 100, 200], [50, 100, 200, 400, 800])
    shared = paper_stationary(ctx, link, setting, dims)
    rows = []
    st = setting_text(setting)
    per_d = []
    for dv in dims:
        found, _, _ = shared[dv]
        per_d.append(found)
        rows.append({**st, "d": dv, "found": found})
    targets = _prop10_targets(listed, st)
    by_setting = [_prop10_entry(st, loc, cls, target, per_d, dims) for target, loc, cls in targets]
    found_rows = [({**st, "d": dv}, f) for dv, found in zip(dims, per_d) for f in found]
    legs, unlisted = _prop10_legs(ctx, by_setting, found_rows, [t for t, _, _ in targets],
                                  complete)
    problems = [e for e in by_setting if not e["ok"]] + unlisted
    evidence = {"link": link, "claimed": [[list(map(str, l)), c] for l, c in listed],
                "list_is_complete": complete, "checks": by_setting, "stationary_by_d": rows}
    dv = FIGURE_D if FIGURE_D in dims else dims[len(dims) // 2]
    (directions,) = ctx.map(flow_directions, [stationary_item(link, setting, dv)])
    figs = {"flow_on_M": functools.partial(_draw_flow_on_M, link, st, dv, directions, rows)}
    says = {"confirmed": f"{link}: every listed point found with its class at every d, "
                         f"{'and no other' if complete else 'list not exhaustive'}",
            "refuted": f"{link}: " + _prop10_problem_text(problems) if problems else ""}
    return conclude(legs, says=says, evidence=evidence, figures=figs)


def _draw_flow_on_M(link, st, dv, directions, rows, fig):
    """The signs of (µ̇, ν̇) on M at d = ``dv`` (``simulations.flow_directions``: the µ-rates
    span hundreds of orders of magnitude) and the stationary points found there."""
    found = next(r["found"] for r in rows if r["d"] == dv)
    colours = {"sink": "tab:blue", "source": "tab:red", "saddle": "tab:orange", "degenerate": "grey"}

    ax = fig.add_subplot()
    U, V = directions["U"], directions["V"]
    norm = np.hypot(U, V) + 1e-300
    ax.streamplot(directions["mu"], directions["nu"], U / norm, V / norm, density=0.8,
                  color="0.6", linewidth=0.7)
    for s in found:
        ax.scatter(s["mu"], s["nu"], s=60, color=colours[s["class"]], zorder=3,
                   edgecolor="k", label=s["class"])
    h, l = ax.get_legend_handles_labels()
    uniq = dict(zip(l, h))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.axvline(st["psi"] / st["c"], ls=":", color="k", lw=0.8)
    ax.set_xlabel("µ = uᵀu*")
    ax.set_ylabel("ν = vᵀv*")
    ax.set_title(f"Dohmatob: derived flow on M, {link} link (signs of µ̇, ν̇)\n"
                 f"α={st['alpha']}, β={st['beta']}, γ={st['gamma']}, d={dv}; dotted: µ = ψ/c",
                 fontsize=8)


def _prop10_mutations(link):
    """The paper's list edited: its last point dropped, the oracle's class wrong (a source), the
    sign of ν flipped at every listed point (the analogues of a dropped term, a wrong factor
    and a sign flip for a list of classified points)."""
    listed, complete = PROP10_CLAIMED[link]
    wrong_class = [(listed[0][0], "source")] + listed[1:]
    flipped = [((loc[0], -loc[1]), cls) for loc, cls in listed]
    return {f"dropped point: {listed[-1][0]} from the list": lambda: {"claimed": (listed[:-1], complete)},
            "wrong class: (1, 1) claimed a source": lambda: {"claimed": (wrong_class, complete)},
            "sign flip: ν → −ν at every listed point": lambda: {"claimed": (flipped, complete)}}


per_link("prop10-classification", "Prop. 10",
          "Linear: stationary points (±1, ±1); (1, 1) sink, (1, −1) source, (−1, ±1) saddles. "
          "Quadratic: (±1, ±1), (±1, 0) and (ψ, 0) (feasible iff ψ < 1); (1, ±1) sinks, "
          "(−1, ±1), (−1, 0) and (ψ, 0) saddles, (1, 0) source. ReLU: (1, 1) sink, (1, −1) "
          "saddle, (±1, −1) degenerate. Here σ = {link}.",
          _prop10_check, statistical=False,
          reading="classes from the exact Jacobian eigenvalues of the derived 2-D flow on M at "
                  "d = 50, 100, 200 (full: to 800) at each setting; settings (both profiles) "
                  "(α, β, γ) = (0.1, 1, 0.6) and (0.2, 1.5, 0.9); the ReLU list names (1, −1) "
                  "twice (saddle and degenerate) and is not exhaustive: each listed pair is "
                  "checked as stated.",
          mutations=_prop10_mutations, domain=DOMAIN, points=SETTINGS, reference=SETTINGS[0],
          transitions=TRANSITIONS)
