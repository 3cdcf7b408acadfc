"""One campaign: what ``run``, ``sweep`` and ``calibrate`` share. Every option is checked before
any work (profile, device, the output folder, the result store, the code cache and the user's
key, the cluster's settings); the output folder is locked while the campaign writes in it; its
claim runs are tasks on one engine and one store. What each command then does with the results
(a report, a seed table, a calibration record) is its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
import dataclasses
from pathlib import Path
from typing import Any

from .context import PROFILES
from .engine import Engine
from .replication import REPLICATES
from .store import ResultStore, check_folder, lock_folder, open_store
from .tasks import ClaimTask, failed_result, run_claim_tasks

__all__ = ["Campaign", "CampaignOptions", "checked_result"]

MAX_REPLICATES = 10


@dataclasses.dataclass(frozen=True)
class CampaignOptions:
    """How a campaign runs, one object for ``run``, ``sweep``, ``calibrate`` and ``map_claim``
    (and the command line's campaign commands): the effort and device of its simulations
    (``profile``, ``device``), where its tasks run (``workers``: 0 = this process; a
    ``scheduler`` address, its ``tls`` files {ca_file, cert, key}, ``insecure_scheduler``,
    ``dashboard``: see ``verification.engine.Engine``) and how its results are kept (``store``:
    a folder, else $ATTNV_STORE, else ``<out>/store``; ``force``: recompute what is stored;
    ``rejudge``: judge again what is stored, reusing its simulations). Checked when a
    ``Campaign`` opens, before any work."""

    profile: str = "quick"
    device: str = "auto"
    workers: int | None = 0
    scheduler: str | None = None
    insecure_scheduler: bool = False
    dashboard: bool = False
    tls: Mapping[str, str] | None = None
    store: str | Path | ResultStore | None = None
    force: bool = False
    rejudge: bool = False
    replicate: int = REPLICATES
    """``run``: each refutation that depends on its seed (``Claim.replicate``) is judged again
    at this many independent seeds and reported ``refuted`` only if every one refutes
    (``verification.replication``); 0: not."""

    @classmethod
    def of(cls, options: CampaignOptions | None = None, **fields: Any) -> CampaignOptions:
        """``options`` (default: the defaults) with ``fields`` replaced: the keyword form
        ``run(claims, workers=2)`` and the object form ``run(claims, options)`` in one.
        TypeError naming an unknown field."""
        if options is not None and not isinstance(options, cls):
            raise TypeError(f"options={options!r}; allowed: a CampaignOptions (or its fields as "
                            "keywords)")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - known)
        if unknown:
            raise TypeError(f"unknown campaign option(s) {unknown}; allowed: {sorted(known)}")
        return dataclasses.replace(options or cls(), **fields)

    def to_json(self) -> dict[str, Any]:
        """What a report says of its options (the store as a path, the TLS files as paths)."""
        return {"workers": self.workers, "scheduler": self.scheduler,
                "force": bool(self.force), "rejudge": bool(self.rejudge),
                "replicate": self.replicate,
                "dashboard": bool(self.dashboard),
                "tls": {k: str(v) for k, v in self.tls.items()} if self.tls else None}


class Campaign:
    """Checked options, one engine, one store. ``out``: the folder the command writes in (None:
    nothing written). ValueError naming the option on bad input."""

    def __init__(self, options: CampaignOptions, out: str | Path | None = None):
        from numerics.codegen.cache import check_cache
        from numerics.sgd.base import resolve_device

        if options.profile not in PROFILES:
            raise ValueError(f"--profile {options.profile!r}; allowed: {PROFILES}")
        if (not isinstance(options.replicate, int) or isinstance(options.replicate, bool)
                or not 0 <= options.replicate <= MAX_REPLICATES):
            raise ValueError(f"--replicate {options.replicate!r}; allowed: an integer in "
                             f"[0, {MAX_REPLICATES}]")
        self.options = options
        self.profile = options.profile
        self.device = resolve_device(options.device)
        self.out = check_folder(out, "--out") if out is not None else None
        self.store = open_store(options.store, self.out, options.force)
        check_cache()
        self.engine = Engine(options.workers, options.scheduler, dashboard=options.dashboard,
                             tls=options.tls, insecure_scheduler=options.insecure_scheduler)
        self.rejudge = bool(options.rejudge)

    def task(self, claim, seed: int, *, mutation: str | None = None, perturbation=None,
             figures: bool = False, setting: dict | None = None,
             simulate: bool = True, profile: str | None = None) -> ClaimTask:
        """One run of ``claim`` at ``seed`` (under a declared mutation or a perturbation; over
        the profile's settings or, given ``setting``, at that one; ``simulate=False``: only
        re-judged from stored simulations; ``profile``: another effort than the campaign's,
        a map's escalation)."""
        return ClaimTask.make(claim, profile or self.profile, seed, self.device, perturbation,
                              mutation,
                              figures=figures, store=self.store, setting=setting,
                              simulate=simulate, rejudge=self.rejudge)

    def locked(self) -> AbstractContextManager:
        """The output folder held against a second campaign writing in it (a one-line
        ValueError naming the other run's pid)."""
        return lock_folder(self.out, "--out")

    def run(self, specs: Sequence[ClaimTask], on_result: Callable[[int, dict], Any],
            priorities: Sequence[float] | None = None) -> None:
        """Run ``specs`` (stored results first, without starting a worker), calling
        ``on_result(i, result)`` as each finishes; a result that is not its task's (a worker
        of a cluster someone else runs answering for another claim) is that task's error."""
        def checked(i: int, result: dict) -> Any:
            return on_result(i, checked_result(specs[i], result))
        run_claim_tasks(specs, self.engine, checked, priorities)


def checked_result(spec: ClaimTask, result: Any) -> dict:
    """``result`` when it is a result of ``spec`` (a dict that echoes the task: its claim, key,
    seed, perturbation, mutation and setting), else ``spec``'s ``error`` saying what came back."""
    if not isinstance(result, dict):
        return _untrusted(spec, f"a {type(result).__name__}")
    if result.get("task") != spec.echo():
        return _untrusted(spec, "the result of another task" if "task" in result
                          else "a result naming no task")
    if result.get("missing") and result.get("entry") is None:
        return result
    entry = result.get("entry")
    if isinstance(entry, dict) and entry.get("id") == spec.claim_id:
        return result
    got = entry.get("id") if isinstance(entry, dict) else type(entry).__name__
    return _untrusted(spec, f"a result of {got!r}")


def _untrusted(spec: ClaimTask, what: str) -> dict:
    return failed_result(spec, ValueError(f"a worker answered {spec.claim_id} with {what}: "
                                          "not trusted"))
