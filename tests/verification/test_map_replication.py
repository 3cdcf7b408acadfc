"""A map publishes only refutations that replicate: its counterexample and the settings that
bracket each boundary are judged again at independent seeds, and the shrink treats an
inconclusive setting as unknown, never as one where the claim holds."""

from __future__ import annotations

from verification import Outcome
from verification.declare import Claim
from verification.domain import Domain
from verification.mapping import map_claim, verdict_of

DOMAIN = Domain({"x": (0.0, 1.0)}, reference={"x": 0.0})


def _map(check, tmp_path, points=16):
    claim = Claim("toymap:x", "toymap", "-", "s", check, domain=DOMAIN)
    return map_claim(claim, points=points, seed=0, out=tmp_path / "map", figures=False,
                     workers=0)


def test_a_refutation_that_holds_at_every_seed_is_published_replicated(tmp_path):
    doc = _map(lambda ctx, x: Outcome("refuted" if x > 0.5 else "confirmed", f"x={x}"), tmp_path)
    ce = doc["counterexample"]
    assert ce is not None and abs(ce["setting"]["x"] - 0.5) < 0.02
    assert ce["replication"]["replicated"] and len(ce["replication"]["seeds"]) == 2
    assert doc["boundary"] and all(b["confirmed"] for b in doc["boundary"])
    assert all(len(b["replication"]) == 2 for b in doc["boundary"])


def test_a_refutation_at_the_maps_seed_only_is_no_counterexample(tmp_path):
    doc = _map(lambda ctx, x: Outcome("refuted" if x > 0.5 and ctx.seed == 0 else "confirmed",
                                      f"x={x}"), tmp_path)
    assert doc["counterexample"] is None
    assert doc["refutations_not_replicated"]
    assert not any(b["confirmed"] for b in doc["boundary"])


def test_the_shrink_stops_at_an_inconclusive_setting(tmp_path):
    def check(ctx, x):
        verdict = "refuted" if x > 0.6 else "inconclusive" if x > 0.3 else "confirmed"
        return Outcome(verdict, f"x={x}")
    ce = _map(check, tmp_path)["counterexample"]
    assert ce["setting"]["x"] > 0.6 - 0.02              # not walked into the unknown band
    assert ce["unknown"] and all(0.3 < u["setting"]["x"] <= 0.6 for u in ce["unknown"])


def test_a_resumed_map_counts_the_time_its_interrupted_run_spent(tmp_path):
    import json
    check = lambda ctx, x: Outcome("refuted" if x > 0.5 else "confirmed", f"x={x}")  # noqa: E731
    first = _map(check, tmp_path, points=4)
    folder = tmp_path / "map"
    for earlier, complete, seed, counted in ((100.0, False, 0, True), (100.0, True, 0, False),
                                            (100.0, False, 3, False)):
        left = {**first, "complete": complete, "seconds": earlier, "seed": seed}
        (folder / "map.json").write_text(json.dumps(left))
        doc = _map(check, tmp_path, points=4)
        if counted:             # the same map left incomplete: its time is part of this one's
            assert doc["seconds_before_resuming"] == earlier and doc["seconds"] >= earlier
        else:                   # a finished map re-run, or another map: counted from zero
            assert "seconds_before_resuming" not in doc and doc["seconds"] < earlier


def _banded(ctx, x):
    """Refuted above x = 0.5 and confirmed below, but the quick profile resolves the effect
    only farther than 0.2 from 0.5 (inconclusive in between); the full one everywhere."""
    if ctx.profile == "quick" and abs(x - 0.5) < 0.2:
        return Outcome("inconclusive", f"x={x}: a larger budget decides")
    return Outcome("refuted" if x > 0.5 else "confirmed", f"x={x} at {ctx.profile}")


def test_escalation_puts_the_boundary_where_the_effect_appears(tmp_path):
    claim = Claim("toymap:banded", "toymap", "-", "s", _banded, domain=DOMAIN)
    quick = map_claim(claim, points=16, seed=0, out=tmp_path / "quick", figures=False, workers=0)
    # at the quick profile alone the boundaries sit where the band begins, each with an
    # inconclusive side
    assert quick["boundary"] and all(b["kind"] == "inconclusive" for b in quick["boundary"])
    assert all(abs(abs(b["setting"]["x"] - 0.5) - 0.2) < 0.02 for b in quick["boundary"])
    doc = map_claim(claim, points=16, seed=0, out=tmp_path / "escalated", figures=False,
                    workers=0, escalate=True)
    assert doc["escalate_to"] == "full" and doc["judgements"]["escalated"] > 0
    assert doc["boundary"]
    for b in doc["boundary"]:      # (each pair of neighbours bisected to its own bracket)
        assert abs(b["setting"]["x"] - 0.5) < 0.02 and b["kind"] == "decided"
        assert sorted(b["between"]) == ["confirmed", "refuted"] and "full" in b["profiles"]
        # a side decided at the full profile is replicated at the full profile
        for side, rep in zip(b["profiles"], b["replication"]):
            assert rep.get("profile") == side and rep["replicated"]
    band = [p for p in doc["points"] if abs(p["setting"]["x"] - 0.5) < 0.2]
    assert band and all(p["verdict"] == "inconclusive" and p["escalated"]["profile"] == "full"
                        for p in band)
    # the shrink, too, decides at the full profile where the quick one cannot: the minimal
    # counterexample is next to 0.5, not where the quick profile's band ends
    ce = doc["counterexample"]
    assert abs(ce["setting"]["x"] - 0.5) < 0.02 and ce["replication"]["profile"] == "full"
    assert quick["counterexample"]["setting"]["x"] > 0.7 - 0.02
    # the escalated verdicts count in the sample's share (at quick, the band is left out)
    sampled = [p for p in doc["points"] if p["stage"] == "sample"]
    decided = [verdict_of(p) for p in sampled if verdict_of(p) != "inconclusive"]
    assert len(decided) > len([p for p in sampled if p["verdict"] != "inconclusive"])
    assert doc["holds_at"] == decided.count("confirmed") / len(decided) != quick["holds_at"]
    n = doc["judgements"]      # escalations at the map's seed; replications, either profile
    assert n["escalated"] == sum("escalated" in p for p in doc["points"])
    assert n["replicate"] >= 4          # (before: full-profile replications counted as escalated)
    md = (tmp_path / "escalated" / "map.md").read_text()
    assert "inconclusive → refuted (full)" in md and "escalated to full" in md


def test_escalation_needs_the_quick_profile(tmp_path):
    import pytest
    claim = Claim("toymap:banded", "toymap", "-", "s", _banded, domain=DOMAIN)
    with pytest.raises(ValueError, match="escalate needs profile 'quick'"):
        map_claim(claim, points=4, out=tmp_path / "m", figures=False, workers=0,
                  profile="full", escalate=True)


def test_an_escalation_that_fails_leaves_the_quick_verdict(tmp_path):
    def check(ctx, x):
        if ctx.profile == "full":
            raise MemoryError("the full profile does not fit")
        return _banded(ctx, x)
    claim = Claim("toymap:banded-oom", "toymap", "-", "s", check, domain=DOMAIN)
    doc = map_claim(claim, points=16, seed=0, out=tmp_path / "m", figures=False, workers=0,
                    escalate=True)
    band = [p for p in doc["points"] if p.get("escalated")]
    assert band and all(p["escalated"]["verdict"] == "error" for p in band)
    assert all(verdict_of(p) == "inconclusive" for p in band)
    assert doc["boundary"] and all(b["kind"] == "inconclusive" and "error_between" not in b
                                   for b in doc["boundary"])
