"""Acceptance (issue 28): any function a user writes as Marion et al.'s attention activation.

Softplus written as the formula log(1 + exp(t)) (examples/marion_softplus.py) gives, through
``evaluate FILE:MODEL``, a risk within 4 standard errors of an independent Monte Carlo of the
model as declared (tokens drawn in R^d per the data law, the student's prediction and the
squared loss computed directly in numpy); sigmoid as a formula and as a function of the
user's own (docs/functions.md) agree; a function the engine cannot evaluate gets one line
naming it and what is supported, exit 2."""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from verification.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
SOFTPLUS = ROOT / "examples" / "marion_softplus.py"
PARAMS = {"d": 20, "L": 3, "lam": 0.7, "gamma": 0.8, "eps": 0.3}
STATE = {"kappa": 0.5, "nu": 0.4, "theta": 0.1, "eta": 0.05, "rho": 0.1}

HEADER = '''import numpy as np
import sympy as sp

from theory.models.marion2025 import DEFAULT_PARAMS, DEFAULT_STATE, build  # noqa: F401
'''
FILES = {
    "sigmoid_formula.py": HEADER + '''
MODEL = build(activation=lambda t: 1 / (1 + sp.exp(-t)), name="marion-sigmoid")
''',
    "sigmoid_function.py": HEADER + '''

class sigm(sp.Function):
    nargs = 1

    def fdiff(self, argindex=1):
        return sigm(self.args[0]) * (1 - sigm(self.args[0]))

    numpy = staticmethod(lambda x: 1 / (1 + np.exp(-x)))

    @staticmethod
    def torch(x):
        import torch
        return torch.sigmoid(x)


MODEL = build(activation=sigm, name="marion-sigm")
''',
    "undefined.py": HEADER + '''
MODEL = build(activation=sp.Function("mystery"), name="marion-mystery")
''',
    "no_numpy.py": HEADER + '''

class sigm2(sp.Function):
    def fdiff(self, argindex=1):
        return sigm2(self.args[0]) * (1 - sigm2(self.args[0]))


MODEL = build(activation=sigm2, name="marion-sigm2")
''',
}


def _evaluate(spec: str) -> dict:
    args = ["evaluate", spec, "--json"]
    args += [a for k, v in PARAMS.items() for a in ("--param", f"{k}={v}")]
    args += [a for k, v in STATE.items() for a in ("--state", f"{k}={v}")]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _monte_carlo_risk(activation, n=400_000, seed=0, chunk=50_000):
    """E(ŷ − y)² by drawing the model as Marion et al. declare it: orthonormal k*, v*; unit
    k, v with the given overlaps; J uniform on [L]; x_J ~ N(√(d/2)·k*, γ²I), the other tokens
    N(0, I); ŷ = Σ_ℓ φ(λ·x_ℓᵀk)·x_ℓᵀv, y = x_Jᵀv* + ε·ξ. Mean and standard error."""
    d, L, lam, gamma, eps = (PARAMS[k] for k in ("d", "L", "lam", "gamma", "eps"))
    kap, nu, th, et, rho = (STATE[k] for k in ("kappa", "nu", "theta", "eta", "rho"))
    gram = np.array([[1, 0, kap, th], [0, 1, et, nu], [kap, et, 1, rho], [th, nu, rho, 1]])
    coords = np.linalg.cholesky(gram)                    # rows: k*, v*, k, v in R^4
    vecs = np.zeros((4, d))
    vecs[:, :4] = coords
    k_star, v_star, k, v = vecs
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(n // chunk):
        x = rng.standard_normal((chunk, L, d))
        J = rng.integers(0, L, chunk)
        rows = np.arange(chunk)
        x[rows, J] = np.sqrt(d / 2) * k_star + gamma * x[rows, J]
        y_hat = (activation(lam * (x @ k)) * (x @ v)).sum(axis=1)
        y = x[rows, J] @ v_star + eps * rng.standard_normal(chunk)
        losses.append((y_hat - y) ** 2)
    losses = np.concatenate(losses)
    return losses.mean(), losses.std(ddof=1) / np.sqrt(losses.size)


@pytest.fixture
def files(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_softplus_as_a_formula_matches_an_independent_monte_carlo():
    out = _evaluate(f"{SOFTPLUS}:MODEL")
    risk = out["loss"]["value"]
    mean, se = _monte_carlo_risk(lambda u: np.logaddexp(0.0, u))
    assert abs(risk - mean) <= 4 * se, (risk, mean, se)
    assert all(np.isfinite(list(out["rhs"].values())))


def test_softplus_derives_with_explicit_expectations():
    res = runner.invoke(app, ["derive", f"{SOFTPLUS}:MODEL", "--on", "theta=0,eta=0,rho=0"])
    assert res.exit_code == 0, res.output
    assert "E_{z_1}[log(exp(" in res.output and "dkappa/dt" in res.output


def test_sigmoid_as_a_formula_and_as_a_users_function_agree(files):
    formula = _evaluate(f"{files / 'sigmoid_formula.py'}:MODEL")
    own = _evaluate(f"{files / 'sigmoid_function.py'}:MODEL")
    assert own["loss"]["value"] == pytest.approx(formula["loss"]["value"], rel=1e-10)
    for name, value in formula["rhs"].items():
        assert own["rhs"][name] == pytest.approx(value, rel=1e-9, abs=1e-12)
    mean, se = _monte_carlo_risk(lambda u: 1 / (1 + np.exp(-u)), n=200_000)
    assert abs(formula["loss"]["value"] - mean) <= 4 * se


@pytest.mark.parametrize("name, says", [
    ("undefined.py", "the derivative of mystery is not known"),
    ("no_numpy.py", "function sigm2 has no numpy implementation"),
])
def test_a_function_the_engine_cannot_evaluate_gets_one_line_and_exit_2(files, name, says):
    for command in (["evaluate"], ["evaluate", "--json"]):
        res = runner.invoke(app, [command[0], f"{files / name}:MODEL", *command[1:]])
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert res.exit_code == 2 and len(lines) == 1, res.output
        assert lines[0].startswith("error: ") and says in lines[0]
        assert "docs/functions.md" in lines[0] and "allowed:" in lines[0]
