"""SGD against its reduced flow, on one time axis, judged by the check library.

The routine comparison of a learning-theory paper ("online SGD at finite d follows the ODE")
in one call::

    from verification.checks import sgd_vs_flow
    cmp = sgd_vs_flow(0.05, res, rm)          # res: an SGDResult; rm: a ReducedModel
    cmp.decision, cmp.check.z, cmp.deviation   # 'confirmed' | 'refuted' | 'inconclusive'
    cmp.figure()                               # matplotlib Figure (drawn by ``cmp.draw``)

The time axis. An ``SGDResult`` records at t = step·lr (the token-sum flow's time); for
multi-head attention lr is γ and the flow's time is τ = γ·step, the same number. The multi-head
reduced flow carries the SGD-noise term with strength κ = γD/N_b, which the result records
(``extras['sgd_noise']``): the flow is set to that κ (``HeadReduced.with_noise``), as the
paper's claims do by hand. The flow is integrated from ``init`` (default: the SGD's seed mean
at its first record) at the SGD's record times; the first record is the initial condition and
is not compared.

The judgement, one family per state (an overlap and a norm are different quantities, each
resolved on its own; ``cmp.check`` joins them: refuted if any state is). Each state's family
spends the claim's α, so S states spend S·α (the union bound the contract states). At one dimension (an
``SGDResult``), every (record, state) seed mean against the flow:
:func:`verification.checks.estimate_vs_theory` (|Δ| ≤ z·se + bias, Bonferroni z; ``bias`` the
explicit finite-size allowance, e.g. ``1/d``). Over several dimensions (a mapping {d:
SGDResult}), the deviation mean − flow extrapolated to d → ∞ (or to x → 0 for a finite-size
variable ``x`` such as the SGD-noise strength lr·d/batch) in the basis ``terms``:
:func:`verification.checks.limit`, claiming a zero intercept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
import functools
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .contract import Check
from .estimate import estimate_vs_theory
from .limit import limit

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["FlowComparison", "sgd_vs_flow", "sgd_states", "draw_sgd_vs_flow"]

HEAD_PARAMETERS = ("m", "r", "b", "v")


@dataclass(frozen=True)
class FlowComparison:
    """What :func:`sgd_vs_flow` compared and decided.

    check: the check library's decision (``decision``, ``z``, ``resolution``, ``evidence()``);
    t: the common time axis (t = step·lr; τ = γ·step for multi-head attention); names: the
    compared state coordinates (the flow's ``state_names``); dims: the dimensions (None at one
    d); x: the finite-size variable the limit was taken in (dims or the given ``x``);
    sgd_mean, sgd_stderr, flow: arrays [dim, record, state] (dim axis of length 1 at one d);
    draw: ``draw(fig)`` draws SGD (dots, ± 2 se) and the flow (lines) at the largest d (a
    ``functools.partial`` of :func:`draw_sgd_vs_flow`, picklable)."""

    check: Check
    t: np.ndarray
    names: tuple[str, ...]
    dims: tuple | None
    x: np.ndarray | None
    sgd_mean: np.ndarray
    sgd_stderr: np.ndarray
    flow: np.ndarray
    kappa: float | None = None
    draw: Callable[[Any], None] = field(default=None, repr=False)

    @property
    def decision(self) -> str:
        return self.check.decision

    @property
    def deviation(self) -> np.ndarray:
        """sgd_mean − flow, [dim, record, state]."""
        return self.sgd_mean - self.flow

    def worst(self) -> dict:
        """The largest |deviation|/se at the largest d: where, and how large."""
        dev, se = self.deviation[-1, 1:], self.sgd_stderr[-1, 1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(se > 0, np.abs(dev) / se, np.abs(dev))
        k, j = np.unravel_index(int(np.argmax(score)), score.shape)
        return {"time": float(self.t[k + 1]), "state": self.names[j], "deviation": float(dev[k, j]),
                "stderr": float(se[k, j])}

    def evidence(self) -> dict:
        """JSON-able numbers for a claim's evidence."""
        return {"check": self.check.evidence(), "names": list(self.names), "t": self.t.tolist(),
                "dims": None if self.dims is None else list(self.dims),
                "x": None if self.x is None else self.x.tolist(), "kappa": self.kappa,
                "worst_at_largest_d": self.worst()}

    def arrays(self) -> dict[str, np.ndarray]:
        """Arrays for a claim's ``report.npz``."""
        return {"t": self.t, "sgd_mean": self.sgd_mean, "sgd_stderr": self.sgd_stderr,
                "flow": self.flow}

    def figure(self):
        """A matplotlib Figure drawn by ``draw`` (matplotlib imported only here)."""
        from matplotlib.figure import Figure
        fig = Figure(figsize=(7, 4))
        self.draw(fig)
        return fig


def draw_sgd_vs_flow(fig, t, names, mean, stderr, flow, label="") -> None:
    """SGD seed means (dots, ± 2 se) and the flow (lines) of each state against time."""
    ax = fig.add_subplot()
    for k, name in enumerate(names):
        line, = ax.plot(t, flow[:, k], "-", lw=1.5)
        ax.errorbar(t, mean[:, k], yerr=2 * np.nan_to_num(stderr[:, k]), fmt="o", ms=3,
                    color=line.get_color(), label=name)
    ax.set_xlabel("t = step · lr (τ = γ·step for multi-head)")
    ax.set_ylabel("order parameter")
    ax.set_title(f"flow (lines) vs SGD (dots){', ' + label if label else ''}", fontsize=9)
    ax.legend(fontsize=7, ncol=2)


def sgd_states(res, names: Sequence[str]) -> np.ndarray:
    """The SGD record's states [record, seed, state] in the order ``names`` (a flow's
    ``state_names``): the scalar order parameters by name, or the multi-head (m, r, b, v) packed
    as ``HeadState.pack`` (coordinates m[h,f], r[h,k] for h ≤ k, b[h], v[h])."""
    names = tuple(names)
    if set(res.names) == set(HEAD_PARAMETERS) and res["m"].ndim == 4:
        m, r = res["m"], res["r"]
        H = m.shape[2]
        iu = np.triu_indices(H)
        packed = np.concatenate([m.reshape(*m.shape[:2], -1), r[..., iu[0], iu[1]], res["b"],
                                 res["v"]], -1)
        from numerics.multihead import head_state_names
        own = head_state_names(H, m.shape[3])
    else:
        own = tuple(res.names)
        packed = None
    missing = [n for n in names if n not in own]
    if missing:
        raise ValueError(f"sgd: the SGD record has no state {missing}; it has {list(own)} "
                         "(the flow's state_names must be among them)")
    if packed is None:
        return np.stack([np.asarray(res[n], float) for n in names], -1)
    return packed[..., [own.index(n) for n in names]]


def _context(ctx_or_alpha) -> Context:
    from ..context import Context          # here: the context module imports the policies
    if isinstance(ctx_or_alpha, Context):
        return ctx_or_alpha
    if isinstance(ctx_or_alpha, (float, int)) and not isinstance(ctx_or_alpha, bool) \
            and 0 < ctx_or_alpha < 1:
        return Context(alpha=float(ctx_or_alpha))
    raise ValueError(f"ctx_or_alpha={ctx_or_alpha!r}; allowed: a verification Context (in a "
                     "claim: ctx) or a false-refutation probability α in (0, 1)")


def _times(res, what: str) -> np.ndarray:
    t = np.asarray(res.t, float)
    if t.ndim != 1 or t.size < 2:
        raise ValueError(f"{what}: needs at least 2 record times, got {t.size}")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError(f"{what}: record times must be finite and strictly increasing; got "
                         f"{np.round(t, 6).tolist()}")
    return t


def _line_up(flow, res, what: str):
    """The flow at the simulation's κ = γD/N_b (multi-head), and that κ (None otherwise)."""
    kappa = getattr(res, "extras", {}).get("sgd_noise")
    if kappa is None:
        return flow, None
    if not hasattr(flow, "with_noise"):
        raise ValueError(f"flow: a multi-head simulation ({what}: κ = γD/N_b = {kappa:g}) needs a "
                         f"multi-head reduced flow (HeadReduced); got {type(flow).__name__}")
    return flow.with_noise(kappa), float(kappa)


def _one(res, flow, init, names, what, integrate_options):
    t = _times(res, what)
    names = tuple(flow.state_names) if names is None else tuple(names)
    unknown = [n for n in names if n not in flow.state_names]
    if unknown:
        raise ValueError(f"names: {unknown} are not states of the flow; allowed: "
                         f"{list(flow.state_names)}")
    states = sgd_states(res, flow.state_names)           # record, seed, every flow state
    if states.shape[1] < 2:
        raise ValueError(f"{what}: {states.shape[1]} seed; the standard error needs seeds ≥ 2")
    flow, kappa = _line_up(flow, res, what)
    y0 = states[0].mean(0) if init is None else init
    tr = flow.integrate(y0, t, **(integrate_options or {}))
    if not tr.ok:
        raise RuntimeError(f"the flow {flow.name} could not be integrated on {what}'s record "
                           f"times ({tr.status}): {tr.message}")
    cols = [flow.state_names.index(n) for n in names]
    sel = states[..., cols]
    se = sel.std(1, ddof=1) / np.sqrt(sel.shape[1])
    return t, names, sel.mean(1), se, tr.y[:, cols], kappa


def sgd_vs_flow(ctx_or_alpha: Context | float, sgd, flow, init=None, *,
                names: Sequence[str] | None = None, bias: ArrayLike = 0.0,
                terms: Sequence[str] = ("1/d",), x: ArrayLike | None = None,
                name: str = "SGD seed mean − flow",
                integrate_options: Mapping[str, Any] | None = None) -> FlowComparison:
    """SGD against its reduced flow on one time axis, judged by the check library.

    ctx_or_alpha: a claim's ``ctx`` (the check spends its α and records the contract), or α in
    (0, 1) outside a claim. sgd: an ``SGDResult`` (one dimension; judged by
    ``estimate_vs_theory``) or a mapping {d: SGDResult} over ≥ len(terms) + 2 dimensions with the
    same record times (judged by ``limit``: the deviation's d → ∞ intercept against 0). flow: a
    ``ReducedModel`` (``numerics.reduced``), or for a mapping a callable d → ReducedModel when
    the flow depends on d. init: the flow's initial state (by name, packed, or a HeadState;
    default the SGD's seed mean at the first record). names: the states compared (default all
    of the flow's ``state_names``); a multi-head result sets the flow's SGD-noise strength to
    the κ = γD/N_b it records. bias: the explicit finite-size allowance (|Δ| ≤ z·se + bias, on
    the seed means at one d, on the intercepts over several): a number, one per state, or
    [record − 1, state].
    terms, x: the limit's finite-size basis and, instead of d, a finite-size variable x → 0
    per dimension (e.g. lr·d/batch with terms ("x", "x^2")). integrate_options: keywords of
    ``flow.integrate`` (rtol, method, ...).

    Raises ValueError naming the parameter on bad input: times not strictly increasing, names
    that are not the flow's states, an SGD record lacking the flow's states, one seed, record
    times that differ between dimensions."""
    ctx = _context(ctx_or_alpha)
    if isinstance(sgd, Mapping):
        return _over_dims(ctx, sgd, flow, init, names, bias, terms, x, name, integrate_options)
    if callable(flow) and not hasattr(flow, "state_names"):
        raise ValueError("flow: a callable d → flow needs sgd as a mapping {d: SGDResult}")
    t, names, mean, se, ode, kappa = _one(sgd, flow, init, names, "sgd", integrate_options)
    scale = np.abs(ode[1:]).ravel()
    bias = _bias(bias, mean)
    labels = _labels(t, names)

    def judge(j: int, cols: slice) -> Check:
        return estimate_vs_theory(ctx, mean[1:, j], se[1:, j], ode[1:, j], bias=bias[cols],
                                  name=f"{name}: {names[j]}", scale=scale[cols],
                                  labels=labels[cols])
    check = _per_state(judge, len(names), len(t) - 1)
    draw = functools.partial(draw_sgd_vs_flow, t=t, names=names, mean=mean, stderr=se, flow=ode,
                             label=f"κ = {kappa:g}" if kappa is not None else "")
    return FlowComparison(check, t, names, None, None, mean[None], se[None], ode[None], kappa, draw)


def _per_state(judge: Callable[[int, slice], Check], states: int, records: int) -> Check:
    """One family per state (each checked quantity resolved on its own: an overlap and a norm
    have different scales and standard errors), joined into one Check in the (record, state)
    order of the comparisons: refuted if any state is, confirmed if all are, else
    inconclusive; its resolution the coarsest state's, its details the worst state's."""
    from .contract import combine

    checks = [judge(j, slice(j, None, states)) for j in range(states)]
    n = states * records

    def joined(get) -> np.ndarray:
        out = np.empty(n, dtype=object)
        for j, c in enumerate(checks):
            out[j::states] = list(np.broadcast_to(np.asarray(get(c)), (records,)))
        try:
            return out.astype(float)
        except (TypeError, ValueError):
            return out
    worst = max(checks, key=lambda c: float(np.max(c.score - c.z)) if c.score.size else -np.inf)
    resolutions = [c.resolution for c in checks]
    res = None if any(r is None for r in resolutions) else max(resolutions)
    details = {**worst.details, "n": n, "states": {c_name: c.decision for c_name, c in
                                                     zip(_state_names(checks), checks)}}
    cols = {k: joined(lambda c, k=k: c.columns[k]) for k in worst.columns}
    labels = joined(lambda c: list(c.labels)) if all(c.labels for c in checks) else None
    needs = "; ".join(c.needs for c in checks if c.needs)
    return Check(combine(checks), max(c.z for c in checks), joined(lambda c: c.ok).astype(bool),
                 joined(lambda c: c.score), res, details, needs, cols,
                 None if labels is None else tuple(labels))


def _state_names(checks: Sequence[Check]) -> list[str]:
    return [str(c.labels[0]).split(" @ ")[0] if c.labels else str(i)
            for i, c in enumerate(checks)]


def _labels(t: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """A name per compared (record after the first, state), raveled as the comparisons are."""
    return np.array([f"{n} @ t={tk:.6g}" for tk in t[1:] for n in names], dtype=object)


def _bias(bias, mean: np.ndarray) -> np.ndarray:
    """The allowance at every compared (record after the first, state), raveled."""
    try:
        return np.broadcast_to(np.asarray(bias, float), mean[1:].shape).ravel()
    except ValueError:
        raise ValueError(f"bias: shape {np.shape(bias)}; allowed: a number, one per state "
                         f"({mean.shape[1]}) or [record − 1, state] {mean[1:].shape}") from None


def _over_dims(ctx, runs, flow, init, names, bias, terms, x, name, integrate_options):
    dims = tuple(runs)
    if len(dims) < 2:
        raise ValueError(f"sgd: {len(dims)} dimension(s); the d → ∞ limit needs several (give an "
                         "SGDResult for one d)")
    out = []
    for d in dims:
        rm = flow(d) if callable(flow) and not hasattr(flow, "state_names") else flow
        out.append(_one(runs[d], rm, init, names, f"sgd[{d}]", integrate_options))
    t = out[0][0]
    for d, o in zip(dims, out):
        if o[0].shape != t.shape or not np.allclose(o[0], t, rtol=1e-9, atol=1e-12):
            raise ValueError(f"sgd: the record times at d = {d} differ from those at d = {dims[0]}; "
                             "record every (time step)/lr steps so that they coincide")
    names = out[0][1]
    mean, se, ode = (np.array([o[k] for o in out]) for k in (2, 3, 4))
    xs = np.asarray(dims if x is None else x, float)
    if xs.shape != (len(dims),):
        raise ValueError(f"x: {xs.size} values for {len(dims)} dimensions; give one per key of sgd")
    devs = (mean - ode)[:, 1:].reshape(len(dims), -1)
    ses = se[:, 1:].reshape(len(dims), -1)
    bias = _bias(bias, mean[0])
    scale, labels = np.abs(ode[-1, 1:]).ravel(), _labels(t, names)

    def judge(j: int, cols: slice) -> Check:
        return limit(ctx, xs, devs[:, cols], ses[:, cols], 0.0, terms=tuple(terms),
                     bias=bias[cols], name=f"{name}: {names[j]}", scale=scale[cols],
                     labels=labels[cols])
    check = _per_state(judge, len(names), len(t) - 1)
    kappas = [o[5] for o in out]
    kappa = kappas[-1] if kappas and all(k == kappas[0] for k in kappas) else None
    draw = functools.partial(draw_sgd_vs_flow, t=t, names=names, mean=mean[-1], stderr=se[-1],
                             flow=ode[-1], label=f"d = {dims[-1]}")
    return FlowComparison(check, t, names, dims, xs, mean, se, ode, kappa, draw)
