"""Errors at the command line, one line each: each bad input of the command line gives one line
per error naming the parameter and its allowed values, exit code 2 and no traceback, before any
claim runs; a file of the user's that fails on import gives ``FILE:LINE: ErrorType: message``;
an unexpected error one line and exit 1, Ctrl-C one line and exit 130; ``--debug`` shows the
traceback instead."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from verification.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

TINY_CLAIMS = '''
from verification.declare import Outcome, claim


@claim("{paper}:instant", "Thm. 0", "Returns at once.", statistical=False)
def instant(ctx):
    return Outcome("confirmed", "nothing to refute")
'''


def _lines(res) -> list[str]:
    return [line for line in res.output.splitlines() if line.strip()]


def _one_line(args, code=2, *fragments, prefix="error: "):
    """Exit ``code``, no traceback, exactly one line (starting with ``prefix``) holding every
    fragment."""
    res = runner.invoke(app, args)
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = _lines(res)
    assert len(lines) == 1 and lines[0].startswith(prefix), res.output
    assert "Traceback" not in res.output
    for f in fragments:
        assert f in res.output, (f, res.output)
    return lines[0]


# --- 1. non-finite and overflowing numbers ------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "nan", "1e400", "-inf"])
def test_a_non_finite_integer_parameter_is_out_of_range(value):
    _one_line(["evaluate", "marion2025", "--param", f"d={value}"], 2, f"d='{value}'",
              "allowed: integer in [1, inf]")


def test_non_finite_numbers_name_their_parameter_and_range():
    _one_line(["evaluate", "marion2025", "--param", "L=1e400"], 2, "L='1e400'", "allowed: integer")
    _one_line(["evaluate", "marion2025", "--param", "lam=inf"], 2, "lam='inf'", "allowed: real in (0")
    _one_line(["evaluate", "dohmatob2025", "--param", "d=1e400"], 2, "d='1e400'", "allowed: integer")
    _one_line(["evaluate", "marion2025", "--state", "kappa=1e400"], 2, "kappa=inf",
              "allowed: real in [-1, 1]")
    _one_line(["evaluate", "marion2025", "--overlap", "nu=nan"], 2, "nu=nan", "allowed: real in [-1, 1]")
    _one_line(["derive", "marion2025", "--on", "theta=1e400"], 2, "--on", "theta=inf",
              "allowed: real in [-1, 1]")
    _one_line(["evaluate", "sagitova2026", "--param", "H=inf"], 2, "H='inf'", "allowed: integer in [1")
    _one_line(["evaluate", "sagitova2026", "--param", "L=1e400"], 2, "L='1e400'", "allowed: integer in [2")
    _one_line(["evaluate", "sagitova2026", "--state", "m[0,0]=1e400"], 2, "m[0,0]=inf", "finite real")


def test_all_non_finite_parameters_are_reported_at_once():
    res = runner.invoke(app, ["evaluate", "marion2025", "--param", "d=inf", "--param", "L=nan",
                              "--param", "eps=1e400"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    lines = _lines(res)
    assert len(lines) == 3 and all(x.startswith("error: ") for x in lines), res.output
    for name in ("d='inf'", "L='nan'", "eps='1e400'"):
        assert name in res.output


def test_a_result_that_overflows_is_an_error_naming_the_values():
    _one_line(["evaluate", "marion2025", "--param", "L=1e308"], 2, "not finite at --param L=1e308",
              "allowed:")


def test_a_multi_head_files_settings_must_be_finite(tmp_path):
    (tmp_path / "heads_model.py").write_text(textwrap.dedent('''
        from theory.models.sagitova2026 import GaussianPrior
        from theory.multihead import MultiHeadModel
        MODEL = MultiHeadModel(1, 2, 1, "softmax")
        PRIOR = GaussianPrior([0.3], [[2.0]])
        '''))
    spec = str(tmp_path / "heads_model.py")
    _one_line(["evaluate", spec, "--param", "n=1e400"], 2, "n='1e400' is out of range",
              "allowed: an integer in [8, 262144]")
    _one_line(["evaluate", spec, "--param", "seed=nan"], 2, "seed='nan' is not a finite number",
              "allowed: an integer ≥ 0")
    _one_line(["evaluate", spec, "--param", "sgd_noise=1e400"], 2, "sgd_noise='1e400'", "a real ≥ 0")
    _one_line(["evaluate", spec, "--param", "n=1048576"], 2, "n='1048576' is out of range",
              "[8, 262144]")


# --- 2. a user's file that fails on import ------------------------------------------------------
BROKEN = {
    "syntax.py": ("x = 1\ndef f(:\n    pass\n", 2, "SyntaxError: invalid syntax"),
    "raises.py": ("import math\n\nraise RuntimeError('boom')\n", 3, "RuntimeError: boom"),
    "imports.py": ("import os\nfrom theory.multihead import Nope\n", 2,
                   "ImportError: cannot import name 'Nope'"),
    "deep.py": ("def g():\n    return 1 / 0\n\n\nX = g()\n", 2, "ZeroDivisionError: division by zero"),
}


@pytest.fixture
def broken(tmp_path):
    for name, (text, _, _) in BROKEN.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_model_file_that_fails_is_one_line_file_line_error(broken, name):
    path = broken / name
    line = _one_line(["derive", str(path)], 2, prefix=str(path))
    assert line == f"{path}:{BROKEN[name][1]}: {BROKEN[name][2]}" or \
        line.startswith(f"{path}:{BROKEN[name][1]}: {BROKEN[name][2]}"), line


def test_every_command_that_imports_a_file_says_where_it_failed(broken, tmp_path):
    raises, syntax = broken / "raises.py", broken / "syntax.py"
    expected = f"{raises}:3: RuntimeError: boom"
    for args in (["evaluate", f"{raises}:MODEL"], ["evaluate", str(raises), "--param", "x=1"],
                 ["heads", "--activation", f"{raises}:ACT"], ["list", "--claims", str(raises)],
                 ["run", "--claims", str(raises), "--workers", "0", "--out", str(tmp_path / "o")],
                 ["sweep", "--claims", str(raises), "--workers", "0", "--out", str(tmp_path / "s")],
                 ["calibrate", "--claims", str(raises), "--workers", "0", "--out",
                  str(tmp_path / "c")]):
        assert _one_line(args, 2, prefix=str(raises)) == expected, args
    assert _one_line(["list", "--claims", str(syntax)], 2, prefix=str(syntax)) == \
        f"{syntax}:2: SyntaxError: invalid syntax"


def test_debug_shows_the_traceback_of_a_failing_file(broken):
    res = runner.invoke(app, ["--debug", "derive", str(broken / "deep.py")])
    assert res.exit_code == 2
    assert "Traceback" in res.output and "return 1 / 0" in res.output
    assert "ZeroDivisionError" in res.output


def test_a_failing_file_in_a_real_process_prints_no_traceback(broken):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "verification", "derive", str(broken / "raises.py")]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == f"{broken / 'raises.py'}:3: RuntimeError: boom", out.stderr
    dbg = subprocess.run([cmd[0], "-m", "verification", "--debug", *cmd[3:]], capture_output=True,
                         text=True, env=env, timeout=120)
    assert dbg.returncode == 2 and "Traceback (most recent call last)" in dbg.stderr


# --- 3. unexpected errors -----------------------------------------------------------------------
def _raise(exc):
    def fn(*args, **kwargs):
        raise exc
    return fn


def test_an_unexpected_error_is_one_line_and_exit_1(monkeypatch):
    from verification.cli import explorer as cli      # where derive finds its equations
    monkeypatch.setattr(cli, "_equation_rows", _raise(RuntimeError("the engine\nbroke")))
    _one_line(["derive", "marion2025"], 1, "error: RuntimeError: the engine broke")
    res = runner.invoke(app, ["--debug", "derive", "marion2025"])
    assert res.exit_code == 1 and "Traceback" in res.output and "RuntimeError: the engine" in res.output
    assert app.pretty_exceptions_enable is False             # typer's traceback box never shows


def test_an_error_in_a_users_code_after_import_says_where(tmp_path, monkeypatch):
    (tmp_path / "act.py").write_text(textwrap.dedent('''
        from theory.multihead import Activation


        def weights(s, v):
            raise ArithmeticError("my weights fail")


        ACT = Activation("mine", weights)
        '''))
    line = _one_line(["heads", "--activation", f"{tmp_path / 'act.py'}:ACT", "--H", "1", "--L", "2",
                      "--F", "1"], 2, "raised ArithmeticError: my weights fail")
    assert f"(at {(tmp_path / 'act.py').resolve()}:6)" in line, line


def _tiny(tmp_path, paper="tinycli"):
    path = tmp_path / f"{paper}_claims.py"
    path.write_text(TINY_CLAIMS.format(paper=paper))
    return str(path)


def test_an_oserror_writing_results_names_the_path_and_the_reason(tmp_path, monkeypatch):
    import errno

    from verification import runner as run_module
    target = tmp_path / "out" / "report.json"
    full = OSError(errno.ENOSPC, f"cannot write {target}: No space left on device")
    monkeypatch.setattr(run_module, "run", _raise(full))
    _one_line(["run", "--claims", _tiny(tmp_path), "--workers", "0", "--out", str(tmp_path / "out")],
              1, f"error: cannot write {target}: No space left on device")
    plain = PermissionError(errno.EACCES, "Permission denied", str(target))
    monkeypatch.setattr(run_module, "run", _raise(plain))
    _one_line(["run", "--claims", _tiny(tmp_path), "--workers", "0", "--out", str(tmp_path / "out")],
              1, f"error: {target}: Permission denied")


def test_usage_errors_are_one_line_naming_the_option():
    _one_line(["--bogus"], 2, "No such option: --bogus")
    _one_line(["nocommand"], 2, "No such command 'nocommand'")
    _one_line(["run", "--seed", "abc"], 2, "'--seed'")
    _one_line(["run", "--profile", "slow"], 2, "'--profile'", "quick")
    _one_line(["calibrate", "--seeds", "0"], 2, "'--seeds'")
    _one_line(["calibrate", "--seeds", str(10**9)], 2, "'--seeds'", "1000")
    _one_line(["evaluate"], 2, "Missing argument 'model'")


# --- output folders and other options, checked before any work --------------------------------
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
        res = runner.invoke(app, ["run", "--claim", "marion2025:prop3-linear", *args])
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 2, (args, res.output)
        assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], res.output
    res = runner.invoke(app, ["run", "--seed", "-1", "--workers", "-2"])
    assert res.exit_code == 2 and "--seed" in res.output and "--workers" in res.output  # all at once


def test_cli_calibrate_rejects_a_file_as_out(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = CliRunner().invoke(app, ["calibrate", "--claim", "marion2025:thm1-risk", "--seeds", "1",
                                 "--out", str(f)])
    assert r.exit_code == 2 and "--out" in r.output


# --- 4. Ctrl-C ----------------------------------------------------------------------------------
@pytest.mark.parametrize("command, module, name, what", [
    ("run", "verification.runner", "run", "the report in {out} is marked incomplete"),
    ("sweep", "verification.sweep", "sweep", "{out}/sweep.json holds the runs finished so far"),
    ("calibrate", "verification.calibrate", "calibrate",
     "{out}/calibration.json holds the runs finished so far")])
def test_ctrl_c_is_one_line_and_exit_130(tmp_path, monkeypatch, command, module,
                                         name, what):
    import importlib
    monkeypatch.setattr(importlib.import_module(module), name, _raise(KeyboardInterrupt()))
    out = tmp_path / "out"
    _one_line([command, "--claims", _tiny(tmp_path), "--workers", "0", "--out", str(out)], 130,
              "interrupted: " + what.format(out=out), prefix="interrupted: ")


def test_ctrl_c_during_a_real_run_marks_the_report_incomplete(tmp_path):
    path = tmp_path / "sigint_claims.py"
    path.write_text(textwrap.dedent('''
        import os
        import signal
        import time

        from verification.registry import Outcome, claim


        @claim("sigintcli:ctrl-c", "Thm. 0", "The person at the terminal presses Ctrl-C.",
               statistical=False)
        def pressed(ctx):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            return Outcome("confirmed", "not reached")
        '''))
    out = tmp_path / "out"
    _one_line(["run", "--claims", str(path), "--workers", "0", "--out", str(out), "--no-figures"],
              130, f"interrupted: the report in {out} is marked incomplete", prefix="interrupted: ")
    assert json.loads((out / "report.json").read_text())["complete"] is False


# --- 5. sizes -----------------------------------------------------------------------------------
def test_heads_sizes_are_bounded_with_the_limit_stated():
    _one_line(["heads", "--L", "2000"], 2, "--L 2000", "H·F ≤ 6 and H·L·F ≤ 18")
    _one_line(["heads", "--H", "7", "--F", "1", "--L", "2"], 2, "--H 7", "H·F = 7", "H·F ≤ 6")
    _one_line(["heads", "--F", str(10**30)], 2, "--F", "H·F ≤ 6")
    _one_line(["heads", "--H", "-3"], 2, "--H -3; allowed: an integer ≥ 1")
    res = runner.invoke(app, ["heads", "--help"])
    assert "H·F ≤ 6" in res.output and "H·L·F ≤ 18" in res.output


def test_evaluate_sizes_of_a_multi_head_model_are_bounded():
    _one_line(["evaluate", "sagitova2026", "--param", "H=8", "--param", "L=4"], 2,
              "H='8', L='4'", "H·L = 32", "allowed: H·L ≤ 24")
    _one_line(["evaluate", "sagitova2026", "--param", "L=2000"], 2, "H·L ≤ 24")
    _one_line(["evaluate", "sagitova2026", "--param", "n=16777216"], 2, "n='16777216'",
              "[8, 262144]")


# --- 6. cluster options -------------------------------------------------------------------------
def test_tls_files_must_exist_and_come_with_a_scheduler(tmp_path):
    pem = tmp_path / "ca.pem"
    pem.write_text("x")
    _one_line(["run", "--tls-ca-file", str(pem), "--tls-cert", str(pem), "--tls-key", str(pem)], 2,
              "only with --scheduler")
    res = runner.invoke(app, ["sweep", "--scheduler", "tls://127.0.0.1:1", "--tls-ca-file", str(pem),
                              "--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    lines = _lines(res)
    assert len(lines) == 2 and all(x.startswith("error: ") for x in lines), res.output
    assert "--tls-cert" in lines[0] and "missing.pem: no such file" in lines[0]
    assert "--tls-key" in lines[1]
    res = runner.invoke(app, ["calibrate", "--scheduler", "tls://127.0.0.1:1", "--tls-ca-file",
                              str(pem)])
    assert res.exit_code == 2 and [x.split(";")[0] for x in _lines(res)] == [
        "error: --tls-cert missing", "error: --tls-key missing"], res.output
    _one_line(["run", "--scheduler", "tcp://127.0.0.1:1", "--tls-ca-file", str(pem), "--tls-cert",
               str(pem), "--tls-key", str(pem)], 2, "TLS files given for a plain address")
    _one_line(["run", "--dashboard", "--workers", "0"], 2, "--dashboard", "--workers 0")


@pytest.mark.parametrize("command, module, name", [
    ("run", "verification.runner", "run"), ("sweep", "verification.sweep", "sweep"),
    ("calibrate", "verification.calibrate", "calibrate")])
def test_dashboard_and_tls_reach_the_engine(tmp_path, monkeypatch, command, module,
                                            name):
    import importlib
    seen = {}

    def fake(*args, **kwargs):
        from verification.campaign import CampaignOptions
        options = next(a for a in (*args, *kwargs.values()) if isinstance(a, CampaignOptions))
        seen.update(vars(options))
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(module), name, fake)
    pems = []
    for what in ("ca", "cert", "key"):
        pems.append(tmp_path / f"{what}.pem")
        pems[-1].write_text(what)
    claims = _tiny(tmp_path)
    res = runner.invoke(app, [command, "--claims", claims, "--out", str(tmp_path / "out"),
                              "--scheduler", "tls://127.0.0.1:1", "--dashboard",
                              "--tls-ca-file", str(pems[0]), "--tls-cert", str(pems[1]),
                              "--tls-key", str(pems[2])])
    assert res.exit_code == 130, res.output
    assert seen["dashboard"] is True and seen["scheduler"] == "tls://127.0.0.1:1"
    assert seen["tls"] == {"ca_file": str(pems[0]), "cert": str(pems[1]), "key": str(pems[2])}
    seen.clear()
    runner.invoke(app, [command, "--claims", claims, "--out", str(tmp_path / "out"), "--workers", "0"])
    assert seen["dashboard"] is False and seen["tls"] is None


# --- guard --------------------------------------------------------------------------------------
def test_guard_names_what_is_not_a_report(tmp_path):
    (tmp_path / "garbage.json").write_text("not json")
    (tmp_path / "other.json").write_text(json.dumps({"claims": [{"no": "id"}]}))
    _one_line(["guard", "save", str(tmp_path / "garbage.json"), str(tmp_path / "b.json")], 2,
              "report", "garbage.json: not a report", "allowed:")
    res = runner.invoke(app, ["guard", "compare", str(tmp_path / "other.json"), str(tmp_path)])
    assert res.exit_code == 2 and len(_lines(res)) == 2, res.output
    assert "baseline" in _lines(res)[0] and "error: report: no report at" in _lines(res)[1]
    report = {"complete": True, "claims": [{"id": "a:b", "verdict": "confirmed", "summary": ""}]}
    (tmp_path / "report.json").write_text(json.dumps(report))
    _one_line(["guard", "save", str(tmp_path), str(tmp_path)], 2, "is a folder")


@pytest.mark.parametrize("argv", [["derive", "marion2025"], ["heads", "--H", "1", "--L", "2"],
                                  ["evaluate", "marion2025", "--param", "d=20"]])
def test_every_command_that_generates_code_checks_the_cache_first(tmp_path, monkeypatch, argv):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file")
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(not_a_folder))
    _one_line(argv, 2, f"$ATTNV_CACHE_DIR {not_a_folder} is not a writable folder")


def test_ctrl_c_on_a_tls_cluster_run_is_one_line_exit_130(tmp_path):
    """As at a terminal: SIGINT to the whole process group (the run and its dask workers)
    while a claim runs on a --workers 2 cluster; no heartbeat or worker tracebacks follow."""
    import signal
    import time
    (tmp_path / "claims.py").write_text(textwrap.dedent('''
        import pathlib
        import time

        from verification import Outcome, claim


        @claim("ctrlc:waits", "Thm. 0", "Waits until interrupted.", statistical=False)
        def waits(ctx):
            pathlib.Path(__file__).with_name("started").write_text("yes")
            time.sleep(120)
            return Outcome("confirmed", "not reached")
        '''))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "verification", "run", "--claims",
                             str(tmp_path / "claims.py"), "--workers", "2", "--out", str(out),
                             "--no-figures"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "started").exists() and proc.poll() is None:
            assert time.monotonic() < deadline, "the claim never started"
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = [line for line in output.splitlines() if line.strip()]
    assert proc.returncode == 130, output
    assert "Traceback" not in output and len(lines) == 1, output
    assert lines[0].startswith(f"interrupted: the report in {out} is marked incomplete"), output
    assert json.loads((out / "report.json").read_text())["complete"] is False
