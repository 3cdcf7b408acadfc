"""The run engine (claims as tasks on dask.distributed), the content-hash result store, the
checked code cache, resumable reports and the option checks made before any work starts."""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from numerics.codegen.cache import CacheDamaged, cached_text
from verification import Outcome, claims_for
from verification.cli import app
from verification.codehash import import_closure
from verification.guard import compare
from verification.declare import REGISTRY, claim
from verification.records import to_jsonable
from verification.runner import run
from verification.store import MISSING, ResultStore, task_key

ROOT = Path(__file__).resolve().parents[1]
cli = CliRunner()

# cheap claims, exact and statistical, from the three papers
CHEAP = ["marion2025:prop3-linear", "marion2025:cor2-bayes-limit", "sagitova2026:prop-iv1-bayes",
         "dohmatob2025:rem-constants"]


def _same_results(a: dict, b: dict) -> None:
    """Same claims, verdicts, contracts and evidence (timings aside)."""
    assert [c["id"] for c in a["claims"]] == [c["id"] for c in b["claims"]]
    for x, y in zip(a["claims"], b["claims"]):
        assert (x["verdict"], x["contract"]) == (y["verdict"], y["contract"]), x["id"]
        assert to_jsonable(x["evidence"]) == to_jsonable(y["evidence"]), x["id"]
    assert compare(a, b) == [] and compare(b, a) == []


# -- the store ----------------------------------------------------------------------------------
def test_store_round_trip_and_every_kind_of_damage_is_a_miss(tmp_path):
    store = ResultStore(tmp_path)
    key = task_key(claim="x", seed=1)
    store.put(key, {"a": np.arange(3), "s": "text"})
    assert store.get(key)["a"].tolist() == [0, 1, 2]
    path = store.path(key)
    good = path.read_bytes()
    damages = {"truncated": good[: len(good) // 2], "garbage": b"\x00garbage" * 50,
               "payload changed": good[:-1] + bytes([good[-1] ^ 1]), "empty": b""}
    for what, data in damages.items():
        path.write_bytes(data)
        with pytest.warns(CacheDamaged):
            assert store.get(key) is MISSING, what
        assert not path.exists(), what                 # removed: recomputed next time
    assert len(store.damaged) == len(damages)
    store.put(key, 7)
    assert ResultStore(tmp_path, force=True).get(key) is MISSING
    assert ResultStore(tmp_path).get(key) == 7


def test_task_keys_are_canonical_and_refuse_what_they_cannot_hash():
    assert task_key(a=1, b=(1, 2)) == task_key(b=[1, 2], a=1)
    assert task_key(a=1) != task_key(a=2)
    assert task_key(x=np.float64(0.5)) == task_key(x=0.5)
    with pytest.raises(TypeError, match="cannot key"):
        task_key(a=object())


def test_damaged_generated_code_is_regenerated_not_executed(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))
    calls = []

    def make():
        calls.append(1)
        return 'x = """a\nb"""\n'
    assert cached_text("kind", "key", make) == 'x = """a\nb"""\n'
    assert cached_text("kind", "key", make) == 'x = """a\nb"""\n' and len(calls) == 1
    path = tmp_path / "v2" / "kind" / "key.py"
    path.write_text(path.read_text()[:-8])      # as a full disk leaves it: unterminated string
    with pytest.warns(CacheDamaged, match="regenerating"):
        assert cached_text("kind", "key", make) == 'x = """a\nb"""\n'
    assert len(calls) == 2 and cached_text("kind", "key", make) and len(calls) == 2


def test_code_hash_covers_the_claims_imports_and_not_the_other_papers():
    files = {str(p.relative_to(ROOT)) for p in import_closure("verification.claims.marion2025")}
    assert {"verification/checks.py", "theory/models/marion2025.py",
            "numerics/sgd/direct.py"} <= files
    assert not any("sagitova2026" in f and f.startswith("verification/claims") for f in files)
    # what the claim computes with counts (the claim API: verification.layers); what finds,
    # schedules, runs and stores it and what writes the reports does not
    assert {"verification/declare.py", "verification/context.py"} <= files
    assert not {f"verification/{m}.py" for m in ("tasks", "engine", "store", "records", "guard",
                                                 "calibrate", "sweep", "cli", "runner", "report",
                                                 "catalogue", "userfiles", "__init__")} & files
    here = import_closure(__name__)          # a module outside the suite: its file + its imports
    assert Path(__file__) in here and ROOT / "verification" / "store.py" in here
    with pytest.raises(ValueError, match="no Python source"):
        import_closure("sys")


def test_a_claim_runs_key_counts_the_module_that_builds_its_entry(monkeypatch):
    """``verification.tasks`` turns an outcome into the stored entry (verdict, contract): an edit
    there keys every claim run anew, although the scheduling layer is not hashed."""
    import verification.codehash as codehash
    from verification.tasks import claim_key
    args = ("marion2025:thm1-risk", "verification.claims.marion2025.sec3_risk", "quick", 0,
            "cpu", None)
    before = claim_key(*args)
    real = codehash.code_hash
    monkeypatch.setattr(codehash, "code_hash",
                        lambda m: "edited" if m == "verification.tasks" else real(m))
    assert claim_key(*args) != before


# -- runs -----------------------------------------------------------------------------------------
def test_damaged_cache_and_store_are_recomputed_with_the_same_verdicts(tmp_path):
    """Fresh processes (as a user's next run is), so the generated code is read from the disk
    cache rather than from this process's memory."""
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "verification", "run", "--workers", "0", "--no-figures", "--out",
           str(out), "--claim", "marion2025:manifold-invariant", "--claim", "marion2025:cor2-bayes-limit"]
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True)
    first = json.loads((out / "report.json").read_text())
    entries = sorted((out / "store").glob("??/*.entry"))
    generated = sorted((tmp_path / "cache").rglob("*.py"))
    assert first["complete"] and first["reused"] == 0 and entries and generated
    for i, f in enumerate(entries + generated):      # truncate half, garbage into the rest
        f.write_bytes(f.read_bytes()[: 40] if i % 2 else b"garbage\x00" * 9)
    again = subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    second = json.loads((out / "report.json").read_text())
    assert second["reused"] == 0 and len(second["store_damaged"]) == len(entries)
    assert "damaged store entry recomputed" in again.stderr
    assert not any(f.read_bytes().startswith(b"garbage") for f in generated)   # regenerated
    _same_results(first, second)


def test_bad_output_and_store_paths_fail_in_one_line_before_any_claim(tmp_path, monkeypatch):
    import verification.tasks as tasks

    def no_work(*a, **k):
        raise AssertionError("a claim ran before the options were checked")
    monkeypatch.setattr(tasks, "claim_task", no_work)
    file = tmp_path / "a-file"
    file.write_text("x")
    for args, fragment in [(["--out", str(file)], "--out"),
                           (["--out", str(tmp_path / "o"), "--store", str(file)], "--store"),
                           (["--workers", "-1"], "--workers"),
                           (["--scheduler", "nowhere"], "--scheduler"),
                           (["--baseline", str(tmp_path / "none.json")], "--baseline")]:
        res = cli.invoke(app, ["run", "--claim", "marion2025:prop3-linear", *args])
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 2, (args, res.output)
        assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], res.output
    res = cli.invoke(app, ["run", "--seed", "-1", "--workers", "-2"])
    assert res.exit_code == 2 and "--seed" in res.output and "--workers" in res.output  # all at once


# -- subtasks ---------------------------------------------------------------------------------
CALLS: list[int] = []


def _square(ctx, item):
    """A subtask: its randomness comes from the item and the run seed only."""
    if item == ctx_fail.get("at"):
        raise RuntimeError("interrupted")
    CALLS.append(item)
    return float(np.random.default_rng([ctx.seed, item]).standard_normal()) + item ** 2


ctx_fail: dict = {}


@pytest.fixture
def toy_claim():
    @claim("toy2099:map", "Toy", "Subtasks of a claim are stored one by one.", statistical=False)
    def toy(ctx):
        values = ctx.map(_square, list(range(5)))
        return Outcome("confirmed", f"sum {sum(values):.6f}", {"values": values})
    yield REGISTRY["toy2099:map"]
    del REGISTRY["toy2099:map"]


def test_subtasks_are_stored_one_by_one_and_an_interrupted_claim_resumes(tmp_path, toy_claim):
    CALLS.clear()
    ctx_fail["at"] = 3
    first = run([toy_claim], show=False, out=tmp_path, figures=False)
    assert first["claims"][0]["verdict"] == "error" and CALLS == [0, 1, 2]
    ctx_fail.clear()
    second = run([toy_claim], show=False, out=tmp_path, figures=False)
    assert second["claims"][0]["verdict"] == "confirmed" and CALLS == [0, 1, 2, 3, 4]
    fresh = run([toy_claim], show=False, out=tmp_path / "fresh", figures=False)
    assert to_jsonable(fresh["claims"][0]["evidence"]) == to_jsonable(second["claims"][0]["evidence"])
    from verification.context import Context
    from verification.tasks import map_subtasks
    with pytest.raises(TypeError, match="cannot key"):
        Context(store=ResultStore(tmp_path), task_key="0" * 64, mapper=map_subtasks).map(
            _square, [object()])
    # the context is plain data: without the tasks' mapper it cannot key calls for a store
    with pytest.raises(ValueError, match="needs the mapper"):
        Context(store=ResultStore(tmp_path), task_key="0" * 64).map(_square, [1])
    CALLS.clear()                   # without a store: one after the other, nothing stored
    assert Context(seed=3).map(_square, [0, 1]) == Context(seed=3, mapper=map_subtasks).map(
        _square, [0, 1]) and CALLS == [0, 1, 0, 1]


# -- processes ------------------------------------------------------------------------------------
def _cmd(out: Path) -> list[str]:
    args = [sys.executable, "-m", "verification", "run", "--workers", "0", "--no-figures",
            "--out", str(out)]
    for c in CHEAP:
        args += ["--claim", c]
    return args


def test_a_killed_run_resumes_from_the_store_with_the_same_verdicts(tmp_path):
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(out), env=env, cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial, deadline = None, time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            partial = json.loads((out / "report.json").read_text())
        except (OSError, ValueError):
            partial = None
        if partial and partial["claims"]:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    proc.wait()
    assert partial is not None and partial["complete"] is False, "the run ended before the kill"
    assert 1 <= len(partial["claims"]) < len(CHEAP)
    subprocess.run(_cmd(out), env=env, cwd=ROOT, check=True, capture_output=True)
    resumed = json.loads((out / "report.json").read_text())
    subprocess.run(_cmd(tmp_path / "whole"), env=env, cwd=ROOT, check=True, capture_output=True)
    whole = json.loads((tmp_path / "whole" / "report.json").read_text())
    assert resumed["complete"] and resumed["reused"] >= len(partial["claims"])
    _same_results(whole, resumed)


def test_a_separately_started_cluster_gives_the_same_report_as_one_process(tmp_path, monkeypatch):
    from distributed import LocalCluster
    from verification.engine import environ_restored
    claims = claims_for(None, CHEAP)
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
    _same_results(alone, remote)
    # the diagnostic task stream: every claim's task, on a worker, in order of start
    rows = json.loads(stream.read_text())
    claim_rows = [r for r in rows if r["key"].startswith("claim_task")]
    assert len(claim_rows) == len(CHEAP)
    assert all(0 <= r["start"] <= r["stop"] and r["worker"].startswith("tcp://") for r in rows)
    assert [r["start"] for r in rows] == sorted(r["start"] for r in rows)


def test_atomic_writes_keep_the_umask_permissions(tmp_path):
    from numerics.codegen.cache import atomic_write_text
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "report.json").stat().st_mode & 0o777 == 0o644


def test_each_claim_run_alone_gets_the_verdict_and_contract_of_the_full_run(tmp_path):
    """α is each claim's own (Bonferroni over its own comparisons only): the other claims of a
    run change nothing in its verdict, contract or evidence."""
    claims = claims_for(None, CHEAP)
    together = run(claims, show=False, out=tmp_path / "all", figures=False, workers=0)
    for i, c in enumerate(claims):
        alone = run([c], show=False, out=tmp_path / f"alone-{i}", figures=False, workers=0)
        _same_results({"claims": [together["claims"][i]]}, alone)


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
