"""The tasks of a run: one per (claim, seed, mutation), and the simulations a claim runs through
``Context.map`` (``map_subtasks``, the mapper injected into each claim's context). Both look their
result up in the store first and store it when computed; ``run_claim_tasks`` and
``run_subtasks`` run a batch of them on an engine (``verification.engine``: where and when tasks
run, which knows nothing of claims).

The two are keyed apart. A claim run (its judgement) is keyed by the claim's whole code; a
simulation (``SubTask``) by its own function's code only (``verification.simulations``), its
item and what its ``SimContext`` holds, so an edit of a judge re-runs the claim, which finds its
simulations stored (``stored_only``: a run that may only re-judge).

This module is what a task does with a claim (its run, its entry and figures); what is written
afterwards is ``runner`` and ``report``. A claim run's key counts the claim's own code and this
module's (``run_claim`` turns an outcome into the verdict entry, its contract and figures: an
edit here must not reuse entries built the old way), not the scheduling above it
(``verification.layers``); a change of the store's format is keyed by
``verification.store.STORE_FORMAT``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import contextlib
import dataclasses
import functools
import hashlib
import importlib
import io
from pathlib import Path, PurePath
import platform
import time
import traceback
from typing import TYPE_CHECKING, Any

import numpy as np

from .checks import Ledger, OutsideRealisableSet
from .declare import VERDICTS, Outcome
from .engine import SUBTASK_PRIORITY, on_worker, single_thread, user_interrupted
from .stats import NaNInEvidence
from .simulations.base import SimContext, SimulationMissing
from .store import MISSING, ResultStore, describe, task_key

if TYPE_CHECKING:
    from .context import Context, Tally
    from .declare import Claim
    from .engine import Engine

__all__ = ["ClaimTask", "SubTask", "claim_task", "subtask", "failed_result", "claim_key", "run_claim",
           "contract_of", "environment", "render_png", "map_subtasks", "stored_only", "run_subtasks",
           "run_claim_tasks", "item_key", "key_versions", "SUITE_VERSION"]

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


def run_claim(claim: Claim, ctx: Context, setting: dict | None = None,
              **overrides: Any) -> tuple[dict, Outcome]:
    """(entry for report.json, Outcome). The claim runs with its own α (if it declares one)
    and a fresh ledger, whatever ``ctx`` carried, over its profile's settings or, given
    ``setting``, at that one setting of its domain (at the whole α: a map's point); exceptions
    become verdict 'error'."""
    ctx = dataclasses.replace(ctx, alpha=claim.alpha or ctx.alpha, ledger=Ledger())
    start = time.perf_counter()
    outcome = _judged(claim, ctx, setting, overrides)
    seconds = time.perf_counter() - start
    outcome = _with_check_arrays(outcome, ctx)
    evidence = dict(outcome.evidence)
    if outcome.tracked:
        evidence["tracked"] = {k: {"value": v, "tol": t} for k, (v, t) in outcome.tracked.items()}
    entry = {"id": claim.id, "paper": claim.paper, "label": claim.label,
             "statement": claim.statement, "verdict": outcome.verdict,
             "summary": outcome.summary, "contract": contract_of(claim, ctx),
             "evidence": evidence, "seconds": seconds}
    if ctx.perturbation is not None:      # calibration: did the perturbation change anything?
        entry["perturbation_applied"] = ctx.ledger.perturbation_applied
    if outcome.verdict != "error" and (data := ctx.ledger.family_data()):
        entry["family_data"] = data       # calibration's pulls, effects and mutation sizes
    if claim.domain.coordinates:
        entry["domain"] = _domain_entry(claim, ctx, setting)
    if claim.reading:
        entry["reading"] = claim.reading
    if claim.provenance:
        entry["provenance"] = claim.provenance
    return entry, outcome


def _judged(claim: Claim, ctx: Context, setting: dict | None, overrides: dict) -> Outcome:
    """The claim's Outcome (over its profile's settings, or at ``setting``); an exception is
    the verdict 'error'."""
    try:
        outcome = (claim(ctx, **overrides) if setting is None
                   else claim.at(ctx, setting, **overrides))
        _check_outcome(claim.id, outcome)
    except (NaNInEvidence, OutsideRealisableSet) as exc:
        outcome = Outcome("error", f"no verdict: {exc}", {"error": str(exc)})
    except Exception as exc:  # the check itself failed to run
        outcome = Outcome("error", f"{type(exc).__name__}: {exc}",
                          {"error": str(exc), "traceback": traceback.format_exc(limit=8)})
    except (KeyboardInterrupt, SystemExit) as exc:
        # raised by the claim's own code (a stray sys.exit, a library's KeyboardInterrupt):
        # that claim's error, the run goes on; Ctrl-C at the terminal stops the run
        if isinstance(exc, KeyboardInterrupt) and user_interrupted():
            raise
        outcome = Outcome("error", f"the check raised {type(exc).__name__}({exc}); a claim "
                          "returns an Outcome, it does not end the process",
                          {"error": f"{type(exc).__name__}: {exc}",
                           "traceback": traceback.format_exc(limit=8)})
    return outcome


def _check_outcome(claim_id: str, outcome: Any) -> None:
    """A TypeError naming what is wrong with what a claim returned (its ``error`` verdict,
    whatever the engine): an Outcome with a str summary, dict evidence, arrays and figures, and
    tracked values {name: (value, tolerance)}."""
    if not isinstance(outcome, Outcome):
        raise TypeError(f"claim {claim_id} returned {type(outcome).__name__}, not Outcome")
    wrong = [name for name, value, kind in (("summary", outcome.summary, str),
                                            ("evidence", outcome.evidence, dict),
                                            ("tracked", outcome.tracked, dict),
                                            ("arrays", outcome.arrays, dict),
                                            ("figures", outcome.figures, dict))
             if not isinstance(value, kind)]
    if not wrong and not all(isinstance(v, (tuple, list)) and len(v) == 2
                             for v in outcome.tracked.values()):
        wrong = ["tracked (each value a (value, tolerance) pair)"]
    if wrong:
        raise TypeError(f"claim {claim_id} returned an Outcome whose {', '.join(wrong)} "
                        "is of the wrong type; allowed: Outcome(verdict, summary: str, "
                        "evidence: dict, tracked: dict, arrays: dict, figures: dict)")


def _domain_entry(claim: Claim, ctx: Context, setting: dict | None) -> dict:
    """What the verdict covers: the claim's domain and the settings judged."""
    return {"coordinates": claim.domain.to_json()["coordinates"],
            "where": [n for n, _ in claim.domain.where], "reference": claim.domain.reference,
            "settings": [setting] if setting is not None else list(claim.settings(ctx.profile))}


def _with_check_arrays(outcome: Outcome, ctx: Context) -> Outcome:
    """The outcome with every check's full per-comparison columns (``Ledger.arrays``:
    ``checks/<k>/<column>``) beside the claim's own arrays, which win a name clash."""
    if outcome.verdict == "error" or not ctx.ledger.checks:
        return outcome
    return dataclasses.replace(outcome, arrays={**ctx.ledger.arrays(), **outcome.arrays})


def contract_of(claim: Claim, ctx: Context) -> dict[str, Any]:
    """The claim's error contract (``verification.checks``) from what its checks spent. An exact
    claim has α = 0 and no resolution; a statistical claim whose checks did not go through the
    ledger says so (``"stated": false``) rather than claiming α = 0."""
    contract = ctx.ledger.contract().to_json()
    contract["exact"] = not claim.statistical
    if claim.statistical and not ctx.ledger.families:
        contract.update(alpha=None, stated=False)
    unresolved = ctx.ledger.unresolved()          # exact families have none, by design
    if unresolved:
        contract["resolution_unstated"] = unresolved
    return contract


def render_png(figures: Mapping[str, Callable[[Any], object]]) -> dict[str, bytes]:
    """Draw each figure callable on a fresh matplotlib Figure: {name: PNG bytes}."""
    if not figures:
        return {}
    # a bare Figure renders through the Agg canvas without touching pyplot's global backend,
    # so a notebook's inline plotting survives a run
    from matplotlib.figure import Figure

    out = {}
    for name, draw in figures.items():
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        out[name] = buf.getvalue()
    return out


def key_versions() -> dict:
    """The library versions a stored result is keyed on (``verification.store.describe``)."""
    return describe(environment())


def claim_key(claim_id: str, module: str | Sequence[str], profile: str, seed: int, device: str,
              mutation: str | None, perturbation: tuple | None = None,
              setting: dict | None = None) -> str:
    """The content hash of one claim run, its judgement (see ``verification.store``);
    ``module``: the modules whose code it runs (this module's, which builds the entry, is
    added); ``setting``: one setting of its domain (a map's point; None: the profile's
    settings). Its simulations are keyed apart (``SubTask.key``), by their own code: a declared
    mutation that changes only the judged side reuses the true model's simulations, and one
    that changes the simulated model shows in the items it maps over."""
    from .codehash import code_hash
    modules = [module] if isinstance(module, str) else list(module)
    return task_key(kind="claim", claim=claim_id,
                    code=[code_hash(m) for m in modules] + [code_hash(__name__)],
                    profile=profile,
                    seed=int(seed), device=device, mutation=mutation,
                    perturbation=list(perturbation) if perturbation else None,
                    setting=setting, versions=key_versions(), suite=SUITE_VERSION)


@dataclasses.dataclass(frozen=True)
class ClaimTask:
    """One claim run: the claim (by id and the module that registers it), the run's settings,
    an optional calibration perturbation or declared mutation, and where results are stored."""

    claim_id: str
    module: str
    profile: str
    seed: int
    device: str
    perturbation: tuple | None = None
    mutation: str | None = None
    figures: bool = True
    store: ResultStore | None = None
    key: str = ""
    setting: dict | None = None
    """One setting of the claim's domain (a map's point); None: the profile's settings."""
    claim: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The Claim itself (it travels by reference to its module; an unregistered claim, as a
    test or notebook builds one, travels whole)."""
    simulate: bool = True
    """False: only re-judge, from stored simulations (a missing one ends the run as one that
    needs simulating: ``claim_task``'s ``"missing"``)."""
    rejudge: bool = False
    """True: a stored judgement is not reused (the claim is judged again from its stored
    simulations)."""

    @classmethod
    def make(cls, claim, profile: str, seed: int, device: str, perturbation=None, mutation=None,
             figures: bool = True, store: ResultStore | None = None,
             setting: dict | None = None, simulate: bool = True,
             rejudge: bool = False) -> ClaimTask:
        if mutation is not None and mutation not in (claim.mutations or {}):
            raise ValueError(f"mutation={mutation!r}; allowed for {claim.id}: "
                             f"{sorted(claim.mutations or {})}")
        if setting is not None:
            setting = claim.domain.validate(setting)
        module = claim.module or claim.check.__module__
        modules = [module, *claim.extra_modules]
        try:
            key = claim_key(claim.id, modules, profile, seed, device, mutation, perturbation,
                            setting)
        except ValueError:      # code without a source file (typed in a notebook): not stored,
            key = ""            # since nothing could tell when it changed
            store = None
        return cls(claim.id, module, profile, int(seed), device, perturbation, mutation,
                   figures, store, key, setting, claim, bool(simulate), bool(rejudge))

    def lookup(self) -> dict | None:
        """The stored result when usable (it has figures if figures are wanted), else None. An
        entry of the wrong shape is damaged: reported, removed, recomputed."""
        if self.store is None or self.rejudge:
            return None
        hit = self.store.get(self.key)
        if hit is MISSING:
            return None
        problem = _result_problem(hit, self.claim_id)
        if problem:
            self.store.discard(self.key, problem)
            return None
        if self.figures and not hit["has_figures"]:
            return None
        if not _simulations_current(hit.get("simulated_with")):
            return None
        return {**hit, "reused": True, "stage": "reused"}


def _simulations_current(used: Any) -> bool:
    """Whether the code of every simulation a stored judgement judged is what it is now
    ({module: code hash}): a claim whose closure does not reach a simulation's module (a
    user's claims file that loads its simulations by path) is judged again when it changed."""
    from .codehash import code_hash
    if not used:
        return True
    if not isinstance(used, dict):
        return False
    try:
        return all(code_hash(str(m)) == h for m, h in used.items())
    except (ValueError, SyntaxError, OSError):
        return False


def _result_problem(hit: Any, claim_id: str) -> str | None:
    """What is wrong with a stored claim result (None: it has the shape ``claim_task`` writes)."""
    if not isinstance(hit, dict) or not {"entry", "arrays", "figures", "has_figures"} <= set(hit):
        return "not a claim result"
    entry = hit["entry"]
    if not isinstance(entry, dict) or entry.get("id") != claim_id:
        return f"not a result of {claim_id}"
    if entry.get("verdict") not in VERDICTS or not isinstance(entry.get("summary"), str):
        return "no verdict"
    if not isinstance(entry.get("evidence"), dict) or not isinstance(entry.get("seconds"), float):
        return "no evidence"
    arrays, figures = hit["arrays"], hit["figures"]
    if not (isinstance(arrays, dict) and all(isinstance(k, str) and isinstance(v, np.ndarray)
                                             for k, v in arrays.items())):
        return "arrays of the wrong kind"
    if not (isinstance(figures, dict) and all(isinstance(k, str) and isinstance(v, bytes)
                                              for k, v in figures.items())):
        return "figures of the wrong kind"
    if not isinstance(hit["has_figures"], bool):
        return "no figure flag"
    return None


def _claim(task: ClaimTask):
    if task.claim is not None:
        return task.claim
    from .declare import REGISTRY
    if task.claim_id not in REGISTRY:
        importlib.import_module(task.module)      # registers the claims of that module
    if task.claim_id not in REGISTRY:
        raise KeyError(f"claim {task.claim_id!r} is not registered by {task.module}")
    return REGISTRY[task.claim_id]


def claim_task(task: ClaimTask) -> dict:
    """Run one claim (or reuse its stored result): {"entry", "arrays", "figures" (PNG bytes),
    "has_figures", "reused", "stage"}; ``stage``: "reused" (the judgement was stored),
    "rejudged" (judged again, every simulation stored) or "simulated" (some computed). With
    ``task.simulate`` False a run missing a simulation returns {"missing": "<what>"} instead."""
    from .context import Context
    hit = task.lookup()
    if hit is not None:
        return hit
    try:
        with _contained(f"claim {task.claim_id}"):
            claim = _claim(task)
            overrides = claim.mutations[task.mutation]() if task.mutation else {}
    except Exception as exc:  # noqa: BLE001 - its module or its mutation failed: its error
        return failed_result(task, exc)
    mapper = map_subtasks if task.simulate else stored_only
    ctx = Context(profile=task.profile, seed=task.seed, device=task.device,
                  perturbation=task.perturbation, store=task.store,
                  mapper=functools.partial(mapper, claim_id=task.claim_id))
    try:
        with single_thread():
            entry, outcome = run_claim(claim, ctx, task.setting, **overrides)
    except SimulationMissing as missing:
        return {"missing": str(missing), "entry": None, "reused": False, "stage": "missing"}
    figures, figure_error = {}, None
    if task.figures:
        try:
            figures = render_png(outcome.figures)
        except Exception as exc:  # noqa: BLE001 - figures are a convenience: keep the verdict
            figure_error = f"{type(exc).__name__}: {exc}"
    result = {"entry": entry, "arrays": dict(outcome.arrays), "figures": figures,
              "figure_error": figure_error, "has_figures": task.figures, "reused": False,
              "simulated_with": dict(ctx.tally.code)}
    if task.store is not None and entry["verdict"] != "error":
        task.store.put(task.key, result, {"stage": "judgement", "claim": task.claim_id,
                                          "code": _claim_code(task), "versions": key_versions()})
    return {**result, "stage": "simulated" if ctx.tally.computed else "rejudged",
            "simulations": ctx.tally.counts()}


def _claim_code(task: ClaimTask) -> dict[str, str] | None:
    """The two hashes of a claim run's code (``verification.records.claim_code``), in its stored
    entry's description (``store prune`` reads them)."""
    from .records import claim_code
    return claim_code(_claim(task))


# -------------------------------------------------------------------------------------------
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


def failed_result(spec: ClaimTask, exc: Exception) -> dict:
    """The result of a claim task that did not finish (its worker died, its module or its
    mutation could not be loaded): an ``error`` entry."""
    try:
        claim = _claim(spec)
        about = {"id": claim.id, "paper": claim.paper, "label": claim.label,
                 "statement": claim.statement}
    except Exception:  # noqa: BLE001 - the claim itself cannot be loaded: its id is known
        about = {"id": spec.claim_id, "paper": spec.claim_id.partition(":")[0], "label": "",
                 "statement": ""}
    entry = {**about, "verdict": "error", "summary": f"the task did not finish: {exc}",
             "contract": None, "evidence": {"error": str(exc)}, "seconds": 0.0}
    return {"entry": entry, "arrays": {}, "figures": {}, "reused": False}


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


def run_claim_tasks(specs: Sequence[Any], engine: Engine, on_result: Callable[[int, dict], Any],
                    priorities: Sequence[float] | None = None) -> None:
    """Run ``specs`` on ``engine`` (an ``Engine``, entered here only when something is left to
    compute), calling ``on_result(i, result)`` as each finishes: stored results first, without
    starting any worker. A task whose worker died gets an ``error`` entry."""
    todo = []
    for i, spec in enumerate(specs):
        hit = spec.lookup()
        if hit is not None:
            on_result(i, hit)
        else:
            todo.append(i)
    if not todo:
        return
    priorities = priorities or [0.0] * len(specs)
    engine.cap(len(todo))
    with engine:
        index = {engine.submit(claim_task, specs[i], priority=priorities[i]).index: i for i in todo}
        for handle, result in engine.completed():
            i = index[handle.index]
            on_result(i, failed_result(specs[i], result) if isinstance(result, Exception) else result)
