"""Helpers shared by the sections of Sagitova, Duranthon, Zdeborová (2026): the paper id, the
model constants, the reduced flow and its integration (``integrate_until_batch``: many
trajectories through ``numerics.ode.integrate``'s lockstep RK45, each up to the first output
time where a predicate holds, without integrating on), the small initialisation, the saddle
rate of Lemma III.1, the escape runs shared by Prop. III.4 and Conj. III.1, and the best
reduced risk of Sec. IV."""

from __future__ import annotations

import functools

import numpy as np

from numerics.multihead import HeadState, first_passage, minimise
from numerics.ode import integrate
from numerics.reduced import HeadReduced
from numerics.sgd import SimulationConfig, simulate
from theory.models.sagitova2026 import DiscretePrior, GaussianPrior, at_prior
from theory.multihead import MultiHeadModel, saddle_hessian
from ...domain import Domain, Integers, Interval

PAPER = "sagitova2026"
L = 4


_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def quantile_text(check) -> str:
    """The critical value a check judged at, as a summary writes it: "t₆₃ = 4.35" for a
    Student-t quantile (standard errors from few replicates), "z = 3.89" for a normal one."""
    dof = check.details.get("dof_min", check.details.get("dof"))
    if dof is None or not np.isfinite(dof):
        return f"z = {check.z:.2f}"
    return f"t{str(int(round(dof))).translate(_SUBSCRIPT)} = {check.z:.2f}"


def _random_discrete_prior(rng, S, F, scale=1.5):
    p = rng.dirichlet(np.ones(S))
    return DiscretePrior(rng.standard_normal((S, F)) * scale, p)


@functools.cache
def _saddle(H, F):
    return saddle_hessian(MultiHeadModel(H, L, F))


def saddle_rate(prior, H):
    """λ = −(most negative eigenvalue) of the symbolic saddle Hessian (Lemma III.1) for the
    prior's moments: |m| grows like e^{λτ} near m = 0, r = 0."""
    Hm, ms, mu, S = _saddle(H, prior.F)
    Hn = at_prior(Hm, prior, mu, S)
    evals, evecs = np.linalg.eigh(Hn)
    return float(-evals[0]), evals, evecs


def _flow(model, prior, n, seed, kappa=0.0) -> HeadReduced:
    return HeadReduced(model, prior, n=n, seed=seed, sgd_noise=kappa, backend="torch")


def _trajectory(rm: HeadReduced, state0, t_eval, **options):
    """The reduced model's trajectory at ``t_eval`` (RK45, rtol 1e-6, atol 1e-12) and its
    states; ``options`` (``reached(t, y)`` on packed states, ``chunk``) go to
    ``HeadReduced.integrate``. A solver that fails or a state that turns non-finite is an error:
    no verdict from a partial trajectory."""
    tr = rm.integrate(state0, t_eval, rtol=1e-6, atol=1e-12, **options)
    if not tr.ok:
        raise RuntimeError(f"{rm.name}: the flow's integration ended '{tr.status}': {tr.message}")
    return tr, rm.states(tr)


def integrate_until_batch(rm: HeadReduced, states0, t_eval, reached=None, chunk=None, rtol=1e-6,
                          atol=1e-12):
    """The reduced flow from each of ``states0`` (checked realisable) at the times ``t_eval``,
    each ending at the first output time where ``reached(y)`` holds (packed state y; None:
    never): a list of (times, packed states).

    ``numerics.ode.integrate`` on the batch with RK45: each trajectory is its own scipy RK45's
    (one solver per ``chunk`` output intervals, restarted from the state reached), the
    right-hand sides of the running ones in one ``rm.flow.rhs_batch`` call, so equal to
    integrating each alone (``rm.integrate(..., method='RK45', reached=..., chunk=...)``) up to
    the rounding of the batched sums. It stops stepping at the hit instead of integrating to the
    end of ``t_eval``; an explicit Runge–Kutta step depends only on the past, so that changes no
    number before it. Any ending but 'completed' or 'event' is an error here: no verdict from a
    partial trajectory."""
    Y0 = np.array([rm.check_state(rm.pack(s)) for s in states0])
    event = None if reached is None else (lambda t, y: reached(y))
    runs = integrate(rm.flow.rhs_batch, Y0, t_eval, method="RK45", rtol=rtol, atol=atol,
                     reached=event, chunk=chunk)
    for k, tr in enumerate(runs):
        if not tr.ok:
            raise RuntimeError(f"{rm.name}: row {k} of the batch ended '{tr.status}': {tr.message}")
    return [(tr.t, tr.y) for tr in runs]


def escape_times(rm: HeadReduced, states0, t_eval, threshold, chunk=None, rtol=1e-6):
    """First output time (interpolated, ``first_passage``) at which ‖m‖_F ≥ ``threshold`` along
    the flow from each of ``states0`` (integrated together, ``integrate_until_batch``); nan
    where it never does within ``t_eval``."""
    H, F = rm.model.H, rm.model.F
    norm = lambda y: float(np.linalg.norm(y[:H * F]))                     # m comes first
    runs = integrate_until_batch(rm, states0, t_eval, lambda y: norm(y) >= threshold, chunk=chunk,
                                 rtol=rtol)
    return [first_passage(t, [norm(v) for v in y], threshold) for t, y in runs]


def escape_time(rm: HeadReduced, state0, t_eval, threshold, chunk=None):
    """``escape_times`` from one state (the numbers of scipy's RK45 alone to the last bit)."""
    return escape_times(rm, [state0], t_eval, threshold, chunk=chunk)[0]


# --- small initialisation: shared runs --------------------------------------------------------
SIGMA0 = 0.02          # keys ~ N(0, σ₀²I/D): m ~ σ₀/√D, r = σ₀²I


def small_init(g, D):
    H = g.shape[0]
    return HeadState.make(SIGMA0 * g / np.sqrt(D), SIGMA0**2 * np.eye(H))


# --- the escape from the saddle (Prop. III.4, Conj. III.1) --------------------------------------
ESCAPE_NU = (4.0, 1.5)
ESCAPE_THRESHOLD = 0.3           # ‖m‖_F at escape
ESCAPE_HORIZON = 60.0            # τ up to which the ODE runs (stretched, ``escape_stretch``)
SGD_ESCAPE_HORIZON = 40.0        # τ up to which SGD runs (stretched, ``escape_stretch``)
MAX_NEVER_ESCAPED = 0.05         # share of SGD runs per D that may stay censored at the horizon

ESCAPE_POINT = {"H": 2, "nu1": ESCAPE_NU[0], "nu2": ESCAPE_NU[1]}
"""The escape set-up as first checked: H = 2, θ ~ N(0, diag(4, 1.5)) (Prop. III.4 and Conj.
III.1's quick and full point)."""

ESCAPE_DOMAIN = Domain({"H": Integers(2, 4), "nu1": Interval(2.0, 8.0, log=True),
                        "nu2": Interval(0.5, 8.0, log=True)},
                       where={"ν₁ ≥ ν₂ (the spectrum in decreasing order)":
                              lambda nu1, nu2: nu1 >= nu2},
                       reference=ESCAPE_POINT)
"""The escape set-up's coordinates (Prop. III.4, Conj. III.1): H heads, θ ~ N(0, diag(ν₁,
ν₂)) (Eθ = 0: m = 0 is the saddle); softmax, F = 2, L = 4."""


def _escape_prior(nu=ESCAPE_NU):
    return GaussianPrior([0.0, 0.0], np.diag([float(v) for v in nu]))


def escape_stretch(prior, H):
    """How much the escape's τ horizons (ODE ``ESCAPE_HORIZON``, SGD ``SGD_ESCAPE_HORIZON``)
    are stretched for a prior and H: λ₀/λ where the saddle rate λ (``saddle_rate``) is below
    λ₀ of the first-checked set-up (N(0, diag(4, 1.5)), H = 2), else 1 (escape takes about
    ln D/(2λ))."""
    return max(1.0, saddle_rate(_escape_prior(), 2)[0] / saddle_rate(prior, H)[0])


def escape_runs(profile, seed, prior_key=ESCAPE_NU, dims=None, seeds=None, sgd_dims=None,
                sgd_seeds=None, ctx=None, H=2):
    """Escape times τ_esc(seed, D) of the ODE from keys ~ N(0, σ₀²I/D) (one Gaussian draw per
    seed, reused at every D) and of online SGD (Gram-matrix simulator, exact in law);
    shared by Prop. III.4 and Conj. III.1, for H heads and θ ~ N(0, diag(``prior_key``)). The
    keyword arguments shrink the runs for tests.

    Each ODE seed, each SGD dimension and each κ-ODE seed is a shared subtask (``ctx.map``):
    run once per (code, seed, profile, item) whichever of the two claims asks first, stored,
    and spread over the engine's workers. The item carries the setting of the claim's domain
    (the seeds derive from it), so two claims share exactly the runs of the same setting."""
    from ...context import Context
    ctx = ctx or Context(profile=profile, seed=seed)
    dims = list(dims or ctx.pick([1e2, 1e4, 1e6, 1e8], [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10]))
    seeds = seeds or ctx.pick(6, 16)
    sgd_dims = list(sgd_dims or ctx.pick([100, 400, 1600], [100, 400, 1600, 6400, 25600]))
    sgd_seeds = sgd_seeds or ctx.pick(64, 128)
    base = {"prior": [float(v) for v in prior_key], "H": int(H), "setting": dict(ctx.setting),
            "seeds": seeds, "dims": dims, "sgd_seeds": sgd_seeds}
    items = ([{**base, "kind": "ode", "i": i} for i in range(seeds)]
             + [{**base, "kind": "sgd", "D": D} for D in sgd_dims]
             + [{**base, "kind": "kappa", "i": i, "sgd_dims": sgd_dims} for i in range(min(seeds, 3))])
    out = ctx.map(_escape_piece, items)
    ode = np.array(out[:seeds])
    sgd = np.ascontiguousarray(np.array(out[seeds:seeds + len(sgd_dims)]).T)
    ode_kappa = np.array(out[seeds + len(sgd_dims):])
    return {"dims": dims, "ode": ode, "sgd_dims": sgd_dims, "sgd": sgd, "kappa": ESCAPE_KAPPA,
            "batch": ESCAPE_BATCH, "n_qmc": ctx.pick(2**12, 2**14), "ode_kappa": ode_kappa,
            "stretch": escape_stretch(_escape_prior(prior_key), H)}


ESCAPE_KAPPA, ESCAPE_BATCH = 0.25, 32


def _escape_piece(ctx, item):
    """One piece of ``escape_runs``: the ODE's escape times of draw i at every D, SGD's of every
    seed at one D, or the κ-ODE's of draw i at every SGD dimension. Its seeds derive from the
    run seed and the setting the item carries (a shared result is keyed by the item)."""
    import dataclasses
    ctx = dataclasses.replace(ctx, setting=tuple(sorted(item["setting"].items())))
    H, F = item["H"], 2
    prior = _escape_prior(item["prior"])
    stretch = escape_stretch(prior, H)
    md = MultiHeadModel(H, L, F, "softmax")
    rm = _flow(md, prior, ctx.pick(2**12, 2**14), ctx.claim_seed("escape:ode"))
    G = ctx.rng("escape:init").standard_normal((item["seeds"], H, F))
    t_eval = np.linspace(0, ESCAPE_HORIZON * stretch, 601)
    if item["kind"] == "ode":
        return escape_times(rm, [small_init(G[item["i"]], D) for D in item["dims"]], t_eval,
                            ESCAPE_THRESHOLD)
    if item["kind"] == "kappa":       # the SGD runs' own limit: the ODE with the κ-noise term
        return escape_times(rm.with_noise(ESCAPE_KAPPA),
                            [small_init(G[item["i"]], D) for D in item["sgd_dims"]], t_eval,
                            ESCAPE_THRESHOLD)
    D, n = item["D"], item["sgd_seeds"]
    lr = ESCAPE_KAPPA * ESCAPE_BATCH / D
    cfg = SimulationConfig(lr=lr, steps=int(SGD_ESCAPE_HORIZON * stretch / lr), batch=ESCAPE_BATCH,
                           seeds=n, seed=ctx.claim_seed(f"escape:sgd:{D}"),
                           record_every=max(1, int(0.1 / lr)), init=SIGMA0, device="cpu")
    res = simulate(md, {"D": D, "prior": prior}, cfg, "gram", until=lambda s: bool(
        np.all(np.sqrt((s["m"]**2).sum((1, 2))) >= ESCAPE_THRESHOLD)))
    norms = np.sqrt((res["m"]**2).sum((2, 3)))
    return [first_passage(res.t, norms[:, i], ESCAPE_THRESHOLD) for i in range(n)]


def _slope(x, Y):
    """Least-squares slope of each row of Y on x, then mean and standard error over rows."""
    x = np.asarray(x, float)
    s = [np.polyfit(x, y, 1)[0] for y in Y]
    return float(np.mean(s)), float(np.std(s, ddof=1) / np.sqrt(len(s))), s


def best_risk(activation, prior, H, ctx, tag, output="mean", starts=6):
    """Best reduced risk of H heads found from ``starts`` random starts, re-evaluated on fresh
    draws: (risk, se, state)."""
    md = MultiHeadModel(H, L, prior.F, activation, output=output)
    rng = ctx.rng(f"best:{tag}")
    rm = HeadReduced(md, prior, n=ctx.pick(2**13, 2**15), seed=ctx.claim_seed(f"opt:{tag}"))
    st0 = [HeadState.make(rng.normal(0, 1.5, (H, prior.F)), 0.1 * np.eye(H), rng.normal(0, 2, H),
                          rng.normal(0, 1, H)) for _ in range(starts)]
    best, _, _ = minimise(rm.flow, st0)
    fresh = HeadReduced(md, prior, n=ctx.pick(2**15, 2**17), seed=ctx.claim_seed(f"fresh:{tag}"),
                        kind="random")
    risk, se = fresh.loss(best)
    return risk, se, best
