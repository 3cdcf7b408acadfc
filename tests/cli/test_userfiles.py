"""Models, activations and claims from the user's own files (outside the package) and from an
installed plugin's entry points (issue 14): ``verification.userfiles`` and the CLI's
``derive``/``evaluate``/``heads`` on them."""

import json
import pickle
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from verification import userfiles
from verification.cli import app
from verification.declare import REGISTRY

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

MARION_TANH = '''
"""Marion et al.'s attention with tanh in place of erf (a user's variant)."""
import sympy as sp

from theory.models.marion2025 import DEFAULT_PARAMS, DEFAULT_STATE, build

MODEL = build(activation=sp.tanh, name="marion-tanh")
'''

TEMPERED = '''
"""A multi-head tempered softmax: A_h = softmax(2 s_h)."""
import sympy as sp

from theory.multihead import Activation


def tempered(s, v):
    return [[sp.exp(2 * x) / sum(sp.exp(2 * y) for y in row) for x in row] for row in s]


SOFTMAX_T2 = Activation("softmax-T2", tempered, shift_invariance="head")
'''

CLAIMS = '''
from verification import Outcome, claim


@claim("{paper}:always", "Thm. 0", "The variant's risk is $R \\\\ge 0$.", statistical=False)
def always(ctx):
    return Outcome("confirmed", "nothing to refute")
'''


def _ok(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def _errors(args, count=1):
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)      # no traceback
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == count and all(x.startswith("error: ") for x in lines), res.output
    return res.output


@pytest.fixture
def files(tmp_path):
    (tmp_path / "marion_tanh.py").write_text(MARION_TANH)
    (tmp_path / "tempered.py").write_text(TEMPERED)
    return tmp_path


def test_parse_spec_is_pytest_like(tmp_path):
    assert userfiles.parse_spec("marion2025") == (None, "marion2025")
    path, name = userfiles.parse_spec("dir/my_variant.py:MODEL")
    assert (str(path), name) == ("dir/my_variant.py", "MODEL")
    assert userfiles.parse_spec("my_variant.py")[1] is None
    with pytest.raises(ValueError, match="Python name"):
        userfiles.parse_spec("my_variant.py:1bad")


def test_a_file_is_imported_once_under_a_unique_name_and_pickles_by_reference(files):
    act = userfiles.load_activation(f"{files}/tempered.py:SOFTMAX_T2")
    assert act.name == "softmax-T2"
    module = sys.modules[act.weights.__module__]
    assert module.__name__.startswith("attnv_user_tempered_")
    assert userfiles.import_file(files / "tempered.py") is module
    assert pickle.loads(pickle.dumps(act)).weights is act.weights
    # without NAME: the one Activation the file defines
    assert userfiles.load_activation(f"{files}/tempered.py") is act


def test_clear_errors_for_a_missing_file_or_name(files):
    with pytest.raises(FileNotFoundError, match="no such file"):
        userfiles.load_model(f"{files}/nothere.py")
    with pytest.raises(ValueError, match=r"defines no 'MODELS'; allowed: \['MODEL'\]"):
        userfiles.load_model(f"{files}/marion_tanh.py:MODELS")
    with pytest.raises(ValueError, match=r"defines no 'TEMPERED'; allowed: \['SOFTMAX_T2'\]"):
        userfiles.load_activation(f"{files}/tempered.py:TEMPERED")
    with pytest.raises(ValueError, match="is a Activation, not a model"):
        userfiles.load_model(f"{files}/tempered.py:SOFTMAX_T2")
    with pytest.raises(ValueError, match=r"not found; allowed: \['dohmatob2025', 'marion2025'"):
        userfiles.load_model("nomodel")
    with pytest.raises(ValueError, match=r"allowed: \['b-softmax', 'softmax'"):
        userfiles.load_activation("softmax-2")


def test_a_model_file_gets_the_reduced_model_with_its_module_defaults(files):
    rm = userfiles.load_model(f"{files}/marion_tanh.py", {"lam": 1.2})
    assert rm.name == "marion-tanh" and rm.params["lam"] == 1.2 and rm.params["d"] == 20
    y = rm.default_state()
    assert rm.as_dict(y)["kappa"] == 0.5
    assert np.isfinite(rm.loss(y)[0]) and np.all(np.isfinite(rm.rhs(y)))


def test_cli_derive_and_evaluate_a_model_file(files):
    spec = f"{files}/marion_tanh.py:MODEL"
    out = _ok(["derive", spec])
    assert out.startswith("R = ") and "tanh" in out and "drho/dt = " in out
    on_m = _ok(["derive", spec, "--on", "theta=0,eta=0,rho=0", "--latex"])
    assert r"\frac{d\kappa}{dt}" in on_m and r"\frac{d\theta}{dt}" not in on_m
    assert r"\lambda" in on_m and "lam" not in on_m.replace(r"\lambda", "")
    out = _ok(["evaluate", spec, "--param", "lam=1.2", "--state", "kappa=0.3"])
    assert re.search(r"^risk = [0-9.]+ ± [0-9.e-]+ \(quadrature\)$", out, re.M) and "dkappa/dt = " in out
    _errors(["evaluate", spec, "--param", "lambda=1.2", "--state", "zeta=0.1"], count=2)
    _errors(["derive", f"{files}/marion_tanh.py:MODELS"])
    _errors(["derive", f"{files}/missing.py"])


def test_cli_heads_with_an_activation_file(files):
    out = _ok(["heads", "--activation", f"{files}/tempered.py:SOFTMAX_T2", "--L", "3"])
    assert "w_0 = " in out and "saddle Hessian" in out and "exp(2*" in out
    _errors(["heads", "--activation", f"{files}/tempered.py:NOPE", "--H", "0"], count=2)


def test_a_claims_file_registers_its_claims(files):
    path = files / "my_claims.py"
    path.write_text(CLAIMS.format(paper="myvariant"))
    assert userfiles.load_claims_file(path) == ["myvariant:always"]
    assert userfiles.load_claims_file(path) == ["myvariant:always"]     # imported once
    c = REGISTRY["myvariant:always"]
    assert c.paper == "myvariant" and c.module.startswith("attnv_user_my_claims_")
    (files / "empty.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="registers no claim"):
        userfiles.load_claims_file(files / "empty.py")


@pytest.fixture
def plugin_root(tmp_path, monkeypatch, forget_claims):
    """An installed plugin on sys.path, imported afresh: a ``myplugin`` module that another test
    of this worker left in sys.modules (with its claims already unregistered) is dropped before
    and after, so that each test imports the plugin's claims module itself."""
    from verification import catalogue

    def drop():
        for name in [m for m in sys.modules if m.split(".")[0] == "myplugin"]:
            del sys.modules[name]

    drop()
    _plugin(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(catalogue._PLUGINS, "loaded", False)      # a fresh process's first look
    yield tmp_path
    drop()


def _plugin(root, name="myplugin"):
    """An installed plugin package: its module and a dist-info with entry_points.txt."""
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(MARION_TANH + TEMPERED)
    (pkg / "claims.py").write_text(CLAIMS.format(paper=name))
    dist = root / f"{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [attention_verification.models]
        {name}-tanh = {name}

        [attention_verification.activations]
        softmax-T2 = {name}:SOFTMAX_T2

        [attention_verification.claims]
        {name} = {name}.claims
        """))


def test_an_entry_point_plugin_registers_models_activations_and_claims(plugin_root):
    assert "myplugin-tanh" in userfiles.known_models()
    assert "softmax-T2" in userfiles.known_activations()
    rm = userfiles.load_model("myplugin-tanh")
    assert rm.name == "marion-tanh" and rm.params["d"] == 20
    assert userfiles.load_activation("softmax-T2").name == "softmax-T2"
    assert userfiles.plugin_claim_modules() == {"myplugin": ["myplugin:always"]}
    assert REGISTRY["myplugin:always"].module == "myplugin.claims"
    out = _ok(["heads", "--activation", "softmax-T2", "--L", "3"])
    assert "exp(2*" in out


def test_a_later_process_imports_a_user_file_by_its_module_name(files):
    """What a user's file defines travels to the engine's worker processes by reference: a
    process started afterwards (it inherits ATTNV_USER_FILES) unpickles it, and imports a
    claims file by the module name its claims record."""
    import os
    import subprocess
    act = userfiles.load_activation(f"{files}/tempered.py:SOFTMAX_T2")
    (files / "my_claims.py").write_text(CLAIMS.format(paper="myvariant"))
    userfiles.load_claims_file(files / "my_claims.py")
    module = REGISTRY["myvariant:always"].module
    assert str((files / "tempered.py").resolve()) in os.environ[userfiles.ENV]
    code = ("import importlib, pickle, sys; import verification; "
            "act = pickle.loads(sys.stdin.buffer.read()); "
            f"importlib.import_module({module!r}); "
            "print(act.name, sorted(k for k in verification.REGISTRY if k.startswith('myvariant')))")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(act), capture_output=True,
                         cwd=str(files), env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stdout.decode().split() == ["softmax-T2", "['myvariant:always']"]


def test_cli_evaluates_a_multi_head_model_file_with_its_prior(files):
    (files / "heads_model.py").write_text(TEMPERED + textwrap.dedent('''
        from theory.models.sagitova2026 import GaussianPrior
        from theory.multihead import MultiHeadModel
        MODEL = MultiHeadModel(2, 3, 2, SOFTMAX_T2)
        PRIOR = GaussianPrior([0.3, 0.0], [[2.0, 0.0], [0.0, 0.7]])
        '''))
    spec = f"{files}/heads_model.py"
    out = _ok(["evaluate", spec, "--param", "n=1024", "--state", "m[0,0]=0.2"])
    assert re.search(r"^loss = [0-9.]+ ± [0-9.e-]+ \(se\)$", out, re.M) and "dm[0,0]/dtau = " in out
    _errors(["evaluate", spec, "--param", "n=x", "--param", "H=3"], count=2)
    out = _ok(["derive", spec])
    assert "exp(2*s_0_0)" in out and "saddle Hessian at the prior's moments" in out


def test_run_and_list_take_a_claims_file_and_say_where_each_claim_comes_from(files):
    (files / "my_claims.py").write_text(CLAIMS.format(paper="mine"))
    out = _ok(["list", "--claims", str(files / "my_claims.py")])
    assert out.startswith("mine:always") and str((files / "my_claims.py").resolve()) in out
    assert "[built-in]" in _ok(["list", "--paper", "marion2025"])
    res = runner.invoke(app, ["run", "--claims", str(files / "my_claims.py"), "--workers", "0",
                              "--out", str(files / "out"), "--no-figures"])
    assert res.exit_code == 0, res.output
    report = json.loads((files / "out" / "report.json").read_text())
    assert [(c["id"], c["verdict"]) for c in report["claims"]] == [("mine:always", "confirmed")]
    res = runner.invoke(app, ["run", "--claims", str(files / "nowhere.py")])
    assert res.exit_code == 2 and "nowhere.py" in res.output


def test_run_paper_finds_and_runs_a_plugins_claims(plugin_root):
    res = runner.invoke(app, ["run", "--paper", "myplugin", "--workers", "0", "--out",
                              str(plugin_root / "out"), "--no-figures"])
    assert res.exit_code == 0, res.output
    report = json.loads((plugin_root / "out" / "report.json").read_text())
    assert [(c["id"], c["verdict"]) for c in report["claims"]] == [("myplugin:always", "confirmed")]
    assert "[plugin " in _ok(["list", "--paper", "myplugin"])
