"""The suite's layering (``verification.layers``): every import statement of theory/, numerics/
and verification/ (at any depth: lazy imports in functions and ``TYPE_CHECKING`` blocks count,
relative ones resolved) goes to the importer's own layer or one below, and no modules import
each other in a circle. theory imports neither numerics nor verification; numerics does not
import verification; within verification the declared layers hold (the claim API below the
claims, the claims below the catalogue, the catalogue below execution, reports, runs and the
command line)."""

from __future__ import annotations

from pathlib import Path

from verification.codehash import import_statements
from verification.layers import LAYERS, layer_of

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("theory", "numerics", "verification")

KNOWN_UPWARD: set[tuple[str, str]] = set()
"""Upward imports known and being fixed, as (importer, imported) with a comment saying why and
by what; ``test_the_known_upward_imports_are_still_there`` fails once one is gone (remove it
then). Empty: the last one (``theory.models.sagitova2026`` importing
``numerics.multihead.state``) is fixed."""


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The suite modules that the import statements of ``path`` name (at any depth)."""
    found: set[str] = set()
    for mod, names in import_statements(path, name):
        found |= {f"{mod}.{n}" if f"{mod}.{n}" in MODULES else mod for n in names} or {mod}
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []
    listed = {m for layer in LAYERS for m in layer.modules}
    assert sorted(listed - set(MODULES)) == []           # no layer lists a module that is gone


def _upward() -> set[tuple[str, str]]:
    return {(a, b) for a, targets in GRAPH.items() for b in targets if layer_of(b) > layer_of(a)}


def test_no_upward_import():
    bad = _upward() - KNOWN_UPWARD
    assert sorted(f"{a} ({LAYERS[layer_of(a)].name.split(':')[0]}) imports {b} "
                  f"({LAYERS[layer_of(b)].name.split(':')[0]})" for a, b in bad) == []


def test_the_known_upward_imports_are_still_there():
    """An entry of ``KNOWN_UPWARD`` that is fixed must be removed from it."""
    assert sorted(KNOWN_UPWARD - _upward()) == []


def test_packages_import_downward_only():
    order = {p: i for i, p in enumerate(PACKAGES)}
    bad = {(a, b) for a, targets in GRAPH.items() for b in targets
           if order[b.split(".")[0]] > order[a.split(".")[0]]} - KNOWN_UPWARD
    assert sorted(bad) == []


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (a strongly connected component
    of more than one module: each reaches every other through imports)."""
    reach = {v: _reach(graph, v) for v in graph}
    groups = {frozenset({v} | {w for w in reach[v] if v in reach[w]}) for v in graph if v in reach[v]}
    return sorted(sorted(g) for g in groups)


def test_no_import_circle():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# -- the code hash follows the layering -------------------------------------------------------
def _ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def test_a_claims_code_hash_counts_what_it_computes_with_and_no_orchestration():
    """For every built-in claim: the files hashed are its module's, those of every module it
    imports (directly or not) that the layering marks hashed, and their packages' ``__init__``
    (the other papers' claims that ``verification.claims`` collects excluded); no module above
    the claims' layer, nor the code cache's storage; the check library and claim API always."""
    from verification.catalogue import load_all
    from verification.codehash import REGISTRIES, import_closure
    from verification.layers import hashed

    modules = sorted({c.module for c in load_all().values() if c.module.startswith("verification.claims")})
    assert len(modules) > 5
    for module in modules:
        files = set(import_closure(module))
        expected, todo = set(), [module]
        while todo:
            m = todo.pop()
            if m in expected or not hashed(m):
                continue
            expected.add(m)
            if m != "verification.claims":            # collects the papers: none of them is used
                todo.extend(GRAPH[m])
            if m in REGISTRIES:                       # what registers into it runs through it
                todo.append(REGISTRIES[m])
        expected |= {p for m in expected for p in _ancestors(m) if hashed(p)}
        assert files == {MODULES[m] for m in expected}, module
        assert MODULES[module] in files
        assert {MODULES[m] for m in ("verification.checks", "verification.declare",
                                     "verification.context", "verification.stats")} <= files
        assert any(f.is_relative_to(ROOT / "theory") for f in files)
        assert any(f.is_relative_to(ROOT / "numerics") for f in files)
        names = {m for m, f in MODULES.items() if f in files}
        assert not {m for m in names if layer_of(m) > layer_of("verification.claims")}, module
        assert not names & {"numerics.codegen.cache", "numerics.codegen.signing",
                            "verification.tasks", "verification.registry"}, module


def test_the_former_registry_only_re_exports_the_claim_api():
    """``from verification.registry import Outcome, claim`` (a user's older claims file) still
    works; the module is the claim API's, below the claims, and imports nothing else."""
    from verification import declare, registry
    assert GRAPH["verification.registry"] == {"verification.declare"}
    for name in registry.__all__:
        assert getattr(registry, name) is getattr(declare, name)
    assert layer_of("verification.registry") == layer_of("verification.declare")
