"""The tasks of a run: one per (claim, seed, mutation), and the subtasks a claim spawns through
``Context.map``. Both look their result up in the store first and store it when computed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
import functools
import importlib
from typing import Any

from .store import MISSING, ResultStore, describe, task_key

__all__ = ["ClaimTask", "SubTask", "claim_task", "run_claim_tasks", "run_subtasks", "claim_key"]


def _versions() -> dict:
    from .runner import environment
    return describe(environment())


def claim_key(claim_id: str, module: str | Sequence[str], profile: str, seed: int, device: str,
              mutation: str | None, perturbation: tuple | None = None) -> str:
    """The content hash of one claim run (see ``verification.store``); ``module``: the modules
    whose code it runs; ``perturbation=None`` gives the key its simulations share with the
    perturbed runs of calibration."""
    from .codehash import code_hash
    from .runner import SUITE_VERSION
    modules = [module] if isinstance(module, str) else list(module)
    return task_key(kind="claim", claim=claim_id, code=[code_hash(m) for m in modules],
                    profile=profile,
                    seed=int(seed), device=device, mutation=mutation,
                    perturbation=list(perturbation) if perturbation else None,
                    versions=_versions(), suite=SUITE_VERSION)


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
    sim_key: str = ""
    claim: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The Claim itself (it travels by reference to its module; an unregistered claim, as a
    test or notebook builds one, travels whole)."""

    @classmethod
    def make(cls, claim, profile: str, seed: int, device: str, perturbation=None, mutation=None,
             figures: bool = True, store: ResultStore | None = None) -> ClaimTask:
        if mutation is not None and mutation not in (claim.mutations or {}):
            raise ValueError(f"mutation={mutation!r}; allowed for {claim.id}: "
                             f"{sorted(claim.mutations or {})}")
        module = claim.module or claim.check.__module__
        modules = [module, *claim.extra_modules]
        try:
            key = claim_key(claim.id, modules, profile, seed, device, mutation, perturbation)
            sim = claim_key(claim.id, modules, profile, seed, device, mutation)
        except ValueError:      # code without a source file (typed in a notebook): not stored,
            key = sim = ""      # since nothing could tell when it changed
            store = None
        return cls(claim.id, module, profile, int(seed), device, perturbation, mutation,
                   figures, store, key, sim, claim)

    def lookup(self) -> dict | None:
        """The stored result when usable (it has figures if figures are wanted), else None."""
        if self.store is None:
            return None
        hit = self.store.get(self.key)
        if hit is MISSING or (self.figures and not hit.get("has_figures")):
            return None
        return {**hit, "reused": True}


def _claim(task: ClaimTask):
    if task.claim is not None:
        return task.claim
    from .registry import REGISTRY
    if task.claim_id not in REGISTRY:
        importlib.import_module(task.module)      # registers the claims of that module
    if task.claim_id not in REGISTRY:
        raise KeyError(f"claim {task.claim_id!r} is not registered by {task.module}")
    return REGISTRY[task.claim_id]


def claim_task(task: ClaimTask) -> dict:
    """Run one claim (or reuse its stored result): {"entry", "arrays", "figures" (PNG bytes),
    "has_figures", "reused"}."""
    from .context import Context
    from .engine import single_thread
    from .report import render_png
    from .runner import run_claim
    hit = task.lookup()
    if hit is not None:
        return hit
    claim = _claim(task)
    overrides = claim.mutations[task.mutation]() if task.mutation else {}
    ctx = Context(profile=task.profile, seed=task.seed, device=task.device,
                  perturbation=task.perturbation, store=task.store, task_key=task.sim_key)
    with single_thread():
        entry, outcome = run_claim(claim, ctx, **overrides)
    figures, figure_error = {}, None
    if task.figures:
        try:
            figures = render_png(outcome.figures)
        except Exception as exc:  # noqa: BLE001 - figures are a convenience: keep the verdict
            figure_error = f"{type(exc).__name__}: {exc}"
    result = {"entry": entry, "arrays": dict(outcome.arrays), "figures": figures,
              "figure_error": figure_error, "has_figures": task.figures, "reused": False}
    if task.store is not None and entry["verdict"] != "error":
        task.store.put(task.key, result)
    return result


# -------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SubTask:
    """``fn(ctx, item)`` for ``Context.map``."""

    fn: Callable[[Any, Any], Any]
    ctx: Any
    item: Any
    shared: bool = False

    @functools.cached_property
    def key(self) -> str | None:
        fn = f"{self.fn.__module__}.{self.fn.__qualname__}"
        if self.shared:
            from .codehash import code_hash
            from .runner import SUITE_VERSION
            c = self.ctx
            try:
                code = code_hash(self.fn.__module__)
            except ValueError:          # no source file: nothing could tell when it changed
                return None
            return task_key(kind="shared", fn=fn, code=code, item=self.item, profile=c.profile,
                            seed=c.seed, device=c.device, versions=_versions(), suite=SUITE_VERSION)
        if not self.ctx.task_key:
            return None
        return task_key(kind="subtask", parent=self.ctx.task_key, fn=fn, item=self.item)


def subtask(spec: SubTask) -> Any:
    """Run one subtask (or reuse its stored result)."""
    from .engine import single_thread
    store, key = spec.ctx.store, spec.key
    if store is not None and key is not None:
        hit = store.get(key)
        if hit is not MISSING:
            return hit
    with single_thread():
        value = spec.fn(spec.ctx, spec.item)
    if store is not None and key is not None:
        store.put(key, value)
    return value


def run_subtasks(specs: Sequence[SubTask], progress: Callable[[float], Any] | None = None) -> list:
    """Results of ``specs`` in order: on the cluster when called from a worker (the calling
    task secedes while it waits, so its slot runs subtasks), else one after the other."""
    if not specs:
        return []
    keys = [s.key for s in specs]       # an item that cannot be keyed fails here, before any work
    from .engine import on_worker
    if on_worker() and len(specs) > 1:
        from distributed import worker_client
        with worker_client() as client:
            # a stored subtask's future is named by its key, so two claims asking for the same
            # shared simulation at once get one computation
            futures = [client.submit(subtask, s, key=f"attnv-{k}" if k else None, pure=False)
                       for s, k in zip(specs, keys)]
            return client.gather(futures)
    out = []
    for i, s in enumerate(specs):
        out.append(subtask(s))
        if progress is not None:
            progress((i + 1) / len(specs))
    return out


def run_claim_tasks(specs: Sequence[ClaimTask], engine, on_result: Callable[[int, dict], Any],
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
            on_result(i, _failed(specs[i], result) if isinstance(result, Exception) else result)


def _failed(spec: ClaimTask, exc: Exception) -> dict:
    claim = _claim(spec)
    entry = {"id": claim.id, "paper": claim.paper, "label": claim.label,
             "statement": claim.statement, "verdict": "error",
             "summary": f"the task did not finish: {exc}", "contract": None,
             "evidence": {"error": str(exc)}, "seconds": 0.0}
    return {"entry": entry, "arrays": {}, "figures": {}, "reused": False}
