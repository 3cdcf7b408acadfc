"""Result III.1 of Sagitova, Duranthon, Zdeborová (2026), sequential specialization, decided by
the sequential policy over batches of initial draws: a clear growth of the delay is confirmed
before the budget, a shrinking one, the wrong order and a sign flip under calibration are
refuted, a flat one is inconclusive at the budget, and so is a run the horizon censors (a
feature not specialized within it): a finite horizon decides nothing about "later"."""

import numpy as np
import pytest

from verification import Context
from verification.claims.sagitova2026 import sec3_sequential as seq


def ctx():
    return Context(profile="quick", seed=0)


# --- result-iii1-sequential: the delay's growth, decided by the sequential policy -----------------
DIMS = (1e2, 1e3, 1e4)


def slope_source(slopes, c=60.0, tau1=10.0, dims=DIMS):
    """A fake source of ODE runs (``runs(first, count)``, draw × D × (τ₁, τ₂)) whose draw i has
    the delay c + slopes(i)·(ln D − ln D₀), f = 1 first; records which draws were asked for."""
    x = np.log(dims)

    def runs(first, count):
        runs.asked.append((first, count))
        s = np.array([slopes(i) for i in range(first, first + count)])
        delay = c + s[:, None] * (x - x[0])[None, :]
        t1 = np.full(delay.shape, tau1)
        return np.stack([t1, t1 + delay], -1)
    runs.asked = []
    return runs


def _noise(sd, mean=0.0):
    rng = np.random.default_rng(3)
    values = mean + sd * rng.standard_normal(1000)
    return lambda i: values[i]


SGD_TIMES = (np.array([[10.0, 60.0], [11.0, 70.0]])[None]          # seed × D × (τ₁, τ₂):
             + np.random.default_rng(11).normal(0.0, 1.0, (8, 2, 2)))  # f = 1 first, gap ≈ 50


def _sequential(runs, context=None, budget=32, sgd=SGD_TIMES, sgd_fit=(1.0, 1.0), sgd_t_end=400.0):
    c = context or ctx()
    out = seq.judge_sequential(c, runs, sgd, sgd_fit, list(DIMS), [100, 400], 800.0, {}, {}, {},
                               sgd_t_end=sgd_t_end, batch=4, budget=budget)
    return out, c


def test_sequential_clear_growth_is_confirmed_well_before_the_budget():
    """Slopes 8 ± 1 per unit ln D: decided after a few batches (σ is bounded from above at
    each look, so not at the first one), each draw's slope one sample; one family, the
    sequential policy's."""
    runs = slope_source(_noise(1.0, 8.0))
    out, c = _sequential(runs)
    assert out.verdict == "confirmed", out.summary
    used = out.evidence["draws_used"]
    assert 8 <= used <= 16 and runs.asked == [(k, 4) for k in range(0, used, 4)]
    assert f"after {used} initial draws of a budget of 32" in out.summary
    fams = c.ledger.contract().families
    gap, fam = [f for f in fams if not f.exact]
    assert fam.policy == "sequential" and fam.comparisons == 1
    # SGD's mean gap per D, one comparison per D at the claim's α
    assert gap.policy == "bound" and gap.comparisons == 2 and gap.alpha == c.alpha
    # the order, exactly, once over every draw the verdict rests on (ODE)
    assert sorted(f.policy for f in fams if f.exact) == ["bound"] * 2
    # SGD's order is a guard, a leg only when it refutes
    assert set(out.evidence["legs"]) == {"ODE delay slope in ln D", "every feature specialized (ODE)",
                                         "f = 1 first (ODE)"}
    assert out.evidence["sgd_check"]["decision"] == "confirmed"
    assert out.evidence["per_seed_delay_slopes"] == pytest.approx([_noise(1.0, 8.0)(i)
                                                                   for i in range(used)])


def test_sequential_never_decides_before_eight_draws():
    """Slopes 100 ± 0.1 would be decided by 4 draws' confidence sequence: the check still
    draws 8 (the plug-in σ needs them)."""
    runs = slope_source(_noise(0.1, 100.0))
    out, _ = _sequential(runs)
    assert out.verdict == "confirmed" and out.evidence["draws_used"] == 8


def test_sequential_shrinking_delay_is_refuted():
    """τ₁ < τ₂ everywhere but the delay shrinks by 5 ± 1 per unit ln D: refuted."""
    out, _ = _sequential(slope_source(_noise(1.0, -5.0)))
    assert out.verdict == "refuted" and "shrinks" in out.summary
    assert 8 <= out.evidence["draws_used"] < 32


def test_sequential_slope_indistinguishable_from_zero_is_inconclusive_at_the_budget():
    runs = slope_source(_noise(3.0))
    out, c = _sequential(runs, budget=32)
    assert out.verdict == "inconclusive"
    assert out.evidence["draws_used"] == 32 and runs.asked[-1] == (28, 4)
    assert "budget of 32" in out.summary and "larger budget" in out.summary
    assert "spread too much" in out.summary


def test_sequential_sign_flip_under_calibration_is_refuted():
    """Calibration's sign flip (the claimed direction reversed) on clear growth: refuted (the
    old 3-draw trend missed it at every seed)."""
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), Context(profile="quick", seed=0,
                                                                 perturbation=("sign",)))
    assert out.verdict == "refuted"


def test_sequential_order_violated_in_a_later_batch_is_refuted():
    good = slope_source(_noise(3.0))

    def runs(first, count):
        t = good(first, count)
        if first == 4:
            t[1, 2] = t[1, 2, ::-1]                 # draw 5 at D = 10⁴: f = 2 first
        return t
    out, _ = _sequential(runs)
    assert out.verdict == "refuted" and "f = 2 specialized before f = 1" in out.summary


def _missing_in_second_batch(index):
    """Slopes 0 ± 3 (undecided for a while), with the time at ``index`` (draw, D, feature) of
    the second batch not within the horizon (NaN)."""
    good = slope_source(_noise(3.0))

    def runs(first, count):
        t = good(first, count)
        if first == 4:
            t[index] = np.nan
        return t
    return runs


def test_sequential_f2_specialized_while_f1_never_did_is_refuted():
    """f = 2 within the horizon and f = 1 not: the order is decided (f = 2 first), refuted
    even though a time is missing."""
    out, _ = _sequential(_missing_in_second_batch((0, 1, 0)))
    assert out.verdict == "refuted" and "f = 2 specialized before f = 1" in out.summary
    assert out.evidence["legs"]["f = 1 first (ODE)"]["decision"] == "refuted"


def test_sequential_f2_not_specialized_in_a_later_batch_is_inconclusive():
    """f = 2 not within the horizon in one run of a later batch: censored, so the sequence
    stops undecided (resolution ∞) and the claim names a longer horizon."""
    out, c = _sequential(_missing_in_second_batch((0, 1, 1)))
    assert out.verdict == "inconclusive", out.summary
    assert "in 1 of 24 ODE runs" in out.summary and "a longer horizon would decide" in out.summary
    assert out.evidence["legs"]["every feature specialized (ODE)"]["decision"] == "inconclusive"
    assert out.evidence["legs"]["f = 1 first (ODE)"]["decision"] == "confirmed"
    seq_family, = [f for f in c.ledger.contract().families if f.policy == "sequential"]
    assert seq_family.resolution == np.inf


def test_sequential_censoring_in_the_first_batch_is_inconclusive_and_draws_no_more():
    good = slope_source(_noise(1.0, 8.0))

    def runs(first, count):
        t = good(first, count)
        t[2, 2, :] = np.nan                          # neither feature by the horizon
        return t
    out, _ = _sequential(runs)
    assert out.verdict == "inconclusive" and "(1 of them without f = 1 either)" in out.summary
    assert good.asked == [(0, 4)]


def test_sequential_a_wrong_order_outweighs_censoring():
    good = slope_source(_noise(1.0, 8.0))

    def runs(first, count):
        t = good(first, count)
        t[2, 2, :] = np.nan
        t[1, 0] = t[1, 0, ::-1]
        return t
    assert _sequential(runs)[0].verdict == "refuted"


@pytest.mark.parametrize("late, sgd_decision", [
    ((slice(None), 1, 1), "confirmed"),       # no f = 2 by τ = 400: every gap ≥ 400 − 11
    ((0, 1, 1), "inconclusive"),              # one seed's: gaps ≥ (…, 389), too spread to confirm
    ((0, 1, 0), "inconclusive"),              # one seed's f = 1: gaps ≤ (…, −330), mean ≈ +10
    ((0, 1), "inconclusive"),                 # one seed's both: neither bound
    ((slice(None), 1, 0), "refuted"),         # no f = 1 by 400, every f = 2 at 70: gap ≤ −330
])
def test_sgd_order_under_its_horizon(late, sgd_decision):
    """SGD's order as the mean paired gap τ₂ − τ₁ per D, a seed not specialized by the horizon
    (400) entering at it: its gap is then a bound, which decides only the way it supports
    (naming a longer SGD horizon otherwise). A guard: only its refutation moves the verdict,
    which the ODE's checks decide otherwise."""
    sgd = SGD_TIMES.copy()
    sgd[late] = np.nan
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd)
    assert out.evidence["sgd_check"]["decision"] == sgd_decision
    assert out.verdict == ("refuted" if sgd_decision == "refuted" else "confirmed"), out.summary
    if sgd_decision == "inconclusive":
        assert "a longer SGD horizon would decide" in out.evidence["sgd_censoring"]
    elif sgd_decision == "refuted":
        assert "f = 1 is not first on average" in out.summary


@pytest.mark.parametrize("gap, sgd_decision", [(0.0, "inconclusive"), (-0.5, "inconclusive"),
                                               (-50.0, "refuted"), (50.0, "confirmed")])
def test_sgd_order_is_judged_on_the_gap_and_its_error(gap, sgd_decision):
    """The mean gap over 8 seeds (sd 1.4) against 0 at the claim's α: a tie or a small
    reversal within the seeds' noise decides nothing; only a gap beyond z·se does."""
    sgd = SGD_TIMES.copy()
    sgd[:, 0, 1] = sgd[:, 0, 0] + gap + np.random.default_rng(2).normal(0.0, 1.4, 8)
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd)
    assert out.evidence["sgd_check"]["decision"] == sgd_decision
    assert out.verdict == ("refuted" if sgd_decision == "refuted" else "confirmed"), out.summary
    assert out.evidence["sgd_gap"][0] == pytest.approx(np.mean(sgd[:, 0, 1] - sgd[:, 0, 0]))


def test_sgd_gaps_bound_a_censored_seed():
    """A seed without f = 2 by the horizon: its gap is at least horizon − τ₁ (may confirm, not
    refute); without f = 1: at most τ₂ − horizon (the reverse); with both kinds at one D,
    neither."""
    sgd = SGD_TIMES.copy()
    sgd[0, 0, 1] = np.nan
    sgd[1, 1, 0] = np.nan
    mean, se, refutes, confirms = seq._sgd_gaps(sgd, 400.0)
    full = SGD_TIMES[..., 1] - SGD_TIMES[..., 0]
    assert mean[0] > full[:, 0].mean() and mean[1] < full[:, 1].mean()
    assert refutes.tolist() == [False, True] and confirms.tolist() == [True, False]
    sgd[2, 0, 0] = np.nan
    _, _, refutes, confirms = seq._sgd_gaps(sgd, 400.0)
    assert refutes.tolist() == [False, True] and confirms.tolist() == [False, False]


def test_sequential_a_tie_in_the_ode_is_refuted():
    """f = 1 strictly first is claimed: τ₁ = τ₂ in one run refutes."""
    good = slope_source(_noise(1.0, 8.0))

    def runs(first, count):
        t = good(first, count)
        t[1, 0, 1] = t[1, 0, 0]
        return t
    out, _ = _sequential(runs)
    assert out.verdict == "refuted" and out.evidence["order_ok"] is False


def test_censoring_counts_only_censored_runs_without_f1():
    times = np.array([[[np.nan, 50.0], [10.0, np.nan]]])          # wrong order; censored
    assert seq._order_counts(times) == (1, 1)
    assert "(0 of them without f = 1 either)" in seq._censoring(times, 800.0)
    assert "(1 of them" in seq._censoring(np.array([[[np.nan, np.nan]]]), 800.0)


def test_sequential_censored_evidence_says_censored_not_wrong_order():
    good = slope_source(_noise(1.0, 8.0))

    def runs(first, count):
        t = good(first, count)
        t[2, 2, 1] = np.nan
        return t
    out, _ = _sequential(runs)
    assert out.verdict == "inconclusive"
    assert out.evidence["order_ok"] is True and out.evidence["censored"] is True


def test_sgd_refutation_shows_the_gaps_that_decide_it():
    sgd = SGD_TIMES.copy()
    sgd[:, 1, 0] = np.nan                               # no f = 1 by 400 at D = 400
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd)
    assert out.verdict == "refuted"
    gap = np.mean(SGD_TIMES[:, 1, 1]) - 400.0
    assert f"D = 400: {gap:.1f} ± " in out.summary and "nan" not in out.summary


def test_sgd_horizon_per_d():
    """The bound is each D's own last recorded τ: no f = 1 at D = 400 by τ = 65 (every f = 2
    near 70) bounds the gaps by ≈ +5, which cannot refute, where τ = 400 would."""
    sgd = SGD_TIMES.copy()
    sgd[:, 1, 0] = np.nan
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd, sgd_t_end=[400.0, 65.0])
    assert out.evidence["sgd_check"]["decision"] == "inconclusive", out.summary
    assert "τ = [400.0, 65.0] per D" in out.evidence["sgd_censoring"]
    assert out.evidence["sgd_t_end"] == [400.0, 65.0]


def test_confirmed_without_an_sgd_delay_slope_says_so():
    """No SGD seed specialized f = 2 at D = 400: the order is decided (every gap ≥ 400 − 11)
    but no delay slope is estimable; the summary says so instead of printing nan."""
    sgd = SGD_TIMES.copy()
    sgd[:, 1, 1] = np.nan
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd, sgd_fit=(np.nan, np.nan))
    assert out.verdict == "confirmed" and "nan" not in out.summary
    assert "delay slope not estimable" in out.summary


def test_a_negative_sgd_gap_is_never_passed_off_as_the_order():
    """At quick the SGD order is a guard: a reversal within t = 8.8 of its noise (here −50 ±
    8.6, 5.8 se) does not refute, but the summary names the D where the gap is not positive."""
    sgd = SGD_TIMES.copy()
    sgd[:, :, 1] = sgd[:, :, 0] - 50.0 + np.random.default_rng(4).normal(0.0, 24.0, (8, 2))
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd)
    assert out.evidence["sgd_check"]["decision"] == "inconclusive"
    assert out.verdict == "confirmed" and "a guard at this profile" in out.summary
    assert "the gap is not positive at D = [100, 400]" in out.summary


def test_at_full_the_sgd_order_is_a_required_leg():
    """The full profile's seeds resolve the order: an unresolved SGD gap leaves the claim
    inconclusive there (and a resolved one confirms it)."""
    full = Context(profile="full", seed=0)
    sgd = SGD_TIMES.copy()
    sgd[:, :, 1] = sgd[:, :, 0] + 5.0 + np.random.default_rng(4).normal(0.0, 24.0, (8, 2))
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), context=full, sgd=sgd)
    assert out.verdict == "inconclusive" and "SGD's order is not resolved" in out.summary
    assert "f = 1 first on average (SGD)" in out.evidence["legs"]
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), context=Context(profile="full", seed=0))
    assert out.verdict == "confirmed" and "a guard" not in out.summary
