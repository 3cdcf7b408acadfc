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

from ..stats import finite
from .contract import Check
from .estimate import estimate_vs_theory
from .extrapolate import extrapolate
from .limit import limit

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["FlowComparison", "Tracks", "SGD_CORRECTIONS", "sgd_vs_flow", "sgd_states",
           "draw_sgd_vs_flow"]

HEAD_PARAMETERS = ("m", "r", "b", "v")


@dataclass(frozen=True)
class FlowComparison:
    """What :func:`sgd_vs_flow` compared and decided.

    check: the check library's decision (``decision``, ``z``, ``resolution``, ``evidence()``);
    t: the common time axis (t = step·lr; τ = γ·step for multi-head attention; with
    ``over_dims="each"``, the largest d's record times, each d's own in its labels); names: the
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
    legs: Mapping[str, Check] = field(default_factory=dict, repr=False)
    """Each family's own check (label → Check), as :func:`verification.checks.conclude` takes
    legs."""

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


@dataclass(frozen=True)
class Tracks:
    """SGD runs as a comparison reads them, when they are not an ``SGDResult`` (e.g. a stored
    simulation's arrays): record times ``t`` [record], ``states`` [record, seed, state] and the
    state ``names`` (a flow's ``state_names`` or their subset)."""

    t: np.ndarray
    states: np.ndarray
    names: tuple[str, ...]

    def __post_init__(self):
        states = np.asarray(self.states, float)
        if states.ndim != 3 or states.shape[2] != len(self.names):
            raise ValueError(f"Tracks.states: shape {states.shape}; allowed: [record, seed, state] "
                             f"with {len(self.names)} states (one per name)")
        if states.shape[0] != np.size(self.t):
            raise ValueError(f"Tracks: {np.size(self.t)} record times for {states.shape[0]} "
                             "records")
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "t", np.asarray(self.t, float))
        object.__setattr__(self, "names", tuple(self.names))


def _is_model(flow) -> bool:
    return hasattr(flow, "state_names") and hasattr(flow, "integrate")


def _states(res, names, what) -> np.ndarray:
    if isinstance(res, Tracks):
        missing = [n for n in names if n not in res.names]
        if missing:
            raise ValueError(f"{what}: the tracks have no state {missing}; they have "
                             f"{list(res.names)}")
        return res.states[..., [res.names.index(n) for n in names]]
    return sgd_states(res, names)


def _one(res, flow, init, names, what, integrate_options):
    """(t, names, seed mean, se, flow at the record times, κ, seeds) of one dimension: ``flow``
    a reduced model (integrated from ``init``) or its values [record, state] at the record
    times (a stored flow: columns ``names``)."""
    t = _times(res, what)
    if _is_model(flow):
        names = tuple(flow.state_names) if names is None else tuple(names)
        unknown = [n for n in names if n not in flow.state_names]
        if unknown:
            raise ValueError(f"names: {unknown} are not states of the flow; allowed: "
                             f"{list(flow.state_names)}")
        states = _states(res, flow.state_names, what)        # record, seed, every flow state
        flow, kappa = _line_up(flow, res, what)
        y0 = states[0].mean(0) if init is None else init
        tr = flow.integrate(y0, t, **(integrate_options or {}))
        if not tr.ok:
            raise RuntimeError(f"the flow {flow.name} could not be integrated on {what}'s record "
                               f"times ({tr.status}): {tr.message}")
        cols = [flow.state_names.index(n) for n in names]
        sel, values = states[..., cols], tr.y[:, cols]
    else:
        if names is None:
            raise ValueError("names: a flow given as values [record, state] needs the names of "
                             "its columns")
        if init is not None:
            raise ValueError("init: a flow given as values starts where it was computed; give "
                             "init only with a reduced model")
        names = tuple(names)
        values = np.asarray(flow, float)
        if values.shape != (len(t), len(names)):
            raise ValueError(f"flow: shape {values.shape} at {what}; allowed: [record, state] "
                             f"= {(len(t), len(names))}")
        sel = _states(res, names, what)
        kappa = getattr(res, "extras", {}).get("sgd_noise")
    if sel.shape[1] < 2:
        raise ValueError(f"{what}: {sel.shape[1]} seed; the standard error needs seeds ≥ 2")
    finite(sel, values, what=what)
    se = sel.std(1, ddof=1) / np.sqrt(sel.shape[1])
    return t, names, sel.mean(1), se, values, kappa, sel.shape[1]


SGD_CORRECTIONS = ("1/d", "1/d+1/d^2")
"""The default finite-size models of an SGD mean's deviation from its flow: online SGD's
step, SGD-noise drift and fluctuation corrections are O(1/d), next order 1/d². No plateau:
these corrections do not vanish at any finite d, so a plateau over the largest dimensions
would take a slow decay for a limit."""
OVER_DIMS = ("extrapolate", "each", "limit")


def sgd_vs_flow(ctx_or_alpha: Context | float, sgd, flow, init=None, *,
                names: Sequence[str] | None = None, bias: ArrayLike = 0.0,
                over_dims: str = "extrapolate", corrections: Sequence[str] = SGD_CORRECTIONS,
                grow: Callable[[float], tuple[Any, Any]] | None = None,
                max_dim: float | None = None, terms: Sequence[str] | None = None,
                x: ArrayLike | None = None,
                families: Callable[[str], str] | Mapping[str, str] | None = None,
                name: str = "SGD seed mean − flow",
                integrate_options: Mapping[str, Any] | None = None) -> FlowComparison:
    """SGD against its reduced flow on one time axis, judged by the check library.

    ctx_or_alpha: a claim's ``ctx`` (the check spends its α and records the contract), or α in
    (0, 1) outside a claim. sgd: an ``SGDResult`` or :class:`Tracks` (one dimension: each seed
    mean against the flow, ``estimate_vs_theory``), or a mapping {d: SGDResult or Tracks} over
    several dimensions with the same record times (with ``over_dims="each"``, as many records:
    each dimension is compared with the flow at its own times). flow: a ``ReducedModel``
    (``numerics.reduced``) integrated from ``init`` (by name, packed, or a HeadState; default the
    SGD's seed mean at the first record), or the flow's values [record, state] at the record
    times (a stored flow; ``names`` then names its columns); for a mapping, a callable d → either
    or a mapping {d: either}. names: the states compared (default all of the flow's
    ``state_names``); a multi-head result sets the flow's SGD-noise strength to the κ = γD/N_b it
    records. bias: the explicit allowance (a number, one per state, [record − 1, state], and
    with ``over_dims="each"`` [dim, record − 1, state]).

    Over several dimensions, ``over_dims``:

    * ``"extrapolate"`` (default): the deviation mean − flow at each (record, state) taken to
      d → ∞ by :func:`verification.checks.extrapolate` with the candidate ``corrections``
      (default :data:`SGD_CORRECTIONS`), claiming 0; ``grow(d)`` → (sgd, flow) at a larger d
      (doubling up to ``max_dim``) while a family is unsettled;
    * ``"each"``: every dimension's seed means against the flow (the allowance ``bias`` carrying
      the finite-size term), one family per state over (dim, record);
    * ``"limit"``: a fixed basis ``terms`` through :func:`verification.checks.limit` (kept for
      comparison: a fixed correction biases the intercept when the true one has another shape).

    x: a finite-size variable per dimension (→ 0, e.g. lr·d/batch) in place of d; the
    corrections are then read in 1/x (``"limit"``: the terms "x", "x^2" in x). The standard
    errors are over seeds: every policy judges at the Student-t quantile with seeds − 1 degrees
    of freedom. families: the family a state belongs to (a callable or a mapping name → label;
    default the name before "[", so that a multi-head m[h,f] is one family "m"), each family
    resolved on its own; ``name`` prefixes each family's name. integrate_options: keywords of
    ``flow.integrate``.

    Raises ValueError naming the parameter on bad input: times not strictly increasing, names
    that are not the flow's states, an SGD record lacking the flow's states, one seed, record
    times that differ between dimensions (with ``"each"``: numbers of records), an unknown
    ``over_dims``."""
    ctx = _context(ctx_or_alpha)
    if over_dims not in OVER_DIMS:
        raise ValueError(f"over_dims={over_dims!r}; allowed: {list(OVER_DIMS)}")
    if terms is not None and over_dims != "limit":
        raise ValueError(f"terms: a fixed basis is judged only with over_dims='limit' (got "
                         f"over_dims={over_dims!r}; use corrections=)")
    if isinstance(sgd, Mapping):
        return _over_dims(ctx, sgd, flow, init, names, bias, over_dims, corrections, grow,
                          max_dim, terms or ("1/d",), x, families, name, integrate_options)
    if _flow_of_d(flow):
        raise ValueError("flow: a callable d → flow or a mapping {d: flow} needs sgd as a "
                         "mapping {d: SGDResult}")
    t, names, mean, se, ode, kappa, seeds = _one(sgd, flow, init, names, "sgd", integrate_options)
    scale = np.abs(ode[1:]).ravel()
    bias = _bias(bias, mean)
    labels = _labels(t, names)

    def judge(label: str, idx: np.ndarray) -> Check:
        return estimate_vs_theory(ctx, mean[1:].ravel()[idx], se[1:].ravel()[idx],
                                  ode[1:].ravel()[idx], bias=bias[idx], name=f"{name}: {label}",
                                  scale=scale[idx], labels=labels[idx], dof=seeds - 1)
    check, legs = _per_family(judge, _groups(names, families, len(t) - 1))
    draw = functools.partial(draw_sgd_vs_flow, t=t, names=names, mean=mean, stderr=se, flow=ode,
                             label=f"κ = {kappa:g}" if kappa is not None else "")
    return FlowComparison(check, t, names, None, None, mean[None], se[None], ode[None], kappa, draw,
                          legs)


def _flow_of_d(flow) -> bool:
    return isinstance(flow, Mapping) or (callable(flow) and not _is_model(flow))


def _family_label(families, state: str) -> str:
    if families is None:
        return state.split("[")[0]
    if isinstance(families, Mapping):
        if state not in families:
            raise ValueError(f"families: no family for the state {state!r}; give one for each "
                             "of the compared states")
        return str(families[state])
    return str(families(state))


def _groups(names, families, records: int, blocks: int = 1) -> dict[str, np.ndarray]:
    """Each family's indices into the comparisons raveled as (block, record, state)."""
    width = len(names)
    out: dict[str, list[int]] = {}
    for j, n in enumerate(names):
        out.setdefault(_family_label(families, n), []).extend(
            b * records * width + k * width + j for b in range(blocks) for k in range(records))
    return {label: np.array(sorted(idx)) for label, idx in out.items()}


def _per_family(judge: Callable[[str, np.ndarray], Check],
                groups: Mapping[str, np.ndarray]) -> tuple[Check, dict[str, Check]]:
    """One check per family (each checked quantity resolved on its own: an overlap and a norm
    have different scales and standard errors), joined into one Check in the order of the
    comparisons: refuted if any family is, confirmed if all are, else inconclusive; its
    resolution the coarsest family's, its details the worst family's."""
    from .contract import combine

    checks = {label: judge(label, idx) for label, idx in groups.items()}
    n = sum(len(idx) for idx in groups.values())

    def joined(get) -> np.ndarray:
        out = np.empty(n, dtype=object)
        for label, c in checks.items():
            vals = np.empty(len(groups[label]), dtype=object)
            vals[:] = list(np.broadcast_to(np.asarray(get(c), dtype=object), vals.shape))
            out[groups[label]] = vals
        try:
            return out.astype(float)
        except (TypeError, ValueError):
            return out
    worst = max(checks.values(),
                key=lambda c: float(np.max(c.score - c.z)) if c.score.size else -np.inf)
    resolutions = [c.resolution for c in checks.values()]
    res = None if any(r is None for r in resolutions) else max(resolutions)
    details = {**worst.details, "n": n,
               "states": {label: c.decision for label, c in checks.items()}}
    cols = {k: joined(lambda c, k=k: c.columns[k]) for k in worst.columns
            if all(k in c.columns for c in checks.values())}
    labels = joined(lambda c: list(c.labels)) if all(c.labels for c in checks.values()) else None
    needs = "; ".join(c.needs for c in checks.values() if c.needs)
    return Check(combine(list(checks.values())), max(c.z for c in checks.values()),
                 joined(lambda c: c.ok).astype(bool), joined(lambda c: c.score), res, details,
                 needs, cols, None if labels is None else tuple(labels)), checks


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


def _over_dims(ctx, runs, flow, init, names, bias, over_dims, corrections, grow, max_dim, terms,
               x, families, name, integrate_options):
    dims = tuple(runs)
    if len(dims) < 2:
        raise ValueError(f"sgd: {len(dims)} dimension(s); a comparison over d needs several "
                         "(give an SGDResult for one d)")
    if grow is not None and (over_dims != "extrapolate" or x is not None):
        raise ValueError("grow: larger dimensions are added only with over_dims='extrapolate' "
                         "and the corrections read in d (not x)")

    def at(d, run, rm):
        if isinstance(rm, Mapping) or (callable(rm) and not _is_model(rm)):
            rm = rm[d] if isinstance(rm, Mapping) else rm(d)
        return _one(run, rm, init, names, f"sgd[{d}]", integrate_options)
    out = [at(d, runs[d], flow) for d in dims]
    t = out[0][0]
    if over_dims == "each":      # each d against the flow at its own times: as many records
        _same_records(t, dims, out)
    else:
        _same_times(t, dims, out)
    names = out[0][1]
    mean, se, ode = (np.array([o[k] for o in out]) for k in (2, 3, 4))
    dof = min(o[6] for o in out) - 1
    xs = np.asarray(dims if x is None else x, float)
    if xs.shape != (len(dims),):
        raise ValueError(f"x: {xs.size} values for {len(dims)} dimensions; give one per key of sgd")
    if over_dims == "each":
        times = [o[0] for o in out]
        check, legs = _each(ctx, dims, times, names, mean, se, ode, bias, families, name, dof)
        t = times[-1]
    else:
        grown: dict[float, tuple] = {}
        policy = dict(over_dims=over_dims, corrections=corrections, terms=terms, x=x,
                      max_dim=max_dim, dof=dof, families=families, name=name)
        check, legs = _to_the_limit(ctx, t, names, xs, mean, se, ode, bias, policy,
                              None if grow is None else _grower(grow, at, t, grown))
        if grown:
            order = sorted(grown)
            dims, xs = dims + tuple(order), np.concatenate([xs, order])
            mean, se, ode = (np.concatenate([a, [grown[d][k] for d in order]])
                             for a, k in ((mean, 2), (se, 3), (ode, 4)))
            out += [grown[d] for d in order]
    kappas = [o[5] for o in out]
    kappa = kappas[-1] if kappas and all(k == kappas[0] for k in kappas) else None
    draw = functools.partial(draw_sgd_vs_flow, t=t, names=names, mean=mean[-1], stderr=se[-1],
                             flow=ode[-1], label=f"d = {dims[-1]}")
    return FlowComparison(check, t, names, dims, xs, mean, se, ode, kappa, draw, legs)


def _grower(grow, at, t, grown: dict) -> Callable:
    """grow's comparisons at new dimensions, each dimension simulated once (kept in ``grown``)
    whichever family asks first."""
    def rows(new_dims, idx):
        out = []
        for d in new_dims:
            if d not in grown:
                run, rm = grow(int(d) if float(d).is_integer() else d)
                grown[d] = at(d, run, rm)
                _same_times(t, [d], [grown[d]])
            g = grown[d]
            out.append(((g[2] - g[4])[1:].ravel()[idx], g[3][1:].ravel()[idx]))
        return np.array([r[0] for r in out]), np.array([r[1] for r in out])
    return rows


def _to_the_limit(ctx, t, names, xs, mean, se, ode, bias, policy, grow_rows):
    """The deviation at each (record, state) taken to d → ∞ (``extrapolate``, or ``limit`` in a
    fixed basis), claiming 0, one family per state."""
    devs = (mean - ode)[:, 1:].reshape(len(xs), -1)
    ses = se[:, 1:].reshape(len(xs), -1)
    bias = _bias(bias, mean[0])
    scale, labels = np.abs(ode[-1, 1:]).ravel(), _labels(t, names)

    def judge(label: str, idx: np.ndarray) -> Check:
        common = dict(bias=bias[idx], name=f"{policy['name']}: {label}", scale=scale[idx],
                      labels=labels[idx], dof=policy["dof"])
        if policy["over_dims"] == "limit":
            return limit(ctx, xs, devs[:, idx], ses[:, idx], 0.0, terms=tuple(policy["terms"]),
                         **common)
        return extrapolate(ctx, xs if policy["x"] is None else 1 / xs, devs[:, idx],
                           ses[:, idx], 0.0, corrections=tuple(policy["corrections"]),
                           grow=None if grow_rows is None else functools.partial(grow_rows,
                                                                                 idx=idx),
                           max_dim=policy["max_dim"], **common)
    return _per_family(judge, _groups(names, policy["families"], len(t) - 1))


def _same_times(t, dims, out) -> None:
    for d, o in zip(dims, out):
        if o[0].shape != t.shape or not np.allclose(o[0], t, rtol=1e-9, atol=1e-12):
            raise ValueError(f"sgd: the record times at d = {d} differ from the first "
                             "dimension's; record every (time step)/lr steps so that they "
                             "coincide")


def _same_records(t, dims, out) -> None:
    for d, o in zip(dims, out):
        if o[0].shape != t.shape:
            raise ValueError(f"sgd: {o[0].size} records at d = {d}, {t.size} at the first "
                             "dimension; give each dimension as many records")


def _each(ctx, dims, times, names, mean, se, ode, bias, families, name, dof):
    """Every dimension's seed means against the flow at that dimension's record times
    (``times``, one array per dimension), one family per state over (dim, record)."""
    shape = mean[:, 1:].shape
    try:
        allow = np.broadcast_to(np.asarray(bias, float), shape).ravel()
    except ValueError:
        raise ValueError(f"bias: shape {np.shape(bias)}; allowed: a number, one per state, "
                         f"[record − 1, state] or [dim, record − 1, state] {shape}") from None
    labels = np.array([f"{n} @ d={d:g}, t={tk:.6g}" for d, t in zip(dims, times) for tk in t[1:]
                       for n in names], dtype=object)
    est, ses, flow = mean[:, 1:].ravel(), se[:, 1:].ravel(), ode[:, 1:].ravel()

    def judge(label: str, idx: np.ndarray) -> Check:
        return estimate_vs_theory(ctx, est[idx], ses[idx], flow[idx], bias=allow[idx],
                                  name=f"{name}: {label}", scale=np.abs(flow[idx]),
                                  labels=labels[idx], dof=dof)
    return _per_family(judge, _groups(names, families, len(times[0]) - 1, blocks=len(dims)))
