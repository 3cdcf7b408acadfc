"""A refutation survives replication before it is published (``verification.replication``):
a statistical claim refuted at the run's seed and not at independent seeds is reported
``inconclusive`` with each replicate's verdict; one refuted at every seed stays refuted; an
exact claim is not replicated."""

from __future__ import annotations

import pytest

from verification import Outcome
from verification.campaign import Campaign, CampaignOptions
from verification.declare import Claim
from verification.replication import (needs_replication, replicate, replicate_seed,
                                      replicated_entry)
from verification.runner import run
from verification.simulations.base import simulation


def _lucky(ctx):
    # a check that refutes at the run's seed 0 only: what a false refutation looks like
    return Outcome("refuted" if ctx.seed == 0 else "confirmed", f"seed {ctx.seed}")


def _steady(ctx):
    return Outcome("refuted", f"seed {ctx.seed}")


def test_seeds_are_independent_of_each_other_and_of_the_run_seed():
    seeds = {replicate_seed(s, r) for s in range(5) for r in range(1, 4)}
    assert len(seeds) == 15 and not seeds & set(range(5))
    assert replicate_seed(3, 1) == replicate_seed(3, 1)


def test_a_refutation_that_does_not_replicate_becomes_inconclusive(tmp_path):
    claims = [Claim("toyrep:lucky", "toyrep", "-", "s", _lucky),
              Claim("toyrep:steady", "toyrep", "-", "s", _steady),
              Claim("toyrep:exact", "toyrep", "-", "s", _lucky, statistical=False)]
    report = run(claims, show=False, out=tmp_path / "run", figures=False, workers=0)
    lucky, steady, exact = report["claims"]
    assert lucky["verdict"] == "inconclusive"
    assert "not replicated" in lucky["summary"]
    assert [r["verdict"] for r in lucky["replication"]["replicates"]] == ["confirmed"] * 2
    assert steady["verdict"] == "refuted" and len(steady["replication"]["replicates"]) == 2
    assert exact["verdict"] == "refuted" and "replication" not in exact
    assert report["replication"] == {"replicates": 2, "not_replicated": ["toyrep:lucky"]}
    alone = run(claims[:1], show=False, out=tmp_path / "single", figures=False, workers=0,
                replicate=0)
    assert alone["claims"][0]["verdict"] == "refuted"


def test_replicate_reports_what_moved_and_keeps_the_rest():
    claims = [Claim("a:x", "a", "-", "s", _lucky), Claim("a:y", "a", "-", "s", _steady)]
    results = {0: {"entry": {"verdict": "refuted", "summary": "s0", "evidence": {}}},
               1: {"entry": {"verdict": "confirmed", "summary": "ok"}}}
    moved = replicate(claims, results, 0, 3, lambda pairs: {
        p: {"verdict": "refuted" if k == 0 else "inconclusive", "summary": "-"}
        for k, p in enumerate(pairs)})
    assert moved == [0]
    assert results[0]["entry"]["verdict"] == "inconclusive"
    assert results[1]["entry"] == {"verdict": "confirmed", "summary": "ok"}


def test_entries_and_claims_that_need_no_replication():
    assert not needs_replication(Claim("a:x", "a", "-", "s", _lucky), {"verdict": "confirmed"})
    assert not needs_replication(Claim("a:x", "a", "-", "s", _lucky, statistical=False),
                                 {"verdict": "refuted"})
    # an exact check whose verdict depends on its seed (a seeded initialisation) declares it
    assert needs_replication(Claim("a:x", "a", "-", "s", _lucky, statistical=False,
                                   replicate=True), {"verdict": "refuted"})
    assert not needs_replication(Claim("a:x", "a", "-", "s", _lucky, replicate=False),
                                 {"verdict": "refuted"})
    from verification import get_claim
    assert needs_replication(get_claim("sagitova2026:mixture-directions"), {"verdict": "refuted"})
    entry = replicated_entry({"verdict": "refuted", "summary": "s"}, 0,
                             [{"seed": 5, "verdict": "refuted", "summary": "t"}])
    assert entry["verdict"] == "refuted" and "replicated at seeds [5]" in entry["summary"]


@pytest.mark.parametrize("bad", [-1, 11, 1.5, True, "2"])
def test_replicate_option_is_checked_before_any_work(bad, tmp_path):
    with pytest.raises(ValueError, match="--replicate"):
        Campaign(CampaignOptions(replicate=bad), tmp_path / "out")


def test_calibration_over_the_domain_counts_seed_dependent_refutations(tmp_path):
    """A claim refuted at x > 0.5 at every seed (a finding) and at x < 0.2 at odd seeds only
    (a false refutation of the single-seed check), judged at its transition setting first."""
    from verification.domain import Domain
    from verification.domain_calibration import calibrate_domain

    def check(ctx, x):
        wrong = x > 0.5 or (x < 0.2 and ctx.seed % 2 == 1)
        return Outcome("refuted" if wrong else "confirmed", f"x={x}")
    claim = Claim("toydom:x", "toydom", "-", "s", check,
                  domain=Domain({"x": (0.0, 1.0)}, reference={"x": 0.3}),
                  transitions=({"x": 0.49}, {"x": 0.51}))
    result = calibrate_domain([claim], settings=16, seeds=4, out=tmp_path / "cal", workers=0)
    rec = result["claims"][0]
    # only x < 0.2 reads the seed: every other setting is judged once, for all four seeds
    low = [r for r in rec["settings"] if r["setting"]["x"] < 0.2]
    assert all(r["seed_free"] == (r["setting"]["x"] >= 0.2) for r in rec["settings"])
    assert rec["coverage"] == {"settings": 16, "near_transitions": 2, "seeds": [1, 2, 3, 4],
                               "seed_free_settings": 16 - len(low)}
    assert rec["runs"] == 16 - len(low) + 4 * len(low)
    high = [r for r in rec["settings"] if r["setting"]["x"] > 0.5]
    assert all(r["refuted"] == 1 for r in high)          # one judgement each, refuted
    assert rec["refuted_runs"] == len(high) + sum(r["refuted"] for r in low) <= rec["runs"]
    assert [r["setting"]["x"] for r in rec["settings"][:2]] == [0.49, 0.51]
    assert low and rec["false_refutations"] == 2 * len(low)
    assert len(rec["consistent_refutations"]) == len(high)
    assert (tmp_path / "cal" / "domain.json").exists()
    for bad in (dict(settings=0), dict(settings=1025), dict(seeds=1001)):
        with pytest.raises(ValueError, match=f"--{'domain' if 'settings' in bad else 'seeds'}"
                           r" .*allowed: an integer in 1\.\."):
            calibrate_domain([claim], out=tmp_path / "bad", **bad)
    assert not (tmp_path / "bad").exists()


def test_a_run_says_whether_it_read_its_seed():
    """``Tally.drew_seed``: set by every way to the seed (``seed``, ``claim_seed``, ``rng``, a
    seeded simulation), not by the engine's copies of the context (``context_with``), and
    carried by a claim task's result as ``seed_free``."""
    from verification.context import Context, context_with

    def reads(how):
        ctx = Context(seed=3)
        ctx = context_with(context_with(ctx, alpha=0.01), setting=(("x", 1.0),))
        assert not ctx.tally.drew_seed
        how(ctx)
        return ctx.tally.drew_seed
    assert reads(lambda ctx: ctx.seed)
    assert reads(lambda ctx: ctx.claim_seed("a"))
    assert reads(lambda ctx: ctx.rng("a").random())
    assert reads(lambda ctx: ctx.map(_seeded_draw, [1]))
    assert not reads(lambda ctx: ctx.map(_unseeded_square, [2]))
    assert not reads(lambda ctx: (ctx.pick(1, 2), ctx.alpha, ctx.profile))


@simulation
def _seeded_draw(sim, item):
    return float(sim.rng("x").random()) + item


@simulation(seeded=False)
def _unseeded_square(sim, item):
    return item * item
