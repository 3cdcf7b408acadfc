"""What a second user of a shared machine, or the author of a hostile file, could do, and now
cannot: writes that follow a link, a worker's result forged for another claim, a planted
``.pyc``, shard folders or a lock someone else owns, a user's file that ends the command or
loops, a hostile JSON file, an empty path, a plain scheduler address off the loopback. Each
attack is tried and must fail with one line, or be harmless."""

from __future__ import annotations

import json
import os
from pathlib import Path
import py_compile
import stat
import sys

import pytest
from typer.testing import CliRunner

from verification import Outcome
from verification.cli import app
from verification.declare import REGISTRY, Claim, claim
from verification.runner import run
from verification.store import StoreNotStored, lock_folder

runner = CliRunner()
OTHER_UID = 65534                       # "nobody": a second user of the machine


def _toy(cid: str = "toy2102:ok") -> Claim:
    return Claim(cid, "toy", "Lemma 0", "holds", lambda ctx: Outcome("confirmed", "fine", {}))


def _run(claims, out: Path, **opts) -> dict:
    return run(claims, show=False, out=out, workers=0, calibration=None, **opts)


# -- writes never follow a link ------------------------------------------------------------------
def test_a_link_in_out_katex_is_replaced_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    out = tmp_path / "out"
    (out / "katex").mkdir(parents=True)
    (out / "katex" / "katex.min.js").symlink_to(victim)
    _run([_toy()], out, figures=False)
    assert victim.read_text() == "mine\n"
    assert not (out / "katex" / "katex.min.js").is_symlink()


def test_a_linked_figures_folder_is_removed_or_refused_never_written_through(tmp_path):
    from verification.report import write_figures
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").symlink_to(elsewhere)

    def drawn(ctx):
        return Outcome("confirmed", "fine", {}, figures={"f": lambda fig: fig.add_subplot()})
    _run([Claim("toy2102:fig", "toy", "-", "-", drawn)], out)    # an earlier run's: removed
    assert list(elsewhere.iterdir()) == [] and not (out / "figures").is_symlink()
    (tmp_path / "late").symlink_to(elsewhere)                    # planted while a run writes
    with pytest.raises(OSError, match="late is a symbolic link"):
        write_figures({"f": b"png"}, tmp_path / "late")
    assert list(elsewhere.iterdir()) == []


def test_a_link_at_a_map_figure_is_replaced_not_written_through(tmp_path):
    from verification.mapping import map_claim

    @claim("toy2102:map", "toy", "x < 0.5", statistical=False,
           domain={"x": (0.0, 1.0), "y": (0.0, 1.0)}, reference={"x": 0.0, "y": 0.0})
    def half(ctx, x, y):
        return Outcome("confirmed" if x < 0.5 else "refuted", f"x = {x}")
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"mine")
    out = tmp_path / "map"
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "x-y.png").symlink_to(victim)
    try:
        map_claim(REGISTRY["toy2102:map"], points=4, out=out, workers=0, refine=False)
    finally:
        REGISTRY.pop("toy2102:map", None)
    assert victim.read_bytes() == b"mine"
    assert (out / "figures" / "x-y.png").is_file() and not (out / "figures" / "x-y.png").is_symlink()


# -- a store or lock someone else owns -----------------------------------------------------------
needs_root = pytest.mark.skipif(os.getuid() != 0, reason="making files another user owns needs root")


@needs_root
def test_shard_folders_someone_else_made_degrade_the_store_not_the_run(tmp_path):
    store = tmp_path / "store"
    for i in range(256):
        shard = store / f"{i:02x}"
        shard.mkdir(parents=True)
        os.chown(shard, OTHER_UID, OTHER_UID)
        shard.chmod(0o777)                        # writable by us too: still not ours to write in
    with pytest.warns(StoreNotStored, match="belongs to uid 65534"):
        report = _run([_toy()], tmp_path / "out", store=store, figures=False)
    assert report["complete"] and report["claims"][0]["verdict"] == "confirmed"
    assert not any(p.is_file() for p in store.rglob("*"))


def test_a_read_only_store_serves_reads(tmp_path, monkeypatch):
    store = tmp_path / "store"
    _run([_toy()], tmp_path / "a", store=store, figures=False)
    _run([_toy("toy2102:second")], tmp_path / "a2", store=store, figures=False)
    before = sorted(store.rglob("*.entry"))
    real_access = os.access          # root can write anywhere: the store is said to be read-only
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if (
        Path(p) == store and mode & os.W_OK) else real_access(p, mode, **k))
    with pytest.warns(StoreNotStored, match="read-only"):
        again = _run([_toy(), _toy("toy2102:third")], tmp_path / "b", store=store, figures=False)
    assert again["reused"] == 1 and again["claims"][1]["verdict"] == "confirmed"
    assert sorted(store.rglob("*.entry")) == before                 # nothing written


def test_the_lock_is_readable_by_its_owner_only(tmp_path):
    lock = tmp_path / ".lock"
    lock.write_text("")
    lock.chmod(0o644)                              # an older run's lock
    with lock_folder(tmp_path, "--out"):
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600


@needs_root
def test_a_lock_someone_else_owns_is_refused(tmp_path):
    lock = tmp_path / ".lock"
    lock.write_text("")
    os.chown(lock, OTHER_UID, OTHER_UID)
    with pytest.raises(ValueError, match="not a plain file of your own"), \
            lock_folder(tmp_path, "--out"):
        pass


# -- results a worker sends back ------------------------------------------------------------------
def test_a_worker_result_forged_for_another_claim_is_that_tasks_error(tmp_path, monkeypatch):
    import verification.tasks as tasks
    real = tasks.claim_task

    def forged(spec):
        result = real(spec)
        return {**result, "entry": {**result["entry"], "id": "toy2102:other",
                                    "verdict": "refuted"}}
    monkeypatch.setattr(tasks, "claim_task", forged)
    report = _run([_toy()], tmp_path / "out", figures=False)
    entry = report["claims"][0]
    assert entry["id"] == "toy2102:ok" and entry["verdict"] == "error"
    assert "toy2102:other" in entry["summary"] and "not trusted" in entry["summary"]


@pytest.mark.parametrize("forge", ["another seed", "no task named"])
def test_a_worker_result_for_another_task_of_the_same_claim_is_not_trusted(tmp_path,
                                                                          monkeypatch, forge):
    import verification.tasks as tasks
    real = tasks.claim_task

    def forged(spec):
        result = real(spec)
        if forge == "no task named":
            return {k: v for k, v in result.items() if k != "task"}
        claim_id, key, profile, seed, *rest = result["task"]
        return {**result, "task": (claim_id, key, profile, seed + 1, *rest)}
    monkeypatch.setattr(tasks, "claim_task", forged)
    entry = _run([_toy()], tmp_path / "out", figures=False)["claims"][0]
    assert entry["verdict"] == "error" and "not trusted" in entry["summary"]


@pytest.mark.parametrize("workers", [0, 1])
def test_a_claim_returning_a_malformed_outcome_is_its_error_in_every_mode(tmp_path, workers):
    @claim("toy2102:bad", "toy", "-", statistical=False)
    def bad(ctx):
        return Outcome("confirmed", None, None)
    try:
        report = run([REGISTRY["toy2102:bad"]], show=False, out=tmp_path / "out", figures=False,
                     workers=workers, calibration=None)
    finally:
        REGISTRY.pop("toy2102:bad", None)
    assert report["complete"] and report["claims"][0]["verdict"] == "error"
    assert "wrong type" in report["claims"][0]["summary"]


# -- users' files ---------------------------------------------------------------------------------
def test_a_planted_pyc_beside_a_claims_file_never_runs(tmp_path):
    from verification.userfiles import import_file
    claims = tmp_path / "claims_pyc.py"
    claims.write_text("VALUE = 'source'\n")
    evil = tmp_path / "evil.py"
    marker = tmp_path / "ran"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\nVALUE = 'pyc'\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    tag = sys.implementation.cache_tag
    py_compile.compile(str(evil), cfile=str(cache / f"claims_pyc.{tag}.pyc"),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    module = import_file(claims)
    assert module.VALUE == "source" and not marker.exists()
    assert sorted(p.name for p in cache.iterdir()) == [f"claims_pyc.{tag}.pyc"]   # none written


@pytest.mark.parametrize("body, says", [
    ("import sys\nsys.exit(0)\n", "sys.exit(0)"),
    ("exit(3)\n", "sys.exit(3)"),
    ("import os\nos._exit(0)\n", "os._exit(0)"),
    ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
])
def test_a_user_file_that_ends_the_process_is_one_line_and_exit_2(tmp_path, body, says):
    path = tmp_path / "ends.py"
    path.write_text(body)
    for args in (["list", "--claims", str(path)], ["derive", str(path)],
                 ["run", "--claims", str(path), "--workers", "0", "--out", str(tmp_path / "o")]):
        res = runner.invoke(app, args)
        lines = [x for x in res.stderr.splitlines() if x.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and says in lines[0], (args, res.output)
        assert lines[0].startswith(f"{path}:")


def test_a_user_file_that_loops_is_stopped_at_its_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_USER_BUDGET", "1")
    path = tmp_path / "loops.py"
    path.write_text("while True:\n    pass\n")
    res = runner.invoke(app, ["derive", str(path)])
    assert res.exit_code == 2 and "TimeoutError" in res.stderr and "ATTNV_USER_BUDGET" in res.stderr


def test_a_huge_link_and_a_broken_activation_are_one_line(tmp_path):
    (tmp_path / "huge.py").write_text("LINK = lambda t: t**100000\n")
    res = runner.invoke(app, ["evaluate", "dohmatob2025", "--param", f"link={tmp_path / 'huge.py'}"])
    assert res.exit_code == 2 and "power 100000" in res.stderr
    (tmp_path / "act.py").write_text("from theory.multihead import Activation\n"
                                     "A = Activation('bad', lambda s, v: 1 / 0)\n")
    res = runner.invoke(app, ["heads", "--activation", f"{tmp_path / 'act.py'}:A"])
    assert res.exit_code == 2 and "ZeroDivisionError" in res.stderr


# -- what the commands are given -----------------------------------------------------------------
@pytest.mark.parametrize("content", ["[" * 5000 + "]" * 5000,
                                     '{"claims": [{"id": "a", "verdict": "confirmed", "x": NaN}]}',
                                     '{"claims": [{"id": "a", "verdict": "confirmed", "x": 1e400}]}'])
def test_a_hostile_json_file_is_one_line(tmp_path, content):
    path = tmp_path / "hostile.json"
    path.write_text(content)
    for args in (["guard", "compare", str(path), str(path)],
                 ["calibrate", "--merge", str(path), "--out", str(tmp_path / "m")]):
        res = runner.invoke(app, args)
        lines = [x for x in res.stderr.splitlines() if x.strip()]
        assert res.exit_code == 2 and lines and all(x.startswith("error: ") for x in lines), res.output
        assert "Traceback" not in res.output and "RecursionError" not in res.output


def test_a_previous_report_with_absurd_seconds_does_not_stop_the_next_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text('{"claims": [{"id": "toy2102:ok", "seconds": 1e400}]}')
    assert _run([_toy()], out, figures=False)["complete"]
    (out / "report.json").write_text('{"claims": [{"id": "toy2102:ok", "seconds": NaN}]}')
    assert _run([_toy()], out, figures=False)["complete"]


@pytest.mark.parametrize("args", [["run", "--out", ""], ["run", "--out="],
                                  ["calibrate", "--store", " "], ["sweep", "--out", ""]])
def test_an_empty_path_is_refused(tmp_path, args, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "allowed: a path" in res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "tcp://[2001:db8::1]:8786",
                                     "tcp://example.org:8786", "ws://192.0.2.1:8786"])
def test_a_plain_scheduler_off_the_loopback_is_refused_before_any_connection(tmp_path, address,
                                                                             monkeypatch):
    import distributed

    def dialled(*a, **k):
        raise AssertionError("a connection was attempted")
    monkeypatch.setattr(distributed, "Client", dialled)
    res = runner.invoke(app, ["run", "--claim", "marion2025:prop3-linear", "--scheduler", address,
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--insecure-scheduler" in res.stderr
    from verification.engine import scheduler_errors
    assert scheduler_errors(address, insecure=True) == []
    assert scheduler_errors("tls://10.0.0.5:8786") == []
    assert scheduler_errors("tcp://127.0.0.1:8786") == [] == scheduler_errors("tcp://localhost:1")


def test_a_local_cluster_keeps_its_scratch_space_in_a_private_folder():
    from verification.engine import Engine
    with Engine(workers=1) as engine:
        scratch = Path(engine._scratch)
        assert stat.S_IMODE(scratch.stat().st_mode) == 0o700
        dirs = engine._client.run(lambda dask_worker: dask_worker.local_directory)
        assert all(Path(d).is_relative_to(scratch) for d in dirs.values())
    assert not scratch.exists()


def test_a_report_written_is_json_with_finite_numbers(tmp_path):
    report = _run([_toy()], tmp_path / "out", figures=False)
    assert json.loads((tmp_path / "out" / "report.json").read_text())["complete"] == report["complete"]


def test_a_full_disk_names_the_file_whatever_writes_it(tmp_path, monkeypatch):
    """The calibration, a sweep's table, a map's pages: a write that fails in fsync (where a
    full disk shows) names the file it was writing."""
    import errno

    from numerics import storage
    from verification.calibrate import write_calibration

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(storage.os, "fsync", full)
    with pytest.raises(OSError) as info:
        write_calibration(tmp_path, {"profile": "quick", "seeds": 1, "claims": []})
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(tmp_path / "calibration.json")
    assert [p.name for p in tmp_path.iterdir()] == []                  # no temporary left
    res = runner.invoke(app, ["store", "export", str(tmp_path / "x.tar"), "--store", str(tmp_path)])
    assert res.exit_code == 1 and res.stderr.strip() == (
        f"error: {tmp_path / 'x.tar'}: No space left on device")


@pytest.mark.parametrize("workers", [0, 1])
def test_a_users_claim_that_loops_is_stopped_at_its_budget(tmp_path, monkeypatch, workers):
    """In this process and in a worker alike: the claim's error, saying so; the run goes on."""
    monkeypatch.setenv("ATTNV_CLAIM_BUDGET", "2")
    path = tmp_path / "loops_claims.py"
    path.write_text("from verification import Outcome, claim\n\n\n"
                    "@claim('mine2102:loops', 'x', 'loops', statistical=False)\n"
                    "def loops(ctx):\n    while True:\n        pass\n\n\n"
                    "@claim('mine2102:fine', 'x', 'fine', statistical=False)\n"
                    "def fine(ctx):\n    return Outcome('confirmed', 'fine')\n")
    res = runner.invoke(app, ["run", "--claims", str(path), "--workers", str(workers),
                              "--no-figures", "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    claims = {c["id"]: c for c in json.loads((tmp_path / "out" / "report.json").read_text())["claims"]}
    assert claims["mine2102:loops"]["verdict"] == "error"
    assert "ran past its budget of 2 s" in claims["mine2102:loops"]["summary"]
    assert claims["mine2102:fine"]["verdict"] == "confirmed"


def test_the_suites_own_claims_have_no_budget():
    from verification.catalogue import load_all
    from verification.tasks import claim_budget
    assert claim_budget(load_all()["marion2025:thm1-risk"]) == 0.0


def test_a_users_claim_that_takes_too_much_memory_in_this_process_is_its_error(tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("ATTNV_CLAIM_MEMORY", "0.5")
    path = tmp_path / "greedy_claims.py"
    path.write_text("import numpy as np\nfrom verification import Outcome, claim\n\n\n"
                    "@claim('mine2102:greedy', 'x', 'greedy', statistical=False)\n"
                    "def greedy(ctx):\n    x = np.ones(2**31)\n"
                    "    return Outcome('confirmed', str(x.sum()))\n")
    res = runner.invoke(app, ["run", "--claims", str(path), "--workers", "0", "--no-figures",
                              "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["claims"][0]
    assert entry["verdict"] == "error" and "MemoryError" in entry["summary"]
    import resource
    assert resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY   # restored
