"""How a claim is declared: each paper statement is one small function returning an Outcome,
registered by the ``claim`` decorator in ``REGISTRY``.

A claim function takes a :class:`Context` and keyword overrides (a model, a paper formula)
with the paper's defaults, so tests can feed it a deliberately wrong model and see ``refuted``.

This is the bottom of the claim API (``verification.layers``): it imports nothing of the suite
(``Context`` only for its type hints), so a claims module depends on it without depending on
what finds, runs or reports claims (``verification.catalogue`` loads the claims modules and
plugins; ``verification.runner`` runs them)."""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import Context

__all__ = ["VERDICTS", "Outcome", "Claim", "claim", "REGISTRY"]

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
