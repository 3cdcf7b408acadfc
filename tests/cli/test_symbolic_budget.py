"""Symbolic work bounded and visible (issue 43): derive --on with arctan returns (a
substitution no longer re-derives expectation nodes that cannot close), simplification runs
under a budget and falls back to the derived expression with a one-line note, and expressions
from derive --json rebuild safely and evaluate with their quadrature error."""

import json

import pytest
import sympy as sp
from typer.testing import CliRunner

from theory import GaussianExpectation, GaussianLaw, evaluate_json, expect, rebuild
from theory.gaussian import _closable
from theory.special import Relu
from verification.cli import app

ATAN = '''import sympy as sp

from theory.models.marion2025 import DEFAULT_PARAMS, DEFAULT_STATE, build  # noqa: F401

MODEL = build(activation=sp.atan, name="marion-atan")
'''


@pytest.fixture(scope="module")
def atan_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("atan") / "marion_atan.py"
    path.write_text(ATAN)
    return path


def _run(*args, env=None):
    res = CliRunner().invoke(app, list(args), env=env)
    assert res.exit_code == 0, res.output
    return res


def test_arctan_derive_on_the_manifold_returns(atan_file):
    """The issue's hang (over 18 minutes): restricting the flow re-derived every node."""
    res = _run("derive", str(atan_file), "--on", "theta=0,eta=0,rho=0")
    assert "E_{z_1}[atan(" in res.stdout and "dkappa/dt" in res.stdout


def test_a_substitution_still_reaches_closed_forms():
    g1, g2 = sp.symbols("g1 g2", real=True)
    a, lam = sp.symbols("a lam", real=True)
    law = GaussianLaw((g1, g2), sp.Matrix([a, a]), sp.Matrix([[1, 0.5], [0.5, 1]]))
    node = expect(Relu(g1) * Relu(g2), law)
    assert node.has(GaussianExpectation) and not node.subs(a, 0).has(GaussianExpectation)
    z = sp.Symbol("z", real=True)
    assert _closable(Relu(z) * z**2 * sp.exp(z), [z])
    assert not _closable(sp.atan(z), [z]) and not _closable(z / (1 + lam**2 * z**2), [z])
    kept = GaussianExpectation(sp.atan(lam * z + a), z).subs(a, 0)
    assert kept == GaussianExpectation(sp.atan(lam * z), z)


def test_simplification_past_its_budget_prints_as_derived_with_a_note():
    res = _run("derive", "marion2025", "--on", "theta=0,eta=0,rho=0",
               env={"ATTNV_SIMPLIFY_BUDGET": "1e-6"})
    assert "dkappa/dt" in res.stdout
    notes = [line for line in res.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "budget" in notes[0] and "dkappa/dt" in notes[0]
    full = _run("derive", "marion2025", "--on", "theta=0,eta=0,rho=0")
    assert "note:" not in full.stderr


def test_json_expressions_rebuild_and_evaluate_with_their_error(atan_file):
    doc = json.loads(_run("derive", str(atan_file), "--json").stdout)
    ev = json.loads(_run("evaluate", str(atan_file), "--param", "lam=2.96", "--json").stdout)
    risk = doc["equations"][0]
    expr = rebuild(risk)
    assert expr.has(GaussianExpectation)
    got = evaluate_json(risk, {**ev["params"], **ev["state"]}, tol=1e-8)
    assert got.value == pytest.approx(ev["loss"]["value"], abs=2 * ev["loss"]["quadrature_error"])
    assert got.quadrature_error <= 1e-8


def test_rebuild_runs_no_code():
    with pytest.raises(ValueError, match="not a SymPy class"):
        rebuild("__import__('os')")
    with pytest.raises(ValueError, match="unexpected Call"):
        rebuild("__import__('os').system('true')")
    with pytest.raises(ValueError, match="unexpected"):
        rebuild("Symbol('x').__class__")
    assert rebuild("Add(Symbol('x', real=True), Integer(1))") == sp.Symbol("x", real=True) + 1
