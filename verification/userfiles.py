"""Models, activations and claims from the user's own files and from installed plugins.

A model or activation is named the way pytest names a test: ``PATH.py[:NAME]`` (a Python file
anywhere, and optionally the name of the object it defines), a built-in name
(``marion2025``, ``softmax-v``, ...), or the name of an entry point an installed package
declares in one of the groups

* ``attention_verification.models``      (value ``module`` with a MODEL, or ``module:attr``),
* ``attention_verification.activations`` (value ``module:attr``, an :class:`Activation`),
* ``attention_verification.claims``      (value ``module``, imported: its ``@claim`` checks
  register themselves; or ``module:attr``, a function called without arguments).

A file is imported under a unique module name derived from its resolved path and registered
in ``sys.modules``, so that what it defines pickles by reference. The path is also added to the
environment variable ``ATTNV_USER_FILES``: a process started later (a worker of the engine)
imports the module by its name again through a finder this module installs on ``sys.meta_path``
(``verification`` imports it), as long as the file is at the same path there.
"""

from __future__ import annotations

import hashlib
import contextlib
import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import math
import os
import pkgutil
import re
import signal
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from .catalogue import CLAIM_GROUP, claims_of, load_all, plugin_claim_modules

__all__ = ["MODEL_GROUP", "ACTIVATION_GROUP", "CLAIM_GROUP", "UserFileError", "AbruptEnd", "parse_spec",
           "import_file", "user_frame", "load_model", "load_model_object", "load_link", "load_activation",
           "load_claims_file", "plugin_claim_modules", "known_models", "known_activations"]

MODEL_GROUP = "attention_verification.models"
ACTIVATION_GROUP = "attention_verification.activations"
_PREFIX = "attnv_user_"
ENV = "ATTNV_USER_FILES"


# --- file specs ----------------------------------------------------------------------------
def parse_spec(spec: str) -> tuple[Path | None, str | None]:
    """``(path, name)`` of ``PATH.py[:NAME]``; ``(None, spec)`` for anything else (a built-in
    or entry-point name)."""
    m = re.fullmatch(r"(.+?\.py)(?::([A-Za-z_][A-Za-z0-9_]*))?", spec.strip())
    if m is None:
        if re.fullmatch(r".+\.py:.*", spec.strip()):
            raise ValueError(f"{spec!r}: after 'PATH.py:' give a Python name "
                             f"(e.g. {spec.split(':')[0]}:MODEL)")
        return None, spec
    return Path(m.group(1)), m.group(2)


def _module_name(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = re.sub(r"\W", "_", path.stem)
    return f"{_PREFIX}{stem}_{digest}"


class _SourceLoader(importlib.abc.Loader):
    """Runs a user's file from its source text, compiled afresh: no bytecode cache is read or
    written for it, so a ``.pyc`` planted in a ``__pycache__`` beside an unchanged file never
    runs; an abrupt end (``SystemExit``, ``os._exit``, a ``KeyboardInterrupt`` the file raises)
    is an exception of its import (``_guarded``), not the end of the command."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        code = compile(self.path.read_bytes(), str(self.path), "exec", dont_inherit=True)
        with _guarded():
            exec(code, module.__dict__)

    def get_source(self, fullname: str) -> str:         # for inspect and tracebacks
        return self.path.read_text()


def _spec(name: str, path: Path):
    return importlib.util.spec_from_file_location(name, path, loader=_SourceLoader(path))


class AbruptEnd(Exception):
    """A user's file tried to end the process while it was imported (``sys.exit``,
    ``os._exit``, or a ``KeyboardInterrupt`` it raised itself)."""


@contextlib.contextmanager
def _guarded():
    """Within: ``os._exit`` raises ``AbruptEnd`` instead of ending the process, and
    ``SystemExit`` or a ``KeyboardInterrupt`` that is not the person at the terminal's Ctrl-C
    (SIGINT, when this is the main thread) become ``AbruptEnd``."""
    pressed = []
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None

    def ctrl_c(signum, frame):
        pressed.append(signum)
        raise KeyboardInterrupt

    def refuse_exit(code=0):
        raise AbruptEnd(f"os._exit({code}) while it was imported; a file of yours defines "
                        "models, functions or claims, it does not end the command")
    real_exit, os._exit = os._exit, refuse_exit
    if main and previous is signal.default_int_handler:
        signal.signal(signal.SIGINT, ctrl_c)
    try:
        with time_budget(import_budget(), "importing it"):
            yield
    except SystemExit as exc:
        raise AbruptEnd(f"sys.exit({exc.code!r}) while it was imported; a file of yours defines "
                        "models, functions or claims, it does not end the command"
                        ).with_traceback(exc.__traceback__) from None
    except KeyboardInterrupt as exc:
        if pressed or (main and previous is not signal.default_int_handler):
            raise                                      # Ctrl-C at the terminal: stop
        raise AbruptEnd("it raised KeyboardInterrupt while it was imported"
                        ).with_traceback(exc.__traceback__) from None
    finally:
        os._exit = real_exit
        if main and previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)


BUDGET_ENV = "ATTNV_USER_BUDGET"
"""Seconds a user's file may take to import, and a user's function to answer when the suite
checks it (default ``DEFAULT_BUDGET``); 0: no limit."""
DEFAULT_BUDGET = 300.0


def import_budget() -> float:
    """``$ATTNV_USER_BUDGET`` seconds (``DEFAULT_BUDGET`` when unset; 0 or a bad value: as
    unset, since a typo must not lift the limit)."""
    try:
        value = float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET))
    except ValueError:
        return DEFAULT_BUDGET
    return value if math.isfinite(value) and value >= 0 else DEFAULT_BUDGET


@contextlib.contextmanager
def time_budget(seconds: float, doing: str):
    """Within (in the main thread, where a timer signal can interrupt Python code): a
    ``TimeoutError`` saying ``doing`` ran past ``seconds``; elsewhere, or with ``seconds`` 0 or
    a timer already running, no limit."""
    main = threading.current_thread() is threading.main_thread()
    if not (main and seconds > 0) or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"{doing} took more than {seconds:g} s (${BUDGET_ENV} sets the limit)")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _UserFileFinder(importlib.abc.MetaPathFinder):
    """Finds ``attnv_user_*`` modules among the files listed in ``ATTNV_USER_FILES``."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        for entry in os.environ.get(ENV, "").split(os.pathsep):
            if entry and _module_name(Path(entry)) == fullname and Path(entry).is_file():
                return _spec(fullname, Path(entry))
        return None


def _install_finder() -> None:
    if not any(isinstance(f, _UserFileFinder) for f in sys.meta_path):
        sys.meta_path.append(_UserFileFinder())


def _remember(path: Path) -> None:
    known = [p for p in os.environ.get(ENV, "").split(os.pathsep) if p]
    if str(path) not in known:
        os.environ[ENV] = os.pathsep.join([*known, str(path)])


class UserFileError(Exception):
    """A file of the user's failed while it was imported (a syntax error, or an exception its
    code raised). ``str(err)`` is one line, ``FILE:LINE: ErrorType: message``: the file as it
    was named, the line of that file where it failed (a SyntaxError's own line); ``path``,
    ``lineno`` (None when unknown) and ``error`` (the original exception, also the
    ``__cause__``) are attributes."""

    def __init__(self, path: str | Path, error: BaseException, resolved: Path | None = None):
        self.path, self.error = str(path), error
        self.lineno = _failing_line(error, resolved or Path(path).resolve())
        where = f"{self.path}:{self.lineno}" if self.lineno else self.path
        super().__init__(f"{where}: {type(error).__name__}: {_message(error)}")

    def __reduce__(self):
        return (_rebuild_user_file_error, (self.path, self.lineno, str(self)))


def _rebuild_user_file_error(path: str, lineno: int | None, text: str) -> UserFileError:
    err = UserFileError.__new__(UserFileError)
    Exception.__init__(err, text)
    err.path, err.lineno, err.error = path, lineno, None
    return err


def _message(error: BaseException) -> str:
    """The exception's message on one line (a SyntaxError's without its "(file, line n)")."""
    text = error.msg if isinstance(error, SyntaxError) and error.msg else str(error)
    return " ".join(text.split())


def _failing_line(error: BaseException, path: Path) -> int | None:
    """The line of ``path`` where ``error`` was raised: a SyntaxError's own line when it is in
    that file, else the innermost frame of its traceback in that file."""
    if isinstance(error, SyntaxError) and error.filename and error.lineno \
            and _same_file(error.filename, path):
        return int(error.lineno)
    found = user_frame(error, [path])
    return found[1] if found else None


def _same_file(name: str, path: Path) -> bool:
    try:
        return Path(name).resolve() == path
    except (OSError, ValueError):
        return False


def user_frame(error: BaseException, files: list[Path] | None = None) -> tuple[Path, int] | None:
    """``(file, line)`` of the innermost frame of ``error``'s traceback that is in one of
    ``files`` (default: the user's files imported so far, ``ATTNV_USER_FILES``); None if
    none is."""
    import traceback
    if files is None:
        files = [Path(p) for p in os.environ.get(ENV, "").split(os.pathsep) if p]
    if not files or error.__traceback__ is None:
        return None
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        for f in files:
            if frame.lineno and _same_file(frame.filename, f):
                return f, frame.lineno
    return None


def import_file(path: str | Path) -> ModuleType:
    """The module of the Python file ``path`` (imported once per resolved path, under a unique
    name registered in ``sys.modules``). FileNotFoundError when there is no such file; a
    syntax error or an exception raised while executing the file raises a
    :class:`UserFileError` (``FILE:LINE: ErrorType: message``, the original exception its
    ``__cause__``) and nothing is registered; so does a file that tries to end the process
    (``sys.exit``, ``os._exit``, a KeyboardInterrupt it raises: ``AbruptEnd``). The file runs
    from its source (no bytecode cache read or written); the person's Ctrl-C propagates."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such file; allowed: the path of a Python file "
                                "(PATH.py or PATH.py:NAME)")
    p = p.resolve()
    name = _module_name(p)
    if name in sys.modules:
        return sys.modules[name]
    spec = _spec(name, p)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise UserFileError(path, exc, p) from exc
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _remember(p)
    return module


def _pick(module: ModuleType, name: str | None, default: str, kinds: tuple[type, ...],
          what: str, where: str):
    """``module.name``, else ``module.default``, else the one object of ``kinds`` the module
    defines; a ValueError lists the candidates."""
    found = {k: v for k, v in vars(module).items() if not k.startswith("_") and isinstance(v, kinds)}
    if name is not None:
        if name not in vars(module):
            raise ValueError(f"{where} defines no {name!r}; allowed: {sorted(found) or 'none'} "
                             f"(the {what}s it defines)")
        obj = getattr(module, name)
        if not isinstance(obj, kinds):
            raise ValueError(f"{where}:{name} is a {type(obj).__name__}, not a {what}; allowed: "
                             f"{sorted(found) or 'none'}")
        return obj
    if isinstance(vars(module).get(default), kinds):
        return getattr(module, default)
    if len(found) == 1:
        return next(iter(found.values()))
    raise ValueError(f"{where} defines {'no' if not found else 'several'} {what}(s) and no "
                     f"{default}; give PATH.py:NAME, allowed NAME: {sorted(found) or 'none'}")


# --- entry points --------------------------------------------------------------------------
def _entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=group)}


def _load_entry_point(ep: importlib.metadata.EntryPoint):
    """The module (value ``module``) or attribute (``module:attr``) an entry point names."""
    return ep.load()


# --- models --------------------------------------------------------------------------------
def _model_kinds() -> tuple[type, ...]:
    """The declarations of every kind (``numerics.reduced.KINDS``) and reduced models."""
    from numerics.reduced import KINDS, ReducedModel
    return (*(k.declaration for k in KINDS.values()), ReducedModel)


def known_models() -> list[str]:
    """Every model name ``load_model`` accepts besides a path: the papers, the modules of
    ``theory.models`` with a MODEL, and the installed entry points."""
    import theory.models
    from numerics.reduced import PAPERS
    names = set(PAPERS)
    for info in pkgutil.iter_modules(theory.models.__path__):
        names.add(info.name)
    return sorted(names | set(_entry_points(MODEL_GROUP)))


def load_model_object(spec: str) -> tuple[object, Mapping]:
    """``(obj, module_defaults)`` for a file spec or a model entry point: obj a Model,
    DohmatobModel, MultiHeadModel or ReducedModel; the defaults the defining module gives (DEFAULT_PARAMS,
    DEFAULT_STATE, PRIOR). ValueError for a built-in paper name (use :func:`load_model`) or an
    unknown name."""
    path, name = parse_spec(spec)
    if path is not None:
        module = import_file(path)
        obj = _pick(module, name, "MODEL", _model_kinds(), "model", str(path))
        return obj, _defaults(module)
    eps = _entry_points(MODEL_GROUP)
    if spec in eps:
        loaded = _load_entry_point(eps[spec])
        if isinstance(loaded, ModuleType):
            return _pick(loaded, None, "MODEL", _model_kinds(), "model", f"entry point {spec}"), \
                _defaults(loaded)
        module = sys.modules.get(eps[spec].module)
        return loaded, _defaults(module) if module is not None else {}
    raise ValueError(f"model {spec!r} not found; allowed: {known_models()} or PATH.py[:NAME]")


def _defaults(module: ModuleType) -> dict:
    return {k: getattr(module, k) for k in ("DEFAULT_PARAMS", "DEFAULT_STATE", "PRIOR")
            if hasattr(module, k)}


def load_model(spec: str, params: Mapping[str, object] | None = None):
    """The reduced model (``numerics.reduced.ReducedModel``) that ``spec`` names: a built-in
    paper or ``theory.models`` module (``numerics.reduced.paper_model``), ``PATH.py[:NAME]``,
    or a model entry point. ``params`` override the defining module's DEFAULT_PARAMS by name
    (a Dohmatob model's defaults are ``dohmatob2025.DEFAULT_PARAMS``; for a MultiHeadModel:
    HeadReduced's n, seed, sgd_noise; its prior is the module's PRIOR). A ``link`` parameter
    (Dohmatob's student) may name a user's link, ``PATH.py[:NAME]`` (:func:`load_link`)."""
    from numerics.reduced import HeadReduced, ReducedModel, paper_model, reduced
    from theory.models import dohmatob2025 as dm
    from theory.multihead import MultiHeadModel
    params = _with_link(params)
    path, _ = parse_spec(spec)
    if spec == "sagitova2026":
        params = _with_activation(params)
    if path is None and spec not in _entry_points(MODEL_GROUP):
        if spec not in known_models():
            raise ValueError(f"model {spec!r} not found; allowed: {known_models()} or PATH.py[:NAME]")
        return paper_model(spec, params)
    obj, defaults = load_model_object(spec)
    if isinstance(obj, ReducedModel):
        if params:
            raise ValueError(f"{spec} is a reduced model with its parameters bound; "
                             f"parameters {sorted(params)} cannot be changed")
        return obj
    if isinstance(obj, MultiHeadModel):
        return HeadReduced(obj, defaults.get("PRIOR"), **_head_settings(spec, params))
    base = defaults.get("DEFAULT_PARAMS")
    if base is None and isinstance(obj, dm.DohmatobModel):
        base = dm.DEFAULT_PARAMS            # the kind's defaults: evaluate works on any link
    bound = None if (params is None and base is None) else {**(base or {}), **dict(params or {})}
    state = defaults.get("DEFAULT_STATE")
    return reduced(obj, bound, **({} if state is None else {"default_state": state}))


def load_link(spec: str):
    """The link σ of Dohmatob's student that ``PATH.py[:NAME]`` names (NAME defaults to
    ``LINK``), as a ``theory.models.dohmatob2025.Link`` named NAME. The object is a SymPy
    ``Lambda`` of one variable or a function of one SymPy symbol returning a SymPy expression in
    it (``CUBE = lambda t: t**3``); a ValueError naming ``--param link`` and what is allowed
    for anything else."""
    from theory.models.dohmatob2025 import LINK_HELP, as_link
    path, name = parse_spec(spec)
    where = f"--param link={spec}"
    if path is None:
        raise ValueError(f"{where}: not a file spec; allowed: {LINK_HELP}")
    try:
        module = import_file(path)
    except FileNotFoundError as exc:
        raise ValueError(f"{where}: {exc}") from None
    key = name or "LINK"
    if key not in vars(module):
        found = sorted(k for k, v in vars(module).items() if not k.startswith("_")
                       and callable(v) and not isinstance(v, (type, ModuleType)))
        raise ValueError(f"{where}: {path} defines no {key!r} (its functions: {found or 'none'}); "
                         f"allowed: {LINK_HELP}")
    obj = getattr(module, key)
    if isinstance(obj, str):
        raise ValueError(f"{where}: {key} is a str; allowed: {LINK_HELP}")
    try:
        link = as_link(obj, key)
    except ValueError as exc:
        reason = str(exc).removeprefix(f"link {key}: ")
        raise ValueError(f"{where}: {reason}") from None
    too_big = expression_too_large(link.sigma.expr)
    if too_big:
        raise ValueError(f"{where}: σ = {str(link.sigma.expr)[:60]} {too_big}")
    return link


MAX_OPERATIONS = 2000
MAX_POWER = 64
"""The largest expression a user's link or activation may be (operations) and the largest
integer power in it: a Gaussian expectation of t**100000 would expand for hours."""


def expression_too_large(expr) -> str | None:
    """Why a user's expression is beyond what the engine takes (None: it is not)."""
    import sympy as sp
    if sp.count_ops(expr) > MAX_OPERATIONS:
        return f"has more than {MAX_OPERATIONS} operations; allowed: a smaller expression"
    powers = [p.exp for p in expr.atoms(sp.Pow) if p.exp.is_Integer and abs(int(p.exp)) > MAX_POWER]
    if powers:
        return (f"raises to the power {max(powers, key=abs)}; allowed: integer powers up to "
                f"{MAX_POWER}")
    return None


def _with_link(params: Mapping[str, object] | None):
    """``params`` with a ``link=PATH.py[:NAME]`` replaced by the link it names."""
    if not params or not isinstance(params.get("link"), str):
        return params
    try:
        path, _ = parse_spec(params["link"])
    except ValueError as exc:
        raise ValueError(f"--param link={params['link']}: {exc}") from None
    return params if path is None else {**params, "link": load_link(params["link"])}


def _with_activation(params: Mapping[str, object] | None):
    """``params`` with an ``activation=PATH.py[:NAME]`` (or an entry point's name) replaced by
    the Activation it names (:func:`load_activation`); built-in names stay words."""
    spec = (params or {}).get("activation")
    from theory.multihead import ACTIVATIONS
    if not isinstance(spec, str) or spec in ACTIVATIONS:
        return params
    try:
        return {**params, "activation": load_activation(spec)}
    except ValueError as exc:
        text = str(exc)
        raise ValueError(text if text.startswith("activation") else
                         f"--param activation={spec}: {text}") from None


_HEAD_SETTINGS = {"n": int, "seed": int, "sgd_noise": float}
_HEAD_RANGES = {"n": "an integer ≥ 8, a multiple of 4", "seed": "an integer ≥ 0",
                "sgd_noise": "a real ≥ 0"}


def _head_settings(spec: str, params: Mapping[str, object] | None) -> dict:
    """HeadReduced's keywords from ``params`` (strings from the command line converted)."""
    out = {}
    for key, value in dict(params or {}).items():
        if key not in _HEAD_SETTINGS:
            raise ValueError(f"{spec}: unknown parameter(s) [{key!r}]; known: {sorted(_HEAD_SETTINGS)} "
                             "(a multi-head model's other settings are fixed by its file)")
        try:
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            out[key] = _HEAD_SETTINGS[key](number)
        except (TypeError, ValueError):
            raise ValueError(f"{spec}: parameter {key}={value!r} is not a finite number; allowed: "
                             f"{_HEAD_RANGES[key]}") from None
    return out


# --- activations ---------------------------------------------------------------------------
def known_activations() -> list[str]:
    from theory.multihead import ACTIVATIONS
    return sorted(set(ACTIVATIONS) | set(_entry_points(ACTIVATION_GROUP)))


def load_activation(spec: str):
    """The :class:`theory.multihead.Activation` that ``spec`` names: a built-in name
    (softmax, softmax-1, softmax-v, b-softmax), ``PATH.py[:NAME]`` or an activation entry
    point."""
    from theory.multihead import ACTIVATIONS, Activation
    path, name = parse_spec(spec)
    if path is not None:
        return _checked_activation(
            _pick(import_file(path), name, "ACTIVATION", (Activation,), "Activation", str(path)), spec)
    if spec in ACTIVATIONS:
        return ACTIVATIONS[spec]
    eps = _entry_points(ACTIVATION_GROUP)
    if spec in eps:
        loaded = _load_entry_point(eps[spec])
        if isinstance(loaded, ModuleType):
            loaded = _pick(loaded, None, "ACTIVATION", (Activation,), "Activation",
                           f"entry point {spec}")
        if not isinstance(loaded, Activation):
            raise ValueError(f"entry point {spec} ({eps[spec].value}) is a {type(loaded).__name__}, "
                             "not an Activation")
        return _checked_activation(loaded, spec)
    raise ValueError(f"activation={spec!r} not found; allowed: {known_activations()} or PATH.py:NAME")


def _checked_activation(act, spec: str):
    """``act`` once its ``weights`` answered, within the budget, on 2 heads of 3 logits: H
    lists of L SymPy expressions, none too large (``expression_too_large``); a ValueError
    naming ``spec`` and what is wrong otherwise (an activation that raises, loops or returns
    something else would fail later, deep in a derivation)."""
    import sympy as sp
    s = [[sp.Symbol(f"s_{h}{l}", real=True) for l in range(3)] for h in range(2)]
    v = [sp.Symbol(f"v_{h}", real=True) for h in range(2)]
    try:
        with time_budget(import_budget(), f"activation {spec}: weights(s, v)"):
            rows = act.weights(s, v)
    except Exception as exc:  # noqa: BLE001 - whatever a user's function raises: one line
        frame = user_frame(exc)
        where = f" (at {frame[0]}:{frame[1]})" if frame else ""
        raise ValueError(f"activation {spec}: weights(s, v) raised {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]}{where}; allowed: a function of the "
                         "logits s (H lists of L SymPy symbols) and sinks v returning H lists of "
                         "L SymPy expressions") from None
    shaped = (isinstance(rows, (list, tuple)) and len(rows) == 2
              and all(isinstance(r, (list, tuple)) and len(r) == 3 for r in rows))
    exprs = [sp.sympify(e, strict=True) if not isinstance(e, sp.Basic) else e
             for r in rows for e in r] if shaped and all(
        isinstance(e, (sp.Basic, int, float)) for r in rows for e in r) else None
    if exprs is None:
        raise ValueError(f"activation {spec}: weights(s, v) returned {type(rows).__name__} "
                         f"{str(rows)[:80]}; allowed: H lists of L SymPy expressions (here 2 × 3)")
    for e in exprs:
        too_big = expression_too_large(e)
        if too_big:
            raise ValueError(f"activation {spec}: a weight {too_big}")
    return act


# --- claims (plugins: ``verification.catalogue.plugin_claim_modules``) ----------------------
def load_claims_file(path: str | Path) -> list[str]:
    """Import the Python file ``path`` (its ``@claim`` checks register themselves) and return
    the ids of the claims it registered; ValueError when it registers none. Variants of
    registered claims (``Claim.variant``, e.g. ``dohmatob2025.link_variants``) that the file
    holds at module level, alone or in a list or tuple, are registered and run too."""
    load_all()                        # built-in claims first: a clash is then reported at once
    module = import_file(path)
    ids = claims_of(module.__name__) + _register_variants(module)
    if not ids:
        raise ValueError(f"{path} registers no claim; allowed: a file whose checks are decorated "
                         "with verification.claim(...)")
    return ids


def _register_variants(module: ModuleType) -> list[str]:
    """Register the variants (claims with a ``provenance``) ``module`` holds at module level."""
    from .declare import REGISTRY, Claim
    found = []
    for value in vars(module).values():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, Claim) and item.provenance and item.id not in found:
                if REGISTRY.get(item.id, item) is not item:
                    raise ValueError(f"{module.__file__}: variant {item.id} is registered twice")
                REGISTRY[item.id] = item
                found.append(item.id)
    return found


_install_finder()
