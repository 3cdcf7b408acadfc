"""The claim registry: each paper statement is one small function returning an Outcome.

A claim function takes a :class:`Context` and keyword overrides (a model, a paper formula)
with the paper's defaults, so tests can feed it a deliberately wrong model and see ``refuted``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Callable, Iterable
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if TYPE_CHECKING:
    from .context import Context

__all__ = ["VERDICTS", "Outcome", "Claim", "claim", "REGISTRY", "claims_for", "get_claim",
           "load_all", "source_of"]

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
    """One registered paper statement: ``check(ctx, **overrides) -> Outcome``."""

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
    """Declared formula mutations for ``calibrate``: name → a function returning the
    overrides (a deliberately wrong formula or model) the check must refute."""
    module: str = ""
    """The module that registers the claim (its code is what the result store hashes)."""
    provenance: dict | None = None
    """Set on a variant (``Claim.variant``): the paper's claim, what was substituted and
    where the substitutes come from. None for the paper's own claim."""
    extra_modules: tuple[str, ...] = ()
    """Modules beyond ``module`` whose code the claim runs (a variant's substitutes)."""

    def __call__(self, ctx: Context, **overrides: Any) -> Outcome:
        return self.check(ctx, **overrides)

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


def claim(id: str, label: str, statement: str, statistical: bool = True,
          reading: str = "", alpha: float | None = None,
          mutations: dict[str, Callable[[], dict]] | None = None
          ) -> Callable[[Callable[..., Outcome]], Callable[..., Outcome]]:
    """Register a claim check under ``id`` ('<paper>:<claim>'); ``alpha`` its own
    false-refutation probability (default ``verification.context.DEFAULT_ALPHA``)."""
    if alpha is not None and not 0 < alpha < 1:
        raise ValueError(f"claim {id}: alpha={alpha!r}; allowed: 0 < alpha < 1")
    paper = id.split(":", 1)[0]

    def wrap(fn):
        if id in REGISTRY:
            raise ValueError(f"claim {id} registered twice")
        REGISTRY[id] = Claim(id, paper, label, statement, fn, statistical, reading, alpha,
                            mutations, _module_of(fn))
        fn.claim = REGISTRY[id]
        return fn

    return wrap


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


_PLUGINS = {"loaded": False}


def load_all() -> dict[str, Claim]:
    """Import every claims module (each registers its claims), then the claims of installed
    plugins (the ``attention_verification.claims`` entry points). A plugin that fails to load
    is reported (a warning naming it) and skipped: it cannot take the built-in claims down."""
    from . import claims  # noqa: F401
    if not _PLUGINS["loaded"]:
        _PLUGINS["loaded"] = True
        from .userfiles import CLAIM_GROUP, plugin_claim_modules
        try:
            plugin_claim_modules()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is the plugin's problem
            import warnings
            warnings.warn(f"a plugin of the entry-point group {CLAIM_GROUP!r} failed to load: "
                          f"{type(exc).__name__}: {exc}", stacklevel=2)
    return REGISTRY


def source_of(claim: Claim) -> str:
    """Where a claim comes from: 'built-in', 'plugin <dist>' or the file that registers it."""
    import sys
    if claim.module.startswith("verification.claims"):
        return "built-in"
    mod = sys.modules.get(claim.module)
    file = getattr(mod, "__file__", None)
    if file and claim.module.startswith("attnv_user_"):
        return file
    from .userfiles import CLAIM_GROUP, _entry_points
    for name, ep in _entry_points(CLAIM_GROUP).items():
        if ep.module == claim.module.split(":")[0]:
            dist = getattr(ep, "dist", None)
            return f"plugin {getattr(dist, 'name', None) or name}"
    return file or claim.module


def claims_for(paper: str | None = None, ids: Iterable[str] | None = None) -> list[Claim]:
    """The registered claims of ``paper`` (all when None), restricted to ``ids`` (an id, or
    its stem before ``[`` to select every variant); ValueError on an unknown paper or id."""
    ids = list(ids) if ids is not None else None
    load_all()
    papers = sorted({c.paper for c in REGISTRY.values()})
    if paper is not None and paper not in papers:
        raise ValueError(f"--paper {paper!r} is unknown; known papers: {papers}")
    out = [c for c in REGISTRY.values() if paper is None or c.paper == paper]
    if ids:
        known = {c.id for c in out}
        for i in ids:
            matches = [c for c in out if c.id == i or c.id.startswith(i + "[")]
            if not matches:
                raise ValueError(f"--claim {i!r} is unknown; known claims: {sorted(known)}")
        out = [c for c in out if any(c.id == i or c.id.startswith(i + "[") for i in ids)]
    return out


def get_claim(id: str) -> Claim:
    """The claim registered under ``id``; KeyError when there is none."""
    load_all()
    if id not in REGISTRY:
        raise KeyError(f"unknown claim {id!r}")
    return REGISTRY[id]
