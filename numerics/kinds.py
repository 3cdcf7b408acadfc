"""The registry of model kinds: one :class:`Kind` object per kind, owning its whole path
declare → derive → compile → reduce → simulate → Monte Carlo risk.

>>> from numerics.kinds import KINDS, kind_of, simulate
>>> kind = kind_of(declaration)              # along type(declaration).__mro__
>>> kind.reduce(declaration, params)          # = numerics.reduced.reduced(declaration, params)
>>> simulate(declaration, params, config, "gram")

The built-in kinds register themselves in ``numerics.models.token_sum``, ``.dohmatob`` and
``.multihead`` (imported by ``numerics``); a new kind is one ``register(Kind(...))`` in one
file (docs/tutorial.md shows a toy kind). This module imports no kind: the numerical layers
(``numerics.compiled``, ``numerics.reduced``, ``numerics.sgd``) ask it at call time, and the
kinds, above them, wire their steps in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from theory import derive as _derive

__all__ = ["Kind", "KINDS", "SIMULATORS", "register", "unregister", "kind_of", "find_kind",
           "simulator", "simulate"]


@dataclass(frozen=True)
class Kind:
    """A kind of model and every step of its path.

    name:        the registry key (e.g. 'token-sum');
    declaration: the type of its declarations (``theory``); subclasses belong to the kind;
    compile:     (declaration, backend, rule) → its generated code (``numerics.compiled``);
    reduce:      (declaration, params, **kw) → a ``numerics.reduced.ReducedModel``;
    example:     () → (declaration, params, reduce keywords) of a small setting;
    simulators:  method name → simulator class; a class takes (declaration, params, config),
                 names the config class it accepts as ``config_class`` and has
                 ``run(progress, until)`` → a result (``simulate``);
    risk:        (declaration, params, state, n, seed) → (mean, standard error) of the risk at
                 ``state`` by Monte Carlo, or None when the kind has none;
    trials:      () → {method: (params, config)} of a short run of each simulator, and
                 {'risk': (params, state)} for ``risk``: the registry test runs them all;
    doc:         one line on what the kind is.

    Derivations are the declaration's own (``theory.derive`` calls ``declaration.derivation()``),
    so ``derive`` is the same for every kind."""

    name: str
    declaration: type
    compile: Callable[..., object]
    reduce: Callable[..., object]
    example: Callable[[], tuple[object, dict, dict]]
    simulators: Mapping[str, type] = field(default_factory=dict)
    risk: Callable[..., tuple[float, float]] | None = None
    trials: Callable[[], dict[str, tuple]] | None = None
    doc: str = ""

    def derive(self, declaration):
        """``theory.derive(declaration)``: the (cached) derivations of one of this kind's
        declarations."""
        self._own(declaration)
        return _derive(declaration)

    def simulator(self, method: str) -> type:
        """The simulator class for ``method``; a ValueError naming the kind's methods."""
        if method not in self.simulators:
            raise ValueError(f"method={method!r}; allowed: {sorted(self.simulators)} (the "
                             f"{self.name} kind's simulators)")
        return self.simulators[method]

    def _own(self, declaration) -> None:
        if not isinstance(declaration, self.declaration):
            raise TypeError(f"{self.name}: a {type(declaration).__name__} is not a "
                            f"{self.declaration.__name__}")


_KINDS: dict[str, Kind] = {}
_BY_TYPE: dict[type, Kind] = {}

KINDS: Mapping[str, Kind] = MappingProxyType(_KINDS)
"""The registered kinds by name (read-only; ``register`` and ``unregister`` change it)."""


def _check_simulator(kind: str, method: str, cls) -> None:
    where = f"register({kind!r}): simulators[{method!r}]"
    if not (isinstance(method, str) and method):
        raise ValueError(f"register({kind!r}): a simulator's method {method!r}; allowed: a "
                         "non-empty string")
    if not isinstance(cls, type):
        raise TypeError(f"{where} is a {type(cls).__name__}; allowed: a class taking "
                        "(declaration, params, config)")
    if not isinstance(getattr(cls, "config_class", None), type):
        raise TypeError(f"{where} ({cls.__name__}) names no config_class; allowed: a class "
                        "attribute naming the config class it takes")
    if not callable(getattr(cls, "run", None)):
        raise TypeError(f"{where} ({cls.__name__}) has no run(progress, until) method")


def _check_identity(kind: Kind) -> None:
    """The name and the declaration type: unique, and a declaration theory can derive."""
    if not (isinstance(kind.name, str) and kind.name):
        raise ValueError(f"register: name={kind.name!r}; allowed: a non-empty string")
    if kind.name in _KINDS:
        raise ValueError(f"register: name={kind.name!r} is taken; registered: {sorted(_KINDS)}")
    if not isinstance(kind.declaration, type):
        raise TypeError(f"register({kind.name!r}): declaration={kind.declaration!r}; allowed: a "
                        "class (the type of the kind's declarations)")
    if kind.declaration in _BY_TYPE:
        raise ValueError(f"register({kind.name!r}): {kind.declaration.__name__} is already the "
                         f"declaration of {_BY_TYPE[kind.declaration].name!r}")
    if not callable(getattr(kind.declaration, "derivation", None)):
        raise TypeError(f"register({kind.name!r}): {kind.declaration.__name__} has no "
                        "derivation() method (what theory.derive calls)")


def _check_steps(kind: Kind) -> None:
    for step in ("compile", "reduce", "example"):
        if not callable(getattr(kind, step)):
            raise TypeError(f"register({kind.name!r}): {step} is not callable")
    for step in ("risk", "trials"):
        if getattr(kind, step) is not None and not callable(getattr(kind, step)):
            raise TypeError(f"register({kind.name!r}): {step} is neither None nor callable")
    if not isinstance(kind.simulators, Mapping):
        raise TypeError(f"register({kind.name!r}): simulators; allowed: a mapping method → class")
    for method, cls in kind.simulators.items():
        _check_simulator(kind.name, method, cls)


def register(kind: Kind) -> Kind:
    """Add ``kind`` to the registry (and return it). A ValueError or TypeError names what is
    wrong: a name already taken or empty, a declaration that is not a class, is already another
    kind's or has no ``derivation()``, a step that is not callable, a simulator without
    ``config_class`` or ``run``. Nothing is registered then."""
    if not isinstance(kind, Kind):
        raise TypeError(f"register: a {type(kind).__name__}; allowed: a numerics.kinds.Kind")
    _check_identity(kind)
    _check_steps(kind)
    _KINDS[kind.name] = kind
    _BY_TYPE[kind.declaration] = kind
    return kind


def unregister(name: str) -> Kind:
    """Remove the kind ``name`` (a test's toy kind) and return it; a KeyError names the kinds."""
    if name not in _KINDS:
        raise KeyError(f"unregister: no kind {name!r}; registered: {sorted(_KINDS)}")
    kind = _KINDS.pop(name)
    del _BY_TYPE[kind.declaration]
    return kind


def find_kind(obj: object) -> Kind | None:
    """The kind of ``obj`` (the first of ``type(obj).__mro__`` registered), or None."""
    for cls in type(obj).__mro__:
        if cls in _BY_TYPE:
            return _BY_TYPE[cls]
    return None


def _allowed() -> str:
    return ", ".join(f"{k.declaration.__name__} ({k.name})" for k in _KINDS.values())


def kind_of(obj: object) -> Kind:
    """The kind whose declaration ``obj`` is; a TypeError naming the registered kinds for
    anything else."""
    kind = find_kind(obj)
    if kind is None:
        raise TypeError(f"a {type(obj).__name__} is not a declaration of a registered model "
                        f"kind; allowed: {_allowed()}")
    return kind


def simulator(declaration: object, method: str = "direct") -> type:
    """The simulator class of ``declaration``'s kind for ``method``."""
    return kind_of(declaration).simulator(method)


def simulate(declaration: object, params: Mapping[str, object], config: object,
             method: str = "direct", *, progress: Callable[[int, int], None] | None = None,
             until: Callable[[dict], bool] | None = None):
    """Run ``declaration``'s simulator for ``method`` (its kind's ``simulators``):
    ``simulator(declaration, params, config).run(progress, until)``.

    params: the declaration's parameters by name (what the simulator says it takes); config:
    an instance of the simulator's ``config_class`` (for the SGD simulators a
    ``numerics.sgd.SimulationConfig``), checked before any work; progress(k, steps) is called at
    each record; until(state) may stop a run at a record (simulators without a trajectory
    refuse it). A TypeError names a declaration of no kind or a config of the wrong class, a
    ValueError a method the kind does not have."""
    kind = kind_of(declaration)
    cls = kind.simulator(method)
    if not isinstance(config, cls.config_class):
        raise TypeError(f"config: a {type(config).__name__}; allowed: a "
                        f"{cls.config_class.__name__} (method {method!r} of the {kind.name} kind)")
    return cls(declaration, params, config).run(progress, until)


class _Simulators(Mapping):
    """Declaration type → method → simulator class, read from the registry at each lookup."""

    def __getitem__(self, declaration: type) -> dict[str, type]:
        if declaration not in _BY_TYPE:
            raise KeyError(declaration)
        return dict(_BY_TYPE[declaration].simulators)

    def __iter__(self) -> Iterator[type]:
        return iter([t for t, k in _BY_TYPE.items() if k.simulators])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"SIMULATORS({dict(self)!r})"


SIMULATORS: Mapping[type, dict[str, type]] = _Simulators()
"""A live view: declaration type → method → simulator class, for the kinds with simulators."""
