"""Answers a program can read (issue 28): ``derive``, ``evaluate`` and ``heads`` with ``--json``
print one JSON document on stdout and nothing else (numbers as JSON numbers, every expression
as text, LaTeX and an srepr that ``sympy.parse_expr`` rebuilds, the parameters and the state's
names); errors stay one line on stderr, exit 2. ``heads`` evaluates the saddle Hessian of
Lemma III.1 at a prior given by its mean and either its covariance or its second moment, and
its eigenvalues agree with an independent finite-difference Hessian of the Monte Carlo reduced
loss; a covariance passed as the second moment (μ ≠ 0) gives other eigenvalues, which the
finite differences refute. Every name printed is 0-based, as the state's names are."""

import importlib
import json
import math
import os
from pathlib import Path
import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
import sympy as sp
from typer.testing import CliRunner

from numerics.multihead import HeadState, ReducedFlow, mean_and_se
from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import MultiHeadModel
from verification.cli import app

runner = CliRunner()

SIZES = ["--H", "2", "--L", "3", "--F", "2"]
MEAN, COV = np.array([0.6, -0.2]), np.array([[1.2, 0.4], [0.4, 0.6]])
"""A prior whose mean matters: S = Cov + μμᵀ differs from Cov, and the covariance passed as the
second moment is still a valid one (Cov − μμᵀ is positive definite)."""


def _text(A) -> str:
    """A vector or matrix as the prior options take it: '0.6,-0.2' or '1.2,0.4;0.4,0.6'."""
    A = np.atleast_2d(A)
    return ";".join(",".join(repr(float(x)) for x in row) for row in A)


def _json(args) -> dict:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)                 # stdout holds the document and nothing else


def _numbers_are_numbers(value, path="doc"):
    """No number anywhere in the document is written as a string."""
    if isinstance(value, dict):
        for k, v in value.items():
            _numbers_are_numbers(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _numbers_are_numbers(v, f"{path}[{i}]")
    elif isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return
        raise AssertionError(f"{path} = {value!r}: a number written as a string")


def _rebuilds(expr: dict):
    """An expression's srepr rebuilds it, by parse_expr and by eval in SymPy's namespace, with
    the classes its 'classes' name (module:name) that are not SymPy's."""
    own = {}
    for name, where in expr["classes"].items():
        module, _, attr = where.partition(":")
        own[name] = getattr(importlib.import_module(module), attr)
    built = sp.parse_expr(expr["srepr"], local_dict=own)
    assert sp.sstr(built) == expr["text"]
    namespace: dict = {}
    exec("from sympy import *", namespace)
    assert eval(expr["srepr"], {**namespace, **own}) == built
    return built


def _one_error_line(args, *fragments) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert res.stdout == "", res.stdout
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


# --- derive ----------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["marion2025", "dohmatob2025"])
def test_derive_json_holds_every_equation_rebuildable(model):
    from verification.userfiles import load_model
    doc = _json(["derive", model, "--json"])
    rm = load_model(model, None)
    assert doc["command"] == "derive" and doc["model"] == model and doc["name"] == rm.name
    assert doc["state_names"] == list(rm.state_names) and doc["time"] == rm.time
    assert doc["params"] == {k: float(v) for k, v in rm.params.items()}
    assert doc["on"] == {} and doc["simplified"] is False and "saddle" not in doc
    eqs = doc["equations"]
    assert [e["name"] for e in eqs] == [e.lhs for e in rm.equations()]
    for e, original in zip(eqs, rm.equations()):
        assert _rebuilds(e) == original.rhs                  # the very expression, symbols too
        assert e["latex"] == original.latex_rhs() and e["name_latex"] == original.lhs_latex
    if model == "marion2025":                                # Owen's T is the suite's own
        assert eqs[0]["classes"] == {"OwensT": "theory.special:OwensT"}
    _numbers_are_numbers(doc)
    text = runner.invoke(app, ["derive", model]).stdout
    assert all(f"{e['name']} = {e['text']}" in text for e in eqs)


def test_derive_json_of_a_users_model_names_the_suites_own_classes():
    root = Path(__file__).resolve().parents[2]
    doc = _json(["derive", str(root / "examples" / "marion_tanh.py"), "--json"])
    R = doc["equations"][0]
    assert R["classes"] == {"GaussianExpectation": "theory.gaussian:GaussianExpectation"}
    assert any(type(x).__name__ == "GaussianExpectation" for x in sp.preorder_traversal(_rebuilds(R)))


def test_derive_json_on_a_manifold_says_what_is_fixed():
    doc = _json(["derive", "marion2025", "--on", "theta=0,eta=0,rho=0", "--json"])
    assert doc["on"] == {"theta": 0.0, "eta": 0.0, "rho": 0.0} and doc["simplified"] is True
    assert doc["state_names"] == ["kappa", "nu"]
    R = _rebuilds(doc["equations"][0])
    assert {s.name for s in R.free_symbols} <= {"kappa", "nu", "d", "L", "lam", "gamma", "eps"}


def test_derive_json_of_the_multi_head_model_has_its_saddle_at_the_prior():
    """sagitova2026's default prior is the flipping spike θ = (2, ±√1.5): mean (2, 0)."""
    doc = _json(["derive", "sagitova2026", "--json"])
    assert doc["state_names"][:4] == ["m[0,0]", "m[0,1]", "m[1,0]", "m[1,1]"]
    saddle = doc["saddle"]
    assert saddle["coordinates"] == doc["state_names"][:4]
    assert saddle["prior"]["given"] == "prior"
    assert np.allclose(saddle["prior"]["mean"], [2, 0])
    assert np.allclose(saddle["prior"]["second_moment"], [[4, 0], [0, 1.5]])
    H = np.array(saddle["hessian_at_prior"])
    assert np.allclose(saddle["eigenvalues"], np.linalg.eigvalsh(H))
    by_name = {e["name"]: e for e in doc["equations"]}
    at = _rebuilds(by_name["saddle Hessian at the prior's moments"])
    assert np.allclose(np.array(at, float), H)
    _numbers_are_numbers(doc)


# --- evaluate --------------------------------------------------------------------------------
def test_evaluate_json_gives_the_numbers_the_text_gives():
    args = ["evaluate", "marion2025", "--param", "d=30", "--state", "kappa=0.5", "--state", "nu=0.4"]
    doc = _json(args + ["--json"])
    assert doc["command"] == "evaluate" and doc["params"]["d"] == 30.0
    assert doc["state_names"] == ["kappa", "nu", "theta", "eta", "rho"] and doc["time"] == "t"
    assert doc["state"] == {"kappa": 0.5, "nu": 0.4, "theta": 0.0, "eta": 0.0, "rho": 0.0}
    assert doc["loss"]["name"] == "risk" and doc["loss"]["se"] == 0.0
    assert list(doc["rhs"]) == doc["state_names"]
    _numbers_are_numbers(doc)
    lines = runner.invoke(app, args).stdout.splitlines()
    assert lines[0] == f"risk = {doc['loss']['value']:.12g}"
    for line, (name, value) in zip(lines[1:], doc["rhs"].items()):
        assert line == f"d{name}/dt = {value + 0.0:.12g}"


def test_evaluate_json_of_the_multi_head_model_names_its_state_0_based():
    doc = _json(["evaluate", "sagitova2026", "--param", "n=1024", "--state", "m[0,0]=0.3", "--json"])
    assert doc["state"]["m[0,0]"] == 0.3 and doc["time"] == "tau"
    assert doc["loss"]["se"] > 0 and isinstance(doc["loss"]["value"], float)
    assert list(doc["rhs"])[:4] == ["m[0,0]", "m[0,1]", "m[1,0]", "m[1,1]"]
    assert doc["params"]["n"] == 1024 and isinstance(doc["params"]["prior"], str)


def test_json_stdout_is_the_document_alone_in_a_fresh_process(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "verification", "evaluate", "dohmatob2025",
                          "--state", "mu=0.5", "--json"], env=env, cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["state"]["mu"] == 0.5 and math.isfinite(doc["loss"]["value"])


@pytest.mark.parametrize("args, fragments", [
    (["evaluate", "marion2025", "--param", "lam=-1"], ["lam="]),
    (["evaluate", "sagitova2026", "--state", "m[9,9]=1"], ["m[9,9]"]),
    (["derive", "nomodel"], ["not found"]),
    (["derive", "marion2025", "--on", "theta"], ["--on 'theta'"]),
    (["heads", "--activation", "relu"], ["activation='relu'"]),
    (["heads", "--mean", "0.5,0"], ["--mean '0.5,0' alone", "--cov", "--second-moment"]),
])
def test_errors_with_json_are_still_one_line_and_exit_2(args, fragments):
    _one_error_line(args + ["--json"], *fragments)


# --- heads: names, the saddle Hessian at a prior, its eigenvalues ----------------------------
def test_heads_json_names_everything_0_based_as_the_state():
    from numerics.reduced import HeadReduced
    doc = _json(["heads", *SIZES, "--json"])
    names = list(HeadReduced(MultiHeadModel(2, 3, 2)).state_names)
    assert doc["state_names"] == names and doc["params"] == {
        "H": 2, "L": 3, "F": 2, "activation": "softmax", "output": "mean"}
    saddle = doc["saddle"]
    assert saddle["coordinates"] == names[:4] == ["m[0,0]", "m[0,1]", "m[1,0]", "m[1,1]"]
    assert saddle["mean_symbols"] == ["mu[0]", "mu[1]"]
    assert saddle["second_moment_symbols"] == [["S[0,0]", "S[0,1]"], ["S[0,1]", "S[1,1]"]]
    assert saddle["prior"] is saddle["hessian_at_prior"] is saddle["eigenvalues"] is None
    H = _rebuilds(saddle["hessian"])
    allowed = {"S[0,0]", "S[0,1]", "S[1,1]", "mu[0]", "mu[1]"}
    assert {s.name for s in H.free_symbols} <= allowed and H.shape == (4, 4)
    assert "S_{0,0}" in saddle["hessian"]["latex"]
    text = runner.invoke(app, ["heads", *SIZES]).stdout
    assert "m order ['m[0,0]', 'm[0,1]', 'm[1,0]', 'm[1,1]']" in text and "S[0,0]" in text
    assert not re.search(r"\b(m|S|mu)_\d", text)             # no 1-based m_11, S_12, mu_1


def _heads_at(*prior) -> dict:
    return _json(["heads", *SIZES, "--mean", _text(MEAN), *prior, "--json"])


def _finite_difference_curvatures(V, n=2**18, seed=11, delta=1e-3):
    """v_kᵀ(∂²L/∂m²)v_k for each column v_k of V at m = r = b = v = 0: per-draw central
    second differences of the reduced loss (quasi-Monte Carlo draws of θ ~ N(MEAN, COV) and the
    tokens, common random numbers for every evaluation), contracted per draw with V, so that
    the estimate has an honest standard error. Returns (estimate, se, FD Hessian, its se)."""
    fl = ReducedFlow(MultiHeadModel(2, 3, 2), GaussianPrior(MEAN, COV), n=n, seed=seed,
                     kind="random")
    P = 4
    E = np.eye(P) * delta

    def loss(m):
        return fl.loss_samples(HeadState.make(m.reshape(2, 2)))
    f0 = loss(np.zeros(P))
    per = np.empty((len(f0), P, P))
    for i in range(P):
        per[:, i, i] = (loss(E[i]) - 2 * f0 + loss(-E[i])) / delta**2
        for j in range(i + 1, P):
            per[:, i, j] = per[:, j, i] = (loss(E[i] + E[j]) - loss(E[i] - E[j])
                                           - loss(E[j] - E[i]) + loss(-E[i] - E[j])) / (4 * delta**2)
    est, se = mean_and_se(np.einsum("ak,nab,bk->nk", V, per, V))
    H, H_se = mean_and_se(per)
    return est, se, H, H_se


Z = 5.0
"""Standard errors allowed (4 eigenvalues and 10 entries: a family-wise false alarm of about
1e-5 for a normal estimate)."""


def test_heads_eigenvalues_agree_with_a_finite_difference_hessian_and_a_wrong_moment_does_not():
    right = _heads_at("--cov", _text(COV))["saddle"]
    assert right["prior"]["given"] == "cov"
    assert np.allclose(right["prior"]["second_moment"], COV + np.outer(MEAN, MEAN))
    H = np.array(right["hessian_at_prior"])
    eig = np.array(right["eigenvalues"])
    assert np.all(np.diff(eig) >= 0) and np.allclose(eig, np.linalg.eigvalsh(H))
    _, V = np.linalg.eigh(H)
    est, se, H_fd, H_se = _finite_difference_curvatures(V)
    assert np.all(np.abs(est - eig) <= Z * se), ((est - eig) / se, eig, est, se)
    assert np.all(np.abs(H_fd - H) <= Z * H_se + 1e-9), ((H_fd - H) / H_se)

    # the covariance passed as the second moment: other eigenvalues, refuted by the same draws
    wrong = _heads_at("--second-moment", _text(COV))["saddle"]
    assert wrong["prior"]["given"] == "second-moment"
    assert np.allclose(wrong["prior"]["cov"], COV - np.outer(MEAN, MEAN))
    wrong_eig = np.array(wrong["eigenvalues"])
    assert np.max(np.abs(wrong_eig - eig)) > 0.01
    _, W = np.linalg.eigh(np.array(wrong["hessian_at_prior"]))
    west, wse, _, _ = _finite_difference_curvatures(W)
    assert np.max(np.abs(west - wrong_eig) / wse) > 2 * Z, ((west - wrong_eig) / wse)


def test_heads_second_moment_and_covariance_of_one_prior_agree():
    by_cov = _heads_at("--cov", _text(COV))["saddle"]
    by_second = _heads_at("--second-moment", _text(COV + np.outer(MEAN, MEAN)))["saddle"]
    assert np.allclose(by_cov["eigenvalues"], by_second["eigenvalues"], rtol=1e-12, atol=1e-15)
    assert np.allclose(by_cov["hessian_at_prior"], by_second["hessian_at_prior"], atol=1e-15)


def test_heads_prints_the_hessian_at_the_prior_and_its_eigenvalues_ascending():
    args = ["heads", *SIZES, "--mean", _text(MEAN), "--cov", _text(COV)]
    text = runner.invoke(app, args).stdout
    eig = _json(args + ["--json"])["saddle"]["eigenvalues"]
    line = next(x for x in text.splitlines() if x.startswith("saddle Hessian eigenvalues"))
    assert "(ascending)" in line and "mean (0.6, -0.2)" in line
    assert "covariance (1.2, 0.4; 0.4, 0.6)" in line and "second moment (1.56, 0.28; 0.28, 0.64)" in line
    printed = [float(x) for x in line.rsplit(" = ", 1)[1].split(", ")]
    assert printed == sorted(printed) and np.allclose(printed, eig, rtol=1e-11)
    assert "saddle Hessian at mean (0.6, -0.2)" in text
    tex = runner.invoke(app, args + ["--latex"]).stdout
    assert r"\operatorname{Cov}\theta = (1.2, 0.4; 0.4, 0.6)" in tex and "Matrix(" not in tex


@pytest.mark.parametrize("prior, fragments", [
    (["--mean", "0.5,0"], ["--mean '0.5,0' alone", "exactly one of --cov"]),
    (["--cov", "1,0;0,1"], ["--cov without --mean"]),
    (["--second-moment", "1,0;0,1"], ["--second-moment without --mean"]),
    (["--mean", "0,0", "--cov", "1,0;0,1", "--second-moment", "1,0;0,1"],
     ["--cov and --second-moment both given", "S = E θθᵀ = Cov θ + μμᵀ"]),
    (["--mean", "0.5", "--cov", "1,0;0,1"], ["--mean '0.5': 1 number", "F = 2 finite numbers"]),
    (["--mean", "0.5,inf", "--cov", "1,0;0,1"], ["--mean '0.5,inf': not finite numbers"]),
    (["--mean", "0,0", "--cov", "1,0.5;0.4,1"], ["--cov '1,0.5;0.4,1': not symmetric",
                                                 "rows separated by ';'"]),
    (["--mean", "0,0", "--cov", "1,2;2,1"], ["--cov '1,2;2,1': not positive semi-definite",
                                             "eigenvalue -1 < 0"]),
    (["--mean", "0,0", "--cov", "1,0"], ["--cov '1,0': 1 row of 2 numbers", "2×2"]),
    (["--mean", "0,0", "--cov", "1,0;0,x"], ["--cov '1,0;0,x': not finite numbers"]),
    (["--mean", "1,0", "--second-moment", "0.5,0;0,1"],
     ["--second-moment '0.5,0;0,1': S − μμᵀ", "not positive semi-definite"]),
])
def test_heads_prior_options_are_checked_one_line_naming_the_option(prior, fragments):
    _one_error_line(["heads", *SIZES, *prior], *fragments)
    _one_error_line(["heads", *SIZES, *prior, "--json"], *fragments)


def test_heads_reports_every_error_of_its_options_at_once():
    res = runner.invoke(app, ["heads", "--output", "max", "--mean", "1", "--cov", "2,1;1"])
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.exit_code == 2 and res.stdout == "" and len(lines) == 3, res.stderr
    assert all(x.startswith("error: ") for x in lines)
    assert [x.split()[1] for x in lines] == ["--output", "--mean", "--cov"]


PRIOR_VALUES = ["", " ", "nan", "inf", "1e400", "-1", "0", "0.5", "1,0", "1;0", "1,0;0,1", ";", ",",
                "=", "θ", "1_0", "0x10", "a\nb", "\u202e1", "1,,2", "[1]", "1e-400", str(10**30)]
"""Hostile and ordinary values for the prior options (F = 1 or 2)."""


@settings(max_examples=max(settings.default.max_examples, 30))
@given(st.data())
def test_fuzz_heads_prior_options(data):
    """Any combination of hostile prior options: exit 0 (a JSON document), or exit 2 with one
    line per error, nothing on stdout, no traceback; each error names its option."""
    F = data.draw(st.sampled_from(["1", "2"]))
    args = ["heads", "--H", "1", "--L", "2", "--F", F, "--json"]
    value = st.one_of(st.sampled_from(PRIOR_VALUES), st.text(max_size=8))
    for flag in data.draw(st.lists(st.sampled_from(["--mean", "--cov", "--second-moment"]),
                                   unique=True, max_size=3)):
        args += [flag, data.draw(value)]
    res = runner.invoke(app, args)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    if res.exit_code == 0:
        saddle = json.loads(res.stdout)["saddle"]
        assert (saddle["eigenvalues"] is None) == (saddle["prior"] is None)
        return
    assert res.exit_code == 2 and res.stdout == "", res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert lines and all(re.match(r"error: --(mean|cov|second-moment)\b", x) for x in lines), lines
