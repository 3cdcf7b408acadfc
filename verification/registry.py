"""The claim registry: each paper statement is one small function returning an Outcome.

A claim function takes a :class:`Context` and keyword overrides (a model, a paper formula)
with the paper's defaults, so tests can feed it a deliberately wrong model and see ``refuted``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

if TYPE_CHECKING:
    from .context import Context

__all__ = ["VERDICTS", "Outcome", "Claim", "claim", "REGISTRY", "claims_for", "get_claim",
           "load_all"]

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

    def __call__(self, ctx: Context, **overrides: Any) -> Outcome:
        return self.check(ctx, **overrides)


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


def _module_of(fn: Callable) -> str:
    """The module defining ``fn`` (through ``functools.partial`` and other wrappers)."""
    while not hasattr(fn, "__module__") or fn.__module__ == "functools":
        fn = getattr(fn, "func", None) or getattr(fn, "__wrapped__", None)
        if fn is None:
            return ""
    return fn.__module__


def load_all() -> dict[str, Claim]:
    """Import every claims module (each registers its claims)."""
    from . import claims  # noqa: F401
    return REGISTRY


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
