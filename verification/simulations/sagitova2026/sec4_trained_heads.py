"""What Sec. IV's trained-heads claims simulate: heads trained by the derived gradient flow
(``trained_piece``) and optimised heads pruned greedily (``pruning_piece``). Every seed comes in
the item (derived by the claim from the run seed and the setting)."""

from __future__ import annotations

import numpy as np

from numerics.multihead import HeadState
from numerics.reduced import HeadReduced
from theory.multihead import MultiHeadModel
from ..base import simulation
from .common import L, best_risk


def active_heads(m, share):
    """Heads whose norm is at least ``share`` of the largest head's: the others are close to
    uniform attention and have learned no direction (their purity is that of a near-zero
    vector)."""
    norms = np.linalg.norm(m, axis=1)
    return norms >= share * norms.max()


def purity(m):
    """max_f |cos(m_h, e_f)| per head: 1 for a pure direction, 1/√2 for an even mixture."""
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return np.abs(m / np.maximum(n, 1e-300)).max(1)


def train(activation, prior, H, n, seeds, t_end, *, doublings=0, settled=0.0, active_share=0.0,
          init_scale=0.05):
    """Heads trained by the reduced flow (n draws from ``seeds["train"]``) from m ~ N(0,
    init_scale²) (``seeds["init"]``), r = init_scale²·I to τ = t_end, then for twice as long
    while the active heads' (``active_heads``) purities moved by more than ``settled`` over the
    last doubling of τ, at most ``doublings`` times. Returns (state at the final τ, state at
    half of it, reduced model, final τ)."""
    md = MultiHeadModel(H, L, prior.F, activation)
    rm = HeadReduced(md, prior, n=n, seed=seeds["train"], backend="torch")
    rng = np.random.default_rng(seeds["init"])
    st = HeadState.make(rng.normal(0, init_scale, (H, prior.F)), init_scale**2 * np.eye(H))
    tau, segment = t_end, np.array([0.0, 0.5 * t_end, t_end])
    for k in range(doublings + 1):
        tr = rm.integrate(st, segment, rtol=1e-6, atol=1e-10)
        if not tr.ok:
            raise RuntimeError(f"{rm.name}: training ended '{tr.status}' before τ = {tau:g}: "
                               f"{tr.message}")
        states = rm.states(tr)
        half, st = states[-2], states[-1]
        if k == doublings or purity_change(half.m, st.m, active_share) <= settled:
            break
        segment, tau = np.array([0.0, tau]), 2 * tau     # autonomous: τ → 2τ from the state at τ
    return st, half, rm, tau


def purity_change(before, after, active_share):
    """The largest change of purity of the heads active in ``after``."""
    on = active_heads(after, active_share)
    return float(np.abs(purity(after) - purity(before))[on].max())


@simulation(seeded=False)
def trained_piece(sim, item):
    """Heads of one activation (a name or an ``Activation``) trained by the flow from τ_end
    = ``item["tau"]`` on, doubled while they move (``train``: ``item["doublings"]``,
    ``item["settled"]``, ``item["active_share"]``), with their norms, purities at the final τ
    and at half of it, head cosines, fresh-draw risk, and the risk with the inactive heads
    dropped (same draws; ``item["seeds"]``: "train", "init", "fresh")."""
    act, prior, H = item["activation"], item["prior"], item["H"]
    name = act if isinstance(act, str) else act.name
    st, half, rm, tau = train(act, prior, H, sim.pick(2**12, 2**14), item["seeds"], item["tau"],
                              doublings=item["doublings"], settled=item["settled"],
                              active_share=item["active_share"])
    m = st.m
    norms = np.linalg.norm(m, axis=1)
    cos = (m @ m.T) / np.outer(norms, norms)
    on = active_heads(m, item["active_share"])
    n_fresh = sim.pick(2**15, 2**17)
    risk, risk_se = HeadReduced(rm.model, prior, n=n_fresh, seed=item["seeds"]["fresh"],
                                kind="random").loss(st)
    out = {"activation": name, "tau_start": item["tau"], "tau": tau, "m": m.tolist(),
           "norms": norms.tolist(), "active": on.tolist(), "purity": purity(m).tolist(),
           "purity_half": purity(half.m).tolist(),
           "purity_change": purity_change(half.m, m, item["active_share"]),
           "loss": float(risk), "loss_se": float(risk_se), "head_cosines": cos.tolist()}
    if not on.all():
        keep = np.flatnonzero(on)
        md = MultiHeadModel(len(keep), L, prior.F, rm.model.activation, output=rm.model.output)
        kept = HeadState(m[keep], st.r[np.ix_(keep, keep)], st.b[keep], st.v[keep])
        out["loss_active_only"], out["loss_active_only_se"] = map(float, HeadReduced(
            md, prior, n=n_fresh, seed=item["seeds"]["fresh"], kind="random").loss(kept))
    return out


def prune(state, model, prior, seeds, sizes):
    """Greedy pruning: repeatedly drop the head whose removal raises the loss least on one set
    of draws (the selection: ``sizes[0]`` draws from ``seeds[0]``); the losses after 0, 1, …,
    H − 1 removals along that path are then estimated on fresh draws (``sizes[1]`` from
    ``seeds[1]``: the judged values, free of the selection's optimism). Returns those losses
    ((value, se) each) and the order of removal."""
    def loss(keep, seed, n):
        md = MultiHeadModel(len(keep), L, model.F, model.activation, output=model.output)
        st = HeadState(state.m[list(keep)], state.r[np.ix_(keep, keep)], state.b[list(keep)],
                       state.v[list(keep)])
        return HeadReduced(md, prior, n=n, seed=seed, kind="random").loss(st)

    keep, path, order = list(range(model.H)), [tuple(range(model.H))], []
    while len(keep) > 1:
        trial = {h: loss([k for k in keep if k != h], seeds[0], sizes[0])[0] for h in keep}
        h = min(trial, key=trial.get)
        keep.remove(h)
        order.append(h)
        path.append(tuple(keep))
    return [loss(k, seeds[1], sizes[1]) for k in path], order


@simulation(seeded=False)
def pruning_piece(sim, item):
    """One activation's optimised heads (``common.best_risk``, seeds ``item["best_seeds"]``),
    greedy pruning (``prune``, seeds ``item["prune_seeds"]``), and the loss increases relative
    to the attainable improvement (uniform-attention risk ``item["uniform"]`` − trained risk)
    with their standard errors (independent fresh-draw estimates: hypot of the two)."""
    act, H, prior, uniform = item["activation"], item["H"], item["prior"], item["uniform"]
    _, _, st = best_risk(act, prior, H, sim.pick(2**13, 2**15), sim.pick(2**15, 2**17),
                         item["best_seeds"])
    md = MultiHeadModel(H, L, prior.F, act)
    losses, order = prune(st, md, prior, item["prune_seeds"],
                          (sim.pick(2**14, 2**16), sim.pick(2**16, 2**17)))
    scale = uniform - losses[0][0]
    return {"activation": act, "trained_risk": float(losses[0][0]), "state": st.to_dict(),
            "losses_after_pruning": [float(l[0]) for l in losses],
            "loss_se": [float(l[1]) for l in losses], "removal_order": [int(h) for h in order],
            "relative_increase": [float((l[0] - losses[0][0]) / scale) for l in losses],
            "relative_increase_se": [float(np.hypot(l[1], losses[0][1])) / scale
                                     for l in losses]}
