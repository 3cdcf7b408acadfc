"""The Dask engine (``verification.engine``): a separately started cluster gives the report of one
process; local workers run without the statistical profiler and without dask's malloc trim
threshold, listen on the loopback only (TLS) and serve no dashboard unless asked; TLS options
are checked before connecting; and a claim that raises SystemExit or KeyboardInterrupt (itself,
in a subtask or in a mutation; in this process or on a worker) is that claim's error, while a
Ctrl-C that a claim swallows still stops the run."""

from __future__ import annotations

import json
import os

import pytest

from verification import Outcome, claims_for
from verification.declare import REGISTRY, claim
from verification.runner import run
from tests.helpers import CHEAP_CLAIMS, same_results


# -- a cluster and its workers ----------------------------------------------------------------
def test_a_separately_started_cluster_gives_the_same_report_as_one_process(tmp_path, monkeypatch):
    from distributed import LocalCluster
    from verification.engine import environ_restored
    claims = claims_for(None, CHEAP_CLAIMS)
    alone = run(claims, show=False, out=tmp_path / "alone", figures=False, workers=0)
    stream = tmp_path / "stream.json"
    monkeypatch.setenv("ATTNV_TASK_STREAM", str(stream))
    # a plain LocalCluster's nanny exports dask's MALLOC_TRIM_THRESHOLD_ into this process,
    # where every later cluster of the session would inherit it
    with environ_restored(), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                          dashboard_address=":0") as cluster:
        remote = run(claims, show=False, out=tmp_path / "remote", figures=False,
                     scheduler=cluster.scheduler_address)
    assert remote["engine"].startswith("dask cluster at") and remote["reused"] == 0
    same_results(alone, remote)
    # the diagnostic task stream: every claim's task, on a worker, in order of start
    rows = json.loads(stream.read_text())
    claim_rows = [r for r in rows if r["key"].startswith("claim_task")]
    assert len(claim_rows) == len(CHEAP_CLAIMS)
    assert all(0 <= r["start"] <= r["stop"] and r["worker"].startswith("tcp://") for r in rows)
    assert [r["start"] for r in rows] == sorted(r["start"] for r in rows)


def test_local_workers_run_without_the_statistical_profiler():
    """A worker's profiler samples the task thread's stack every 10 ms holding the GIL; the
    engine's LocalCluster turns it off (SymPy-heavy claims ran ~10 % slower with it)."""
    import dask
    from verification.engine import Engine
    with Engine(workers=1) as engine:
        flags = engine._client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
    assert list(flags.values()) == [False]


def test_local_workers_start_without_dasks_malloc_trim_threshold(monkeypatch):
    """dask's nanny exports MALLOC_TRIM_THRESHOLD_=65536, which pins glibc's mmap threshold and
    page-faults every large temporary afresh; the engine's workers start without it, still with
    one OpenMP thread, this process's environment is left as it was, and a value the user
    chose in dask's config is kept."""
    import os
    import dask
    from verification.engine import Engine, worker_environ
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    before = dict(os.environ)
    with Engine(workers=1) as engine:
        env = engine._client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"),
                                          os.environ.get("OMP_NUM_THREADS")))
    assert list(env.values()) == [(None, "1")]
    assert dict(os.environ) == before       # the nanny's exports do not stay in this process
    chosen = {"MALLOC_TRIM_THRESHOLD_": 1 << 20, "OMP_NUM_THREADS": 1}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": chosen}):
        assert worker_environ() == chosen


# -- the cluster listens on the loopback only -------------------------------------------------
def _listening(pids) -> list[tuple[int, str]]:
    import psutil
    found = []
    for pid in pids:
        for c in psutil.Process(pid).net_connections(kind="inet"):
            if c.status == psutil.CONN_LISTEN:
                found.append((pid, c.laddr.ip))
    return found


def test_a_local_cluster_listens_on_the_loopback_only_and_serves_no_dashboard_unless_asked():
    import ipaddress

    import psutil
    from verification.engine import Engine
    me = psutil.Process()
    with Engine(workers=2) as engine:
        info = engine._client.scheduler_info()
        addresses = [info["address"], *info["workers"]]
        pids = [me.pid] + [c.pid for c in me.children(recursive=True)]
        sockets = _listening(pids)
        http = (info.get("services") or {}).get("dashboard")
        answers = _http_answers(http, "/health"), _http_answers(http, "/info/main/workers.html")
        worker_http = [w.get("services", {}).get("dashboard") for w in info["workers"].values()]
        worker_answers = [_http_answers(port, "/health") for port in worker_http]
        assert engine.dashboard_link is None
        strangers = _connect_as_a_stranger(info["address"])
    assert strangers == ["refused", "refused"], strangers
    assert worker_answers == [False, False]
    assert len(info["workers"]) == 2 and len({pid for pid, _ in sockets}) == 3   # + 2 workers
    assert all(a.startswith("tls://127.0.0.1:") for a in addresses), addresses
    assert all(ipaddress.ip_address(ip).is_loopback for _, ip in sockets), sockets
    assert answers == (False, False) and http != 8787       # no route, not dask's fixed port
    with Engine(workers=1, dashboard=True) as engine:
        link = engine.dashboard_link
        sockets = _listening([me.pid])
        health = _http_answers(int(link.split(":")[2].split("/")[0]), "/health")
    assert link.startswith("http://127.0.0.1:") and health
    assert all(ipaddress.ip_address(ip).is_loopback for _, ip in sockets), sockets


def _connect_as_a_stranger(address: str) -> list[str]:
    """Another user of the machine reaches the loopback: without the cluster's certificate (in
    plain TCP, or with a certificate of its own) it cannot connect, so it cannot send work."""
    from distributed import Client
    from distributed.security import Security
    out = []
    for addr, security in ((address.replace("tls://", "tcp://"), None),
                           (address, Security.temporary())):
        try:
            with Client(addr, timeout="3s", security=security) as c:
                c.submit(os.getpid).result()
            out.append("connected")
        except (OSError, TimeoutError, ValueError):
            out.append("refused")
    return out


def _http_answers(port, path) -> bool:
    """Whether an HTTP GET of ``path`` on the loopback ``port`` answers 200."""
    import urllib.error
    import urllib.request
    if not port:
        return False
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def test_tls_options_are_checked_before_connecting(tmp_path):
    from verification.engine import Engine
    pem = {name: tmp_path / f"{name}.pem" for name in ("ca_file", "cert", "key")}
    for p in pem.values():
        p.write_text("-----BEGIN CERTIFICATE-----\n")
    tls = {k: str(v) for k, v in pem.items()}
    with pytest.raises(ValueError, match="only with --scheduler"):
        Engine(workers=1, tls=tls)
    with pytest.raises(ValueError, match="plain address"):
        Engine(scheduler="tcp://127.0.0.1:8786", tls=tls)
    with pytest.raises(ValueError, match="--tls-key .*no such file"):
        Engine(scheduler="tls://127.0.0.1:8786", tls={**tls, "key": str(tmp_path / "none")})
    engine = Engine(scheduler="tls://127.0.0.1:8786", tls=tls)
    assert engine.security.require_encryption and engine.security.tls_client_key == tls["key"]


# -- a claim cannot end the run ---------------------------------------------------------------
def _verdict_of(ctx):
    return Outcome(ctx_state.get("verdict", "confirmed"), "toy", {"n": 1})


ctx_state: dict = {}


@pytest.fixture
def toys():
    made = []
    for name in ("a", "b"):
        claim(f"toy2099:store-{name}", "Toy", f"Toy claim {name}.", statistical=False)(_verdict_of)
        made.append(REGISTRY[f"toy2099:store-{name}"])
    yield made
    for c in made:
        del REGISTRY[c.id]
    ctx_state.clear()


def _exits(ctx):
    raise SystemExit(0)


def _interrupts(ctx):
    raise KeyboardInterrupt


@pytest.mark.parametrize("workers", [0, 1])
def test_system_exit_or_keyboard_interrupt_in_a_claim_is_its_error_and_the_run_goes_on(
        tmp_path, toys, workers):
    claim("toy2099:exits", "Toy", "Exits.", statistical=False)(_exits)
    claim("toy2099:interrupts", "Toy", "Interrupts.", statistical=False)(_interrupts)
    try:
        report = run([REGISTRY["toy2099:exits"], REGISTRY["toy2099:interrupts"], toys[0]],
                     show=False, figures=False, workers=workers, out=tmp_path, calibration=None)
    finally:
        del REGISTRY["toy2099:exits"], REGISTRY["toy2099:interrupts"]
    verdicts = {c["id"]: (c["verdict"], c["summary"]) for c in report["claims"]}
    assert report["complete"] and verdicts[toys[0].id][0] == "confirmed"
    assert verdicts["toy2099:exits"][0] == "error" and "SystemExit" in verdicts["toy2099:exits"][1]
    assert verdicts["toy2099:interrupts"][0] == "error"
    assert "KeyboardInterrupt" in verdicts["toy2099:interrupts"][1]
    assert json.loads((tmp_path / "report.json").read_text())["complete"]


def _exits_in_a_subtask(ctx):
    ctx.map(_exit_item, [1])
    return Outcome("confirmed", "not reached", {})


def _exit_item(ctx, item):
    raise SystemExit(item)


def _exit_now():
    raise SystemExit(3)


@pytest.mark.parametrize("workers", [0, 1])
def test_system_exit_in_a_subtask_or_a_mutation_is_that_claims_error(tmp_path, toys, workers):
    claim("toy2099:sub-exit", "Toy", "Exits in a subtask.", statistical=False)(_exits_in_a_subtask)
    claim("toy2099:mut-exit", "Toy", "Its mutation exits.", statistical=False,
          mutations={"exits": _exit_now})(_verdict_of)
    from verification.tasks import ClaimTask, claim_task
    try:
        report = run([REGISTRY["toy2099:sub-exit"], toys[0]], show=False, figures=False,
                     workers=workers, out=tmp_path, calibration=None)
        mutated = claim_task(ClaimTask.make(REGISTRY["toy2099:mut-exit"], "quick", 0, "cpu",
                                            mutation="exits", figures=False))
    finally:
        del REGISTRY["toy2099:sub-exit"], REGISTRY["toy2099:mut-exit"]
    verdicts = {c["id"]: c for c in report["claims"]}
    assert report["complete"] and verdicts[toys[0].id]["verdict"] == "confirmed"
    assert verdicts["toy2099:sub-exit"]["verdict"] == "error"
    assert "SystemExit" in verdicts["toy2099:sub-exit"]["summary"]
    assert mutated["entry"]["verdict"] == "error" and "SystemExit" in mutated["entry"]["summary"]


def _swallows_ctrl_c(ctx):
    """A claim whose code turns the person's Ctrl-C into another exception."""
    import signal
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except KeyboardInterrupt as exc:
        raise RuntimeError("a library wrapped it") from exc
    return Outcome("confirmed", "not interrupted", {})


def test_a_ctrl_c_that_a_claim_swallows_still_stops_the_run(tmp_path, toys):
    claim("toy2099:swallows", "Toy", "Swallows Ctrl-C.", statistical=False)(_swallows_ctrl_c)
    try:
        with pytest.raises(KeyboardInterrupt):
            run([REGISTRY["toy2099:swallows"], toys[0]], show=False, figures=False, workers=0,
                out=tmp_path, calibration=None)
    finally:
        del REGISTRY["toy2099:swallows"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["complete"] is False and report["interrupted"] == "KeyboardInterrupt"
    assert toys[0].id not in [c["id"] for c in report["claims"]]
