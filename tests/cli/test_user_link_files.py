"""A user's link in a file: Dohmatob's student with σ(t) = t³ from a file (a link, a model, a
claims file of variants), through ``derive``, ``evaluate``, the Python API and ``run --claims``,
against an independent computation of R̄ (Prop. 1) from its defining formula by Gauss–Hermite
quadrature in numpy (exact here: the integrands are polynomials of degree ≤ 6); bad links get
one line naming the link and what is allowed."""

import json

import numpy as np
import pytest
import sympy as sp
from typer.testing import CliRunner

from theory.models import dohmatob2025 as dm
from verification.cli import app

runner = CliRunner()

LINK_FILE = '''"""A user's link: sigma(t) = t^3."""
CUBE = lambda t: t**3  # noqa: E731
'''
MODEL_FILE = '''"""Dohmatob's student with the user's link t^3."""
from theory.models.dohmatob2025 import build

MODEL = build(lambda t: t**3, link_name="cube")
'''
CLAIMS_FILE = '''"""Prop. 5 (M is invariant) for the user's link t^3: a variant of the paper's claim."""
from verification.claims.dohmatob2025 import link_variants

CUBE = lambda t: t**3  # noqa: E731
VARIANTS = link_variants(CUBE, ["prop5-invariance"], name="cube")
'''
PARAMS = {"d": 20, "alpha": 0.1, "beta": 1.0, "gamma": 0.6}
STATE = {"mu": 0.6, "nu": 0.4, "zeta": 0.1, "eta": -0.2, "rho": 0.15}


def _reference_rbar(sigma, d, alpha, beta, gamma, mu, nu, zeta, eta, rho):
    """R̄ = p²H1(1, ζ, ρ) − 2pH2(ν, ζ, ρ) + H1(1, 0, ρ) with ψ, r from Eqs. 14–18 (β_c = √(2α)),
    H(corr, z1, z2) = E[s(G1, z1)s(G2, z2)], s(t, z) = σ(γt + cz√d) − σ(ρr√d), (G1, G2) of
    correlation corr: 2-D Gauss–Hermite (probabilists'), 12 points per axis."""
    x, w = np.polynomial.hermite_e.hermegauss(12)
    w = w / w.sum()
    c, bc = np.sqrt(1 - gamma**2), np.sqrt(2 * alpha)
    psi = alpha / beta + beta / 2 if beta <= bc else bc
    r = min(beta, bc)
    p = 1 / (1 + np.exp(-(c * mu - psi) * beta * d))
    k = sigma(rho * r * np.sqrt(d))

    def H(corr, z1, z2):
        g1, g2 = np.meshgrid(x, x, indexing="ij")
        ww = np.outer(w, w)
        t1, t2 = g1, corr * g1 + np.sqrt(max(1 - corr**2, 0.0)) * g2
        s1 = sigma(gamma * t1 + c * z1 * np.sqrt(d)) - k
        s2 = sigma(gamma * t2 + c * z2 * np.sqrt(d)) - k
        return float((ww * s1 * s2).sum())

    return p**2 * H(1, zeta, zeta) - 2 * p * H(nu, zeta, 0) + H(1, 0, 0)


def _cube(t):
    return t**3


@pytest.fixture
def files(tmp_path):
    paths = {"link": tmp_path / "cube_link.py", "model": tmp_path / "cube_model.py",
             "claims": tmp_path / "cube_claims.py"}
    paths["link"].write_text(LINK_FILE)
    paths["model"].write_text(MODEL_FILE)
    paths["claims"].write_text(CLAIMS_FILE)
    return paths


def _ok(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def _values(out):
    return {k.strip(): float(v) for k, v in (line.split("=", 1) for line in out.splitlines() if "=" in line)}


def _args(params, state):
    return ([a for k, v in params.items() for a in ("--param", f"{k}={v}")]
            + [a for k, v in state.items() for a in ("--state", f"{k}={v}")])


def test_the_reference_quadrature_reproduces_the_built_in_links():
    """The independent reference agrees with the engine's R̄ on the paper's polynomial links."""
    from theory.quadrature import evaluate
    for name, sigma in (("linear", lambda t: t), ("quadratic", lambda t: t**2)):
        vals = {getattr(dm, k): v for k, v in {**PARAMS, **STATE}.items()}
        engine = evaluate(dm.paper_risk(name), vals)
        assert engine == pytest.approx(_reference_rbar(sigma, **PARAMS, **STATE), rel=1e-10)


def test_a_users_link_from_a_file_through_evaluate_and_the_python_api(files):
    from verification.userfiles import load_link, load_model
    spec = f"{files['link']}:CUBE"
    link = load_link(spec)
    t = sp.Symbol("t", real=True)
    assert isinstance(link, dm.Link) and link.name == "CUBE" and link(t) == t**3
    ref = _reference_rbar(_cube, **PARAMS, **STATE)

    rm = load_model("dohmatob2025", {"link": spec, **PARAMS})
    assert rm.name == "dohmatob2025 (CUBE link)" and isinstance(rm.declaration, dm.DohmatobModel)
    y = rm.pack(STATE)
    assert rm.loss(y)[0] == pytest.approx(ref, rel=1e-10)
    # ∂R̄/∂q of the engine against central differences of the reference
    for i, q in enumerate(rm.state_names):
        h = 1e-5
        up, down = dict(STATE), dict(STATE)
        up[q] += h
        down[q] -= h
        fd = (_reference_rbar(_cube, **PARAMS, **up) - _reference_rbar(_cube, **PARAMS, **down)) / (2 * h)
        assert rm.gradient(y)[i] == pytest.approx(fd, rel=1e-6, abs=1e-6), q

    out = _values(_ok(["evaluate", "dohmatob2025", "--param", f"link={spec}", *_args(PARAMS, STATE)]))
    assert out["risk"] == pytest.approx(ref, rel=1e-10)
    assert np.allclose([out[f"d{q}/dt"] for q in rm.state_names], rm.rhs(y), rtol=1e-9, atol=1e-12)


def test_a_model_file_with_a_users_link_through_derive_and_evaluate(files):
    out = _ok(["derive", str(files["model"])])
    assert out.startswith("Rbar = ") and "dmu/dt = " in out and "drho/dt = " in out
    on_m = _ok(["derive", str(files["model"]), "--on", "zeta=0,eta=0,rho=0"])
    assert "dmu/dt = " in on_m and "dzeta/dt" not in on_m
    ref = _reference_rbar(_cube, **PARAMS, **STATE)
    out = _values(_ok(["evaluate", str(files["model"]), *_args(PARAMS, STATE)]))
    assert out["risk"] == pytest.approx(ref, rel=1e-10)
    # the model's own defaults (dohmatob2025.DEFAULT_PARAMS) when the file declares none
    out = _values(_ok(["evaluate", f"{files['model']}:MODEL", *_args({}, STATE)]))
    assert out["risk"] == pytest.approx(_reference_rbar(_cube, **dm.DEFAULT_PARAMS, **STATE), rel=1e-10)


def test_bad_links_get_one_line_naming_param_link_and_what_is_allowed(files, tmp_path):
    bad = tmp_path / "bad_links.py"
    bad.write_text("import numpy as np\nimport sympy as sp\nNP = lambda t: np.tanh(t) + np.zeros(2)\n"
                   "TWO = sp.Lambda(sp.symbols('a b'), 1)\nK = lambda t: t * sp.Symbol('k')\n"
                   "WORD = 'cube'\n")
    for name, fragment in (("NP", "calling it on a SymPy symbol failed"), ("TWO", "2 variables"),
                           ("K", "besides t"), ("WORD", "is a str"), ("MISSING", "defines no")):
        res = runner.invoke(app, ["evaluate", "dohmatob2025", "--param", f"link={bad}:{name}"])
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert res.exit_code == 2 and len(lines) == 1, res.output
        assert lines[0].startswith(f"error: --param link={bad}:{name}: ") and fragment in lines[0]
        assert "allowed: one of linear, quadratic, relu, or PATH.py:NAME" in lines[0]
    res = runner.invoke(app, ["evaluate", "dohmatob2025", "--param", "link=cubic"])
    assert res.exit_code == 2 and "--param link=PATH.py:NAME" in res.output


def test_a_claims_variant_with_a_users_link(files, tmp_path):
    """``link_variants`` in a claims file: ``run --claims`` runs Prop. 5 for σ = t³ as a variant
    of the paper's claim (provenance recorded); t³ is odd, so every term of R̄ is even in (ζ, ρ)
    and M stays invariant: confirmed."""
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", "--claims", str(files["claims"]), "--workers", "0",
                              "--no-figures", "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    (entry,) = report["claims"]
    assert entry["id"] == "dohmatob2025:prop5-invariance@cube"
    assert entry["verdict"] == "confirmed", entry["summary"]
    prov = entry["provenance"]
    assert prov["claim"] == "dohmatob2025:prop5-invariance[link=linear]"
    assert prov["substituted"] == {"link": "cube"}
    assert any(s.endswith("cube_claims.py") for s in prov["sources"])
