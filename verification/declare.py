"""How a claim is declared: each paper statement is one small function returning an Outcome,
registered by the ``claim`` decorator in ``REGISTRY``.

A claim function takes a :class:`Context` and keyword overrides (a model, a paper formula)
with the paper's defaults, so tests can feed it a deliberately wrong model and see ``refuted``.

This is the bottom of the claim API (``verification.layers``): it imports nothing of the suite
(``Context`` only for its type hints), so a claims module depends on it without depending on
what finds, runs or reports claims (``verification.catalogue`` loads the claims modules and
plugins; ``verification.runner`` runs them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .domain import PROFILES, Domain, as_domain, setting_key
from .paper_boundaries import PaperBoundary, validate_boundaries

if TYPE_CHECKING:
    from .context import Context

__all__ = ["VERDICTS", "Outcome", "Claim", "claim", "missed", "REGISTRY", "combine_settings",
           "PaperBoundary"]

VERDICTS = ("confirmed", "refuted", "inconclusive", "error")


@dataclass
class Outcome:
    """verdict, a one-line summary, claim-specific evidence (JSON-able); ``tracked`` values
    {name: (value, tolerance)} are what the regression guard compares; ``arrays`` go to the
    NPZ file; ``figures`` are callables drawing on a matplotlib Figure."""

    verdict: str
    summary: str
    evidence: dict = field(default_factory=dict)
    tracked: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r}; allowed: {VERDICTS}")


@dataclass(frozen=True)
class Claim:
    """One registered paper statement over its parameter domain: ``check(ctx, **setting,
    **overrides) -> Outcome`` judges one setting; calling the claim judges the settings its
    context's profile names (``points``) and combines them (``combine_settings``)."""

    id: str
    paper: str
    label: str
    statement: str
    check: Callable
    statistical: bool = True
    reading: str = ""
    alpha: float | None = None
    """The claim's false-refutation probability per family (None: ``DEFAULT_ALPHA``)."""
    mutations: dict[str, Callable[[], dict]] | None = None
    """Declared mutations for ``calibrate``: name → a function returning the overrides (a
    deliberately wrong formula or model). Every mutation the claim was tried against is
    declared, caught or not: one its check is known not to see is wrapped in :func:`missed`
    with the reason."""
    module: str = ""
    """The module that registers the claim (its code is what the result store hashes)."""
    provenance: dict | None = None
    """Set on a variant (``Claim.variant``): the paper's claim, what was substituted and
    where the substitutes come from. None for the paper's own claim."""
    extra_modules: tuple[str, ...] = ()
    """Modules beyond ``module`` whose code the claim runs (a variant's substitutes)."""
    domain: Domain = field(default_factory=lambda: Domain({}))
    """What the statement quantifies over (``verification.domain``); no coordinate: one
    setting, the empty one."""
    points: dict[str, tuple[dict, ...]] | None = None
    """The settings each profile judges ({"quick": [...], "full": [...]}); None: the
    reference alone."""
    transitions: tuple[dict, ...] = ()
    """Settings next to a transition the paper states (validated): calibration over the domain
    (``verification.domain_calibration``) judges them first."""
    boundaries: tuple[PaperBoundary, ...] = ()
    """Boundaries the paper states over the domain (validated): a map draws them on its
    panels."""
    replicate: bool | None = None
    """Whether a refutation is judged again at independent seeds before it is reported
    (``verification.replication``); None: when the claim is statistical. An exact check whose
    verdict depends on its seed (a random initialisation) sets True."""

    def settings(self, profile: str) -> tuple[dict, ...]:
        """The settings ``profile`` judges (validated when the claim was declared)."""
        if self.points is None:
            return (self.domain.reference,)
        return self.points[profile]

    def __call__(self, ctx: Context, **overrides: Any) -> Outcome:
        """The verdict over the settings of ``ctx.profile``: each judged at α/n (Bonferroni
        over the n settings, so the combined verdict keeps the claim's α), one ledger."""
        from .context import context_with
        if not self.domain.coordinates:
            return self.check(ctx, **overrides)
        settings = self.settings(ctx.profile)
        share = context_with(ctx, alpha=ctx.alpha / len(settings))
        outcomes = []
        for i, setting in enumerate(settings):
            part = context_with(share, progress=_part(ctx, i, len(settings)))
            try:
                outcomes.append(self.at(part, setting, **overrides))
            except Exception as exc:  # noqa: BLE001 - that setting's error; the others stand
                if i == 0 and len(settings) == 1:
                    raise
                import traceback
                outcomes.append(Outcome("error", f"{type(exc).__name__}: {exc}",
                                        {"error": str(exc),
                                         "traceback": traceback.format_exc(limit=8)}))
        return combine_settings(self.domain, settings, outcomes)

    def at(self, ctx: Context, setting: dict, **overrides: Any) -> Outcome:
        """The Outcome at one ``setting`` of the domain (validated: a ValueError names the
        coordinate and its allowed range), judged at ``ctx.alpha``."""
        setting = self.domain.validate(setting)
        clash = sorted(set(overrides) & set(setting))
        if clash:
            raise ValueError(f"{self.id}: {clash} are coordinates of the claim's domain; give "
                             "them in the setting, not as overrides")
        if setting:
            from .context import context_with
            ctx = context_with(ctx, setting=tuple(sorted(setting.items())))
        return self.check(ctx, **setting, **overrides)

    def variant(self, name: str | None = None, **overrides: Any) -> Claim:
        """This claim run on substituted inputs (a model, a formula: the keyword overrides the
        check takes), as a claim of its own: id ``'<id>@<name>'`` and a ``provenance`` record
        in its report entry, so a variant's verdict is never mistaken for the paper's.

        name: defaults to the substitutes' own names (a model's ``name``, a function's
        ``__name__``). The variant is not registered; pass it to ``run`` like any claim."""
        import functools
        if not overrides:
            raise ValueError(f"{self.id}.variant(): give the substituted inputs as keyword "
                             "arguments (e.g. model=MY_MODEL)")
        import inspect
        coordinates = sorted(set(overrides) & set(self.domain.names))
        if coordinates:
            raise ValueError(f"{self.id}.variant(): {coordinates} are coordinates of the claim's "
                             "domain, not inputs: judge a setting with Claim.at(ctx, setting) "
                             "or map the domain")
        params = inspect.signature(self.check).parameters
        unknown = sorted(k for k in overrides if k not in params)
        if unknown:
            allowed = sorted(k for k in params if k != "ctx")
            raise ValueError(f"{self.id}.variant(): unknown input(s) {unknown}; allowed: {allowed}")
        name = name or "+".join(_describe(v) for v in overrides.values())
        if not name or any(c in name for c in " @/[]"):
            raise ValueError(f"variant name={name!r}; allowed: a word without spaces, @, / or [ ]")
        modules = tuple(sorted({_module_of(v) for v in overrides.values()} - {"", self.module}))
        base = self.provenance["claim"] if self.provenance else self.id
        prov = {"claim": base, "variant": name,
                "substituted": {k: _describe(v) for k, v in overrides.items()},
                "sources": [_source_of(m) for m in modules]}
        return dataclasses.replace(self, id=f"{self.id}@{name}",
                                   check=functools.partial(self.check, **overrides),
                                   provenance=prov, extra_modules=self.extra_modules + modules,
                                   mutations=None)


REGISTRY: dict[str, Claim] = {}


@dataclass(frozen=True)
class Missed:
    """A declared mutation the claim's check is known not to catch (see :func:`missed`)."""

    mutation: Callable[[], dict]
    why: str

    def __call__(self) -> dict:
        return self.mutation()


def missed(mutation: Callable[[], dict], why: str) -> Missed:
    """Declare ``mutation`` as one the claim's check does not catch, and ``why`` (what the
    check cannot see). Calibration runs it like every other and reports it as a blind spot;
    the claim's tests check that it is still missed, so a check that learns to see it says so."""
    if not (isinstance(why, str) and why.strip()):
        raise ValueError("missed(..., why=...): say what the check cannot see")
    return Missed(mutation, why)


def claim(id: str, label: str, statement: str, statistical: bool = True,
          reading: str = "", alpha: float | None = None,
          mutations: dict[str, Callable[[], dict]] | None = None,
          domain: Domain | dict | None = None, reference: dict | None = None,
          where: Any = (), points: dict | list | None = None,
          transitions: Sequence[dict] = (), boundaries: Sequence[PaperBoundary] = (),
          replicate: bool | None = None) -> Callable[[Callable[..., Outcome]], Callable[..., Outcome]]:
    """Register a claim check under ``id`` ('<paper>:<claim>'); ``alpha`` its own
    false-refutation probability (default ``verification.context.DEFAULT_ALPHA``).

    domain/where/reference: what the statement quantifies over (``verification.domain``); the
    check then takes each coordinate as a keyword argument. points: the settings the profiles
    judge, {"quick": [...], "full": [...]} or one list for both (default: the reference).
    transitions: settings next to a transition the paper states, which calibration over the
    domain judges first. boundaries: the boundaries the paper states over the domain
    (``PaperBoundary``: the zero set of an expression in the coordinates), drawn on a map.
    replicate: judge a refutation again at independent seeds before reporting it (default:
    when ``statistical``; an exact check whose verdict depends on its seed, e.g. through a
    random initialisation, says True)."""
    if alpha is not None and not 0 < alpha < 1:
        raise ValueError(f"claim {id}: alpha={alpha!r}; allowed: 0 < alpha < 1")
    paper = id.split(":", 1)[0]
    try:
        dom = as_domain(domain, reference, where)
        named = _points(dom, points)
        near = tuple(dom.validate(dict(t), what="transition setting") for t in transitions)
        stated = validate_boundaries(dom, boundaries)
    except ValueError as exc:
        raise ValueError(f"claim {id}: {exc}") from None

    def wrap(fn):
        if id in REGISTRY:
            raise ValueError(f"claim {id} registered twice")
        _takes_coordinates(id, fn, dom)
        REGISTRY[id] = Claim(id, paper, label, statement, fn, statistical, reading, alpha,
                            mutations, _module_of(fn), domain=dom, points=named,
                            transitions=near, boundaries=stated, replicate=replicate)
        fn.claim = REGISTRY[id]
        return fn

    return wrap


def _points(dom: Domain, points: dict | list | None) -> dict[str, tuple[dict, ...]] | None:
    if points is None:
        return None
    if isinstance(points, (list, tuple)):
        points = {p: points for p in PROFILES}
    if set(points) != set(PROFILES):
        raise ValueError(f"points has profiles {sorted(points)}; allowed: exactly {list(PROFILES)}")
    out = {}
    for profile, settings in points.items():
        if not settings:
            raise ValueError(f"points[{profile!r}] is empty; allowed: one setting or more")
        out[profile] = tuple(dom.validate(s, what=f"points[{profile!r}]") for s in settings)
    return out


def _takes_coordinates(id: str, fn: Callable, dom: Domain) -> None:
    import inspect
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    missing = [k for k in dom.names if k not in params]
    if missing:
        raise ValueError(f"claim {id}: the check does not take the domain's coordinate(s) "
                         f"{missing} as keyword arguments")


def _part(ctx: Context, i: int, n: int):
    if ctx.progress is None:
        return None
    return lambda f: ctx.progress((i + min(max(float(f), 0.0), 1.0)) / n)


_PRECEDENCE = ("refuted", "error", "inconclusive", "confirmed")


def combine_settings(domain: Domain, settings: tuple[dict, ...], outcomes: list[Outcome]) -> Outcome:
    """One Outcome for a claim judged at several settings: refuted where any setting is (the
    one closest to the reference is quoted), else error, else inconclusive, else confirmed;
    the evidence lists every setting's verdict. One setting: its Outcome, naming the setting."""
    n = len(outcomes)
    verdict = next(v for v in _PRECEDENCE if any(o.verdict == v for o in outcomes))
    hits = [i for i, o in enumerate(outcomes) if o.verdict == verdict]
    i = min(hits, key=lambda j: domain.distance(settings[j], domain.reference))
    at = setting_key(settings[i])
    holds = sum(o.verdict == "confirmed" for o in outcomes)
    rows = [{"setting": s, "verdict": o.verdict, "summary": o.summary}
            for s, o in zip(settings, outcomes)]
    if n == 1:
        o = outcomes[0]
        evidence = {**o.evidence}
        evidence["domain" if "domain" not in evidence else "judged_setting"] = {
            "setting": settings[0], "settings": rows}
        return Outcome(o.verdict, f"at {at}: {o.summary}", evidence, o.tracked, o.arrays,
                       o.figures)
    head = {"confirmed": f"confirmed at all {n} settings of the domain",
            "refuted": f"refuted at {len(hits)} of {n} settings of the domain (holds at "
                       f"{100 * holds / n:.0f} %)",
            "inconclusive": f"undecided at {len(hits)} of {n} settings of the domain, "
                            f"confirmed at {holds}",
            "error": f"no verdict at {len(hits)} of {n} settings of the domain"}[verdict]
    where = "closest to the reference" if len(hits) > 1 else "at"
    summary = f"{head}; {where} {at}: {outcomes[i].summary}"
    evidence = {"domain": {"settings": rows, "holds_at": holds / n}, "settings": [
        {"setting": s, "verdict": o.verdict, "evidence": o.evidence}
        for s, o in zip(settings, outcomes)]}
    # a list every setting records (its points, its rows) also whole, at the top
    for key in sorted(set.intersection(*(set(o.evidence) for o in outcomes)) - set(evidence)):
        if all(isinstance(o.evidence[key], list) for o in outcomes):
            evidence[key] = [x for o in outcomes for x in o.evidence[key]]
    tracked = {f"s{j}:{k}": v for j, o in enumerate(outcomes) for k, v in o.tracked.items()}
    arrays = {f"s{j}/{k}": v for j, o in enumerate(outcomes) for k, v in o.arrays.items()}
    return Outcome(verdict, summary, evidence, tracked, arrays, outcomes[i].figures)


def _module_of(obj: Any) -> str:
    """The module defining ``obj`` (a function, through ``functools.partial`` and other
    wrappers; an instance: the module that built it is unknown, so its class's)."""
    import sys
    while obj is not None and getattr(obj, "__module__", "functools") == "functools":
        obj = getattr(obj, "func", None) or getattr(obj, "__wrapped__", None)
    if obj is None:
        return ""
    if callable(obj) and hasattr(obj, "__module__"):
        return obj.__module__
    # an instance (a Model): the module whose globals hold it, a user's file or a paper's model
    holders = [name for name, mod in list(sys.modules.items())
               if mod is not None and any(v is obj for v in getattr(mod, "__dict__", {}).values())]
    def rank(name: str) -> int:      # where the object is defined, as far as can be told:
        if name.startswith("theory.models"):            # a paper's model file,
            return 0
        if name.startswith("attnv_user_"):               # a file loaded by path,
            return 1
        file = getattr(sys.modules[name], "__file__", None)
        if name.split(".")[0] not in ENGINE and name != "__main__" and file and Path(file).is_file():
            return 2                                       # another module of the user's,
        return 3 if name == "__main__" else 4              # the script that imported it
    return min(holders, key=rank) if holders else type(obj).__module__


ENGINE = ("theory", "numerics", "verification")


def _describe(value: Any) -> str:
    name = getattr(value, "name", None) or getattr(value, "__name__", None)
    if isinstance(name, str) and name:
        return name
    func = getattr(value, "func", None)
    return getattr(func, "__name__", None) or type(value).__name__


def _source_of(module: str) -> str:
    import sys
    return getattr(sys.modules.get(module), "__file__", None) or module
