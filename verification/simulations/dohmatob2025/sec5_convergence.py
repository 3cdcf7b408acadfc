"""What Dohmatob's Sec. 5 claims simulate (``verification/claims/dohmatob2025/
sec5_convergence.py`` judges): the projected gradient flow of the linear link's R̄ in vector
coordinates from given starts (global convergence), and PGD from starts on M with steps set
from the estimated smoothness constants (the rebuttal's descent lemma).

Items carry the risk (None: the paper's R̄; else a deliberately wrong one), the exact setting
(``common.exact_text``) and the random starts or the seed they are drawn from."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from numerics.frame import compile_frame_flow
from numerics.ode import integrate
from numerics.pgd import project_gradient, projected_gradient_descent
from theory.frame import frame_flow

from ..base import simulation
from .common import (computed_stationary, exact_values, flow_on_M_2d, reduced_model,
                     setting_text, setting_values)

__all__ = ["frame", "SPHERE_TOL", "norm_deviation", "rest_point", "rest_digits", "REST_KINDS",
           "global_run", "global_runs", "descent_runs"]


def frame(reduced, vals):
    """The reduced model's projected gradient flow for (u, v) written in the frame
    (u*, v*, e3, e4) (the engine's frame flow of its geometry and risk, parameters ``vals``
    substituted: state y = (u, v) ∈ R⁸, µ = u₁, ν = v₂, ζ = v₁, η = u₂, ρ = uᵀv), compiled.
    Integrating vectors rather than overlaps keeps every state realisable and resolves tiny
    departures from an edge such as u = −u*, which overlap coordinates lose."""
    return compile_frame_flow(frame_flow(reduced.geometry, reduced.derivation.risk, vals))


SPHERE_TOL = 1e-7     # |‖w‖ − 1| along a run above this: the run left the realisable set


def _integrate_on_spheres(flow, y0, t_eval):
    """LSODA (BDF, Radau as fallbacks); a run that leaves the spheres is redone once with
    tolerances 100× tighter (its states are returned either way: the judge checks them)."""
    tr = None
    for rtol, atol in ((1e-9, 1e-14), (1e-11, 1e-16)):
        tr = integrate(flow.rhs, y0, t_eval, jac=flow.jacobian, method="LSODA",
                       fallback=("BDF", "Radau"), rtol=rtol, atol=atol, max_nfev=100_000)
        if not tr.ok:
            return tr
        if norm_deviation(flow, tr.y).max() <= SPHERE_TOL:    # False for non-finite states
            return tr
    return tr


def norm_deviation(flow, Y):
    """max over the trainable vectors of |‖w‖ − 1| at each state of Y."""
    return np.max([np.abs(np.linalg.norm(Y[:, a:b], axis=1) - 1) for a, b, _ in flow.blocks],
                  axis=0)


AT_REST_SPEED = 1e-12
"""max |ẏ| below which a run is at rest: where it rests is then decided by ``rest_point``."""
REST_DISTANCE = 1e-2
"""A run at rest has reached a stationary point when Newton finds one this close (max norm of
the vectors' coordinates; the perturbed starts are 10⁻³ per coordinate from theirs)."""
REST_MARGIN_DIGITS = 40
"""Digits beyond the flow's slowest rate (``rest_digits``) that a rest is judged with."""


def rest_digits(setting: dict, dv: int) -> int:
    """Working digits that resolve every rate of the linear link's flow at (setting, d): its
    slowest, the secret token's weight at µ = −1, is of order e^{−(ψ + c)βd} (far below
    float64 at large β·d), plus ``REST_MARGIN_DIGITS``. A rest is judged at these digits and
    confirmed at twice as many: with fewer, a rate below the noise looks like a flat direction
    and a slow point like a stationary one."""
    text = setting_text(setting)
    slowest = (text["psi"] + text["c"]) * text["beta"] * dv / math.log(10)
    return max(50, int(math.ceil(slowest)) + REST_MARGIN_DIGITS)


REST_KINDS = {"sink": "stationary elsewhere",
              "unstable": "at an unstable stationary point",
              "degenerate": "at a degenerate stationary point",
              "none": "slow, no stationary point found near",
              "unresolved": "at rest, its two precisions disagreeing"}
"""A run's outcome by where it rests (``rest_point``'s kind): only a sink other than the oracle
is evidence against convergence; at an unstable point the run escapes in exact arithmetic
later than the horizon; "none": the flow is slower than the solver resolves, and Newton finds no
stationary point near (near an unstable one whose rates are e^{−O(βd)} it may not converge
either: undecided, never evidence)."""

_MP_FUNCTIONS: dict = {}


def _mp_functions(flow):
    """The frame flow's right-hand side and Jacobian as mpmath functions (memoised per flow)."""
    key = id(flow.flow)
    if key not in _MP_FUNCTIONS:
        sym = flow.flow
        _MP_FUNCTIONS[key] = (flow.flow,
                              sp.lambdify(sym.state, list(sym.rhs), "mpmath"),
                              sp.lambdify(sym.state, sym.jacobian().tolist(), "mpmath"))
    return _MP_FUNCTIONS[key][1:]


def _newton_step(J, f, noise):
    """The least-squares Newton step J⁺f (singular values below ``noise`` dropped: a null
    direction such as the frame's rotation symmetry)."""
    U, S, V = mpmath.svd_r(J)
    inv = mpmath.diag([1 / s if s > noise else 0 for s in S])
    return V.T * inv * U.T * f


def _noise(J, dps: int):
    """What ``dps`` digits cannot tell from 0 in the Jacobian ``J``'s scale."""
    return mpmath.mpf(10) ** (10 - dps) * max(mpmath.mnorm(J, 1), 1)


def _newton(rhs, jac, x0, dps: int, radius: float):
    """Newton on ẏ = 0 from x0: (x, True) once the step is below 10^(−2·dps/3), (x, False)
    when it leaves the ball of ``radius`` around x0 or does not converge in 40 steps."""
    x = x0.copy()
    for _ in range(40):
        J = mpmath.matrix(jac(*x))
        step = _newton_step(J, mpmath.matrix(rhs(*x)), _noise(J, dps))
        x -= step
        if mpmath.norm(x - x0, mpmath.inf) > radius:
            return x, False
        if mpmath.norm(step, mpmath.inf) < mpmath.mpf(10) ** (-(2 * dps) // 3):
            return x, True
    return x, False


EQUILIBRIA_STEP = 1e-4
"""How far along a null direction ``rest_point`` looks for more stationary points."""


def _along_equilibria(rhs, jac, x, v, dps: int) -> bool:
    """Whether the null direction ``v`` at the stationary point ``x`` is tangent to a set of
    stationary points: Newton from x + h·v (h = EQUILIBRIA_STEP) converges within h/10 of where
    it started (a curve of them of radius ≥ 5h, e.g. the orbit of the frame's rotation
    symmetry, or a flat direction of R), not back near x (an isolated degenerate point)."""
    v = mpmath.matrix([mpmath.re(c) for c in v])
    if mpmath.norm(v) == 0:
        return False
    y = x + EQUILIBRIA_STEP * v / mpmath.norm(v)
    z, ok = _newton(rhs, jac, y, dps, EQUILIBRIA_STEP)
    return ok and mpmath.norm(z - y, mpmath.inf) <= EQUILIBRIA_STEP / 10


def _tangent_basis(flow, x):
    """Orthonormal columns spanning the tangent space of the spheres at x (per trainable
    vector, the orthogonal complement of its direction within its coordinates: the left
    singular vectors of that block's projector with singular value 1)."""
    blocks = [(a, b) for _, a, b, _ in flow.flow.blocks]
    T = mpmath.zeros(len(x), sum(b - a - 1 for a, b in blocks))
    j = 0
    for a, b in blocks:
        w = mpmath.matrix([x[i] for i in range(a, b)])
        w /= mpmath.norm(w)
        U, _, _ = mpmath.svd_r(mpmath.eye(b - a) - w * w.T)
        for k in range(b - a - 1):           # the projector has rank b − a − 1
            for i in range(b - a):
                T[a + i, j] = U[i, k]
            j += 1
    return T


def _eigen(M, noise):
    """Eigenvalues and right eigenvectors (columns) of M. A gradient flow's Jacobian on the
    tangent space at a stationary point is minus the Riemannian Hessian, symmetric in an
    orthonormal basis: then the symmetric solver (Jacobi rotations, robust to repeated and
    zero eigenvalues, where the general QR iteration may not converge); else the general one."""
    if mpmath.mnorm(M - M.T, 1) <= 1e3 * noise:
        return mpmath.eigsy((M + M.T) / 2)
    return mpmath.eig(M, right=True)


def _no_point(kind: str, dps: int, **extra: str) -> dict:
    """A classification without a stationary point to describe."""
    return {"kind": kind, "digits": dps, "distance": None, "max_re_eigenvalue": None,
            "flat_directions": None, "point": None, **extra}


def _classify_at(flow, y, dps: int) -> dict:
    """``rest_point``'s classification of y at ``dps`` digits alone. The spheres are invariant,
    so their tangent space at a stationary point is invariant under the Jacobian J: the
    eigenvalues that decide are those of Tᵀ J T (T: ``_tangent_basis``); the norm-restoring
    directions (eigenvalue −2) decide nothing."""
    rhs, jac = _mp_functions(flow)
    with mpmath.workdps(dps):
        x0 = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        x, converged = _newton(rhs, jac, x0, dps, REST_DISTANCE)
        if not converged:
            return _no_point("none", dps)
        J = mpmath.matrix(jac(*x))
        noise = _noise(J, dps)
        T = _tangent_basis(flow, x)
        M = T.T * J * T
        try:
            values, vectors = _eigen(M, noise)
        except RuntimeError as exc:         # mpmath's QR did not converge: say so, decide nothing
            return _no_point("unresolved", dps, why=str(exc))
        decide, flat = [], 0
        for k, lam in enumerate(values):
            if abs(lam) <= noise and _along_equilibria(rhs, jac, x, T * vectors[:, k], dps):
                flat += 1
            else:
                decide.append(mpmath.re(lam))
        top = max(decide) if decide else mpmath.mpf(0)
        kind = ("unstable" if top > noise else "sink" if decide and top < -noise
                else "degenerate")
        return {"kind": kind, "digits": dps, "distance": float(mpmath.norm(x - x0, mpmath.inf)),
                "max_re_eigenvalue": mpmath.nstr(top, 6), "flat_directions": flat,
                "point": {k: float(v) for k, v in
                          flow.overlaps(np.array([float(v) for v in x])).items()}}


def rest_point(flow, y, digits: int = 50) -> dict:
    """Where a run at rest at ``y`` rests, judged at ``digits`` working digits (``rest_digits``:
    enough to resolve every rate of the flow) and confirmed at twice as many; "unresolved"
    when the two disagree.

    At one precision: Newton on ẏ = 0 from y, converged within ``REST_DISTANCE`` or not
    ("none": no stationary point near); at the stationary point found, the eigenvalues of the
    Jacobian on the spheres' tangent space, with the null directions tangent to a set of
    stationary points set aside (``_along_equilibria``: the run rests on that set, whose other
    directions decide): "sink" (every other eigenvalue negative, at least one of them: an
    attracting point or set of stationary points), "unstable" (one positive) or "degenerate"
    (one indistinguishable from 0, off any such set, or none left to decide). {"kind",
    "digits", "distance", "max_re_eigenvalue" (text), "flat_directions", "point" (overlaps of
    the stationary point, when one was found), "kinds_by_digits"}."""
    seen = [_classify_at(flow, y, dps) for dps in (int(digits), 2 * int(digits))]
    out = dict(seen[-1])
    if seen[0]["kind"] != seen[1]["kind"]:
        out["kind"] = "unresolved"
    return {**out, "kinds_by_digits": {str(r["digits"]): r["kind"] for r in seen}}


ORACLE = {"mu": 1.0, "nu": 1.0, "zeta": 0.0, "eta": 0.0, "rho": 0.0}


def _at_oracle(q: dict | None, tol: float = 1e-6) -> bool:
    return q is not None and sum(abs(q[k] - v) for k, v in ORACLE.items()) < tol


def global_run(flow, dv, kind, y0, t_eval, digits: int = 50):
    """One run of the flow from y0: LSODA, then BDF and Radau (symbolic Jacobian) when a
    solver exceeds 10⁵ right-hand-side evaluations (LSODA occasionally stalls on the slow
    edges); its final overlaps, distance to the oracle and speed ("run"), with every state of
    the run ("states", None when the solver failed) and the vectors' blocks ("blocks"), which
    the judge checks on the spheres before any verdict rests on the run. A run at rest away
    from the oracle is classified by where it rests (``rest_point``, ``REST_KINDS``)."""
    blocks = [list(b) for b in flow.blocks]
    tr = _integrate_on_spheres(flow, y0, t_eval)
    if not tr.ok:
        return {"run": {"d": dv, "start": kind, "outcome": "solver failed",
                        "solvers_tried": list(tr.tried), "status": tr.status,
                        "message": tr.message}, "states": None, "blocks": blocks}
    final, q0 = flow.overlaps(tr.final), flow.overlaps(y0)
    vec = flow.vectors(tr.final)
    off_sphere = float(norm_deviation(flow, tr.y).max())
    dist = abs(final["mu"] - 1) + abs(final["nu"] - 1) + sum(abs(final[k]) for k in ("zeta", "eta", "rho"))
    speed = float(np.max(np.abs(flow.rhs(tr.final))))
    rest = None
    if dist < 1e-6:
        outcome = "oracle"
    elif speed < AT_REST_SPEED and np.all(np.isfinite(tr.final)):
        rest = rest_point(flow, tr.final, digits)
        # resting next to the oracle (its slowest rate below the solver's resolution) is there
        outcome = "oracle" if _at_oracle(rest["point"]) else REST_KINDS[rest["kind"]]
    else:
        outcome = "not converged"
    run = {"d": dv, "start": kind, "initial": {k: float(x) for k, x in q0.items()},
           "final": {k: float(x) for k, x in final.items()},
           "norms": [float(np.linalg.norm(vec["u"])), float(np.linalg.norm(vec["v"]))],
           "max_norm_deviation": off_sphere,
           "distance_to_oracle": dist, "final_speed": speed, "nfev": int(tr.nfev),
           "solver": tr.method, "outcome": outcome, "rest": rest}
    return {"run": run, "states": np.asarray(tr.y, float), "blocks": blocks}


@simulation(seeded=False)
def global_runs(sim, item):
    """The runs of the flow at one d from each (kind, y0) of ``item["starts"]`` to
    ``item["horizon"]`` (records at t = 0 and 33 log-spaced times from 10⁻²): ``global_run``'s
    result per start."""
    reduced = reduced_model("linear", item["risk"])
    dv = item["d"]
    flow = frame(reduced, setting_values(exact_values(item["setting"]), dv))
    t_eval = np.r_[0, np.logspace(-2, np.log10(item["horizon"]), 33)]
    digits = rest_digits(exact_values(item["setting"]), dv)
    return [global_run(flow, dv, kind, y0, t_eval, digits) for kind, y0 in item["starts"]]


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


def _pgd(flow, mu0, nu0, s, n_steps, L_delta, steps=None):
    """PGD from (µ₀, ν₀) on M (one run per start) with the gradient of ``steps`` (default:
    ``flow``, R itself); per run the largest relative one-step increase of R and whether the
    rebuttal's R_{k+1} ≤ R_k − (sL_δ/4)‖g_k‖² held at every step."""
    Y0 = np.zeros((len(mu0), 8))
    Y0[:, 0], Y0[:, 2], Y0[:, 5], Y0[:, 7] = mu0, np.sqrt(1 - mu0**2), nu0, np.sqrt(1 - nu0**2)
    run = projected_gradient_descent(flow.risk, (steps or flow).gradient, Y0, s, n_steps, flow.blocks)
    r, g2 = run.risk, run.gradient_sq
    bound_ok = np.all(r[1:] <= r[:-1] - s * L_delta / 4 * g2[:-1] + 1e-15 * np.abs(r[:-1]), axis=0)
    return run, run.largest_relative_increase(), bound_ok


@simulation(seeded=False)
def descent_runs(sim, item):
    """The descent lemma's PGD runs: per d of ``item["dims"]`` the step bound estimated at
    sampled points, six starts on M, and per step factor one run from each start, with the
    gradient of ``item["descend"]`` (None: R's) while R (``item["risk"]``; None: the paper's
    R̄) is watched; random numbers from ``item["seed"]``, in that order. {"rows": one per
    (d, step factor, start), "finals": per run its final states and risks (the judge checks
    them finite)}; the distance to the nearest stationary point on M is computed for the
    paper's model only."""
    setting = exact_values(item["setting"])
    reduced = reduced_model("linear", item["risk"])
    descend = None if item["descend"] is None else reduced_model("linear", item["descend"])
    delta = item["delta"]
    rng = np.random.default_rng(item["seed"])
    rows, finals = [], []
    for dv in item["dims"]:
        flow = frame(reduced, setting_values(setting, dv))
        steps = flow if descend is None else frame(descend, setting_values(setting, dv))
        L_hat, M_hat, L_delta, s_bound = _step_bound(flow, _sample_points(rng), delta)
        found = (computed_stationary(flow_on_M_2d("linear"), setting, dv)[0]
                 if item["risk"] is None else [])
        mu0, nu0 = rng.uniform(-0.95, 0.95, 6), rng.uniform(-0.95, 0.95, 6)
        for factor in item["step_factors"]:
            s = factor * s_bound
            run, worst_increase, bound_ok = _pgd(flow, mu0, nu0, s, item["n_steps"], L_delta, steps)
            finals.append([np.asarray(run.y, float), np.asarray(run.risk[-1], float)])
            final = flow.overlaps(run.y)
            gnorm = np.linalg.norm(run.gradient, axis=1)
            for j in range(len(mu0)):
                mu_, nu_ = final["mu"][j], final["nu"][j]
                near = min((abs(f["mu"] - mu_) + abs(f["nu"] - nu_) for f in found), default=np.nan)
                rows.append({"d": dv, "step": s, "step_factor": factor, "L_hat": L_hat,
                             "M_hat": M_hat, "L_delta": L_delta, "delta": delta,
                             "mu0": float(mu0[j]), "nu0": float(nu0[j]), "final_mu": float(mu_),
                             "final_nu": float(nu_), "final_risk": float(run.risk[-1, j]),
                             "final_grad_norm": float(gnorm[j]),
                             "distance_to_stationary": float(near),
                             "largest_relative_increase": float(worst_increase[j]),
                             "rebuttal_bound_held_every_step": bool(bound_ok[j])})
    return {"rows": rows, "finals": finals}
