"""What Sec. III's specialization claims simulate: the escape runs from the unspecialized saddle
shared by Prop. III.4 and Conj. III.1 (``escape_piece``), the conjecture's escapes from fresh
initial directions (``fresh_escape_block``) and Result III.1's specialization times
(``iii1_specialization``), SGD runs (``iii1_sgd``) and κ-ODE (``iii1_kappa_ode``). Every
seed comes in the item (derived by the claim from the run seed and the setting), so these are
unseeded: one stored result per item."""

from __future__ import annotations

import numpy as np

from numerics.multihead import first_passage
from numerics.sgd import SimulationConfig, simulate
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import MultiHeadModel
from ..base import simulation
from .common import (ESCAPE_BATCH, ESCAPE_HORIZON, ESCAPE_KAPPA, ESCAPE_THRESHOLD, L,
                     SGD_ESCAPE_HORIZON, SIGMA0, escape_prior, escape_stretch, escape_times, flow,
                     integrate_until_batch, small_init, trajectory)

# Conj. III.1 and Result III.1 read first-passage times off the flow at a looser tolerance than
# Prop. III.4's runs: the times move far less than their spread over draws, for fewer RHS calls
# (measured in benchmarks/flow_tolerance.md)
TIME_RTOL = 1e-4


@simulation(seeded=False)
def escape_piece(sim, item):
    """One piece of the escape runs of Prop. III.4 and Conj. III.1 (H heads, θ ~ N(0,
    diag(``item["prior"]``))): the ODE's escape times of initial draw i at every D (kind
    "ode"), SGD's of every seed at one D (kind "sgd"; Gram-matrix simulator, exact in law), or
    the κ-ODE's of draw i at every SGD dimension (kind "kappa"). The initial draws are the
    ``item["draws"]`` Gaussian draws from ``item["init_seed"]``, the flow's common draws from
    ``item["ode_seed"]``, SGD's from ``item["sgd_seed"]``."""
    H, F = item["H"], 2
    prior = escape_prior(item["prior"])
    stretch = escape_stretch(prior, H)
    md = MultiHeadModel(H, L, F, "softmax")
    if item["kind"] == "sgd":
        return _escape_sgd(md, prior, item["D"], item["sgd_seeds"], item["sgd_seed"], stretch)
    rm = flow(md, prior, sim.pick(2**12, 2**14), item["ode_seed"])
    G = np.random.default_rng(item["init_seed"]).standard_normal((item["draws"], H, F))
    t_eval = np.linspace(0, ESCAPE_HORIZON * stretch, 601)
    if item["kind"] == "ode":
        return escape_times(rm, [small_init(G[item["i"]], D) for D in item["dims"]], t_eval,
                            ESCAPE_THRESHOLD)
    # kind "kappa": the SGD runs' own limit, the ODE with the κ-noise term
    return escape_times(rm.with_noise(ESCAPE_KAPPA),
                        [small_init(G[item["i"]], D) for D in item["sgd_dims"]], t_eval,
                        ESCAPE_THRESHOLD)


def _escape_sgd(md, prior, D, n, seed, stretch):
    """Escape times of n online-SGD runs at D (κ = 0.25, N_b = 32, up to τ = 40·stretch)."""
    lr = ESCAPE_KAPPA * ESCAPE_BATCH / D
    cfg = SimulationConfig(lr=lr, steps=int(SGD_ESCAPE_HORIZON * stretch / lr), batch=ESCAPE_BATCH,
                           seeds=n, seed=seed, record_every=max(1, int(0.1 / lr)), init=SIGMA0,
                           device="cpu")
    res = simulate(md, {"D": D, "prior": prior}, cfg, "gram", until=lambda s: bool(
        np.all(np.sqrt((s["m"]**2).sum((1, 2))) >= ESCAPE_THRESHOLD)))
    norms = np.sqrt((res["m"]**2).sum((2, 3)))
    return [first_passage(res.t, norms[:, i], ESCAPE_THRESHOLD) for i in range(n)]


def fresh_direction(seed, H=2):
    """A fresh Gaussian initial direction (H × 2) from its own seed."""
    return np.random.default_rng(seed).standard_normal((H, 2))


@simulation(seeded=False)
def fresh_escape_block(sim, item):
    """τ_esc of the reduced flow (first output time with ‖m‖_F ≥ ESCAPE_THRESHOLD, interpolated;
    nan if never by τ = 60, stretched by ``escape_stretch``) at one D from the fresh initial
    directions of ``item["init_seeds"]`` (one seed per draw). ``item["escape_time"]``, when not
    None, a function ``(g, D) -> τ`` that replaces the flow (a mutation)."""
    D, H = item["D"], item["H"]
    directions = [fresh_direction(seed, H) for seed in item["init_seeds"]]
    if item.get("escape_time") is not None:
        return [item["escape_time"](g, D) for g in directions]
    prior = escape_prior(item["nu"])
    md = MultiHeadModel(H, L, 2, "softmax")
    # half Prop. III.4's draw set: its quasi-Monte Carlo error is common to every initial draw
    # at a D (one draw set), so it shifts τ alike and leaves the spread over draws measured here
    rm = flow(md, prior, sim.pick(2**11, 2**13), item["ode_seed"])
    t_eval = np.linspace(0, ESCAPE_HORIZON * escape_stretch(prior, H), 601)
    # at TIME_RTOL (Prop. III.4's runs stay at rtol 1e-6); the block's draws integrated together,
    # the solver restarted every 100 output intervals
    return escape_times(rm, [small_init(g, D) for g in directions], t_eval, ESCAPE_THRESHOLD,
                        chunk=100, rtol=TIME_RTOL)


def spreading_escape(g, D):
    """A flow for which Conj. III.1 is false: τ/ln D = 0.75 + 0.05·g₀₀·ln D, so the spread of
    τ/ln D grows with ln D (the claim's declared mutation)."""
    lnd = np.log(D)
    return lnd * (0.75 + 0.05 * g[0, 0] * lnd)


# --- Result III.1 ------------------------------------------------------------------------------
def _iii1_flow(sim, item):
    md = MultiHeadModel(item["H"], L, 2, "softmax")
    prior = GaussianPrior([0.0, 0.0], np.diag(item["nu"]))
    return flow(md, prior, sim.pick(2**11, 2**13), item["ode_seed"])


def iii1_direction(seed, H=4, F=2):
    """Result III.1's initial direction (H × F) from its own seed."""
    return np.random.default_rng(seed).standard_normal((H, F))


@simulation(seeded=False)
def iii1_specialization(sim, item):
    """(τ₁, τ₂) per D of the reduced flow from the initial direction of ``item["init_seed"]``
    (``item["draw"]``), and for draw 0 m(τ) per D (the figure)."""
    rm = _iii1_flow(sim, item)
    g = iii1_direction(item["init_seed"], rm.model.H, rm.model.F)[None]
    times, curves = specialization_times(rm, g, item["dims"], item["t_max"])
    return times[0], (curves if item["draw"] == 0 else {})


def _specialized(state, threshold=0.5):
    """Every feature f has a head with |m_hf| ≥ threshold."""
    return bool(np.all(np.abs(state.m).max(0) >= threshold))


def specialization_times(rm, G, dims, t_max, threshold=0.5, chunk=50.0, dt=0.5):
    """τ_f = first τ with max_h |m_hf| ≥ threshold, for each initial draw G[i] and D (states
    sampled every ``dt``): the flow (RK45 at ``TIME_RTOL``) from ``small_init(G[i], D)`` until
    every feature is specialized or τ = t_max, the solver restarted every ``chunk`` time units,
    the D's of a draw integrated together (``integrate_until_batch``). Returns the times
    (draw × D × F) and the first draw's m(τ) per D."""
    seeds, F = G.shape[0], G.shape[2]
    times = np.full((seeds, len(dims), F), np.nan)
    curves = {}
    t_eval = np.linspace(0.0, t_max, int(round(t_max / dt)) + 1)
    for i in range(seeds):
        runs = integrate_until_batch(rm, [small_init(G[i], D) for D in dims], t_eval,
                                     chunk=int(round(chunk / dt)), rtol=TIME_RTOL,
                                     reached=lambda y: _specialized(rm.unpack(y), threshold))
        for j, (D, (t, y)) in enumerate(zip(dims, runs, strict=True)):
            states = [rm.unpack(v) for v in y]
            A = np.array([np.abs(s.m).max(0) for s in states])          # τ × F
            times[i, j] = [first_passage(t, A[:, f], threshold) for f in range(F)]
            if i == 0:
                curves[D] = np.array([s.m for s in states])
    return times, curves


@simulation(seeded=False)
def iii1_sgd(sim, item):
    """Result III.1's online SGD at one D (Gram-matrix simulator, exact in law; κ, N_b and the
    horizon τ ≤ ``item["t_end"]`` from the item), until both features are specialized in every
    seed: its record times "t", m(τ) "m" (record × seed × H × F) and each seed's (τ₁, τ₂)
    "times" (first τ with max_h |m_hf| ≥ 0.5)."""
    D, kappa, B, seeds = item["D"], item["kappa"], item["batch"], item["seeds"]
    md = MultiHeadModel(item["H"], L, 2, "softmax")
    prior = GaussianPrior([0.0, 0.0], np.diag(item["nu"]))
    lr = kappa * B / D
    res = simulate(md, {"D": D, "prior": prior}, SimulationConfig(
        lr=lr, steps=int(item["t_end"] / lr), batch=B, seeds=seeds, seed=item["seed"],
        record_every=max(1, int(1 / lr)), init=SIGMA0, device=sim.device), "gram",
        until=lambda s: bool(np.all(np.abs(s["m"]).max(1) >= 0.5)))
    A = np.abs(res["m"]).max(2)                                          # τ × seed × F
    times = [[first_passage(res.t, A[:, i, f], 0.5) for f in range(md.F)] for i in range(seeds)]
    return {"t": res.t, "m": res["m"], "times": np.array(times, float)}


@simulation(seeded=False)
def iii1_kappa_ode(sim, item):
    """Result III.1's flow with the κ-noise term from draw 0 at D = ``item["D"]``, at 401 times
    up to ``item["t_end"]``: {"t", "m" (time × H × F)} (the staircase figure)."""
    rm = _iii1_flow(sim, item).with_noise(item["kappa"])
    g = iii1_direction(item["init_seed"], rm.model.H, rm.model.F)
    tr, states = trajectory(rm, small_init(g, item["D"]), np.linspace(0, item["t_end"], 401))
    return {"t": tr.t, "m": np.array([s.m for s in states])}
