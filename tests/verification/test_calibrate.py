"""Calibration (``verification.calibrate``, ``verification.records``, ``verification.sweep``):
false refutations under the true model, refutations under the perturbations of the check
library and under the claim's declared mutations; calibration.json written, merged, quoted in
the report and marked once the code changes. (``calibrate --out FILE`` at the command line:
tests/cli/test_cli_errors.py.)"""

import json

import numpy as np
from typer.testing import CliRunner

from verification.calibrate import calibrate
from verification.checks import estimate_vs_theory
from verification.declare import Claim, Outcome


def _mean_claim(ctx, mean=1.0):
    """A Monte Carlo mean of N(mean, 1) against the claimed value 1 (1000 samples)."""
    x = ctx.rng("toy").normal(mean, 1.0, 1000)
    check = estimate_vs_theory(ctx, x.mean(), x.std(ddof=1) / np.sqrt(x.size), 1.0)
    return Outcome(check.decision, f"mean {x.mean():.3f}")


TOY = Claim("toy:mean", "toy", "Lemma 0", "E x = 1", _mean_claim,
            mutations={"wrong mean": lambda: {"mean": 1.5}})


def test_calibrate_counts_false_refutations_and_power(tmp_path):
    res = calibrate([TOY], seeds=6, out=tmp_path)
    rec = res["claims"][0]
    assert rec["runs"] == 6 and rec["false_refutations"] == 0
    names = {m["name"]: m for m in rec["mutations"]}
    assert set(names) == {"sign flip", "wrong mean"}
    assert names["sign flip"]["refuted"] == 6 and names["wrong mean"]["refuted"] == 6
    # 0.5 in units of (z + z₀.₉₅)·se = 5.5 × 0.0316: about 2.9 resolutions
    assert 2.5 < names["wrong mean"]["size_in_resolutions"] < 3.3
    assert names["wrong mean"]["family"] == "estimate vs theory"
    (fam,) = rec["families"]
    assert fam["name"] == "estimate vs theory" and fam["power_runs"] == {"0.5": 6, "1": 6}
    assert fam["power"]["1"] >= 5 / 6
    on_disk = json.loads((tmp_path / "calibration.json").read_text())
    assert on_disk["complete"] and on_disk["seeds"] == 6 and on_disk["claims"][0]["id"] == "toy:mean"
    assert "toy:mean" in (tmp_path / "calibration.md").read_text()
    assert "fewer than" not in (tmp_path / "calibration.md").read_text()


def test_a_check_that_passes_anything_shows_no_power(tmp_path):
    """A claim that ignores its evidence is exposed: its mutations are never refuted."""
    def lenient(ctx, mean=1.0):
        estimate_vs_theory(ctx, 1.0, 1.0, 1.0)
        return Outcome("confirmed", "always")
    res = calibrate([Claim("toy:lenient", "toy", "-", "-", lenient,
                           mutations={"wrong mean": lambda: {"mean": 1.5}})], seeds=2)
    assert all(m["refuted"] == 0 for m in res["claims"][0]["mutations"])


def test_report_quotes_the_calibration_and_ignores_a_damaged_file(tmp_path):
    from verification.runner import run
    cal = tmp_path / "cal"
    calibrate([TOY], seeds=2, out=cal)
    report = run([TOY], out=tmp_path / "out", show=False, figures=False,
                 calibration=cal / "calibration.json")
    assert report["calibration"]["claims"][0]["id"] == "toy:mean"
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## Calibration (2 seeds per claim" in md
    assert "| `toy:mean` | estimate vs theory | estimate_vs_theory |" in md    # its families
    assert "*Families:* estimate vs theory (estimate_vs_theory, 1 comparisons, resolves" in md
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Calibration" in page and page.count("<table>") >= 3      # verdicts, claims, families
    assert "<td>estimate vs theory</td>" in page
    damaged = tmp_path / "bad.json"
    damaged.write_text('{"claims": [{"id": "toy:mean"}]')          # truncated
    assert "calibration" not in run([TOY], show=False, calibration=damaged)


def test_cheapest_claims_run_first_and_their_perturbed_runs_before_new_runs(monkeypatch):
    """An interrupted calibration leaves whole records: the claim the baseline times as cheaper
    runs first, and its perturbed runs come before the next claim's first run."""
    import verification.calibrate as cal
    slow = Claim("toy:slow", "toy", "Lemma 0", "E x = 1", _mean_claim,
                 mutations={"wrong mean": lambda: {"mean": 1.5}})
    monkeypatch.setattr(cal, "_baseline_seconds", lambda path: {"toy:mean": 1.0, "toy:slow": 9.0})
    order = []
    res = calibrate([slow, TOY], seeds=2, progress=order.append)
    assert [c["id"] for c in res["claims"]] == ["toy:slow", "toy:mean"]   # reported as given
    ids = [msg.split(":")[0] + ":" + msg.split(":")[1] for msg in order]
    # 2 claims × 2 seeds × (true, declared, sign flip, power at 0.5× and 1×)
    assert len(order) == 2 * 2 * 5
    assert ids[:10] == ["toy:mean"] * 10 and ids[10:] == ["toy:slow"] * 10


def test_sweep_table_names_false_refutations_only_for_claims_confirmed_at_the_first_seed():
    from verification.sweep import table_rows
    cal = {"runs": 10, "false_refutations": 10, "verdicts": {"refuted": 10}}
    result = {"seeds": [0, 1], "claims": [
        {"id": "a", "verdicts": {"1": "refuted", "0": "refuted"}, "agree": True, "calibration": cal},
        {"id": "b", "verdicts": {"1": "confirmed", "0": "confirmed"}, "agree": True,
         "calibration": {**cal, "false_refutations": 0, "verdicts": {"confirmed": 10}}},
        {"id": "c", "verdicts": {"0": "inconclusive", "1": "confirmed"}, "agree": False},
        {"id": "d", "verdicts": {"0": "refuted", "1": "refuted"}, "agree": True,
         "calibration": {"runs": 0, "false_refutations": 0, "verdicts": {}}},
        {"id": "e", "verdicts": {"0": "confirmed", "1": "confirmed"}, "agree": True,
         "calibration": {**cal, "current": False}}]}
    rows = table_rows(result)
    assert rows[2] == "| `a` | refuted | refuted | yes | refuted at 10/10 seeds (refuted 10) |"
    assert rows[3] == "| `b` | confirmed | confirmed | yes | 0/10 false refutations (confirmed 10) |"
    assert rows[4] == "| `c` | inconclusive | confirmed | **no** | — |"
    assert rows[5] == "| `d` | refuted | refuted | yes | — |"          # not calibrated yet
    assert rows[6] == "| `e` | confirmed | confirmed | yes | — (calibrated on other code) |"


def test_a_record_names_its_code_and_is_marked_once_the_code_changes(tmp_path, monkeypatch):
    from verification.declare import REGISTRY
    from verification.records import claim_code, load_calibration, summary_rows
    monkeypatch.setitem(REGISTRY, TOY.id, TOY)
    calibrate([TOY], seeds=1, out=tmp_path)
    path = tmp_path / "calibration.json"
    data = json.loads(path.read_text())
    code = claim_code(TOY)
    assert data["claims"][0]["code"] == code and set(code) == {"simulation", "judge"}
    assert all(len(h) == 64 for h in code.values())
    assert load_calibration(path)["claims"][0]["current"] is True
    assert "stale" not in summary_rows(load_calibration(path))[2]
    for moved, says in ((["judge"], "its judge code changed"),
                        (["simulation", "judge"], "its simulation and judge code changed")):
        data["claims"][0]["code"] = {**code, **{part: "0" * 64 for part in moved}}
        path.write_text(json.dumps(data))                  # as if measured before an edit
        cal = load_calibration(path)
        assert cal["claims"][0]["current"] is False and cal["claims"][0]["stale"] == moved
        assert summary_rows(cal)[2].startswith(f"| `toy:mean` (stale: {says}) |")
    data["claims"][0]["code"] = "0" * 64                   # the older single-hash format
    path.write_text(json.dumps(data))
    assert load_calibration(path)["claims"][0]["stale"] == ["code"]


def test_parts_of_one_calibration_merge_and_parts_of_different_ones_do_not(tmp_path):
    from verification.calibrate import merge_calibrations
    from verification.cli import app
    calibrate([TOY], seeds=2, out=tmp_path / "a")
    a = json.loads((tmp_path / "a" / "calibration.json").read_text())
    other = {**a["claims"][0], "id": "toy:other"}
    unrun = {**a["claims"][0], "runs": 0, "false_refutations": 0, "verdicts": {}}
    b = {**a, "seconds": 5.0, "claims": [unrun, other]}
    (tmp_path / "b.json").write_text(json.dumps(b))
    merged = merge_calibrations([tmp_path / "a" / "calibration.json", tmp_path / "b.json"])
    assert [c["id"] for c in merged["claims"]] == ["toy:mean", "toy:other"]
    assert merged["claims"][0] == a["claims"][0]           # a part that did not run it keeps a's
    assert merged["complete"] and merged["seconds"] == a["seconds"] + 5.0
    assert [p["claims"] for p in merged["parts"]] == [["toy:mean"], ["toy:other"]]
    (tmp_path / "c.json").write_text(json.dumps({**b, "seeds": 3}))
    try:
        merge_calibrations([tmp_path / "b.json", tmp_path / "c.json"])
        raise AssertionError("parts with different K merged")
    except ValueError as exc:
        assert "c.json" in str(exc)
    r = CliRunner().invoke(app, ["calibrate", "--merge", str(tmp_path / "a" / "calibration.json"),
                                 "--merge", str(tmp_path / "b.json"), "--out", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "m" / "calibration.json").read_text())["parts"]
    r = CliRunner().invoke(app, ["calibrate", "--merge", str(tmp_path / "b.json"), "--claim", "x"])
    assert r.exit_code == 2 and "--merge" in r.output


def _zero_claim(ctx, shift=0.0):
    """A deviation that should vanish: mean of N(shift, 1) against 0, relative to a scale 4."""
    x = ctx.rng("toy").normal(shift, 1.0, 1000)
    check = estimate_vs_theory(ctx, x.mean(), x.std(ddof=1) / np.sqrt(x.size), 0.0, scale=4.0)
    return Outcome(check.decision, f"mean {x.mean():.3f}")


def _direction_claim(ctx, slope=1.0):
    """A claimed direction: a slope estimated as N(slope, 0.1) is positive."""
    from verification.checks import trend
    s = ctx.rng("toy").normal(slope, 0.1)
    return Outcome(trend(ctx, s, 0.1, +1).decision, f"slope {s:.3f}")


def test_perturbations_of_a_claimed_zero_move_it_by_the_resolution_or_are_not_applicable(tmp_path):
    """A relative change of a claimed 0 moves it by δ·scale (the magnitude its resolution is
    relative to), so it is refuted like any other; a sign flip of a 0 changes nothing and is
    not counted as a mutation the check missed. (Before: θ·(1 + δ) = 0 and −0 = 0, counted as
    0 of 6 refuted.)"""
    rec = calibrate([Claim("toy:zero", "toy", "Lemma 0", "E x = 0", _zero_claim,
                           mutations={"shifted": lambda: {"shift": 0.5}})], seeds=6)["claims"][0]
    names = {m["name"]: m for m in rec["mutations"]}
    assert rec["false_refutations"] == 0
    (fam,) = rec["families"]
    assert fam["power_runs"]["1"] == 6 and fam["power"]["1"] >= 5 / 6
    assert "sign flip" not in names and rec["not_applicable"] == ["sign flip"]


def test_a_claimed_direction_is_moved_from_its_true_effect_by_its_resolution(tmp_path):
    """A trend has no claimed value to move: its power runs judge "the effect is m + k·(its
    absolute resolution)", m the mean effect over the seeds' true runs, refuted about 95 % of
    the time at k = 1 and rarely at k = 0.5 (not by arithmetic: each run has its own slope)."""
    from verification.records import summary_rows
    res = calibrate([Claim("toy:direction", "toy", "Lemma 0", "slope > 0", _direction_claim,
                           mutations={"decreasing": lambda: {"slope": -1.0}})], seeds=20)
    rec = res["claims"][0]
    assert "fewer than" not in summary_rows(res)[2]   # sign flip, declared, power runs
    names = {m["name"]: m for m in rec["mutations"]}
    assert names["sign flip"]["refuted"] == 20 and names["decreasing"]["refuted"] == 20
    (fam,) = rec["families"]
    assert fam["policy"] == "trend" and fam["pulls"] is None
    assert fam["power_runs"] == {"0.5": 20, "1": 20}
    assert fam["power"]["1"] >= 0.8 and fam["power"]["0.5"] < 0.6


def _gap_claim(ctx, gap=5.0, se_scale=1.0):
    from verification.checks import bound
    x = ctx.rng("gap").normal(gap, 1.0, 8)
    se = se_scale * x.std(ddof=1) / np.sqrt(8)
    return Outcome(bound(ctx, [x.mean()], lower=0.0, stderr=[se], dof=7, name="gap").decision,
                   f"gap {x.mean():.2f}")


def _gap_claim_understated(ctx):
    return _gap_claim(ctx, se_scale=1 / 3)


def test_a_bound_with_errors_has_pulls_about_its_seeds_mean():
    """A bound is an inequality: estimates far inside it are the claim holding, not a bias, so
    its pulls are taken about each comparison's mean over the seeds: their mean is near 0 and
    flags nothing, their sd still tests the standard error (about 1 here; 3× when the stated
    se is a third of the true one)."""
    rec = calibrate([Claim("toy:gap", "toy", "Lemma 0", "gap > 0", _gap_claim)],
                    seeds=12)["claims"][0]
    (fam,) = rec["families"]
    assert fam["policy"] == "bound" and fam["pulls"]["centred"]
    assert abs(fam["pulls"]["mean"]) < 1 and 0.4 < fam["pulls"]["sd"] < 1.8
    assert not any("pull" in f for f in fam["flags"])
    understated = calibrate([Claim("toy:gap-se", "toy", "Lemma 0", "gap > 0",
                                   _gap_claim_understated)], seeds=40)["claims"][0]
    (fam,) = understated["families"]
    assert fam["pulls"]["sd"] > 1.8
    assert any("standard error is understated" in f for f in fam["flags"])


def _two_families(ctx, shift_fine=0.0, shift_coarse=0.0):
    """Two quantities, one resolved 30 times finer than the other."""
    rng = ctx.rng("toy2")
    fine = rng.normal(1.0 + shift_fine, 0.01)
    coarse = rng.normal(1.0 + shift_coarse, 0.3)
    a = estimate_vs_theory(ctx, fine, 0.01, 1.0, name="fine quantity")
    b = estimate_vs_theory(ctx, coarse, 0.3, 1.0, name="coarse quantity")
    from verification.checks import combine
    return Outcome(combine([a, b]), "two legs")


def test_two_families_state_the_coarser_resolution_and_each_is_calibrated_at_its_own(tmp_path):
    """The claim's contract states the coarser family's resolution and lists both; calibration
    moves each family by its own resolution (with the claim's, the fine family would be moved
    30× its own and refuted at 0.5× every time)."""
    from verification.runner import run_claim
    from verification.context import Context
    claim = Claim("toy:two", "toy", "Lemma 0", "both are 1", _two_families,
                  mutations={"fine off by 30 %": lambda: {"shift_fine": 0.3}})
    entry, _ = run_claim(claim, Context())
    fams = {f["name"]: f for f in entry["contract"]["families"]}
    assert set(fams) == {"fine quantity", "coarse quantity"}
    assert entry["contract"]["resolution"] == fams["coarse quantity"]["resolution"]
    assert fams["coarse quantity"]["resolution"] > 20 * fams["fine quantity"]["resolution"]
    rec = calibrate([claim], seeds=20, out=tmp_path)["claims"][0]
    for f in rec["families"]:
        assert f["power_runs"] == {"0.5": 20, "1": 20}, f
        assert f["power"]["1"] >= 0.8 and f["power"]["0.5"] < 0.6, f
        assert f["pulls"]["n"] == 20 and abs(f["pulls"]["mean"]) < 1
        assert not f["flags"], f
    (mut,) = [m for m in rec["mutations"] if m["name"] == "fine off by 30 %"]
    assert mut["family"] == "fine quantity" and mut["size_in_resolutions"] > 5
    md = (tmp_path / "calibration.md").read_text()
    assert "| `toy:two` | fine quantity | estimate_vs_theory |" in md


def test_pulls_flag_an_understated_standard_error():
    """A check that states half its standard error: the pulls' sd is about 2, flagged, long
    before false refutations are frequent enough to count."""
    def overconfident(ctx):
        x = ctx.rng("toy").normal(1.0, 1.0, 400)
        check = estimate_vs_theory(ctx, x.mean(), 0.5 * x.std(ddof=1) / np.sqrt(x.size), 1.0)
        return Outcome(check.decision, "")
    rec = calibrate([Claim("toy:se", "toy", "-", "-", overconfident)], seeds=20)["claims"][0]
    pulls = rec["families"][0]["pulls"]
    assert pulls["sd_ci"][0] > 1 and 1.4 < pulls["sd"] < 2.8
    assert any("standard error is understated" in f for f in rec["families"][0]["flags"])


def test_a_mutation_declared_missed_is_run_and_reported_as_a_blind_spot(tmp_path):
    from verification.declare import missed
    claim = Claim("toy:blind", "toy", "-", "E x = 1", _mean_claim,
                  mutations={"wrong mean": lambda: {"mean": 1.5},
                             "tiny shift": missed(lambda: {"mean": 1.0001},
                                                  "a shift far below the resolution")})
    rec = calibrate([claim], seeds=2, out=tmp_path)["claims"][0]
    (tiny,) = [m for m in rec["mutations"] if m["name"] == "tiny shift"]
    assert tiny["runs"] == 2 and tiny["refuted"] == 0 and tiny["size_in_resolutions"] < 0.1
    assert tiny["missed"] == "a shift far below the resolution"
    assert "missed by design: a shift far below the resolution" in (
        tmp_path / "calibration.md").read_text()


def test_the_table_marks_mutations_of_a_claim_refuted_at_every_seed_as_showing_no_power():
    from verification.records import summary_rows
    rec = {"alpha": 1e-4, "resolution": 0.05, "runs": 10,
           "mutations": [{"name": n, "runs": 10, "refuted": 10} for n in ("a", "b", "c")]}
    holds = {**rec, "id": "p:holds", "false_refutations": 0, "verdicts": {"confirmed": 10}}
    fails = {**rec, "id": "p:fails", "false_refutations": 10, "verdicts": {"refuted": 10}}
    rows = summary_rows({"claims": [holds, fails]})
    assert "refuted under the true model" in rows[0]
    assert rows[2] == "| `p:holds` | 1e-04 | 5 % | 0/10 (confirmed 10) | a: 10/10, b: 10/10, c: 10/10 |"
    assert rows[3].endswith("| 10/10 (refuted 10) | a: 10/10, b: 10/10, c: 10/10 (the claim is "
                            "refuted at every seed: no power shown) |")


def _noisy_mean(ctx, noise, shift=0.0):
    """One quantity at three settings whose standard errors differ 100-fold."""
    x = ctx.rng("toy3").normal(1.0 + shift, noise)
    return Outcome(estimate_vs_theory(ctx, x, noise, 1.0, name="the mean").decision, "")


def test_a_family_over_settings_is_moved_at_each_setting_by_that_settings_own_resolution():
    """The merged family states its coarsest setting's resolution; moved together by it the
    finest setting would be hit at 100× its own and refuted at 0.5× every time. Each setting
    is moved by its own and counted by its own verdict: about 95 % at 1×, rarely at 0.5×."""
    from verification.domain import Choice, as_domain
    dom = as_domain({"noise": Choice([0.001, 0.01, 0.1])}, {"noise": 0.001})
    pts = tuple({"noise": v} for v in (0.001, 0.01, 0.1))
    claim = Claim("toy:settings", "toy", "-", "E x = 1 at every noise", _noisy_mean,
                  domain=dom, points={"quick": pts, "full": pts})
    rec = calibrate([claim], seeds=10)["claims"][0]
    (fam,) = rec["families"]
    assert fam["power_runs"] == {"0.5": 30, "1": 30}            # 10 seeds × 3 settings
    assert fam["power"]["1"] >= 0.8 and fam["power"]["0.5"] < 0.6, fam
    assert rec["false_refutations"] == 0


def _fifty_points(ctx):
    """One quantity at 50 equally resolved points."""
    x = ctx.rng("toy50").normal(1.0, 0.01, 50)
    return Outcome(estimate_vs_theory(ctx, x, 0.01, np.ones(50), name="fifty").decision, "")


def test_a_family_of_many_points_is_moved_at_the_point_its_resolution_is_of():
    """The resolution is that of the finest point: moving all 50 by 0.5× it would refute
    almost always (50 chances) and flag an honest family as overstated; moving the finest
    alone refutes about 95 % at 1× and rarely at 0.5×."""
    rec = calibrate([Claim("toy:fifty", "toy", "-", "-", _fifty_points)], seeds=12)["claims"][0]
    (fam,) = rec["families"]
    assert fam["power"]["1"] >= 0.8 and fam["power"]["0.5"] < 0.6, fam
    assert not [f for f in fam["flags"] if "resolution" in f]


def test_a_mutation_caught_by_an_exact_family_has_its_size_in_tolerances():
    """A mutation refuted through an exact comparison is sized in units of its tolerance
    (reported 0 before: only statistical families were compared)."""
    from verification.checks import exact

    def identity(ctx, factor=1.0):
        c = exact(ctx, 2.0 * factor, 2.0, rtol=1e-9, name="identity")
        return Outcome(c.decision, "")
    rec = calibrate([Claim("toy:exact", "toy", "-", "-", identity, statistical=False,
                           mutations={"off by 1e-6": lambda: {"factor": 1 + 1e-6}})],
                    seeds=2)["claims"][0]
    (mut,) = rec["mutations"]
    assert mut["refuted"] == 2 and mut["family"] == "identity"
    assert 900 < mut["size_in_resolutions"] < 1100         # 2e-6 against a tolerance of 2e-9
    assert rec["families"] == []                           # no pulls or power for exact ones


def test_a_pull_spread_within_the_bias_allowance_is_said_so():
    """Pulls (estimate − claim)/se spread far beyond 1 by a deviation the check allows for as
    a bias (|dev| ≤ z·se + bias) do not mean an understated se; beyond the allowance they do."""
    from verification.calibrate import _family_flags
    rec = {"power": {}, "pulls": {"mean": -10.9, "sd": 46.5, "mean_ci": [-58.0, 37.0],
                                  "sd_ci": [17.0, 75.0], "bias_allowance": 726.0,
                                  "bias_allowance_min": 400.0}}
    flag, = _family_flags(rec)
    assert flag == "pull sd 46.50 > 1 (within the stated bias allowance)"
    rec["pulls"]["sd"] = 600.0        # most pulls inside the median allowance, many beyond
    flag, = _family_flags(rec)        # the smallest
    assert flag.endswith("the standard error is understated")
