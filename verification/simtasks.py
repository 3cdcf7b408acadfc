"""The simulations of a run: each call of ``Context.map`` a ``SubTask``, keyed by what it
computes with (its function's own code: the import closure of its module, ``verification.
simulations``, numerics, theory; never the judging code), its item and its ``SimContext``, looked
up in the store first and stored when computed (``map_subtasks``, the mapper the claim tasks
inject; ``stored_only`` for a run that may only re-judge), run on the cluster when called from a
worker (``run_subtasks``). What a claim's task does with its simulations, the judging, is
``verification.tasks``; neither module's code is in a simulation's key."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import contextlib
import dataclasses
import functools
import hashlib
from pathlib import Path, PurePath
import platform
from typing import TYPE_CHECKING, Any

import numpy as np

from .engine import SUBTASK_PRIORITY, on_worker, single_thread, user_interrupted
from .simulations.base import SimContext, SimulationMissing
from .store import MISSING, ResultStore, describe, task_key

if TYPE_CHECKING:
    from .context import Tally

__all__ = ["SubTask", "subtask", "item_key", "map_subtasks", "stored_only", "run_subtasks",
           "environment", "key_versions", "SUITE_VERSION"]

SUITE_VERSION = "0.1.0"


def environment() -> dict[str, str | None]:
    """Versions of Python and the numerical libraries, and the platform (for the report)."""
    import mpmath
    import numpy
    import scipy
    import sympy
    env = {"python": platform.python_version(), "sympy": sympy.__version__,
           "numpy": numpy.__version__, "scipy": scipy.__version__, "mpmath": mpmath.__version__,
           "platform": platform.platform()}
    try:
        import torch
        env["torch"] = torch.__version__
    except ImportError:  # pragma: no cover
        env["torch"] = None
    return env


def key_versions() -> dict:
    """The library versions a stored result is keyed on (``verification.store.describe``)."""
    return describe(environment())


@contextlib.contextmanager
def _contained(what: str):
    """SystemExit, or a KeyboardInterrupt that is not the person at the terminal's Ctrl-C,
    raised by the claim's own code as a RuntimeError: it fails that claim, not the process
    (on a dask worker, SystemExit would kill the worker)."""
    try:
        yield
    except (SystemExit, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt) and user_interrupted():
            raise
        raise RuntimeError(f"{what} raised {type(exc).__name__}({exc}); a check returns or "
                           "raises an exception, it does not end the process") from None


@dataclasses.dataclass(frozen=True)
class SubTask:
    """One simulation ``fn(sim, item)`` of ``Context.map``, keyed by what it computes with: its
    function's own code (the import closure of its module: ``verification.simulations``, numerics,
    theory; never the judging code), the item, and the ``SimContext`` (profile, device; seed and
    setting when seeded), with the library versions. ``claim_id``: the claim that asked for it
    (its entry's description; not part of the key, so two claims share one result)."""

    fn: Callable[[Any, Any], Any]
    sim: SimContext
    item: Any
    store: ResultStore | None = None
    claim_id: str = ""

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    @functools.cached_property
    def key(self) -> str | None:
        """None: not stored (the function has no source file, so no edit of it could be told)."""
        from .codehash import code_hash
        try:
            code = code_hash(self.fn.__module__)
        except ValueError:
            return None
        s = self.sim
        return task_key(kind="simulation", fn=self.name, code=code, item=item_key(self.item),
                        profile=s.profile, device=s.device, seed=s.seed, setting=list(s.setting),
                        versions=key_versions(), suite=SUITE_VERSION)

    def meta(self) -> dict:
        from .codehash import code_hash
        return {"stage": "simulation", "fn": self.name, "claim": self.claim_id,
                "module": self.fn.__module__, "code": code_hash(self.fn.__module__),
                "versions": key_versions()}


def item_key(x: Any, depth: int = 0) -> Any:   # noqa: C901 - one case per kind of input
    """A simulation's item as canonical JSON data for its key: data as it is; a SymPy object by
    its ``srepr``; a path (a model file the simulation loads) by its content; a module-level
    function or class by its name and its module's code hash (an edit of a wrong model
    re-simulates it); ``functools.partial`` by its parts; a frozen dataclass by its class and
    fields. Anything else is a TypeError naming it."""
    import sympy as sp

    from .codehash import code_hash
    if depth > 100:
        raise TypeError("a simulation's item nested deeper than 100 levels")
    if x is None or isinstance(x, (bool, str, int, float)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return {"ndarray": x.tolist(), "dtype": str(x.dtype)}
    if isinstance(x, (list, tuple)):
        return [item_key(v, depth + 1) for v in x]
    if isinstance(x, dict):
        return {"dict": sorted(([item_key(k, depth + 1), item_key(v, depth + 1)]
                                for k, v in x.items()), key=repr)}
    if isinstance(x, sp.Basic):
        return {"sympy": sp.srepr(x)}
    if isinstance(x, PurePath):               # a file the simulation reads: keyed by its content
        path = Path(x).expanduser().resolve()
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = None
        return {"file": str(path), "sha256": digest}
    if isinstance(x, functools.partial):
        return {"partial": [item_key(x.func, depth + 1), item_key(list(x.args), depth + 1),
                            item_key(dict(x.keywords), depth + 1)]}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {"dataclass": item_key(type(x), depth + 1),
                "fields": {f.name: item_key(getattr(x, f.name), depth + 1)
                           for f in dataclasses.fields(x)}}
    module, name = getattr(x, "__module__", None), getattr(x, "__qualname__", None)
    if callable(x) and module and name and "<" not in name:
        try:
            return {"code": f"{module}:{name}", "hash": code_hash(module)}
        except ValueError:
            pass
    raise TypeError(f"a simulation's item holds a {type(x).__module__}.{type(x).__qualname__} "
                    f"{x!r:.80}; allowed: data (numbers, strings, lists, dicts, numpy arrays), "
                    "SymPy expressions, module-level functions and classes, functools.partial, "
                    "frozen dataclasses of these")


def subtask(spec: SubTask) -> Any:
    """Run one simulation (or reuse its stored result)."""
    store, key = spec.store, spec.key
    if store is not None and key is not None:
        hit = store.get(key)
        if hit is not MISSING:
            return hit
    with single_thread(), _contained(f"simulation {spec.fn.__qualname__}"):
        value = spec.fn(spec.sim, spec.item)
    if store is not None and key is not None:
        store.put(key, value, spec.meta())
    return value


def map_subtasks(sim: SimContext, fn: Callable[[Any, Any], Any], items: Sequence[Any], store: Any,
                 progress: Callable[[float], Any], tally: Tally, claim_id: str = "") -> list:
    """``Context.map`` in a run (the context's ``mapper``): each call a ``SubTask``, looked up
    in ``store`` here first (a re-judged claim reads its simulations without a round trip to
    the cluster), the others run by ``run_subtasks`` and stored."""
    return _mapped(sim, fn, items, store, progress, tally, claim_id, simulate=True)


def stored_only(sim: SimContext, fn: Callable[[Any, Any], Any], items: Sequence[Any], store: Any,
                progress: Callable[[float], Any], tally: Tally, claim_id: str = "") -> list:
    """``map_subtasks`` for a run that may only re-judge: a simulation that is not stored raises
    ``SimulationMissing`` (before anything is computed)."""
    return _mapped(sim, fn, items, store, progress, tally, claim_id, simulate=False)


def _mapped(sim, fn, items, store, progress, tally, claim_id, simulate: bool) -> list:
    specs = [SubTask(fn, sim, item, store, claim_id) for item in items]
    keys = [s.key for s in specs]       # an item that cannot be keyed fails here, before any work
    out: list = [None] * len(specs)
    todo = []
    for i, key in enumerate(keys):
        hit = store.get(key) if store is not None and key is not None else MISSING
        if hit is MISSING:
            todo.append(i)
        else:
            out[i] = hit
    if todo and not simulate:
        raise SimulationMissing(specs[todo[0]].name, items[todo[0]])
    tally.reused += len(specs) - len(todo)
    tally.computed += len(todo)
    if specs and keys[0] is not None:
        from .codehash import code_hash
        tally.code[fn.__module__] = code_hash(fn.__module__)
    done = len(specs) - len(todo)
    if specs and done:
        progress(done / len(specs))

    def step(fraction: float) -> None:
        progress((done + fraction * len(todo)) / len(specs))
    for i, value in zip(todo, run_subtasks([specs[i] for i in todo], progress=step)):
        out[i] = value
    return out


# -------------------------------------------------------------------------------------------
def run_subtasks(specs: Sequence[Any], progress: Callable[[float], Any] | None = None) -> list:
    """Results of ``specs`` in order: on the cluster when called from a worker (the calling
    task secedes while it waits, so its slot runs subtasks), else one after the other."""
    if not specs:
        return []
    keys = [s.key for s in specs]       # an item that cannot be keyed fails here, before any work
    if on_worker() and len(specs) > 1:
        from distributed import worker_client
        with worker_client() as client:
            # a stored subtask's future is named by its key, so two claims asking for the same
            # shared simulation at once get one computation; subtasks go before every queued
            # claim, so a claim that has split finishes early instead of at the end of the run
            futures = [client.submit(subtask, s, key=f"attnv-{k}" if k else None, pure=False,
                                     priority=SUBTASK_PRIORITY) for s, k in zip(specs, keys)]
            return client.gather(futures)
    out = []
    for i, s in enumerate(specs):
        out.append(subtask(s))
        if progress is not None:
            progress((i + 1) / len(specs))
    return out
