"""What the sections of Sagitova, Duranthon, Zdeborová (2026) simulate alike: the model
constants, the reduced flow and its integration (``integrate_until_batch``: many trajectories
through ``numerics.ode.integrate``'s lockstep RK45, each up to the first output time where a
predicate holds, without integrating on), the small initialisation, the saddle Hessian of Lemma
III.1 at a prior (``saddle_hessian_at``, a simulation; ``saddle_rate``), the escape set-up shared
by Prop. III.4 and Conj. III.1, the best reduced risk of Sec. IV and the Bayes risk."""

from __future__ import annotations

import numpy as np

from numerics.multihead import HeadState, bayes_loss, first_passage, minimise
from numerics.ode import integrate
from numerics.reduced import HeadReduced
from theory.models.sagitova2026 import DiscretePrior, GaussianPrior, at_prior
from theory.multihead import MultiHeadModel, saddle_hessian
from ..base import simulation

L = 4
SIGMA0 = 0.02          # keys ~ N(0, σ₀²I/D): m ~ σ₀/√D, r = σ₀²I


def random_discrete_prior(rng, S, F, scale=1.5):
    """S support points ~ N(0, scale²·I_F) with Dirichlet(1) weights, from ``rng``."""
    p = rng.dirichlet(np.ones(S))
    return DiscretePrior(rng.standard_normal((S, F)) * scale, p)


# --- the saddle of Lemma III.1 ---------------------------------------------------------------
def saddle_hessian_matrix(prior, H):
    """The symbolic saddle Hessian (Lemma III.1; softmax, L = 4) at the prior's moments, a
    float array (its SymPy derivation is kept per model by ``theory.multihead``)."""
    Hm, _, mu, S = saddle_hessian(MultiHeadModel(H, L, prior.F))
    return at_prior(Hm, prior, mu, S)


@simulation(seeded=False)
def saddle_hessian_at(sim, item):
    """``saddle_hessian_matrix`` of ``item["prior"]`` and H = ``item["H"]``."""
    return saddle_hessian_matrix(item["prior"], item["H"])


def rate_of(hessian):
    """λ = −(most negative eigenvalue) of a saddle Hessian, with its eigenvalues and
    eigenvectors: |m| grows like e^{λτ} near m = 0, r = 0."""
    evals, evecs = np.linalg.eigh(hessian)
    return float(-evals[0]), evals, evecs


def saddle_rate(prior, H):
    """``rate_of`` the saddle Hessian at ``prior`` for H heads."""
    return rate_of(saddle_hessian_matrix(prior, H))


# --- the reduced flow ------------------------------------------------------------------------
def flow(model, prior, n, seed, kappa=0.0) -> HeadReduced:
    """The model's reduced flow on n common draws (torch), with the SGD-noise term κ."""
    return HeadReduced(model, prior, n=n, seed=seed, sgd_noise=kappa, backend="torch")


def trajectory(rm: HeadReduced, state0, t_eval, **options):
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


def small_init(g, D):
    """Keys ~ N(0, σ₀²I/D) along the Gaussian draw g (H × F): m = σ₀g/√D, r = σ₀²I."""
    H = g.shape[0]
    return HeadState.make(SIGMA0 * g / np.sqrt(D), SIGMA0**2 * np.eye(H))


# --- the escape from the saddle (Prop. III.4, Conj. III.1) --------------------------------------
ESCAPE_NU = (4.0, 1.5)
ESCAPE_THRESHOLD = 0.3           # ‖m‖_F at escape
ESCAPE_HORIZON = 60.0            # τ up to which the ODE runs (stretched, ``escape_stretch``)
SGD_ESCAPE_HORIZON = 40.0        # τ up to which SGD runs (stretched, ``escape_stretch``)
ESCAPE_KAPPA, ESCAPE_BATCH = 0.25, 32


def escape_prior(nu=ESCAPE_NU):
    """θ ~ N(0, diag(ν)): Eθ = 0, so m = 0 is the saddle."""
    return GaussianPrior([0.0, 0.0], np.diag([float(v) for v in nu]))


def stretch_of(rate, reference_rate):
    """How much the escape's τ horizons are stretched: λ₀/λ where the saddle rate λ is below
    λ₀ of the first-checked set-up, else 1 (escape takes about ln D/(2λ))."""
    return max(1.0, reference_rate / rate)


def escape_stretch(prior, H):
    """``stretch_of`` the saddle rates of ``prior`` with H heads and of N(0, diag(4, 1.5)),
    H = 2 (the first-checked set-up)."""
    return stretch_of(saddle_rate(prior, H)[0], saddle_rate(escape_prior(), 2)[0])


# --- Sec. IV: best risks, the Bayes risk -----------------------------------------------------
def best_risk(activation, prior, H, n, fresh_n, seeds, output="mean", starts=6):
    """Best reduced risk of H heads found from ``starts`` random starts (drawn from
    ``seeds["best"]``; the optimised estimate on ``seeds["opt"]``'s n draws), re-evaluated on
    ``fresh_n`` fresh draws (``seeds["fresh"]``): (risk, se, state)."""
    md = MultiHeadModel(H, L, prior.F, activation, output=output)
    rng = np.random.default_rng(seeds["best"])
    rm = HeadReduced(md, prior, n=n, seed=seeds["opt"])
    st0 = [HeadState.make(rng.normal(0, 1.5, (H, prior.F)), 0.1 * np.eye(H), rng.normal(0, 2, H),
                          rng.normal(0, 1, H)) for _ in range(starts)]
    best, _, _ = minimise(rm.flow, st0)
    fresh = HeadReduced(md, prior, n=fresh_n, seed=seeds["fresh"], kind="random")
    risk, se = fresh.loss(best)
    return risk, se, best


@simulation(seeded=False)
def bayes_risk(sim, item):
    """The Bayes risk of ``item["prior"]`` with ``item["L"]`` tokens by Monte Carlo
    (``item["n"]`` draws from ``item["seed"]``): {"risk", "se"}."""
    risk, se, _ = bayes_loss(item["prior"], item["L"], item["n"], item["seed"])
    return {"risk": risk, "se": se}
