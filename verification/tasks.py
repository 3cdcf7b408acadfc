"""The claim tasks of a run: one per (claim, seed, mutation, setting), its result looked up in the
store first and stored when computed; ``run_claim_tasks`` runs a batch of them on an engine
(``verification.engine``: where and when tasks run, which knows nothing of claims). The
simulations a claim runs through ``Context.map`` are ``verification.simtasks``' (the mapper
injected into each claim's context).

The two are keyed apart. A claim run (its judgement) is keyed by the claim's whole code; a
simulation by its own function's code only (``verification.simulations``), its item and what
its ``SimContext`` holds, so an edit of a judge re-runs the claim, which finds its simulations
stored (``stored_only``: a run that may only re-judge).

This module is what a task does with a claim (its run, its entry and figures); what is written
afterwards is ``runner`` and ``report``. A claim run's key counts the claim's own code and this
module's (``run_claim`` turns an outcome into the verdict entry, its contract and figures: an
edit here must not reuse entries built the old way), not the scheduling above it
(``verification.layers``); a change of the store's format is keyed by
``verification.store.STORE_FORMAT``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import contextlib
import ctypes
import dataclasses
import functools
import importlib
import io
import math
import os
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

import numpy as np

from .checks import Ledger, OutsideRealisableSet
from .declare import VERDICTS, Outcome
from .engine import on_worker, single_thread, user_interrupted
from .stats import NaNInEvidence
from .simtasks import (SUITE_VERSION, _contained, environment, key_versions, map_subtasks,
                       stored_only)
from .simulations.base import SimulationMissing
from .store import MISSING, ResultStore, task_key

if TYPE_CHECKING:
    from .context import Context
    from .declare import Claim
    from .engine import Engine

__all__ = ["ClaimTask", "claim_task", "failed_result", "claim_key", "run_claim", "contract_of",
           "environment", "render_png", "run_claim_tasks", "key_versions", "SUITE_VERSION"]


def run_claim(claim: Claim, ctx: Context, setting: dict | None = None,
              **overrides: Any) -> tuple[dict, Outcome]:
    """(entry for report.json, Outcome). The claim runs with its own α (if it declares one)
    and a fresh ledger, whatever ``ctx`` carried, over its profile's settings or, given
    ``setting``, at that one setting of its domain (at the whole α: a map's point); exceptions
    become verdict 'error'."""
    from .context import context_with
    ctx = context_with(ctx, alpha=claim.alpha or ctx.alpha, ledger=Ledger())
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

    from .figures import fit_ticks
    out = {}
    for name, draw in figures.items():
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        draw(fig)
        fit_ticks(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        out[name] = buf.getvalue()
    return out


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

    def echo(self) -> tuple:
        """What names this task in its result, so that a result that comes back for another
        task (another claim, seed, perturbation or mutation) is caught before it is used."""
        return (self.claim_id, self.key, self.profile, self.seed, self.perturbation,
                self.mutation, repr(sorted((self.setting or {}).items())))

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
        return {**hit, "reused": True, "stage": "reused", "task": self.echo()}


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
    "has_figures", "reused", "stage", "task"}; ``stage``: "reused" (the judgement was stored),
    "rejudged" (judged again, every simulation stored) or "simulated" (some computed);
    ``task``: the task's ``echo``. With ``task.simulate`` False a run missing a simulation
    returns {"missing": "<what>"} instead."""
    return {**_claim_result(task), "task": task.echo()}


def _claim_result(task: ClaimTask) -> dict:
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
    budget = claim_budget(claim)
    try:
        with single_thread(), _within(budget), _memory_within(claim_memory(claim)):
            entry, outcome = run_claim(claim, ctx, task.setting, **overrides)
    except SimulationMissing as missing:
        return {"missing": str(missing), "entry": None, "reused": False, "stage": "missing"}
    except OverBudget:
        return failed_result(task, TimeoutError(
            f"the claim ran past its budget of {budget:g} s (${CLAIM_BUDGET_ENV} sets it)"))
    figures, figure_error = {}, None
    if task.figures:
        try:
            figures = render_png(outcome.figures)
        except Exception as exc:  # noqa: BLE001 - figures are a convenience: keep the verdict
            figure_error = f"{type(exc).__name__}: {exc}"
    result = {"entry": entry, "arrays": dict(outcome.arrays), "figures": figures,
              "figure_error": figure_error, "has_figures": task.figures, "reused": False,
              "simulated_with": dict(ctx.tally.code), "seed_free": not ctx.tally.drew_seed}
    if task.store is not None and entry["verdict"] != "error":
        task.store.put(task.key, result, {"stage": "judgement", "claim": task.claim_id,
                                          "code": _claim_code(task), "versions": key_versions()})
    return {**result, "stage": "simulated" if ctx.tally.computed else "rejudged",
            "simulations": ctx.tally.counts()}


CLAIM_BUDGET_ENV = "ATTNV_CLAIM_BUDGET"
"""Seconds a claim of the user's (a claims file, a plugin) may run (default
``DEFAULT_CLAIM_BUDGET``; 0: no limit); the suite's own claims have none."""
DEFAULT_CLAIM_BUDGET = 3600.0


class OverBudget(BaseException):
    """Raised in a claim's thread when it runs past its budget (a BaseException, so that a
    claim's own ``except Exception`` does not swallow it)."""


def _suites(claim) -> bool:
    """Whether ``claim`` is one of the suite's own (no budget: the quick and full profiles are
    sized for it) rather than a user's (a claims file, a plugin)."""
    module = claim.module or getattr(claim.check, "__module__", "") or ""
    return module.split(".")[0] in ("theory", "numerics", "verification")


def _limit(env: str, default: float) -> float:
    """``$env`` as a number ≥ 0 (``default`` when unset or not one: a typo must not lift it)."""
    try:
        value = float(os.environ.get(env, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value >= 0 else default


def claim_budget(claim) -> float:
    """The seconds ``claim`` may run: 0 (no limit) for the suite's claims, else
    ``$ATTNV_CLAIM_BUDGET`` (``DEFAULT_CLAIM_BUDGET`` when unset or not a number ≥ 0)."""
    return 0.0 if _suites(claim) else _limit(CLAIM_BUDGET_ENV, DEFAULT_CLAIM_BUDGET)


@contextlib.contextmanager
def _within(seconds: float):
    """Within: ``OverBudget`` raised in this thread once ``seconds`` have passed (a watchdog
    thread sets it; it arrives at the claim's next Python instruction, so a claim stuck in one
    long C call stops when that call returns). 0: no limit. Works in this process and in a
    worker's task thread alike."""
    if not seconds:
        yield
        return
    target, done = threading.get_ident(), threading.Event()

    def watch() -> None:
        if not done.wait(seconds):
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target),
                                                       ctypes.py_object(OverBudget))
    watchdog = threading.Thread(target=watch, name="claim-budget", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()
        # the watchdog may have fired as the claim finished: nothing may arrive after this
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), None)


CLAIM_MEMORY_ENV = "ATTNV_CLAIM_MEMORY"
"""Gigabytes of memory a claim of the user's may take on top of what the process holds when it
runs in this process (default ``DEFAULT_CLAIM_MEMORY``; 0: no limit); in a worker, the
worker's own memory limit applies (its nanny restarts it, and the claim's verdict is
``error``)."""
DEFAULT_CLAIM_MEMORY = 8.0


def claim_memory(claim) -> float:
    """The gigabytes ``claim`` may allocate in this process (0: no limit; see
    ``claim_budget`` for whose claims are limited)."""
    return 0.0 if _suites(claim) else _limit(CLAIM_MEMORY_ENV, DEFAULT_CLAIM_MEMORY)


@contextlib.contextmanager
def _memory_within(gigabytes: float):
    """Within, in this process (not a dask worker, whose nanny limits it): allocations beyond
    ``gigabytes`` more than the process holds now fail (a MemoryError in the claim: its
    ``error``), by the address-space limit, restored after. 0 or no ``resource``: no limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        resource = None
    if not gigabytes or resource is None or on_worker():
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm") as f:
            held = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        yield
        return
    limit = held + int(gigabytes * 2**30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _claim_code(task: ClaimTask) -> dict[str, str] | None:
    """The two hashes of a claim run's code (``verification.records.claim_code``), in its stored
    entry's description (``store prune`` reads them)."""
    from .records import claim_code
    return claim_code(_claim(task))


# -------------------------------------------------------------------------------------------
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
    return {"entry": entry, "arrays": {}, "figures": {}, "reused": False, "task": spec.echo()}


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
