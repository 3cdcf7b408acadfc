"""The catalogue of claims: the built-in claims modules and the installed plugins' (the
``attention_verification.claims`` entry points) loaded into ``verification.declare.REGISTRY``,
and the claims of a paper, an id or a file looked up there.

It sits above the claims (``verification.layers``): claims modules import the claim API
(``verification.declare``), never this."""

from __future__ import annotations

from collections.abc import Iterable
import importlib.metadata
import sys
from types import ModuleType

from .declare import REGISTRY, Claim

__all__ = ["CLAIM_GROUP", "load_all", "claims_for", "get_claim", "source_of", "claims_of",
           "plugin_claim_modules"]

CLAIM_GROUP = "attention_verification.claims"
"""The entry-point group under which a plugin names its claims modules."""

_PLUGINS = {"loaded": False}
_CALLED: set[str] = set()


def load_all() -> dict[str, Claim]:
    """Import every claims module (each registers its claims), then the claims of installed
    plugins (the ``attention_verification.claims`` entry points). A plugin that fails to load
    is reported (a warning naming it) and skipped: it cannot take the built-in claims down."""
    from . import claims  # noqa: F401
    if not _PLUGINS["loaded"]:
        _PLUGINS["loaded"] = True
        try:
            plugin_claim_modules()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is the plugin's problem
            import warnings
            warnings.warn(f"a plugin of the entry-point group {CLAIM_GROUP!r} failed to load: "
                          f"{type(exc).__name__}: {exc}", stacklevel=2)
    return REGISTRY


def _entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=group)}


def claims_of(module_name: str) -> list[str]:
    """The ids of the claims that the module ``module_name`` (or its submodules) registered."""
    return [c.id for c in REGISTRY.values() if c.module == module_name
            or c.module.startswith(module_name + ".")]


def plugin_claim_modules() -> dict[str, list[str]]:
    """Load every ``attention_verification.claims`` entry point; {entry point name: ids of the
    claims its module registered}. A ``module:attr`` entry point's attribute is called (without
    arguments) when callable, after its module is imported."""
    load_all()
    out = {}
    for name, ep in sorted(_entry_points(CLAIM_GROUP).items()):
        loaded = ep.load()
        if not isinstance(loaded, ModuleType) and callable(loaded) and ep.value not in _CALLED:
            _CALLED.add(ep.value)          # once: a second call would register the claims twice
            loaded()
        out[name] = claims_of(ep.module)
    return out


def source_of(claim: Claim) -> str:
    """Where a claim comes from: 'built-in', 'plugin <dist>' or the file that registers it."""
    if claim.module.startswith("verification.claims"):
        return "built-in"
    mod = sys.modules.get(claim.module)
    file = getattr(mod, "__file__", None)
    if file and claim.module.startswith("attnv_user_"):
        return file
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
