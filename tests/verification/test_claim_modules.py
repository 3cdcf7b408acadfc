"""Every claim judges through the check library: no claim module builds an ``Outcome`` by hand,
writes a verdict itself, compares a number with a literal threshold, keeps a process-level
cache (simulations go through ``ctx.map``) or imports another module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLAIMS = Path(__file__).resolve().parents[2] / "verification" / "claims"
VERDICT_WORDS = {"confirmed", "refuted", "inconclusive", "error"}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            out.add(id(node.body[0].value))
    return out


def _allowed_verdict_words(tree: ast.AST) -> set[int]:
    """A verdict word may name a verdict (a key of ``says``) or read one (``== "refuted"``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            out.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, ast.Compare):
            out.update(id(c) for c in (node.left, *node.comparators))
    return out


def _threshold(node: ast.Compare) -> bool:
    """A comparison of a number with a literal: a float, or an integer other than 0 and ±1
    (counts compared with ``len(...)`` excepted)."""
    sides = [node.left, *node.comparators]
    if any(isinstance(s, ast.Call) and getattr(s.func, "id", "") == "len" for s in sides):
        return False
    for s in sides:
        if isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub):
            s = s.operand
        if isinstance(s, ast.Constant) and not isinstance(s.value, bool) \
                and isinstance(s.value, (int, float)) \
                and (isinstance(s.value, float) or abs(s.value) > 1):
            return True
    return False


def _cache_decorator(node: ast.AST) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (getattr(target, "attr", None) or getattr(target, "id", None)) in {"cache",
                                                                             "lru_cache"}


def problems(source: str) -> list[str]:
    """What in a claim module's ``source`` decides or caches outside the check library."""
    tree = ast.parse(source)
    docs, verdict_ok = _docstrings(tree), _allowed_verdict_words(tree)
    out = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Outcome":
            out.append(f"{line}: builds an Outcome by hand (return checks.conclude(...))")
        elif isinstance(node, ast.Constant) and node.value in VERDICT_WORDS \
                and id(node) not in docs and id(node) not in verdict_ok:
            out.append(f"{line}: writes the verdict {node.value!r} itself")
        elif isinstance(node, ast.Compare) and _threshold(node):
            out.append(f"{line}: compares a number with a literal threshold")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and any(_cache_decorator(d) for d in node.decorator_list):
            out.append(f"{line}: a process-level cache ({node.name}); simulate through ctx.map")
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            private = [a.name for a in node.names if a.name.startswith("_")]
            if private:
                out.append(f"{line}: imports private names {private} from {node.module}")
    return sorted(out, key=lambda s: int(s.split(":")[0]))


MODULES = sorted(p for p in CLAIMS.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(CLAIMS)) for p in MODULES])
def test_claim_module_judges_through_the_check_library(path):
    found = problems(path.read_text())
    assert not found, f"{path.relative_to(CLAIMS)}:\n  " + "\n  ".join(found)


def test_the_scan_finds_each_kind_of_hand_made_judgement():
    planted = '''
import functools
from ._common import _exact

@functools.cache
def simulate():
    return 1

def claim(ctx):
    gap = simulate()
    verdict = "refuted" if gap > 1e-10 else "confirmed"
    if gap >= 3:
        return Outcome(verdict, "text")
    return checks.conclude({"gap": leg}, says={"confirmed": "fine"})
'''
    found = "\n".join(problems(planted))
    for what in ("private names ['_exact']", "process-level cache (simulate)",
                 "writes the verdict 'refuted'", "writes the verdict 'confirmed'",
                 "literal threshold", "builds an Outcome"):
        assert what in found, what
    assert found.count("literal threshold") == 2          # 1e-10 and 3
    assert "fine" not in found                            # a key of says is allowed
