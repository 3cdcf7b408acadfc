"""A map publishes only refutations that replicate: its counterexample and the settings that
bracket each boundary are judged again at independent seeds, and the shrink treats an
inconclusive setting as unknown, never as one where the claim holds."""

from __future__ import annotations

from verification import Outcome
from verification.declare import Claim
from verification.domain import Domain
from verification.mapping import map_claim

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
