"""What Sec. III's dynamics claims simulate: Prop. III.2's reduced flow and SGD in R^D
(``iii2_ode``, ``iii2_sgd``), the flow's head contrasts on the all-heads-equal manifold
(``manifold_contrasts_at``), Prop. III.3's alignment times (``iii3_ode``, ``iii3_sgd``), and the
wrong models of their declared mutations (``FastMFlow``, ``HETEROGENEOUS_SOFTMAX``). Every seed
comes in the item (derived by the claim from the run seed and the setting)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from numerics.multihead import HeadState, first_passage, mean_and_se
from numerics.reduced import HeadReduced
from numerics.sgd import SimulationConfig, simulate
from theory.models.sagitova2026 import GaussianPrior, flipping_spike
from theory.multihead import ACTIVATIONS, Activation, MultiHeadModel
from ..base import simulation
from .common import L, SIGMA0, flow, small_init, trajectory


class FastMFlow(HeadReduced):
    """A wrong reduced ODE: the m-equation 30 % too fast (prop-iii2's declared mutation)."""

    def rhs(self, y):
        d = super().rhs(y)
        d[:self.model.H * self.model.F] *= 1.3          # the m-block comes first
        return d


def _head_dependent_softmax(s, v):
    """Softmax with a temperature 1 + 0.4·h that depends on the head h."""
    return [[sp.exp((1 + 0.4 * h) * x) / sum(sp.exp((1 + 0.4 * h) * y) for y in row) for x in row]
            for h, row in enumerate(s)]


HETEROGENEOUS_SOFTMAX = Activation("softmax-heterogeneous", _head_dependent_softmax)
"""A wrong attention: softmax with a head-dependent temperature, which breaks the heads'
exchangeability (symmetric-manifold's declared mutation)."""


# --- Prop. III.2 -------------------------------------------------------------------------------
def iii2_init(H):
    """Prop. III.2's start: m rows [0.4, 0.1], [−0.2, 0.3], [0.1, −0.3], [−0.3, −0.1] (the first
    H), r = 0.2·I, b = 0.1 … −0.1 over the heads, v = (0.2, 0, …)."""
    m = np.array([[0.4, 0.1], [-0.2, 0.3], [0.1, -0.3], [-0.3, -0.1]])[:H]
    return HeadState.make(m, 0.2 * np.eye(H), np.linspace(0.1, -0.1, H),
                          np.r_[0.2, np.zeros(H - 1)])


@simulation(seeded=False)
def iii2_ode(sim, item):
    """Prop. III.2's reduced flow (class ``item["reduced_class"]``, 2¹⁵ draws from
    ``item["seed"]``, the SGD-noise term κ) from ``iii2_init`` at the times ``item["t_rec"]``:
    the packed states, time × component."""
    md = MultiHeadModel(item["H"], L, 2, item["activation"])
    rm = item["reduced_class"](md, flipping_spike(*item["nu"]), n=2**15, seed=item["seed"],
                               sgd_noise=item["kappa"])
    return trajectory(rm, iii2_init(item["H"]), np.asarray(item["t_rec"]))[0].y


def iii2_schedule(kappa, batch, D, T, records=4):
    """Prop. III.2's SGD schedule at one D: the step γ = κ·batch/D (κ exact), a number of steps
    that is a multiple of ``records`` nearest to T/γ, and the record times (``records`` + 1,
    evenly spaced in steps, the last within 2γ of T): (γ, steps, times)."""
    lr = kappa * batch / D
    steps = records * max(1, int(round(T / (records * lr))))
    return lr, steps, np.round(np.arange(records + 1) * (steps // records) * lr, 12)


@simulation(seeded=False)
def iii2_sgd(sim, item):
    """Prop. III.2's online SGD at one D (batch 8, ``iii2_schedule``: γ = κ·8/D, to τ ≈ 2, five
    records) by ``item["method"]`` ("direct" or "gram", both exact in law) from ``iii2_init``:
    record times "t", the packed states "states" (record × seed × component),
    "steps_per_second"."""
    H, D, seeds = item["H"], item["D"], item["seeds"]
    md = MultiHeadModel(H, L, 2, item["activation"])
    lr, steps, _ = iii2_schedule(item["kappa"], item["batch"], D, item["T"])
    cfg = SimulationConfig(lr=lr, steps=steps, batch=item["batch"], seeds=seeds, seed=item["seed"],
                           record_every=steps // 4, init=iii2_init(H), device=sim.device)
    res = simulate(md, {"D": D, "prior": flipping_spike(*item["nu"])}, cfg, item["method"])
    states = np.array([[res.head_state(k, i).pack() for i in range(seeds)]
                       for k in range(len(res.t))])
    return {"t": res.t, "states": states, "steps_per_second": res.steps_per_second}


# --- the symmetric manifold ----------------------------------------------------------------------
def manifold_contrasts(H, F):
    """Rows of a matrix C with C·pack(dstate) = 0 exactly on the all-heads-equal manifold, and
    their names."""
    iu = np.triu_indices(H)
    ridx = {(int(a), int(b)): H * F + k for k, (a, b) in enumerate(zip(*iu))}
    P = H * F + len(iu[0]) + 2 * H
    rows, names = [], []

    def add(i, j, name):
        c = np.zeros(P)
        c[i], c[j] = 1, -1
        rows.append(c)
        names.append(name)
    for h in range(1, H):
        for f in range(F):
            add(h * F + f, f, f"m[{h},{f}] − m[0,{f}]")
        add(ridx[(h, h)], ridx[(0, 0)], f"r[{h},{h}] − r[0,0]")
        add(H * F + len(iu[0]) + h, H * F + len(iu[0]), f"b[{h}] − b[0]")
        add(H * F + len(iu[0]) + H + h, H * F + len(iu[0]) + H, f"v[{h}] − v[0]")
    off = [(a, b) for a in range(H) for b in range(a + 1, H)]
    for (a, b) in off[1:]:
        add(ridx[(a, b)], ridx[off[0]], f"r[{a},{b}] − r{list(off[0])}")
    return np.array(rows), names


def manifold_prior(name):
    """The symmetric-manifold claim's priors: the flipping spike (1, 2) or N(0.5·e₁, diag(2, 0.5))."""
    return (flipping_spike(1.0, 2.0) if name == "flipping-spike"
            else GaussianPrior([0.5, 0.0], np.diag([2.0, 0.5])))


@simulation(seeded=False)
def manifold_contrasts_at(sim, item):
    """The head contrasts (``manifold_contrasts``) of the flow's per-draw right-hand side at
    ``item["points"]`` random points of the all-heads-equal manifold (from
    ``item["points_seed"]``; head 1's m shifted by ``item["m_offset"]``), for each activation of
    ``item["activations"]`` (names or ``Activation``s; flow draws from ``item["seeds"]``, one per
    activation): one row per point with the state, the contrasts' mean and standard error, which
    contrasts move, and the flow's RMS speed."""
    H, L_, F, n = item["H"], item["L"], 2, item["n"]
    prior = manifold_prior(item["prior"])
    rng = np.random.default_rng(item["points_seed"])
    C = manifold_contrasts(H, F)[0]
    rows = []
    for act, seed in zip(item["activations"], item["seeds"], strict=True):
        act = ACTIVATIONS[act] if isinstance(act, str) else act
        rm = HeadReduced(MultiHeadModel(H, L_, F, act), prior, n=n, seed=seed,
                         sgd_noise=item["kappa"], kind="random")
        for _ in range(item["points"]):
            a = rng.uniform(0.05, 0.5)
            c = rng.uniform(max(-0.04, -0.9 * a / H), 0.2)          # r ≻ 0: a + H·c > 0
            m = np.tile(rng.normal(0, 0.7, F), (H, 1))
            m[1, 0] += item["m_offset"]
            st = HeadState.make(m, a * np.eye(H) + c,
                                np.full(H, rng.normal(0, 0.3)), np.full(H, rng.normal(0, 0.5)))
            draws = rm.rhs_draws(st)
            est, se = mean_and_se(draws @ C.T)
            # a coordinate whose per-draw rhs is 0 up to rounding does not move in this model
            # (v without sinks; b where the activation ignores a head's logit shift)
            size = np.abs(draws).max(0)
            moving = (np.abs(C) @ (size > 1e-10 * size.max())) > 0
            rows.append({"activation": act.name, "state": st.to_dict(), "contrasts": est,
                         "se": se, "moving": moving,
                         "speed": float(np.sqrt(np.mean(draws.mean(0) ** 2)))})   # RMS of the flow
    return rows


# --- Prop. III.3 -----------------------------------------------------------------------------
ALIGN_HORIZON = 30.0
"""τ up to which Prop. III.3's flows run."""


def _iii3_flow(sim, item):
    md = MultiHeadModel(item["H"], L, 2, "softmax")
    return flow(md, item["prior"], sim.pick(2**12, 2**14), item["ode_seed"])


def _min_alignment(states, e):
    return [min(s.m @ e) for s in states]


@simulation(seeded=False)
def iii3_ode(sim, item):
    """Prop. III.3's flow (prior ``item["prior"]``) from ``small_init(g, D)`` at every D of
    ``item["dims"]`` (g from ``item["init_seed"]``, the same at every D) to τ = 30: per D the
    alignment time τ_a (first τ with min_h m_h·e ≥ 0.3, e = ``item["direction"]``), the heads'
    largest spread and their mean alignment at τ_a (nan where they never align)."""
    H, e = item["H"], np.asarray(item["direction"])
    rm = _iii3_flow(sim, item)
    g = np.random.default_rng(item["init_seed"]).standard_normal((H, 2))
    t_eval = np.linspace(0, ALIGN_HORIZON, 301)
    rows = []
    for D in item["dims"]:
        tr, states = trajectory(rm, small_init(g, D), t_eval)
        ta = first_passage(tr.t, np.array(_min_alignment(states, e)), 0.3)
        if np.isfinite(ta):
            s = states[int(np.searchsorted(tr.t, ta))]
            spread = float(max(np.linalg.norm(s.m[a] - s.m[b]) for a in range(H) for b in range(H)))
            rows.append({"D": D, "tau_align": ta, "spread_at_tau": spread,
                         "alignment_at_tau": float(np.mean(s.m @ e))})
        else:
            rows.append({"D": D, "tau_align": float("nan"), "spread_at_tau": float("nan"),
                         "alignment_at_tau": float("nan")})
    return rows


@simulation(seeded=False)
def iii3_sgd(sim, item):
    """Prop. III.3's SGD at one D (16 seeds from ``item["seed"]``, κ = 0.25, N_b = 8, to τ = 10)
    and the κ-ODE's alignment time from the same initial direction as ``iii3_ode``'s: one row."""
    H, D, e = item["H"], item["D"], np.asarray(item["direction"])
    md = MultiHeadModel(H, L, 2, "softmax")
    kappa, B = 0.25, 8
    lr = kappa * B / D
    cfg = SimulationConfig(lr=lr, steps=int(10 / lr), batch=B, seeds=16, seed=item["seed"],
                           record_every=max(1, int(0.1 / lr)), init=SIGMA0, device=sim.device)
    res = simulate(md, {"D": D, "prior": item["prior"]}, cfg,
                   until=lambda s: bool(np.all((s["m"] @ e).min(1) >= 0.3)))
    taus = np.array([first_passage(res.t, (res["m"][:, i] @ e).min(1), 0.3) for i in range(16)])
    g = np.random.default_rng(item["init_seed"]).standard_normal((H, 2))
    ode = trajectory(_iii3_flow(sim, item).with_noise(kappa), small_init(g, D),
                     np.linspace(0, ALIGN_HORIZON, 301))
    ode_ta = first_passage(ode[0].t, _min_alignment(ode[1], e), 0.3)
    done = taus[np.isfinite(taus)]
    return {"D": D, "tau_align_seeds": taus.tolist(), "never_aligned": int(16 - done.size),
            "tau_align_mean": float(np.mean(done)) if done.size else float("nan"),
            "tau_align_se": (float(np.std(done, ddof=1) / np.sqrt(done.size))
                             if done.size > 1 else float("nan")),
            "tau_align_dof": max(int(done.size) - 1, 1), "tau_align_ode_with_noise": ode_ta}
