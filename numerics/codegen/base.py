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

A function of the user's own (docs/functions.md) is a ``sympy.Function`` subclass with
``fdiff`` and numeric implementations as class attributes named after the backends,
``numpy = staticmethod(...)`` and ``torch = staticmethod(...)``. The generated source only
calls it by an identifier derived from the class's module and qualified name
(``implementation_name``); the implementation itself is never printed into the source, it is
put into the generated module's namespace when the source is loaded (cached or not). The cache
key already names the class's module and qualified name (``expression_key``), so two different
functions never share an entry. A function a backend cannot print is refused before any code
is generated: :class:`UnsupportedFunction` (a ValueError), one line naming it.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import hashlib
import numbers
import re
from typing import Any

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p

from theory.gaussian import GaussianExpectation
from .cache import cached_text, content_hash

__all__ = ["CodeGenerator", "GeneratedSource", "numbers_to_floats", "stable_rewrites",
           "expression_key", "GENERATOR_VERSION", "UnsupportedFunction", "UserFunctionPrinting",
           "implementation_name", "user_implementations"]

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


class UnsupportedFunction(ValueError):
    """A function in an expression that a backend cannot evaluate (no implementation, or a
    derivative that SymPy does not know); its message is one line naming it."""


def implementation_name(cls: type) -> str:
    """The identifier by which generated code calls a user function's implementation: its
    name (letters, digits and _ only) and a digest of its module and qualified name."""
    ident = f"{cls.__module__}.{cls.__qualname__}"
    stem = re.sub(r"[^A-Za-z0-9_]", "_", cls.__name__)[:40]
    return f"_fn_{stem}_{hashlib.sha256(ident.encode()).hexdigest()[:12]}"


def _implementation(cls: type, backend: str):
    impl = getattr(cls, backend, None) if isinstance(cls, type) and issubclass(cls, sp.Function) \
        else None
    return impl if callable(impl) else None


def _functions(outputs: Sequence[Any]) -> tuple[dict[type, Any], list]:
    """({class: one application} of the functions in ``outputs``, [unevaluated Derivative and
    Subs]), each shared sub-expression visited once (``atoms`` re-walks them)."""
    classes: dict[type, Any] = {}
    derivatives: list = []
    seen: set[int] = set()
    stack = [sp.sympify(e) for e in outputs]
    alive = list(stack)                 # ids stay unique while the nodes they name are alive
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, sp.Basic):
            continue
        seen.add(id(node))
        if isinstance(node, (sp.Derivative, sp.Subs)):
            derivatives.append(node)
        elif isinstance(node, sp.Function):
            classes.setdefault(type(node), node)
        stack.extend(node.args)
        alive.extend(node.args)
    return classes, derivatives


def user_implementations(outputs: Sequence[Any], backend: str) -> dict[str, Callable]:
    """{identifier: implementation} of the user functions in ``outputs`` that define one for
    ``backend`` (a class attribute of that name); ValueError when two different classes would
    share an identifier (same module and qualified name, e.g. made in a loop)."""
    found: dict[str, tuple[type, Callable]] = {}
    for cls in _functions(outputs)[0]:
        impl = _implementation(cls, backend)
        if impl is None:
            continue
        name = implementation_name(cls)
        if name in found and found[name][0] is not cls:
            raise UnsupportedFunction(
                f"two different functions are named {cls.__module__}.{cls.__qualname__}; "
                "allowed: one class per name (define each function once, at module level)")
        found[name] = (cls, impl)
    return {name: impl for name, (_, impl) in found.items()}


class UserFunctionPrinting:
    """Printer mixin: a call of a user function with an implementation for ``backend`` is
    printed as a call of ``implementation_name(its class)``, whatever its name (a class named
    like a known function, tanh say, still calls its own implementation)."""

    backend = "numpy"

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Function) and _implementation(type(expr), self.backend):
            args = ", ".join(self._print(a) for a in expr.args)
            return f"{implementation_name(type(expr))}({args})"
        return super()._print(expr, **kwargs)


_SUPPORTED = ("SymPy's functions that have a {b} counterpart (exp, log, sin, cos, tanh, erf, "
              "Abs, ... and compositions of them) and functions of your own: a sympy.Function "
              "subclass with fdiff and {b} = staticmethod(...) (docs/functions.md)")


def _function_name(expr) -> str:
    return getattr(expr.func, "__name__", None) or str(expr.func)


def check_printable(printer, outputs: Sequence[Any], backend: str) -> None:
    """UnsupportedFunction naming a function in ``outputs`` that ``printer`` cannot print, or
    an unevaluated derivative of one, and what is supported; each class is tried once, on
    fresh symbols."""
    atoms, derivatives = _functions(outputs)
    if derivatives:
        inner = next(iter(derivatives[0].atoms(sp.Function)), None)
        name = _function_name(inner) if inner is not None else "a function"
        raise UnsupportedFunction(
            f"the derivative of {name} is not known to SymPy; allowed: a function whose "
            f"derivative SymPy knows: {_SUPPORTED.format(b=backend)}")
    for cls, atom in sorted(atoms.items(), key=lambda item: item[0].__name__):
        if _implementation(cls, backend):
            continue
        try:
            probe = atom.func(*sp.symbols(f"_p0:{len(atom.args)}", real=True))
        except (TypeError, ValueError):
            probe = atom
        try:
            printer.doprint(probe)
        except NotImplementedError:
            raise UnsupportedFunction(
                f"function {_function_name(atom)} has no {backend} implementation; allowed: "
                f"{_SUPPORTED.format(b=backend)}") from None


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
        check_printable(self.printer(), outputs, self.name)
        text = self.source(args, outputs)
        namespace = {"_RULE": rule, **user_implementations(outputs, self.name)}
        # text is generated here or read back through cached_text, which returns an entry only
        # when its HMAC under the user's key matches (anything else is regenerated, never run)
        exec(compile(text, f"<generated {self.name}>", "exec"), namespace)
        return self.wrap(namespace, len(outputs), rule)
