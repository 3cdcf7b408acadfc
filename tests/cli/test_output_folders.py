"""Every report says which run it is: report.json is written before the first claim runs (seed,
options, ``complete: false``), an earlier run's files are removed from ``--out``, two runs
cannot share one ``--out``, an interrupted run says so, and a full disk never leaves half a
file. Tiny unregistered claims, ``workers=0``: each test takes a second or two."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
import signal
import subprocess
import sys

import numpy as np
import pytest

from verification.declare import Claim, Outcome
from verification.runner import run

ROOT = Path(__file__).resolve().parents[2]
SEEN: dict = {}          # what the claims below see while they run (set by each test)


def _plain(ctx):
    return Outcome("confirmed", "nothing to see", {"seed": ctx.seed})


def _peek(ctx):
    """report.json as it is while this claim runs."""
    SEEN["during"] = json.loads((SEEN["out"] / "report.json").read_text())
    return Outcome("confirmed", "peeked", {})


def _ctrl_c(ctx):
    """The person at the terminal presses Ctrl-C while this claim runs."""
    os.kill(os.getpid(), signal.SIGINT)
    return Outcome("confirmed", "not interrupted", {})


def _with_arrays_and_figure(ctx):
    return Outcome("confirmed", "drawn", {}, arrays={"x": np.arange(4.0)},
                   figures={"line": lambda fig: fig.add_subplot().plot([0, 1], [1, 0])})


def _nested_run(ctx):
    """A second run on the same --out while this one holds it."""
    try:
        run([PLAIN], out=SEEN["out"], show=False, calibration=None, figures=False)
    except ValueError as exc:
        SEEN["refused"] = str(exc)
    return Outcome("confirmed", "tried", {})


def _fill_disk(ctx):
    SEEN["full"] = "report.json"          # every later write of report.json: ENOSPC
    return Outcome("confirmed", "armed", {})


def _toy(id_, check):
    return Claim(f"toy:{id_}", "toy", id_, f"{id_} holds", check, statistical=False)


PLAIN, PEEK, CTRL_C = _toy("plain", _plain), _toy("peek", _peek), _toy("ctrl-c", _ctrl_c)
DRAWN, NESTED, FILL = (_toy("drawn", _with_arrays_and_figure), _toy("nested", _nested_run),
                       _toy("fill", _fill_disk))


def _run(claims, out, **kw):
    return run(claims, out=out, show=False, calibration=None, **kw)


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


@pytest.fixture(autouse=True)
def _seen():
    SEEN.clear()
    yield
    SEEN.clear()


# -- the report before the first claim ------------------------------------------------------
def test_report_json_is_written_before_the_first_claim_with_the_run_and_its_options(tmp_path):
    out = SEEN["out"] = tmp_path / "out"
    _run([PLAIN], out, seed=0)
    report = _run([PEEK], out, seed=1, figures=False)
    during = SEEN["during"]
    assert during["seed"] == 1 and during["complete"] is False and during["claims"] == []
    assert during["files"] == ["report.json"]
    assert during["options"] == {
        "claims": ["toy:peek"], "workers": 0, "scheduler": None, "store": str(out / "store"),
        "force": False, "rejudge": False, "replicate": 2, "figures": False, "dashboard": False,
        "tls": None, "calibration": None}
    for key in ("suite_version", "started", "profile", "device", "environment", "engine"):
        assert during[key] == report[key], key
    assert report["complete"] is True and "interrupted" not in report
    assert report["files"] == ["report.json", "report.md", "report.html"]
    assert _report(out) == json.loads(json.dumps(report))


def _sigterm(*args, **kwargs):
    raise SystemExit(143)         # as a SIGTERM handler that exits does, before any claim ran


@pytest.mark.parametrize("how, what", [("ctrl-c", "KeyboardInterrupt"),
                                       ("exit", "SystemExit: 143")])
def test_a_run_interrupted_before_its_first_claim_says_which_run_it_was(tmp_path, monkeypatch,
                                                                         how, what):
    out = tmp_path / "out"
    assert _run([PLAIN], out, seed=0)["complete"]
    if how == "exit":
        monkeypatch.setattr("verification.campaign.Campaign.run", _sigterm)
    with pytest.raises(KeyboardInterrupt if how == "ctrl-c" else SystemExit):
        _run([CTRL_C], out, seed=1)
    monkeypatch.undo()
    left = _report(out)
    assert (left["seed"], left["complete"], left["interrupted"]) == (1, False, what)
    assert left["claims"] == [] and left["options"]["claims"] == ["toy:ctrl-c"]
    assert not (out / "report.md").exists()                 # the first run's is gone too
    assert _run([PLAIN], out, seed=2)["complete"]           # and the folder is free again


# -- an earlier run's files -------------------------------------------------------------------
def test_an_earlier_runs_files_are_removed_and_nothing_else(tmp_path):
    out = tmp_path / "out"
    first = _run([DRAWN], out)
    assert first["files"] == ["report.json", "report.npz", "figures/toy_drawn_line.png",
                              "report.md", "report.html"]
    assert all((out / f).is_file() for f in first["files"])
    (out / "figures" / "x.png").write_bytes(b"an older run's figure")
    (out / "report.json.abc123.tmp").write_text("a write killed half-way")
    (out / "notes.txt").write_text("mine")
    (out / "store" / "mine").write_text("kept")
    second = _run([PLAIN], out)
    assert second["files"] == ["report.json", "report.md", "report.html"]
    left = {p.relative_to(out).as_posix() for p in out.iterdir()}
    assert left == {"report.json", "report.md", "report.html", "notes.txt", "store", "katex",
                    ".lock"}
    assert (out / "store" / "mine").read_text() == "kept" and len(list((out / "store").iterdir())) > 1
    assert "toy:drawn" not in (out / "report.md").read_text()


# -- two runs, one folder ---------------------------------------------------------------------
def test_a_second_run_in_this_process_on_the_same_out_is_refused(tmp_path):
    out = SEEN["out"] = tmp_path / "out"
    report = _run([NESTED], out)
    assert SEEN["refused"] == (f"--out {out} is in use by another run (pid {os.getpid()}); "
                               "allowed: a folder no other run is writing")
    assert report["complete"] and _report(out)["options"]["claims"] == ["toy:nested"]
    assert _run([PLAIN], out)["complete"]                    # released at the end


def test_a_run_holding_out_in_another_process_refuses_a_second_until_it_dies(tmp_path):
    out = tmp_path / "out"
    _run([DRAWN], out, seed=3)
    before = {f: (out / f).read_bytes() for f in ("report.json", "report.npz")}
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from verification.store import lock_folder; lock = lock_folder(Path(sys.argv[1]), '--out'); "
         "lock.__enter__(); print('held', flush=True); sys.stdin.read()", str(out)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ValueError, match=rf"in use by another run \(pid {holder.pid}\)"):
            _run([PLAIN], out)
        assert {f: (out / f).read_bytes() for f in before} == before     # untouched
    finally:
        holder.send_signal(signal.SIGKILL)          # kill -9: the kernel releases the lock
        holder.wait()
    assert _run([PLAIN], out)["complete"]
    assert not (out / "report.npz").exists()


# -- a full disk ------------------------------------------------------------------------------
@pytest.fixture
def full_disk(monkeypatch):
    """os.fsync raises ENOSPC for the file named SEEN["full"] (through the temporary file of
    the atomic write), as a full disk does: the real writer and its clean-up run."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to tell which file is written")
    real = os.fsync

    def fsync(fd):
        name = Path(os.readlink(f"/proc/self/fd/{fd}")).name
        if SEEN.get("full") and name.startswith(SEEN["full"] + "."):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def _no_temporaries(out: Path) -> bool:
    return not list(out.rglob("*.tmp"))


def test_a_full_disk_during_the_run_raises_naming_the_file_and_keeps_the_last_report(
        tmp_path, full_disk):
    out = tmp_path / "out"
    with pytest.raises(OSError) as info:
        _run([FILL, PLAIN], out, seed=7)
    assert info.value.errno == errno.ENOSPC
    assert f"cannot write {out / 'report.json'}: No space left on device" in str(info.value)
    left = _report(out)                            # the one written before the first claim
    assert (left["seed"], left["complete"], left["claims"]) == (7, False, [])
    assert _no_temporaries(out)
    SEEN.clear()
    assert _run([PLAIN], out)["complete"]


def test_a_full_disk_at_the_end_leaves_an_interrupted_report_listing_what_is_there(
        tmp_path, full_disk):
    out = tmp_path / "out"
    SEEN["full"] = "report.md"
    with pytest.raises(OSError, match=f"cannot write {out / 'report.md'}: No space left"):
        _run([PLAIN], out, seed=5)
    left = _report(out)
    assert (left["seed"], left["complete"]) == (5, False)
    assert left["interrupted"].startswith(f"OSError: [Errno {errno.ENOSPC}] cannot write")
    assert [c["id"] for c in left["claims"]] == ["toy:plain"]
    assert left["files"] == ["report.json"] and not (out / "report.md").exists()
    assert _no_temporaries(out)


def test_sweep_and_calibrate_refuse_an_out_another_run_holds(tmp_path):
    from verification.calibrate import calibrate
    from verification.store import lock_folder
    from verification.sweep import sweep
    out = tmp_path / "held"
    out.mkdir()
    with lock_folder(out, "--out"):
        for start in (lambda: sweep([PLAIN], [0], out=out, workers=0),
                      lambda: calibrate([PLAIN], seeds=1, out=out, workers=0)):
            with pytest.raises(ValueError, match=rf"--out {out} is in use by another run \(pid "
                                                 rf"{os.getpid()}\)"):
                start()
    assert sweep([PLAIN], [0], out=out, workers=0)["complete"]


def test_the_cli_names_only_the_report_files_the_run_wrote(tmp_path):
    from typer.testing import CliRunner
    from verification.cli import app
    claims = tmp_path / "claims.py"
    claims.write_text("from verification import Outcome, claim\n"
                      "@claim('mine:plain', 'Mine', 'Nothing.', statistical=False)\n"
                      "def plain(ctx):\n    return Outcome('confirmed', 'ok', {})\n")
    res = CliRunner().invoke(app, ["run", "--claims", str(claims), "--workers", "0",
                                   "--no-figures", "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("report: "))
    assert "report.md, report.html" in line and "report.npz" not in line
    assert not (tmp_path / "out" / "report.npz").exists()


@pytest.mark.parametrize("start", ["run", "sweep", "calibrate"])
def test_run_sweep_and_calibrate_check_their_options_alike_before_any_work(tmp_path, start):
    """One campaign (``verification.campaign``) checks the options all three share."""
    from verification.calibrate import calibrate
    from verification.sweep import sweep
    begin = {"run": lambda **kw: run([PLAIN], show=False, **kw),
             "sweep": lambda **kw: sweep([PLAIN], [0], **kw),
             "calibrate": lambda **kw: calibrate([PLAIN], seeds=1, **kw)}[start]
    with pytest.raises(ValueError, match="--profile 'fast'; allowed"):
        begin(profile="fast", out=tmp_path / "a")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="--out"):
        begin(out=tmp_path / "file")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("out_given", [False, True])
def test_calibrate_rejudge_rewrites_its_file_in_place_unless_out_is_given(tmp_path, monkeypatch,
                                                                          out_given):
    """`calibrate --rejudge FILE` alone rewrites FILE (not ./calibration/FILE's name, which the
    old default --out did from any working directory); with --out elsewhere, the copy goes
    there."""
    from typer.testing import CliRunner

    import verification.calibrate as calibrate_module
    from verification.cli import app

    seen = {}

    def fake_rejudge(path, chosen, options, progress=None, out=None):
        seen["out"] = out
        return {"file": str(out or path), "rejudged": [], "current": [], "seconds": 0.0,
                "needs_simulating": []}
    monkeypatch.setattr(calibrate_module, "rejudge", fake_rejudge)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "records" / "quick.json"
    path.parent.mkdir()
    path.write_text("{}")
    args = ["calibrate", "--rejudge", str(path)] + (["--out", str(tmp_path / "copy")]
                                                     if out_given else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen["out"] == (tmp_path / "copy" if out_given else None)
    assert not (tmp_path / "calibration").exists()
