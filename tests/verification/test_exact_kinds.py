"""The exact judgements beyond ``exact`` (identity, signs, bound, not_judged) and ``conclude``,
which builds a claim's Outcome from its judged legs: each decides as documented and can fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from verification import checks
from verification.context import Context
from verification.declare import Claim
from verification.runner import run_claim

x = sp.Symbol("x", real=True)


def test_identity_proves_a_true_identity_and_refutes_a_false_one():
    ctx = Context()
    ok = checks.identity(ctx, [sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1, (x + 1) ** 2 - x**2 - 2 * x - 1],
                         name="identities")
    assert ok.decision == "confirmed" and ok.resolution is None
    bad = checks.identity(ctx, [(x + 1) ** 2 - x**2 - 1], name="wrong")
    assert bad.decision == "refuted" and "2*x" in bad.details["worst_residual"]
    fams = ctx.ledger.contract().to_json()["families"]
    assert [f["policy"] for f in fams] == ["identity", "identity"]
    assert all(f["alpha"] == 0.0 and f["exact"] for f in fams)
    # plain strings, not objects: a claim's arrays must be storable (the store refuses objects)
    assert all(v.dtype.kind != "O" for v in ctx.ledger.arrays().values())


def test_identity_says_inconclusive_when_sympy_cannot_decide(monkeypatch):
    import verification.checks.exact_kinds as kinds
    monkeypatch.setattr(kinds, "_proven_zero", lambda e: 0)
    check = checks.identity(Context(), [x - x], name="undecidable")
    assert check.decision == "inconclusive" and "would decide" in check.needs


def test_signs_confirms_refutes_and_calls_a_degenerate_value_undecided():
    ctx = Context()
    assert checks.signs(ctx, [-2.0, 3.0, 1e-14], [-1, 1, 0], atol=1e-10).decision == "confirmed"
    wrong = checks.signs(ctx, [-2.0, -3.0], [-1, 1], atol=1e-10)
    assert wrong.decision == "refuted" and wrong.details["worst_index"] == 1
    flat = checks.signs(ctx, [-2.0, 1e-12], [-1, 1], atol=1e-10)
    assert flat.decision == "inconclusive" and "more digits" in flat.needs
    with pytest.raises(ValueError, match="atol"):
        checks.signs(ctx, [1.0], [1], atol=0)
    with pytest.raises(ValueError, match="claimed"):
        checks.signs(ctx, [1.0], [2], atol=1e-9)


def test_signs_under_a_sign_flip_refutes_the_true_signs():
    ctx = Context(perturbation=("sign",))
    assert checks.signs(ctx, [-2.0, 3.0], [-1, 1], atol=1e-10).decision == "refuted"
    assert ctx.ledger.perturbation_applied


def test_bound_exact_and_statistical():
    ctx = Context()
    assert checks.bound(ctx, [1.0, 1.9], upper=2.0).decision == "confirmed"
    assert checks.bound(ctx, [2.1], upper=2.0, atol=0.05).decision == "refuted"
    assert checks.bound(ctx, [0.5], lower=0.0, upper=1.0).decision == "confirmed"
    inside = checks.bound(ctx, [1.0], upper=2.0, stderr=0.1, name="far inside")
    assert inside.decision == "confirmed" and inside.resolution == pytest.approx(
        (inside.z + checks.Z95) * 0.1 / 2.0)
    near = checks.bound(ctx, [1.95], upper=2.0, stderr=0.1, name="near")
    assert near.decision == "inconclusive" and "would decide" in near.needs
    over = checks.bound(ctx, [3.0], upper=2.0, stderr=0.1, name="over")
    assert over.decision == "refuted"
    sign = checks.bound(ctx, [0.5], lower=0.0, stderr=0.1, name="a sign")   # as a trend's
    assert sign.decision == "confirmed" and sign.resolution == pytest.approx(
        (sign.z + checks.Z95) * 0.1 / 0.5)
    with pytest.raises(ValueError, match="upper, lower"):
        checks.bound(ctx, [1.0])


def test_bound_moves_with_calibration():
    moved = Context(perturbation=("relative", -0.6, "R"))
    assert checks.bound(moved, [1.0], upper=2.0, name="R").decision == "refuted"   # bound 0.8


def test_not_judged_is_only_ever_inconclusive():
    leg = checks.not_judged(Context(), "bulk", "the bulk is compared with itself")
    assert leg.decision == "inconclusive" and leg.needs
    with pytest.raises(ValueError, match="why"):
        checks.not_judged(Context(), "bulk", "")


def _legs(*decisions):
    ctx = Context()
    out = {}
    for i, d in enumerate(decisions):
        value = {"confirmed": 1.0, "refuted": 5.0, "inconclusive": 1.95}[d]
        out[f"leg {i}"] = checks.bound(ctx, [value], upper=2.0, stderr=0.1, name=f"leg {i}")
    return out


@pytest.mark.parametrize("decisions, verdict", [
    (("confirmed",), "confirmed"), (("confirmed", "refuted"), "refuted"),
    (("confirmed", "inconclusive"), "inconclusive"), (("inconclusive", "refuted"), "refuted")])
def test_conclude_takes_the_verdict_from_the_legs(decisions, verdict):
    out = checks.conclude(_legs(*decisions), says={"confirmed": "holds", "refuted": "fails"},
                          tracked={"v": (1.0, 0.1)})
    assert out.verdict == verdict
    assert set(out.evidence["legs"]) == {f"leg {i}" for i in range(len(decisions))}
    if verdict == "inconclusive":
        assert "to decide" in out.summary and "would decide" in out.summary
    else:
        assert out.summary == {"confirmed": "holds", "refuted": "fails"}[verdict]
    assert out.tracked == {"v": (1.0, 0.1)}


def test_conclude_refuses_what_no_policy_judged():
    with pytest.raises(ValueError, match="at least one"):
        checks.conclude({})
    with pytest.raises(TypeError, match="not a Check"):
        checks.conclude({"by hand": "confirmed"})


def test_a_claim_closing_with_conclude_runs_and_its_contract_counts_the_exact_legs():
    def check(ctx, slope=-1.0):
        steps = checks.signs(ctx, [slope, slope], [-1, -1], atol=1e-12, name="decreasing")
        cap = checks.bound(ctx, [abs(slope)], upper=2.0, name="bounded")
        return checks.conclude({"decreasing": steps, "bounded": cap},
                               says=lambda v: f"slope {slope}: {v}")
    claim = Claim("x:conclude", "x", "-", "s", check, statistical=False)
    entry, _ = run_claim(claim, Context())
    assert entry["verdict"] == "confirmed" and entry["contract"]["comparisons"] == 3
    assert entry["summary"] == "slope -1.0: confirmed"
    wrong, _ = run_claim(claim, Context(), slope=0.5)
    assert wrong["verdict"] == "refuted"
    assert wrong["evidence"]["legs"]["decreasing"]["decision"] == "refuted"
    assert math.isclose(entry["contract"]["alpha"], 0.0) and np.isfinite(
        entry["contract"]["comparisons"])


def test_a_strict_bound_fails_on_the_bound_and_a_goal_never_refutes():
    ctx = Context()
    assert checks.bound(ctx, [2.0], upper=2.0).decision == "confirmed"
    assert checks.bound(ctx, [2.0], upper=2.0, strict=True).decision == "refuted"
    assert checks.bound(ctx, [np.nextafter(2.0, 0)], upper=2.0, strict=True).decision == "confirmed"
    assert checks.bound(ctx, [1.0], lower=1.0, strict=True).decision == "refuted"
    goal = checks.bound(ctx, [3.0], upper=2.0, refutes=False, needs="more steps would decide")
    assert goal.decision == "inconclusive" and goal.needs == "more steps would decide"
    assert goal.details["refutes"] is False
    met = checks.bound(ctx, [1.0], upper=2.0, refutes=False, needs="more steps would decide")
    assert met.decision == "confirmed" and met.needs == ""
    noisy = checks.bound(ctx, [3.0], upper=2.0, stderr=0.01, refutes=False, name="noisy goal")
    assert noisy.decision == "inconclusive" and "does not refute" in noisy.needs


def test_bound_refuses_a_bad_tolerance_and_exact_options_with_standard_errors():
    ctx = Context()
    for bad in (-1e-9, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="atol"):
            checks.bound(ctx, [1.0], upper=2.0, atol=bad)
    with pytest.raises(ValueError, match="strict and atol are for exact values"):
        checks.bound(ctx, [1.0], upper=2.0, stderr=0.1, strict=True)
    with pytest.raises(ValueError, match="negative"):
        checks.bound(ctx, [1.0], upper=2.0, stderr=-0.1)


def test_a_value_on_its_bound_decides_nothing_at_zero_standard_error():
    tie = checks.bound(Context(), [2.0], upper=2.0, stderr=0.0)
    assert tie.decision == "inconclusive"
    strict = checks.bound(Context(), [0.5, 2.0], upper=2.0, strict=True)
    assert strict.decision == "refuted" and strict.details["worst_index"] == 1   # the failing one


def test_panel_trend_confirms_on_the_smallest_and_refutes_only_at_the_panels_z():
    ctx = Context()
    ok, i = checks.panel_trend(ctx, [5.0, 1.0, 3.0], [0.1, 0.1, 0.1], name="t", panel_name="p")
    assert ok.decision == "confirmed" and i == 1
    far, _ = checks.panel_trend(Context(), [5.0, -1.0], [0.1, 0.1], name="t", panel_name="p")
    assert far.decision == "refuted" and far.details["worst_index"] == 1
    z1 = checks.critical_value(1e-4, 1)[0]
    zn = checks.critical_value(1e-4, 3)[0]
    between = -0.5 * (z1 + zn) * 0.1           # below 0 at z₁, not at the panel's z
    ctx2 = Context()
    mid, _ = checks.panel_trend(ctx2, [5.0, between, 3.0], [0.1, 0.1, 0.1], name="t",
                                panel_name="p")
    assert mid.decision == "inconclusive"
    assert [f.name for f in ctx2.ledger.families] == ["t", "p"]
