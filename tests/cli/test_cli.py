"""The command line (``verification.cli``): help, list, run with its report files and the guard
round trip, ``python -m verification``; the model commands (derive, evaluate, heads) on the
reduced-model interface; and ``evaluate`` in a fresh process never running a line planted in
the generated-code cache."""

import hashlib
import json
import os
from pathlib import Path
import re
import subprocess
import sys

from typer.testing import CliRunner

from verification.cli import app

runner = CliRunner()


def _ok(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def _bad(args, *fragments):
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)      # no traceback
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for f in fragments:
        assert f in res.output, res.output
    return res.output


def test_derive_marion_prints_the_risk_and_its_flow():
    out = _ok(["derive", "marion2025"])
    assert out.startswith("R = ") and "dkappa/dt = " in out and "drho/dt = " in out


def test_derive_dohmatob_prints_rbar_and_its_overlap_flow():
    out = _ok(["derive", "dohmatob2025"])
    assert out.startswith("Rbar = ") and "dmu/dt = " in out and "dzeta/dt = " in out
    assert "multi-head" not in out
    tex = _ok(["derive", "dohmatob2025", "--latex"])
    assert tex.startswith(r"\bar{R} = ") and r"\frac{d\mu}{dt}" in tex


def test_derive_sagitova_prints_weights_loss_flow_and_saddle_hessian():
    out = _ok(["derive", "sagitova2026"])
    for piece in ("w_0 = ", "w_3 = ", "phi = ", "dm_hf/dtau = -E sum_l dphi/ds_hl * chi_lf",
                  "dr/dtau = ", "db_h/dtau = ", "saddle Hessian d2L/dm2", "S[0,0]",
                  "saddle Hessian at the prior's moments"):
        assert piece in out, piece


def test_evaluate_uses_defaults_and_overrides():
    out = _ok(["evaluate", "marion2025"])
    assert re.search(r"^risk = 1\.42492680\d*$", out, re.M) and "dkappa/dt = -0.16487" in out
    out = _ok(["evaluate", "marion2025", "--param", "d=10", "--state", "kappa=0.1", "--overlap", "nu=0.2"])
    assert "risk = " in out and "± " not in out
    out = _ok(["evaluate", "dohmatob2025", "--param", "link=quadratic", "--state", "mu=0.9"])
    assert "risk = " in out and "dmu/dt = " in out


def test_evaluate_sagitova_gives_the_loss_with_its_error():
    out = _ok(["evaluate", "sagitova2026", "--param", "n=1024", "--param", "L=3",
               "--state", "m[0,0]=0.3"])
    assert re.search(r"^loss = [0-9.]+ ± [0-9.e-]+ \(se\)$", out, re.M)
    assert "dm[0,0]/dtau = " in out and "dr[0,1]/dtau = " in out and "dv[1]/dtau = 0" in out


def test_bad_input_is_one_line_naming_the_parameter_and_the_allowed_values():
    _bad(["evaluate", "marion2025", "--param", "gamma=-1"], "gamma='-1' is out of range",
         "allowed: real in (0")
    _bad(["evaluate", "marion2025", "--param", "beta=1"], "unknown parameter(s) ['beta']", "known:")
    _bad(["evaluate", "marion2025", "--state", "kappa=1.3"], "kappa=1.3 is out of range",
         "allowed: real in [-1, 1]")
    _bad(["evaluate", "marion2025", "--state", "kapa=0.3"], "unknown state coordinate(s) ['kapa']")
    _bad(["evaluate", "marion2025", "--param", "d"], "must look like name=value")
    _bad(["evaluate", "dohmatob2025", "--param", "link=cubic"], "link='cubic'", "linear")
    _bad(["evaluate", "sagitova2026", "--param", "H=0"], "H='0' is out of range", "integer in [1")
    _bad(["evaluate", "sagitova2026", "--param", "n=1022"], "n=1022", "multiple of 4")
    _bad(["evaluate", "sagitova2026", "--param", "n=1024", "--state", "r[0,0]=-1"], "r[0,0]=-1")
    _bad(["evaluate", "nomodel"], "model 'nomodel' not found", "marion2025")
    _bad(["derive", "nomodel"], "not found")


def test_heads_prints_the_saddle_hessian_for_every_activation_and_output():
    out = _ok(["heads", "--H", "1", "--L", "2", "--F", "1"])
    assert "phi = " in out and "saddle Hessian d2L/dm2" in out and "Matrix([[2/9]])" not in out
    sinks = _ok(["heads", "--H", "1", "--L", "2", "--F", "1", "--activation", "softmax-v"])
    assert "dv_h/dtau = -E dphi/dv_h" in sinks and "v = 0" in sinks
    assert "Matrix([[2/9]])" in sinks                   # softmax-v at v = 0 is softmax-1
    summed = _ok(["heads", "--H", "1", "--L", "2", "--F", "1", "--output", "sum"])
    assert "saddle Hessian d2L/dm2" in summed and "not available" not in summed
    _bad(["heads", "--activation", "relu"], "activation='relu'", "softmax")


def _bad_all(args, count, *fragments):
    """Exit 2, no traceback, exactly ``count`` lines, each ``error: ...``."""
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == count and all(x.startswith("error: ") for x in lines), res.output
    for f in fragments:
        assert f in res.output, res.output
    return lines


def test_the_holes_of_issue_14():
    # a Greek name typed out is named, with the spelling the model uses
    _bad(["evaluate", "marion2025", "--param", "lambda=0.7"], "unknown parameter(s) ['lambda']",
         "did you mean 'lam' (λ)?", "known: ['d', 'L', 'lam', 'gamma', 'eps']")
    _bad(["evaluate", "marion2025", "--param", "λ=0.7"], "did you mean 'lam'")
    # an order parameter of another model, a repeated parameter
    _bad(["evaluate", "marion2025", "--overlap", "zeta=0.1"], "unknown state coordinate(s) ['zeta']",
         "allowed: ['kappa', 'nu', 'theta', 'eta', 'rho']")
    _bad(["evaluate", "marion2025", "--param", "d=3", "--param", "d=4"], "--param d given twice")
    _bad(["evaluate", "marion2025", "--state", "nu=0.1", "--overlap", "nu=0.2"], "--state nu given twice")
    # an unknown model or file lists what exists
    _bad(["derive", "./my_variant.py"], "my_variant.py: no such file", "PATH.py")
    _bad(["derive", "my_variant"], "model 'my_variant' not found",
         "['dohmatob2025', 'marion2025', 'sagitova2026']", "PATH.py[:NAME]")
    _bad(["heads", "--activation", "softmax-2"], "--activation='softmax-2' not found", "'softmax-v'")
    # the multi-head models have no overlap manifold to restrict to
    _bad(["derive", "sagitova2026", "--on", "m=0"], "--on", "not an overlap model")


def test_every_error_of_a_command_is_reported_at_once():
    lines = _bad_all(["evaluate", "marion2025", "--param", "lambda=0.7", "--param", "gamma=-1",
                      "--param", "d=3", "--param", "d=4", "--overlap", "zeta=0.1", "--param", "x"],
                     5, "'lambda'", "gamma='-1' is out of range", "d given twice", "['zeta']",
                     "'x' must look like name=value")
    assert not any("Traceback" in x for x in lines)
    _bad_all(["evaluate", "dohmatob2025", "--param", "link=cubic", "--param", "d=-1"], 2,
             "link='cubic'", "d='-1'")
    _bad_all(["derive", "marion2025", "--on", "theta=0,zeta=1,x"], 2, "--on 'x'", "'zeta'")
    _bad_all(["heads", "--H", "0", "--L", "1", "--output", "median", "--activation", "nope"], 4,
             "--H 0", "--L 1", "--output 'median'", "--activation='nope'")


def test_derive_on_a_manifold_is_simplified_and_greek():
    out = _ok(["derive", "marion2025", "--on", "theta=0,eta=0,rho=0"])
    assert "dkappa/dt = " in out and "dnu/dt = " in out and "dtheta/dt" not in out
    full = _ok(["derive", "marion2025"])
    assert len(out) < len(full) / 3
    tex = _ok(["derive", "marion2025", "--on", "theta=0,eta=0,rho=0", "--latex"])
    assert r"\lambda" in tex and r"\varepsilon" in tex and "lam " not in tex


# --- help, list, run, guard -------------------------------------------------------------------
def test_cli_help_list_and_bad_arguments():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0 and "verdict" in res.output
    res = runner.invoke(app, ["list", "--paper", "marion2025"])
    assert res.exit_code == 0 and "marion2025:prop3-linear" in res.output
    res = runner.invoke(app, ["list", "--paper", "nobody2030"])
    assert res.exit_code == 2 and "unknown" in res.output
    res = runner.invoke(app, ["run", "--claim", "marion2025:nope"])
    assert res.exit_code == 2 and "known claims" in res.output
    res = runner.invoke(app, ["run", "--profile", "huge"])
    assert res.exit_code != 0


def test_cli_run_writes_reports_and_guard_round_trip(tmp_path):
    out = tmp_path / "run"
    res = runner.invoke(app, ["run", "--claim", "marion2025:prop3-linear", "--claim",
                              "marion2025:cor2-bayes-limit", "--out", str(out), "--seed", "3",
                              "--workers", "0"])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert set(report) >= {"suite_version", "started", "profile", "device", "seed",
                           "environment", "claims"}
    c = report["claims"][0]
    assert set(c) >= {"id", "paper", "label", "statement", "verdict", "summary", "evidence",
                      "seconds"}
    assert (out / "report.md").exists() and (out / "report.html").exists()
    assert list((out / "figures").glob("*.png"))
    base = tmp_path / "baseline.json"
    assert runner.invoke(app, ["guard", "save", str(out), str(base)]).exit_code == 0
    assert runner.invoke(app, ["guard", "compare", str(base), str(out)]).exit_code == 0
    broken = json.loads(base.read_text())
    broken["claims"][0]["verdict"] = "refuted"
    base.write_text(json.dumps(broken))
    res = runner.invoke(app, ["guard", "compare", str(base), str(out)])
    assert res.exit_code == 1 and "verdict refuted -> confirmed" in res.output


def test_python_dash_m_entry_point():
    res = subprocess.run([sys.executable, "-m", "verification", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0 and "guard" in res.stdout


def test_cli_evaluate_answers_bad_input_with_the_parameter_and_range():
    base = ["evaluate", "marion2025", "--param", "L=3", "--param", "lam=0.7", "--param",
            "gamma=0.8", "--param", "eps=0.3"]
    ov = ["--overlap", "nu=0.4", "--overlap", "theta=0", "--overlap", "eta=0", "--overlap", "rho=0"]
    res = runner.invoke(app, base + ["--param", "d=-3", "--overlap", "kappa=0.5"] + ov)
    assert res.exit_code == 2 and "d='-3' is out of range; allowed: integer in [1, inf]" in res.output
    res = runner.invoke(app, base + ["--param", "d=20", "--overlap", "kappa=1.3"] + ov)
    assert res.exit_code == 2 and "kappa=1.3 is out of range" in res.output
    res = runner.invoke(app, base + ["--param", "d=20", "--overlap", "kappa=0.5"] + ov)
    assert res.exit_code == 0 and "risk = " in res.output and "dkappa/dt" in res.output


def test_cli_derive_prints_the_reduced_equations():
    res = runner.invoke(app, ["derive", "marion2025"])
    assert res.exit_code == 0 and "R = " in res.output and "dkappa/dt" in res.output
    assert runner.invoke(app, ["derive", "nomodel"]).exit_code == 2


def test_cli_heads_prints_weights_loss_and_the_saddle_hessian():
    res = runner.invoke(app, ["heads", "--H", "2", "--L", "3", "--F", "1"])
    assert res.exit_code == 0 and "phi = " in res.output and "S[0,0]/27" in res.output
    bad = runner.invoke(app, ["heads", "--activation", "relu"])
    assert bad.exit_code == 2 and "activation=" in bad.output


# --- the generated-code cache, from the command line -------------------------------------------
def test_evaluate_never_runs_a_planted_line_in_the_generated_code(tmp_path):
    """A fresh process (the user's next command) reads the generated code from the disk cache."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "verification", "evaluate", "marion2025"]
    first = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, check=True)
    marker = tmp_path / "payload-ran"
    files = sorted((tmp_path / "cache").rglob("*.py"))
    assert files
    for f in files:
        head, _, body = f.read_text().partition("\n")
        planted = f"open({str(marker)!r}, 'w')\n" + body
        f.write_text(f"# attnv-hmac-sha256: {hashlib.sha256(planted.encode()).hexdigest()}\n"
                     f"{planted}")
    again = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, check=True)
    assert not marker.exists()
    assert again.stdout == first.stdout and "unauthenticated cache entry" in again.stderr
