"""``map``: where a claim holds over its domain. Known boundaries (a disc, a bound on Marion's
saddle risk) mapped from a user's claims file in a folder of its own; resuming after kill -9."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from verification.domain import Choice, Domain, Integers, Interval
from verification.mapping import BOUNDARY_TOL

ROOT = Path(__file__).resolve().parents[2]

DISC = '''
"""A user's claims: a disc, and a bound on Marion et al.'s saddle risk."""
import time
from verification import Outcome, claim


@claim("mine:disc", "toy", "x² + y² ≤ 1 on [−2, 2]².", statistical=False,
       domain={"x": (-2.0, 2.0), "y": (-2.0, 2.0)}, reference={"x": 0.0, "y": 0.0})
def disc(ctx, x, y):
    time.sleep(float(__import__("os").environ.get("DISC_SLEEP", "0")))
    r2 = x * x + y * y
    return Outcome("confirmed" if r2 <= 1 else "refuted", f"x² + y² = {r2:.4f}")


@claim("mine:saddle-bound", "toy", "Marion's risk at the saddle (κ, ν) = (0, 0) is at most 2.",
       statistical=False,
       domain={"gamma": (0.1, 2.0), "lam": (0.1, 3.0)}, reference={"gamma": 0.1, "lam": 0.1})
def saddle_bound(ctx, gamma, lam):
    from numerics import reduced
    from theory.models.marion2025 import MODEL
    rm = reduced(MODEL, dict(d=16, L=3, lam=lam, gamma=gamma, eps=0.3))
    risk = float(rm.loss(rm.check_state(rm.pack(dict(kappa=0.0, nu=0.0, theta=0.0, eta=0.0,
                                                      rho=0.0))))[0])
    return Outcome("confirmed" if risk <= 2.0 else "refuted", f"saddle risk {risk:.5f}")


@claim("mine:mean-positive", "toy", "E x > 0 for x ~ N(μ, 1), μ ∈ [−1, 1].",
       domain={"mu": (-1.0, 1.0)}, reference={"mu": 1.0})
def mean_positive(ctx, mu):
    import numpy as np
    from verification import checks

    def draw(k, size):
        return np.random.default_rng([ctx.claim_seed("x"), k]).normal(mu, 1.0, size)
    c = checks.sequential(ctx, draw, 0.0, sign=+1, batch=16, budget=1024, name="E x")
    return Outcome(c.decision, f"mean {c.details['mean']:.3f} after {c.details['n']} draws")
'''


@pytest.fixture
def claims_file(tmp_path):
    folder = tmp_path / "my_claims"           # a folder of its own, not a package of the suite
    folder.mkdir()
    path = folder / "bounds.py"
    path.write_text(textwrap.dedent(DISC))
    return path


def _map(claims_file: Path, claim: str, out: Path, *extra: str, env=None, points=64, **kw):
    cmd = [sys.executable, "-m", "verification", "map", claim, "--claims", str(claims_file),
           "--points", str(points), "--workers", "0", "--out", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=claims_file.parent,
                          env={**os.environ, **(env or {})}, timeout=600, **kw)


def _check_against_truth(doc: dict, holds, distance_to_boundary, widths):
    sampled = [p for p in doc["points"] if p["stage"] == "sample"]
    assert len(sampled) == 64 and doc["complete"]
    for p in doc["points"]:            # every judged setting, sampled or refined, is right
        assert (p["verdict"] == "confirmed") == holds(p["setting"]), p
    assert doc["boundary"], "a boundary crosses the domain: the map must find it"
    for b in doc["boundary"]:
        assert distance_to_boundary(b["setting"]) <= 0.02, b
        assert sorted(b["between"]) == ["confirmed", "refuted"]
    ce = doc["counterexample"]
    assert ce is not None and not holds(ce["setting"])           # on the false side,
    assert distance_to_boundary(ce["setting"]) <= 0.02, ce          # next to the boundary


def test_disc_map_matches_the_analytic_truth(claims_file, tmp_path):
    out = tmp_path / "disc"
    r = _map(claims_file, "mine:disc", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "map.json").read_text())

    def holds(s):
        return s["x"] ** 2 + s["y"] ** 2 <= 1

    def distance(s):          # to the unit circle, in units of the range (4)
        return abs(math.hypot(s["x"], s["y"]) - 1) / 4

    _check_against_truth(doc, holds, distance, 4)
    # the minimal counterexample is shrunk towards the reference (0, 0): onto the circle
    assert set(json.loads((out / "map.json").read_text())) >= {
        "claim", "domain", "reference", "seed", "complete", "seconds", "points", "boundary",
        "counterexample"}
    for name in ("map.md", "map.html", "figures/x-y.png"):
        assert (out / name).stat().st_size > 0
    assert "minimal counterexample" in r.stdout


def test_saddle_risk_bound_map_matches_the_reduced_risk(claims_file, tmp_path):
    from scipy.optimize import brentq

    from numerics import reduced
    from theory.models.marion2025 import MODEL

    def risk(gamma, lam):
        rm = reduced(MODEL, dict(d=16, L=3, lam=lam, gamma=gamma, eps=0.3))
        st = rm.check_state(rm.pack(dict(kappa=0.0, nu=0.0, theta=0.0, eta=0.0, rho=0.0)))
        return float(rm.loss(st)[0])

    def holds(s):
        return risk(s["gamma"], s["lam"]) <= 2.0

    def distance(s):          # to the level set R = 2 along either axis, in units of its range
        out = [math.inf]      # (searched within 3 % of the range: farther fails either way)
        for axis, (lo, hi) in (("gamma", (0.1, 2.0)), ("lam", (0.1, 3.0))):
            def f(v, axis=axis):
                return risk(**{**s, axis: v}) - 2.0
            a, b = max(lo, s[axis] - 0.03 * (hi - lo)), min(hi, s[axis] + 0.03 * (hi - lo))
            if f(a) * f(b) < 0:
                out.append(abs(brentq(f, a, b, xtol=1e-5) - s[axis]) / (hi - lo))
        return min(out)

    out = tmp_path / "bound"
    r = _map(claims_file, "mine:saddle-bound", out)
    assert r.returncode == 0, r.stderr
    _check_against_truth(json.loads((out / "map.json").read_text()), holds, distance, None)


def test_map_resumes_after_kill_9_with_the_same_map(claims_file, tmp_path):
    out, env = tmp_path / "disc", {"DISC_SLEEP": "0.03"}
    whole = _map(claims_file, "mine:disc", tmp_path / "whole", "--store", str(tmp_path / "s0"),
                 points=16)
    assert whole.returncode == 0, whole.stderr
    cmd = [sys.executable, "-m", "verification", "map", "mine:disc", "--claims", str(claims_file),
           "--points", "16", "--workers", "0", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=claims_file.parent, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = out / "store"
    deadline = time.time() + 120
    while time.time() < deadline:              # kill -9 once some settings are stored
        if store.exists() and sum(1 for _ in store.rglob("*.entry")) >= 20:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = json.loads((out / "map.json").read_text())
    assert partial["complete"] is False
    again = _map(claims_file, "mine:disc", out, env=env, points=16)
    assert again.returncode == 0, again.stderr
    resumed = json.loads((out / "map.json").read_text())
    first = json.loads((tmp_path / "whole" / "map.json").read_text())
    assert any(p["reused"] for p in resumed["points"])
    assert resumed["seconds_before_resuming"] == partial["seconds"] > 0     # its time so far
    strip = [{k: p[k] for k in ("setting", "verdict", "stage")} for p in resumed["points"]]
    assert strip == [{k: p[k] for k in ("setting", "verdict", "stage")} for p in first["points"]]
    assert resumed["boundary"] == first["boundary"]
    assert resumed["counterexample"]["setting"] == first["counterexample"]["setting"]


# --- the domain ---------------------------------------------------------------------------------
def test_a_maps_sequential_points_stop_when_decided(claims_file, tmp_path):
    """Each setting draws until its confidence sequence decides: far from the boundary μ = 0
    after the first batches, near it up to the budget; the map says what it drew."""
    out = tmp_path / "seq"
    r = _map(claims_file, "mine:mean-positive", out, "--no-refine", points=16)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "map.json").read_text())
    for p in doc["points"]:
        mu, drawn = p["setting"]["mu"], p["sequential"]["E x"]
        assert drawn["budget"] == 1024
        if abs(mu) >= 0.5:
            assert drawn["samples"] <= 256 and p["verdict"] == (
                "confirmed" if mu > 0 else "refuted"), p
        if p["verdict"] == "inconclusive":
            assert drawn["samples"] == 1024 and abs(mu) < 0.3, p
    total = sum(p["sequential"]["E x"]["samples"] for p in doc["points"])
    assert total < 0.5 * 1024 * len(doc["points"])
    assert "Sequential checks drew" in (out / "map.md").read_text()


def test_domain_validates_settings_naming_the_coordinate():
    dom = Domain({"L": Integers(2, 8), "lam": Interval(0.1, 3.0, log=True), "link": ["a", "b"]},
                 where={"L even": lambda L: L % 2 == 0})
    assert dom.reference == {"L": 2, "lam": 0.1, "link": "a"}
    with pytest.raises(ValueError, match=r"lam=5.0; allowed: \[0.1, 3\] \(log\)"):
        dom.validate({"L": 2, "lam": 5.0, "link": "a"})
    with pytest.raises(ValueError, match="link='c'"):
        dom.validate({"L": 2, "lam": 1.0, "link": "c"})
    with pytest.raises(ValueError, match="constraint 'L even'"):
        dom.validate({"L": 3, "lam": 1.0, "link": "a"})
    with pytest.raises(ValueError, match="missing"):
        dom.validate({"L": 2})
    with pytest.raises(ValueError, match="nan"):
        dom.validate({"L": 2, "lam": float("nan"), "link": "a"})


def test_sample_covers_every_choice_within_the_constraints():
    dom = Domain({"x": (0.0, 1.0), "n": Integers(1, 100, log=True), "c": Choice("p", "q")},
                 where=lambda x, n: x * n >= 0.5, reference={"x": 0.5})
    pts = dom.sample(40, seed=3)
    assert len(pts) == 40 and {p["c"] for p in pts} == {"p", "q"}
    assert all(p["x"] * p["n"] >= 0.5 and isinstance(p["n"], int) for p in pts)
    assert pts == dom.sample(40, seed=3) and pts != dom.sample(40, seed=4)
    u = np.array([dom.to_unit(p) for p in pts])
    assert u.min() >= 0 and u.max() <= 1


def test_unpaired_sample_spreads_the_ranges_over_the_choices():
    """paired=False (a calibration's sample): n settings are n distinct points of the ranges,
    the choices taken in turn; paired (a map's): the choices share their points."""
    dom = Domain({"x": (0.0, 1.0), "c": Choice("p", "q", "r", "s")}, reference={"x": 0.5})
    paired, spread = dom.sample(4, seed=0), dom.sample(4, seed=0, paired=False)
    assert len({p["x"] for p in paired}) == 1 and len({p["x"] for p in spread}) == 4
    assert [p["c"] for p in spread] == ["p", "q", "r", "s"]
    assert spread == dom.sample(4, seed=0, paired=False)


def test_boundary_tolerance_is_what_the_acceptance_asks_for():
    assert BOUNDARY_TOL <= 0.01


# --- the papers' theorems over their domains ----------------------------------------------------
def _paper_map(claim: str, points: int, tmp_path) -> dict:
    from verification.catalogue import get_claim
    from verification.mapping import map_claim
    return map_claim(get_claim(claim), points=points, out=tmp_path / "map", workers=0,
                     figures=False)


def test_bayes_identity_holds_over_its_whole_domain(tmp_path):
    doc = _paper_map("sagitova2026:prop-iv2-bsoftmax-bayes", 8, tmp_path)
    assert doc["complete"] and doc["holds_at"] == 1.0 and doc["counterexample"] is None
    assert len({json.dumps(p["setting"], sort_keys=True) for p in doc["points"]}) == 8


@pytest.mark.slow
@pytest.mark.parametrize("claim", ["marion2025:thm1-risk", "dohmatob2025:cor1-linear",
                                   "sagitova2026:prop-iv1-bayes"])
def test_a_confirmed_theorem_has_no_refuted_point_over_its_domain(claim, tmp_path):
    doc = _paper_map(claim, 16, tmp_path)
    assert doc["complete"] and not [p for p in doc["points"] if p["verdict"] == "refuted"]
