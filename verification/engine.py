"""Where tasks run: in this process (``workers=0``), on a LocalCluster of worker processes
(``workers=N``, default every core) or on an existing dask.distributed cluster
(``scheduler="tcp://..."``: dask-jobqueue on SLURM or PBS, dask-kubernetes, ...).

One small interface serves the runner, ``calibrate`` and sweeps::

    with Engine(workers=2) as engine:
        engine.submit(fn, arg, priority=seconds_expected)
        for handle, result in engine.completed():   # may submit more while iterating
            ...

Tasks are plain module-level functions of one picklable argument. Each worker runs one task at
a time with one torch/BLAS thread (``single_thread``), so N workers use N cores and the same
seed gives the same numbers whatever N is. A task may split its own work further through
``Context.map`` (subtasks on the same cluster, each stored on its own). What the tasks are, and
how a batch of them is run on an engine, is ``verification.tasks``: this module knows nothing of
claims.

Diagnostics: with ``ATTNV_TASK_STREAM=FILE`` set, a cluster run writes its task stream (each
task's worker and compute start/stop, seconds since the cluster started) to FILE as JSON, for
finding idle workers (``benchmarks/engine.py --timeline``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
import contextlib
import dataclasses
import heapq
import itertools
import logging
import json
import os
from pathlib import Path
import shutil
import signal
import sys
import tempfile
import threading
import time
from typing import Any
import warnings

__all__ = ["Engine", "single_thread", "default_workers", "TaskFailed", "on_worker",
           "tls_security", "cluster_option_errors", "scheduler_errors", "interrupt_guard", "user_interrupted",
           "LOOPBACK", "SUBTASK_PRIORITY"]

LOOPBACK = "127.0.0.1"
"""Where a local cluster's scheduler, workers, nannies and (when asked for) dashboard listen."""

SUBTASK_PRIORITY = 10**9
"""Above any claim's priority (its expected seconds): a subtask's (``verification.tasks``)."""


class TaskFailed(RuntimeError):
    """A task could not run to completion (its worker died, the cluster went away)."""


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def single_thread():
    """One torch intra-op thread for the duration (restored after): tasks are the unit of
    parallelism, and a fixed thread count keeps reductions, hence results, identical however
    many workers run them."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def on_worker() -> bool:
    """Whether this code runs inside a dask.distributed worker."""
    try:
        from distributed import get_worker
        get_worker()
        return True
    except (ImportError, ValueError):
        return False


def worker_environ() -> dict[str, object]:
    """The environment a local worker process starts with: dask's pre-spawn default (one
    OpenMP/MKL/OpenBLAS thread) without its ``MALLOC_TRIM_THRESHOLD_=65536``. Setting any glibc
    malloc threshold freezes the mmap threshold at 128 KiB, so every larger temporary (an SGD
    batch, an RK stage) is mapped fresh and faulted in page by page: 4 to 100 times the page
    faults, 5–8 s of system time per SGD claim instead of 0.3–2 s, 7–10 % of its wall time
    (``benchmarks/malloc_env.py``); 150 of a quick run's 710 CPU seconds. The price,
    dask's reason for the default: freed memory goes back to the system less eagerly, so a
    worker stays nearer its peak size (our workers end with the run). A threshold the user set
    (in the shell, or another value in dask's config) is kept; so is one that a plain
    LocalCluster started earlier in this process left in ``os.environ`` (dask's nanny writes
    it there; the engine's own clusters do not leave it, ``environ_restored``)."""
    import dask
    import distributed  # noqa: F401 - registers dask's "distributed" config defaults
    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    if str(env.get("MALLOC_TRIM_THRESHOLD_")) == "65536":      # dask's default, not a choice
        env.pop("MALLOC_TRIM_THRESHOLD_")
    return env


@contextlib.contextmanager
def environ_restored():
    """Undo what a nanny writes into this process's ``os.environ`` (it exports its pre-spawn
    variables here before spawning a worker, where they would stay for every later cluster and
    child process of a notebook or test session). A nanny that later restarts a dead worker
    exports them again, outside this guard."""
    before = dict(os.environ)
    try:
        yield
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        for name, value in before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


_TLS_OPTIONS = (("ca_file", "--tls-ca-file"), ("cert", "--tls-cert"), ("key", "--tls-key"))


_LOOPBACK_HOSTS = ("localhost", "::1")


def scheduler_errors(scheduler: str | None, insecure: bool = False) -> list[str]:
    """Whether ``scheduler`` may be dialled, decided from its address alone (nothing is
    contacted): a plain (not ``tls://``) address off the loopback is refused unless
    ``insecure`` (``--insecure-scheduler``), since whoever is on the way can read and alter
    what it carries and its workers run code as you."""
    if scheduler is None or insecure:
        return []
    scheme, _, rest = scheduler.partition("://")
    host = rest.rsplit(":", 1)[0].strip("[]") if rest.count(":") >= 1 else rest
    host = host.split("/")[0]
    loopback = host in _LOOPBACK_HOSTS or host.startswith("127.") or host == ""
    if scheme.lower() != "tls" and not loopback:
        return [f"--scheduler {scheduler}: a plain connection to another machine (its traffic "
                "can be read and altered on the way, and its workers run code as you); allowed: "
                "tls://HOST:PORT with --tls-ca-file/--tls-cert/--tls-key, or "
                "--insecure-scheduler to accept the risk"]
    return []


def cluster_option_errors(workers: int | None, scheduler: str | None, dashboard: bool,
                          tls: Mapping[str, str] | None, insecure: bool = False) -> list[str]:
    """Every error in the cluster options (one line each, naming the option): a plain scheduler
    address off the loopback only with ``insecure`` (``scheduler_errors``); TLS files only
    with a ``tls://`` scheduler, all three of them, each an existing file; a dashboard only
    where a dask cluster runs."""
    errors = scheduler_errors(scheduler, insecure)
    given = {field: Path(path) for field, path in (tls or {}).items() if path is not None}
    unknown = set(given) - {field for field, _ in _TLS_OPTIONS}
    if unknown:
        errors.append(f"tls={sorted(unknown)}; allowed keys: ca_file, cert, key")
    if given and scheduler is None:
        errors.append("--tls-ca-file/--tls-cert/--tls-key secure the connection to a --scheduler; "
                      "allowed: only with --scheduler tls://HOST:PORT")
    elif given and not scheduler.startswith("tls://"):
        errors.append(f"--scheduler {scheduler}: TLS files given for a plain address; allowed: "
                      "tls://HOST:PORT with --tls-ca-file/--tls-cert/--tls-key")
    for field, flag in _TLS_OPTIONS:
        if field in given and not given[field].is_file():
            errors.append(f"{flag} {given[field]}: no such file; allowed: an existing PEM file")
        elif given and field not in given:
            errors.append(f"{flag} missing; allowed: all three of --tls-ca-file, --tls-cert and "
                          "--tls-key together")
    if dashboard and scheduler is None and workers == 0:
        errors.append("--dashboard with --workers 0: no dask cluster runs; allowed: with "
                      "--workers ≥ 1 (the default: every core) or --scheduler")
    return errors


def tls_security(tls: Mapping[str, str] | None, scheduler: str | None):
    """dask's ``Security`` for a ``tls://`` scheduler from ``{"ca_file", "cert", "key"}`` (None:
    dask's configuration decides, ``distributed.comm.tls.*``). Files are checked here, before
    any work starts (ValueError naming the option: ``cluster_option_errors``)."""
    if not tls:
        return None
    errors = cluster_option_errors(None, scheduler, False, tls)
    if errors:
        raise ValueError(errors[0])
    from distributed.security import Security
    return Security(tls_ca_file=str(tls["ca_file"]), tls_client_cert=str(tls["cert"]),
                    tls_client_key=str(tls["key"]), require_encryption=True)


@contextlib.contextmanager
def _workers_ignore_ctrl_c():
    """Worker processes started within inherit an ignored SIGINT (an ignored signal stays
    ignored across exec, and Python then installs no handler of its own): Ctrl-C at a terminal
    reaches the whole process group, and only this process should act on it, closing the
    cluster in order, rather than every worker dying mid-task and logging its broken
    connections."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def quiet_dask() -> None:
    """Silence dask's loggers for the rest of this process (a run that is stopping)."""
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


_USER_INTERRUPT = threading.Event()


def user_interrupted() -> bool:
    """Whether the person at the terminal pressed Ctrl-C during ``interrupt_guard`` (as opposed
    to a claim raising KeyboardInterrupt itself, which is that claim's error)."""
    return _USER_INTERRUPT.is_set()


@contextlib.contextmanager
def interrupt_guard():
    """Within: SIGINT marks ``user_interrupted()`` before raising KeyboardInterrupt, so the
    runner stops the run on a real Ctrl-C and records any other KeyboardInterrupt as the
    raising claim's error. Outside the main thread it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        _USER_INTERRUPT.set()
        raise KeyboardInterrupt

    _USER_INTERRUPT.clear()
    before = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@dataclasses.dataclass
class _Handle:
    index: int
    fn: Callable[[Any], Any]
    arg: Any
    priority: float


class Engine:
    """workers: 0 = this process, N ≥ 1 = a LocalCluster of N single-threaded processes, None =
    every core; scheduler: the address of an existing cluster (then ``workers`` is ignored).

    A local cluster listens on the loopback only (``LOOPBACK``) and speaks mutual TLS with a
    throwaway certificate (``Security.temporary``), so no other user of the machine can send it
    work. dashboard: serve dask's
    dashboard there too and print its address (off by default: it answers anyone who can reach
    it). tls: ``{"ca_file", "cert", "key"}`` for a ``tls://`` scheduler (``tls_security``);
    without it dask's own configuration (``distributed.comm.tls``) applies."""

    def __init__(self, workers: int | None = None, scheduler: str | None = None,
                 dashboard: bool = False, tls: Mapping[str, str] | None = None,
                 insecure_scheduler: bool = False):
        if workers is not None and not (isinstance(workers, int) and workers >= 0):
            raise ValueError(f"--workers {workers!r}; allowed: an integer ≥ 0 (0: this process)")
        if scheduler is not None and not (isinstance(scheduler, str) and "://" in scheduler):
            raise ValueError(f"--scheduler {scheduler!r}; allowed: a scheduler address such as "
                             "tcp://host:8786 or tls://host:8786")
        refused = scheduler_errors(scheduler, insecure_scheduler)
        if refused:
            raise ValueError(refused[0])
        if scheduler is not None and insecure_scheduler and not scheduler.startswith("tls://"):
            warnings.warn(f"--insecure-scheduler: {scheduler} is dialled without TLS; whoever can "
                          "reach it, or sits on the way, can read and alter the tasks and the "
                          "results, and its workers run code as you", UserWarning, stacklevel=2)
        self.workers = default_workers() if workers is None and scheduler is None else workers
        self.scheduler = scheduler
        self.dashboard = bool(dashboard)
        self.security = tls_security(tls, scheduler)
        self.dashboard_link: str | None = None
        self._client = self._cluster = None
        self._scratch: str | None = None
        self._queue: list[tuple[float, int, _Handle]] = []
        self._futures: dict[Any, _Handle] = {}
        self._ac = None
        self._count = itertools.count()
        self._stream_from: float | None = None

    @property
    def local(self) -> bool:
        return self.scheduler is None and self.workers == 0

    def cap(self, n_tasks: int) -> None:
        """Start no more local workers than there are tasks (before entering)."""
        if self.scheduler is None and self.workers:
            self.workers = max(1, min(self.workers, int(n_tasks)))

    def describe(self) -> str:
        if self.scheduler:
            return f"dask cluster at {self.scheduler}"
        return "this process" if self.local else f"{self.workers} local worker processes"

    # -- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> Engine:
        if self.local:
            return self
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - a dependency
            raise ValueError("--workers/--scheduler need dask.distributed "
                             "(pip install 'dask[distributed]'); --workers 0 runs without it") from exc
        if self.scheduler:
            try:
                self._client = Client(self.scheduler, timeout="20s", security=self.security)
            except (OSError, TypeError, ValueError) as exc:
                raise ValueError(f"--scheduler {self.scheduler}: no scheduler answers there "
                                 f"({exc})") from None
        else:
            # every socket on the loopback: a scheduler address runs any code sent to it, and
            # the dashboard answers without authentication. The dashboard is off unless asked
            # for (port 0: a free one). No statistical profiler in the workers: it walks the
            # task thread's stack every 10 ms holding the GIL (~10 % on SymPy-heavy claims).
            import dask
            from distributed.security import Security
            config = {"distributed.worker.profile.enabled": False,
                      "distributed.nanny.pre-spawn-environ": worker_environ()}
            # dask's scheduler and workers serve HTTP (health, metrics, cluster info) even
            # without a dashboard: off, they have no routes and the scheduler a free port
            http = ({"dashboard_address": f"{LOOPBACK}:0"} if self.dashboard else
                    {"scheduler_kwargs": {"dashboard": False, "dashboard_address": f"{LOOPBACK}:0"}})
            if not self.dashboard:
                config["distributed.scheduler.http.routes"] = []
                config["distributed.worker.http.routes"] = []
            # mutual TLS with a throwaway certificate held in memory: another user of this
            # machine can reach the loopback, but cannot connect without it (a connection to a
            # scheduler runs code on its workers)
            security = Security.temporary()
            # the workers' scratch space a folder of this run's, mode 0700 (dask's default,
            # $TMPDIR/dask-scratch-space, is shared by every user of the machine)
            self._scratch = tempfile.mkdtemp(prefix="attnv-dask-")
            with dask.config.set(config), environ_restored(), _workers_ignore_ctrl_c():
                self._cluster = LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True, host=LOOPBACK,
                    security=security, silence_logs=logging.ERROR,
                    local_directory=self._scratch, **({"dashboard_address": None} | http))
            self._client = Client(self._cluster, security=security)
        if self.dashboard:
            self.dashboard_link = self._client.dashboard_link
            print(f"dask dashboard: {self.dashboard_link}", file=sys.stderr, flush=True)
        if os.environ.get("ATTNV_TASK_STREAM"):
            self._client.get_task_stream(count=0)     # starts the scheduler's recording
            self._stream_from = time.time()
        return self

    def __exit__(self, *exc) -> None:
        if exc and exc[0] is not None and issubclass(exc[0], KeyboardInterrupt):
            quiet_dask()        # the workers' closing comms would log tracebacks for a Ctrl-C
        if self._client is not None and self._stream_from is not None:
            with contextlib.suppress(Exception):
                _write_task_stream(os.environ["ATTNV_TASK_STREAM"],
                                   self._client.get_task_stream(start=self._stream_from),
                                   self._stream_from)
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        self._client = self._cluster = self._scratch = None

    # -- tasks ----------------------------------------------------------------------------
    def submit(self, fn: Callable[[Any], Any], arg: Any, priority: float = 0.0) -> _Handle:
        """Queue ``fn(arg)``; higher ``priority`` starts first (use the expected seconds, so
        the longest tasks start first and the run ends balanced)."""
        handle = _Handle(next(self._count), fn, arg, float(priority))
        if self.local:
            heapq.heappush(self._queue, (-handle.priority, handle.index, handle))
            return handle
        if self._client is None:
            raise RuntimeError("use the Engine as a context manager: `with Engine(...) as e:`")
        fut = self._client.submit(fn, arg, pure=False, priority=int(priority))
        self._futures[fut] = handle
        if self._ac is not None:
            self._ac.add(fut)
        return handle

    def completed(self) -> Iterator[tuple[_Handle, Any]]:
        """(handle, result) as tasks finish, including tasks submitted meanwhile. A task whose
        worker died yields a ``TaskFailed`` instance as its result."""
        if self.local:
            while self._queue:
                _, _, h = heapq.heappop(self._queue)
                yield h, h.fn(h.arg)
            return
        from distributed import as_completed
        self._ac = as_completed(list(self._futures))
        try:
            for fut in self._ac:
                handle = self._futures.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - a lost worker, a cancelled task
                    result = TaskFailed(f"{type(exc).__name__}: {exc}")
                yield handle, result
        finally:
            self._ac = None


def _write_task_stream(path: str, records: list[dict], t0: float) -> None:
    rows = [{"key": str(r["key"]), "worker": r["worker"], "start": ss["start"] - t0,
             "stop": ss["stop"] - t0} for r in records for ss in r.get("startstops", ())
            if ss.get("action") == "compute"]
    from numerics.codegen.cache import atomic_write_text
    atomic_write_text(Path(path), json.dumps(sorted(rows, key=lambda r: r["start"]), indent=1))
