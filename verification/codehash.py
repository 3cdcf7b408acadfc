"""Content hash of the code a claim runs: its own module and every module of the suite it
imports, directly or not (found by reading the import statements, lazy ones included).

A result computed by a claim is reused only while this hash is unchanged, so an edit anywhere
in the claim's import closure (the claim, the claim API and check library, a model, the
numerics) recomputes it, and an edit elsewhere (another paper's claims) does not. What is
followed is said by the suite's layering (``verification.layers``): the modules of the hashed
layers, at or below the claims', are what a claim computes with; the others (orchestration:
which claims there are, where and when tasks run, where results are kept, what is done with them
afterwards; and the code cache's storage) are neither counted nor followed. They do not change
what a task computes (the tests check that the numbers are the same whatever the engine), and
counting them would throw away every stored result at each edit of the scheduler. A change of
the store's own format is keyed by ``verification.store.STORE_FORMAT``."""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

from .layers import hashed, simulated

__all__ = ["code_hash", "import_closure", "import_statements", "orchestration", "SUITE_PACKAGES",
           "split_hash", "files_hash"]

ROOT = Path(__file__).resolve().parents[1]
SUITE_PACKAGES = ("theory", "numerics", "verification")
REGISTRIES = {"numerics.kinds": "numerics.models"}
"""A registry module → the package whose modules register into it: code that asks the registry
(``numerics.compiled``, ``reduced``, ``simulate`` ask ``numerics.kinds``) runs what they
registered, so their files count with it though the registry does not import them."""
COLLECTING_PACKAGES = ("verification.claims",)
"""Packages whose ``__init__`` only imports modules to register them: its file counts, the
modules it collects do not (a claim does not use the other papers' claims)."""


def orchestration(module: str) -> bool:
    """Whether the suite module ``module`` is left out of the hash: one of a layer above the
    claims' or not hashed (``verification.layers``), which schedules, stores, finds or
    post-processes results without computing them. Neither counted nor followed, unless hashed
    itself (the module whose closure is asked for)."""
    return not hashed(module)


def _module_file(name: str) -> Path | None:
    """The source file of the suite module ``name`` (None for a module outside the suite)."""
    if name.split(".")[0] not in SUITE_PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for cand in (base / "__init__.py", base.with_suffix(".py")):
        if cand.is_file():
            return cand
    return None


def _outside_file(name: str) -> Path | None:
    """The source file of a module outside the suite (a user's claims file, a plugin)."""
    import importlib.util
    import sys
    mod = sys.modules.get(name)
    origin = getattr(mod, "__file__", None)
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
    return Path(origin) if origin and origin.endswith(".py") and Path(origin).is_file() else None


def _module_name(path: Path) -> str:
    if not path.is_relative_to(ROOT):
        return path.stem
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_statements(path: Path, name: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every import statement of ``path`` (the module ``name``), at any depth, lazy ones
    included: (the module imported or imported from, relative imports resolved; the names a
    ``from`` statement takes, () for ``import``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((mod, tuple(a.name for a in node.names)))
    return out


@functools.cache
def _imports(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(suite modules named by the import statements of ``path``, their parent packages).

    A parent package runs its ``__init__`` on import, so its own file counts, but what that
    ``__init__`` imports (say, the other papers' claims) is not code the importer uses. Cached
    per process like ``code_hash`` (parsing is most of a run's start-up otherwise: the claims'
    closures share most of their files)."""
    found: set[str] = set()
    for mod, names in import_statements(path, _module_name(path)):
        if not names:
            found.add(mod)
            continue
        subs = {f"{mod}.{n}" for n in names} if mod else set()
        subs = {m for m in subs if _module_file(m) is not None}
        found |= subs                        # `from pkg import submodule`
        if len(subs) < len(names):           # `from pkg import name`: pkg's __init__ is used
            found.add(mod)
    found |= {REGISTRIES[m] for m in found if m in REGISTRIES}
    parents = {".".join(m.split(".")[:i]) for m in found for i in range(1, m.count(".") + 1)}
    suite = frozenset(m for m in found if _module_file(m) is not None)
    return suite, frozenset(m for m in parents - suite if _module_file(m) is not None)


def import_closure(module: str) -> list[Path]:
    """The source files of ``module`` and of every suite module it imports, transitively, with
    the ``__init__`` of each package they are in (it runs on import), orchestration left out
    (``orchestration``: ``verification``'s own ``__init__``, its public names, is one). A module
    outside the suite (a user's claims file) counts with its own file and the suite modules it
    imports (its imports of other files of the user's are not followed)."""
    start = _module_file(module)
    if start is None:
        outside = _outside_file(module)
        if outside is None:
            raise ValueError(f"module={module!r}: no Python source file found for it")
        return sorted(_outside_closure(outside, set()))
    seen: dict[str, Path] = {}
    parents: set[str] = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    todo = [module]
    while todo:
        m = todo.pop()
        if m in seen or (m != module and orchestration(m)):
            continue
        seen[m] = _module_file(m)
        if m in COLLECTING_PACKAGES and m != module:
            continue
        explicit, implicit = _imports(seen[m])
        todo.extend(explicit - seen.keys())
        parents |= implicit
    files = set(seen.values()) | {_module_file(p) for p in parents
                                  if _module_file(p) and not orchestration(p)}
    return sorted(files)


def _outside_closure(path: Path, seen: set[Path]) -> set[Path]:
    """The files of a module outside the suite (a user's file): its own, the suite modules it
    imports with their closures, and the user's other files it imports from its own folder or
    below (a claims file and the simulations file beside it), followed the same way; nothing
    of the standard library or installed packages."""
    seen.add(path)
    explicit, implicit = _imports(path)
    files = {path}
    for m in explicit:
        files.update(import_closure(m))
    files.update(_module_file(p) for p in implicit if not orchestration(p))
    for mod, names in import_statements(path, path.stem):
        for name in [mod, *(f"{mod}.{n}" for n in names)]:
            if not name or name.split(".")[0] in SUITE_PACKAGES:
                continue
            other = _outside_file(name)
            if other is not None and other not in seen and _users_own(other, path.parent):
                files |= _outside_closure(other, seen)
    return files


def _users_own(path: Path, folder: Path) -> bool:
    """Whether ``path`` is a file of the user's beside or below ``folder`` (not an installed
    package of a virtual environment kept there)."""
    if not path.is_relative_to(folder):
        return False
    parts = path.relative_to(folder).parts[:-1]
    return not any(p in ("site-packages", "dist-packages") or p.startswith(".") for p in parts)


@functools.cache
def code_hash(module: str) -> str:
    """SHA-256 over the paths and contents of ``import_closure(module)`` (cached per process:
    the code does not change under a running process)."""
    return files_hash(import_closure(module))


def files_hash(paths) -> str:
    """SHA-256 over the paths (relative to the suite's root) and contents of ``paths``, sorted."""
    h = hashlib.sha256()
    for path in sorted(paths):
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        h.update(str(name).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def split_hash(modules: tuple[str, ...]) -> dict[str, str]:
    """The code the ``modules`` run (their import closures together), split in two: what
    simulates (theory, numerics, ``verification.simulations``: ``simulation``) and what judges
    (the claim API, the check library, the claims, a user's file: ``judge``), each hashed on
    its own. A calibration record is current while both are unchanged and says which moved
    when it is not."""
    files = set()
    for m in modules:
        files.update(import_closure(m))
    sim = {f for f in files if f.is_relative_to(ROOT) and simulated(_module_name(f))}
    return {"simulation": files_hash(sim), "judge": files_hash(files - sim)}
