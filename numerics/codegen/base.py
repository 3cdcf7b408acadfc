"""One abstract code generator; backends only say how to print and how to broadcast.

The generator takes argument symbols and output expressions and emits a Python function
that evaluates all outputs together, batched over broadcast arrays:

1. numeric sub-expressions (√2, atan(1/√5), …) become correctly rounded float literals;
2. stable rewrites (log(1+x) → log1p(x), exp(x)−1 → expm1(x));
3. every :class:`theory.gaussian.GaussianExpectation` node becomes a call of a generated
   helper that evaluates its integrand on the nodes of an expectation rule and contracts
   with its weights (the rule is chosen at load time, see ``numerics.expectation``);
4. common-subexpression elimination over all outputs at once.

The source is cached on disk by a hash of the expressions, the backend and library versions.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import hashlib
import numbers
from typing import Any

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p

from theory.gaussian import GaussianExpectation
from .cache import cached_text, content_hash

__all__ = ["CodeGenerator", "GeneratedSource", "numbers_to_floats", "stable_rewrites",
           "expression_key", "GENERATOR_VERSION"]

GENERATOR_VERSION = "2"


def numbers_to_floats(expr: sp.Expr) -> sp.Expr:
    """Replace compound numeric sub-expressions by 17-digit floats (correct rounding, and no
    backend function ever receives a Python number)."""
    def is_compound_number(e):
        return (e.is_number and not e.is_Atom and not isinstance(e, GaussianExpectation)
                and e.is_real is not False)
    return expr.replace(is_compound_number, lambda e: sp.Float(e.evalf(20), 20))


def stable_rewrites(expr: sp.Expr) -> sp.Expr:
    """log(1 + x) → log1p(x); exp(x) − 1 → expm1(x) (sympy's generic ``optimize`` is far
    slower on large expressions and finds the same patterns here)."""
    expr = expr.replace(lambda e: isinstance(e, sp.log) and e.args[0].is_Add and sp.S.One in e.args[0].args,
                        lambda e: log1p(e.args[0] - 1))

    def has_expm1(e):
        return e.is_Add and sp.S.NegativeOne in e.args and any(isinstance(a, sp.exp) for a in e.args)

    def to_expm1(e):
        rest = list(e.args)
        rest.remove(sp.S.NegativeOne)
        ex = next(a for a in rest if isinstance(a, sp.exp))
        rest.remove(ex)
        return sp.Add(expm1(ex.args[0]), *rest)

    return expr.replace(has_expm1, to_expm1)


def expression_key(exprs: Sequence[Any]) -> str:
    """A digest of a sequence of SymPy expressions, the same for equal (``==``) sequences in
    every process and different for unequal ones (up to SHA-256 collisions).

    Each node is hashed from its type (module, name and, for an undefined function, its
    assumptions) and ``_hashable_content()`` (exactly what SymPy's equality compares: the
    canonically ordered args, a symbol's name and assumptions, a float's binary value and
    precision), bottom-up and once per distinct node object; every field is length-prefixed,
    so no two different sequences of fields encode alike. ``srepr`` says the same but sorts
    every sum's terms for printing and re-walks shared sub-expressions, which made the code
    cache's key cost more than the cached code saved on large models."""
    memo: dict[int, bytes] = {}
    alive: list[Any] = []          # ids stay unique while the nodes they name are alive

    def node_digest(node) -> bytes:
        found = memo.get(id(node))
        if found is not None:
            return found
        kind = type(node)
        extra = getattr(kind, "_kwargs", None)       # an undefined function's assumptions
        header = (kind.__module__ or "", kind.__qualname__,
                  tuple(sorted(extra.items())) if isinstance(extra, dict) else ())
        h = hashlib.sha256(item_digest(header))
        h.update(item_digest(tuple(node._hashable_content())))
        memo[id(node)] = out = h.digest()
        alive.append(node)
        return out

    def field(tag: str, text: str) -> bytes:
        data = text.encode()
        return f"{tag}{len(data)}:".encode() + data

    def item_digest(item) -> bytes:
        if isinstance(item, sp.Basic):
            return b"B" + node_digest(item)                        # 32 bytes
        if isinstance(item, tuple):
            return field("T", str(len(item))) + b"".join(item_digest(i) for i in item)
        if item is None or isinstance(item, (bool, str, float)):
            return field(type(item).__name__[0], repr(item))
        if isinstance(item, numbers.Integral):                     # int, gmpy2's mpz (mpmath)
            return field("i", str(int(item)))
        return field("r", f"{type(item).__qualname__}:{item!r}")   # as srepr would print it

    return hashlib.sha256(b"".join(item_digest(sp.sympify(e)) for e in exprs)).hexdigest()


def _prepare(expr):
    return stable_rewrites(numbers_to_floats(sp.sympify(expr)))


@dataclass
class GeneratedSource:
    """Generated source text and the number of expectation nodes in it."""

    text: str
    n_nodes: int


class CodeGenerator(abc.ABC):
    """Abstract generator. Subclasses provide ``printer``, ``prelude`` and the call wrapper."""

    name: str = "abstract"

    @abc.abstractmethod
    def printer(self) -> Any: ...

    @abc.abstractmethod
    def prelude(self) -> str: ...

    @abc.abstractmethod
    def library_versions(self) -> str: ...

    @abc.abstractmethod
    def wrap(self, namespace: dict, n_outputs: int, rule: Any) -> Callable[..., tuple]: ...

    def lift(self, arg: str) -> str:
        """Source that appends a trailing axis to an argument (for expectation nodes)."""
        return f"{arg}[..., None]"

    # ---------------------------------------------------------------------------------------
    def source(self, args: Sequence[sp.Symbol], outputs: Sequence[sp.Expr]) -> str:
        """The generated module's source (from the disk cache when this exact input was seen)."""
        key = content_hash(GENERATOR_VERSION, self.name, self.library_versions(), sp.__version__,
                           self.prelude(), expression_key(args), expression_key(outputs))
        return cached_text(f"codegen-{self.name}", key, lambda: self._render(args, outputs))

    def _render(self, args, outputs) -> str:
        outputs = [_prepare(o) for o in outputs]
        nodes = sorted(set().union(*(o.atoms(GaussianExpectation) for o in outputs)),
                       key=sp.default_sort_key)
        node_syms = [sp.Symbol(f"_E{i}") for i in range(len(nodes))]
        outputs = [o.xreplace(dict(zip(nodes, node_syms))) for o in outputs]
        argnames = [self._name(a) for a in args]
        lines = [self.prelude(), ""]
        for i, node in enumerate(nodes):
            lines += self._node_function(i, node, args, argnames)
        lines.append(f"def generated({', '.join(argnames)}):")
        for i in range(len(nodes)):
            lines.append(f"    _E{i} = _node{i}({', '.join(argnames)})")
        lines += self._body(args, argnames, outputs)
        return "\n".join(lines) + "\n"

    def _name(self, sym):
        return self.printer().doprint(sym)

    def _body(self, args, argnames, outputs, indent="    "):
        printer = self.printer()
        replacements, reduced = sp.cse(outputs, symbols=sp.numbered_symbols("_x"),
                                       optimizations="basic")
        lines = [f"{indent}{printer.doprint(s)} = {printer.doprint(e)}" for s, e in replacements]
        lines.append(f"{indent}return ({', '.join(printer.doprint(e) for e in reduced)},)")
        return lines

    def _node_function(self, i, node, args, argnames):
        printer = self.printer()
        integrand = _prepare(node.integrand)
        K = len(node.variables)
        lines = [f"def _node{i}({', '.join(argnames)}):"]
        for name in argnames:
            lines.append(f"    {name} = {self.lift(name)}")
        lines.append(f"    _Z, _W = _RULE.nodes({K})")
        for k, z in enumerate(node.variables):
            lines.append(f"    {printer.doprint(z)} = _Z[{k}]")
        replacements, (reduced,) = sp.cse([integrand], symbols=sp.numbered_symbols("_y"))
        lines += [f"    {printer.doprint(s)} = {printer.doprint(e)}" for s, e in replacements]
        lines.append(f"    return _contract({printer.doprint(reduced)}, _W)")
        lines.append("")
        return lines

    # ---------------------------------------------------------------------------------------
    def compile(self, args: Sequence[sp.Symbol], outputs: Sequence[sp.Expr],
                rule: Any = None) -> Callable[..., tuple]:
        """A callable evaluating all ``outputs`` at broadcast array arguments; returns a tuple."""
        text = self.source(args, outputs)
        namespace = {"_RULE": rule}
        # text is generated here or read back through cached_text, which returns an entry only
        # when its HMAC under the user's key matches (anything else is regenerated, never run)
        exec(compile(text, f"<generated {self.name}>", "exec"), namespace)
        return self.wrap(namespace, len(outputs), rule)
