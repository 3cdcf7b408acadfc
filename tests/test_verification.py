"""Registry, runner, report files, regression guard, statistics and the CLI."""

import json
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from theory import classify, find_stationary_points
from verification import Context, Outcome, run_claim
from verification.cli import app
from verification.guard import compare
from verification.catalogue import claims_for, source_of
from verification.declare import Claim
from verification.stats import z_compare

runner = CliRunner()


def test_every_registered_claim_has_a_spec_id_and_label():
    spec = (Path(__file__).resolve().parents[2] / "shared" / "spec")
    for c in claims_for():
        assert c.label and c.statement
        if spec.exists() and source_of(c) == "built-in":   # ids are the ones the paper's spec lists
            assert f"`{c.id.split('[')[0]}`" in (spec / f"{c.paper}.md").read_text(), c.id
    claims = claims_for("marion2025")
    ids = {c.id for c in claims}
    assert ids == {"marion2025:thm1-risk", "marion2025:manifold-invariant", "marion2025:saddle",
                   "marion2025:prop3-linear", "marion2025:cor2-bayes-limit",
                   "marion2025:thm5-convergence", "marion2025:sgd-tracks-flow"}


def test_nan_evidence_gives_error_not_a_verdict():
    def check(ctx):
        z_compare([np.nan], [1.0], [0.1], 3.0)
        return Outcome("confirmed", "never")
    entry, _ = run_claim(Claim("x:nan", "x", "-", "s", check), Context())
    assert entry["verdict"] == "error" and "non-finite" in entry["summary"]


def test_crashing_check_is_error():
    entry, _ = run_claim(Claim("x:boom", "x", "-", "s", lambda ctx: 1 / 0), Context())
    assert entry["verdict"] == "error" and "ZeroDivisionError" in entry["summary"]


def test_z_compare_and_bonferroni():
    ok, score = z_compare([1.0, 1.0], [1.05, 1.5], [0.02, 0.02], 3.0)
    assert ok.tolist() == [True, False] and score[1] == pytest.approx(25)
    assert Context().z(10) > Context().z(1)
    assert Context(alpha=1e-3).z(1) < Context(alpha=1e-4).z(1)


def test_classify_and_find_stationary_points():
    assert classify([-1, -2]) == "sink" and classify([1, 2]) == "source"
    assert classify([-1, 2]) == "saddle" and classify([0.0, -1]) == "degenerate"
    rhs = lambda x: np.array([x[0] - x[0] ** 3, -x[1]])
    jac = lambda x: np.array([[1 - 3 * x[0] ** 2, 0], [0, -1]])
    pts = find_stationary_points(rhs, jac, [(-2, 2), (-2, 2)])
    kinds = {round(p.x[0]): p.kind for p in pts}
    assert kinds == {-1: "sink", 0: "saddle", 1: "sink"}


def test_guard_detects_verdict_change_and_drift():
    base = {"claims": [{"id": "a", "verdict": "confirmed",
                        "evidence": {"tracked": {"v": {"value": 1.0, "tol": 0.1}}}}]}
    same = json.loads(json.dumps(base))
    assert compare(base, same) == []
    drift = json.loads(json.dumps(base))
    drift["claims"][0]["evidence"]["tracked"]["v"]["value"] = 1.5
    assert "drifted" in compare(base, drift)[0]
    flipped = json.loads(json.dumps(base))
    flipped["claims"][0]["verdict"] = "refuted"
    assert "confirmed -> refuted" in compare(base, flipped)[0]


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


def test_run_from_python_touches_no_global_state(tmp_path):
    """What a notebook does: ``run`` in-process, quietly, figures drawn without switching
    matplotlib's backend (a notebook's inline backend must survive a run)."""
    import matplotlib

    from verification import run
    from verification.report import render_figures

    previous = matplotlib.get_backend()
    matplotlib.use("svg")                  # stands for the user's own backend
    try:
        paths = render_figures({"a:b[c]": lambda fig: fig.add_subplot().plot([0, 1], [1, 0])},
                               tmp_path / "figures")
        assert matplotlib.get_backend() == "svg"
        report = run(claims_for("marion2025", ["marion2025:prop3-linear"]), show=False,
                     out=tmp_path / "run")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(previous)
    assert paths == {"a:b[c]": "figures/a_b_c.png"}
    assert (tmp_path / "figures" / "a_b_c.png").read_bytes()[:4] == b"\x89PNG"
    assert [c["verdict"] for c in report["claims"]] == ["confirmed"]
    assert (tmp_path / "run" / "report.json").exists()


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
    assert res.exit_code == 0 and "phi = " in res.output and "S_11/27" in res.output
    bad = runner.invoke(app, ["heads", "--activation", "relu"])
    assert bad.exit_code == 2 and "activation=" in bad.output


def test_terminal_table_shows_sub_claim_ids_verbatim():
    from io import StringIO
    from rich.console import Console
    from verification.report import verdict_table
    buf = StringIO()
    report = {"profile": "quick", "seed": 0, "claims": [
        {"id": "p:c[link=linear]", "label": "Prop. 1", "verdict": "refuted",
         "summary": "x [bold]y", "seconds": 1.0}]}
    verdict_table(report, Console(file=buf, width=200))
    assert "p:c[link=linear]" in buf.getvalue() and "[bold]" in buf.getvalue()
