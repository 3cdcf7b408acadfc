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


def large_heads(m, share, floor):
    """Heads whose norm is at least ``share`` of the largest head's and at least ``floor``: the
    others attend almost uniformly, and their direction (that of a near-zero vector) is not
    what the heads learned unless they matter for the risk (the claim decides)."""
    norms = np.linalg.norm(m, axis=1)
    return (norms >= share * norms.max()) & (norms >= floor)


def purity(m):
    """max_f |cos(m_h, e_f)| per head: 1 for a pure direction, 1/√2 for an even mixture."""
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return np.abs(m / np.maximum(n, 1e-300)).max(1)


def turned(before, after, heads):
    """The largest angle (degrees) between each of ``heads``' directions in ``before`` and in
    ``after``, sign ignored (0 when ``heads`` is empty)."""
    if not np.any(heads):
        return 0.0
    a, b = before[heads], after[heads]
    cos = np.abs((a * b).sum(1)) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return float(np.degrees(np.arccos(np.clip(cos, 0.0, 1.0))).max())


def _restart(st):
    """The state at τ as the next segment's start: r symmetrised with its rounding-level
    negative eigenvalues set to 0 (a start state is checked realisable)."""
    w, V = np.linalg.eigh(0.5 * (st.r + st.r.T))
    return HeadState(st.m, (V * np.clip(w, 0.0, None)) @ V.T, st.b, st.v)


def unstable_rate(rm, st):
    """The largest real part of the flow's Jacobian eigenvalues at ``st`` (central differences
    of the deterministic right-hand side): > 0 at a saddle, where the heads will move again."""
    return float(np.linalg.eigvals(rm.jacobian(st.pack())).real.max())


def train(activation, prior, H, n, seeds, t_end, *, doublings=0, settled=0.0, share=0.0,
          floor=0.0, unstable=np.inf, init_scale=0.05):
    """Heads trained by the reduced flow (n draws from ``seeds["train"]``) from m ~ N(0,
    init_scale²) (``seeds["init"]``), r = init_scale²·I to τ = t_end, then for twice as long
    while they still move, at most ``doublings`` times. They have stopped moving when the large
    heads (``large_heads``) are the same at τ/2 and τ, none turned by more than ``settled``
    degrees between any of the snapshots τ/2, 3τ/4 and τ, and the state is no saddle (its
    ``unstable_rate`` at most ``unstable``: a plateau can look still for thousands of time
    units). Returns (state at τ, state at τ/2, reduced model, τ, largest turn in degrees,
    whether the large heads changed, unstable rate)."""
    md = MultiHeadModel(H, L, prior.F, activation)
    rm = HeadReduced(md, prior, n=n, seed=seeds["train"], backend="torch")
    rng = np.random.default_rng(seeds["init"])
    st = HeadState.make(rng.normal(0, init_scale, (H, prior.F)), init_scale**2 * np.eye(H))
    tau, segment = t_end, np.array([0.0, 0.5, 0.75, 1.0]) * t_end
    for k in range(doublings + 1):
        tr = rm.integrate(st if k == 0 else _restart(st), segment, rtol=1e-6, atol=1e-10)
        if not tr.ok:
            raise RuntimeError(f"{rm.name}: training ended '{tr.status}' before τ = {tau:g}: "
                               f"{tr.message}")
        snaps = rm.states(tr)[-3:]                    # τ/2, 3τ/4, τ
        half, st = snaps[0], snaps[-1]
        on = large_heads(st.m, share, floor)
        changed = bool(np.any(on != large_heads(half.m, share, floor)))
        turn = max(turned(x.m, st.m, on) for x in snaps[:-1])
        rate = unstable_rate(rm, st)
        if k == doublings or (turn <= settled and not changed and rate <= unstable):
            break
        segment, tau = np.array([0.0, 0.5, 1.0]) * tau, 2 * tau    # autonomous: from the state at τ
    return st, half, rm, tau, turn, changed, rate


@simulation(seeded=False)
def trained_piece(sim, item):
    """Heads of one activation (a name or an ``Activation``) trained by the flow from τ_end
    = ``item["tau"]`` on, doubled while they move (``train``: ``item["doublings"]``,
    ``item["settled"]``, ``item["share"]``, ``item["floor"]``, ``item["unstable"]``), with their
    norms, which are large, purities at the final τ and at half of it, how far they turned, the
    unstable rate at the end, head cosines,
    fresh-draw risk, and the greedy pruning path (``prune``: the order of removal and the
    fresh-draw risks after 0, 1, …, H − 1 removals; ``item["seeds"]``: "train", "init",
    "prune" (selection), "fresh")."""
    act, prior, H = item["activation"], item["prior"], item["H"]
    name = act if isinstance(act, str) else act.name
    st, half, rm, tau, turn, changed, rate = train(
        act, prior, H, sim.pick(2**12, 2**14), item["seeds"], item["tau"],
        doublings=item["doublings"], settled=item["settled"], share=item["share"],
        floor=item["floor"], unstable=item["unstable"])
    m = st.m
    norms = np.linalg.norm(m, axis=1)
    cos = (m @ m.T) / np.maximum(np.outer(norms, norms), 1e-300)
    path, order = prune(st, rm.model, prior, (item["seeds"]["prune"], item["seeds"]["fresh"]),
                        (sim.pick(2**14, 2**16), sim.pick(2**15, 2**17)))
    return {"activation": name, "tau_start": item["tau"], "tau": tau, "m": m.tolist(),
            "norms": norms.tolist(), "large": large_heads(m, item["share"], item["floor"]).tolist(),
            "purity": purity(m).tolist(), "purity_half": purity(half.m).tolist(),
            "turn_degrees": turn, "large_heads_changed": changed, "unstable_rate": rate,
            "loss": float(path[0][0]),
            "loss_se": float(path[0][1]), "head_cosines": cos.tolist(),
            "prune_order": [int(h) for h in order], "prune_losses": [float(v) for v, _ in path],
            "prune_losses_se": [float(e) for _, e in path]}


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
