"""What Dohmatob's stationary-point claims compute (``verification/claims/dohmatob2025/
stationary_points.py`` judges), all in exact or high-precision arithmetic: the stationary points
of the flow on M (Props. 7, 10), the paper's sets E1–E4 solved from its own equations (Prop. 7),
the full flow's velocity at named points (where M is not invariant), the oracle's class
(Prop. 9), the flow's directions on M (Prop. 10's figure) and the realisable roots of the full
overlap flow (Prop. 4).

An item names the link, the risk (None: the paper's R̄; else a deliberately wrong formula, the
model simulated) and the setting as exact text (``common.exact_text``)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from numerics.codegen import generate
from theory.models import dohmatob2025 as dm
from theory.stationary import (RefinedRoot, classify_exact, factor_roots, find_stationary_points,
                               refine_root)

from ..base import simulation
from .common import (BOX, computed_stationary, exact_values, flow_on_M_2d, mp_str, reduced_model,
                     setting_text, setting_values)

__all__ = ["stationary_piece", "e_sets", "full_flow_rest", "oracle_class", "flow_directions",
           "prop4_piece", "prop4_roots", "GRAM_TOL"]


@simulation(seeded=False)
def stationary_piece(sim, item):
    """(found, unresolved, curves) of the flow on M (``common.computed_stationary``) for one
    link and risk at one (setting, d). Props. 7 and 10 ask for the same pieces of the paper's
    flow: stored once, whichever asks first."""
    setting = exact_values(item["setting"])
    return tuple(computed_stationary(flow_on_M_2d(item["link"], item["risk"]), setting,
                                     item["d"]))


def _equation_roots(expr, var):
    """Zeros of expr(var) on [−1, 1]: the numerator is factored first (as the engine does for
    its flow), so that cancellations such as p(µ) − 1 = −e^{−x}/(1 + e^{−x}) are exact and
    not lost below the working precision at large d."""
    return sorted({float(r) for r in factor_roots(expr, var, -1, 1, dps=50, grid=2000)})


@simulation(seeded=False)
def e_sets(sim, item):
    """Prop. 7's sets from the paper's p(µ) and σ̄_γ at one (setting, d): E1 = {(±1, ±1)};
    E2 = {(±1, ν): σ̄′(ν) = 0}; E3 = {(µ, ±1): p(µ)σ̄(1) = σ̄(±1)}; E4 = interior points with
    p(µ)σ̄(1) = σ̄(ν) and σ̄′(ν) = 0 — each equation solved with the same exact root finder."""
    vals = setting_values(exact_values(item["setting"]), item["d"])
    sbar = dm.dual_kernel(item["link"], dm.nu).subs(vals)
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


def _full_velocity(link, risk, setting, dv, point, dps=30):
    """The full 5-D overlap flow's velocity (µ̇, ν̇, ζ̇, η̇, ρ̇) at (µ, ν, 0, 0, 0), parameters
    exact, the point given exactly (strings of the exact roots), evaluated to ``dps`` digits."""
    flow = reduced_model(link, risk).derivation.flow
    at = {**setting_values(setting, dv), dm.zeta: 0, dm.eta: 0, dm.rho: 0,
          dm.mu: sp.sympify(point[0]), dm.nu: sp.sympify(point[1])}
    return {str(q): sp.N(r.subs(at), dps) for q, r in flow.as_dict().items()}


@simulation(seeded=False)
def full_flow_rest(sim, item):
    """Whether the full 5-D overlap flow is at rest at each point (µ, ν) of ``item["points"]``
    on M (a coordinate ±1 as an int, exact; any other as the text of a float) at one (setting,
    d): {"rows": per point its velocity (6 digits) and verdict, "moving": per point the off-M
    components that do not vanish ({} where at rest)}. A component moves when it is nonzero at
    30 digits: above 1e-25 at an exact point, above 1e-8 at a float root (15 digits)."""
    setting, dv = exact_values(item["setting"]), item["d"]
    rows, moving = [], []
    for point in item["points"]:
        pt = tuple(sp.Integer(x) if isinstance(x, int) else x for x in point)
        vel = _full_velocity(item["link"], item["risk"], setting, dv, pt)
        # off M only ((µ̇, ν̇) vanish there by the 2-D check)
        exact = all(isinstance(x, sp.Rational) for x in pt)
        tol = 1e-25 if exact else 1e-8
        big = {k: float(v) for k, v in vel.items()
               if k in ("zeta", "eta", "rho") and v != 0 and abs(v) > tol}
        rows.append({**setting_text(setting), "d": dv, "point": [str(x) for x in pt],
                     "point_exact": exact, "tolerance": tol,
                     "full_velocity": {k: mp_str(v) for k, v in vel.items()},
                     "stationary_in_full_flow": not big})
        moving.append(big)
    return {"rows": rows, "moving": moving}


@simulation(seeded=False)
def oracle_class(sim, item):
    """Prop. 9 at one (setting, d) on the flow on M: its right-hand side at the oracle (1, 1),
    simplified (text, and whether every component is 0), and the oracle's class from the
    exact Jacobian eigenvalues."""
    setting = exact_values(item["setting"])
    flow2 = flow_on_M_2d(item["link"], item["risk"])
    vals = setting_values(setting, item["d"])
    rhs = [r.subs(vals) for r in flow2.rhs]
    residual = [sp.simplify(r.subs({dm.mu: 1, dm.nu: 1})) for r in rhs]
    c = classify_exact(rhs, (dm.mu, dm.nu), (sp.Integer(1), sp.Integer(1)), BOX)
    return {"rhs_at_oracle": [str(x) for x in residual],
            "at_rest": all(x == 0 for x in residual),
            "eigenvalues": [mp_str(v) for v in c.eigenvalues], "class": c.kind}


@simulation(seeded=False)
def flow_directions(sim, item):
    """The signs of (µ̇, ν̇) of the flow on M at one (setting, d) on a 41 × 41 grid of
    (−0.999, 0.999)² (the µ-rates span hundreds of orders of magnitude: directions only)."""
    vals = setting_values(exact_values(item["setting"]), item["d"])
    f = generate((dm.mu, dm.nu), [r.subs(vals) for r in flow_on_M_2d(item["link"]).rhs])
    m, n = np.meshgrid(np.linspace(-0.999, 0.999, 41), np.linspace(-0.999, 0.999, 41))
    with np.errstate(all="ignore"):
        U, V = (np.broadcast_to(np.asarray(x, float), m.shape) for x in f(m, n))
    return {"mu": m, "nu": n, "U": np.sign(U) * (np.abs(U) > 0),
            "V": np.sign(V) * (np.abs(V) > 0)}


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


def prop4_roots(reduced, setting, dv, n_starts, seed):
    """Realisable stationary points of the overlap flow at one d: roots from Sobol starts
    (generated float code of the reduced model's flow at the exact parameters, symbolic
    Jacobian), kept when realisable (Gram PSD) and still roots after refinement to 40 digits
    (residual < 1e-25; a refinement that fails discards it). Returns (rows, dropped)."""
    flow = reduced.derivation.flow
    state = flow.state
    order = [state.index(s) for s in (dm.mu, dm.nu, dm.zeta, dm.eta, dm.rho)]
    rhs = [r.subs(setting_values(setting, dv)) for r in flow.rhs]
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
        try:
            ref = refine_root(rhs, state, p.x, dps=40, tol=1e-30)
        except TypeError as err:
            # mpmath's LU solve on a singular Jacobian (a root on a curve of stationary points)
            # raises a TypeError that refine_root lets through: a failed refinement all the same
            ref = RefinedRoot(tuple(p.x), float("nan"), False, f"singular Jacobian: {err}")
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


@simulation(seeded=False)
def prop4_piece(sim, item):
    """Prop. 4 at one d: ``prop4_roots`` of the full overlap flow of the linear link's R̄ (or
    of ``item["risk"]``) at the exact setting, from ``item["n_starts"]`` Sobol starts scrambled
    with ``item["seed"]``: [rows, dropped]."""
    reduced = reduced_model("linear", item["risk"])
    return list(prop4_roots(reduced, exact_values(item["setting"]), item["d"], item["n_starts"],
                            item["seed"]))
