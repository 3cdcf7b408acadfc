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


SGD_TIMES = np.array([[[10.0, 20.0], [11.0, 25.0]]] * 8)     # seed × D × (τ₁, τ₂), f = 1 first


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
    fam, = [f for f in fams if not f.exact]
    assert fam.policy == "sequential" and fam.comparisons == 1
    # the order, exactly, once over every draw the verdict rests on (ODE) and SGD's means
    assert sorted(f.policy for f in fams if f.exact) == ["bound"] * 4
    assert set(out.evidence["legs"]) == {"ODE delay slope in ln D", "every feature specialized (ODE)",
                                         "f = 1 first (ODE)", "f = 1 first on average (SGD)",
                                         "SGD order within the horizon"}
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


def test_sequential_f2_specialized_while_f1_never_did_is_refuted():
    """f = 2 within the horizon and f = 1 not: the order is decided (f = 2 first), refuted
    even though a time is missing."""
    good = slope_source(_noise(3.0))

    def runs(first, count):
        t = good(first, count)
        if first == 4:
            t[0, 1, 0] = np.nan
        return t
    out, _ = _sequential(runs)
    assert out.verdict == "refuted" and "f = 2 specialized before f = 1" in out.summary
    assert out.evidence["legs"]["f = 1 first (ODE)"]["decision"] == "refuted"


def test_sequential_f2_not_specialized_in_a_later_batch_is_inconclusive():
    """f = 2 not within the horizon in one run of a later batch: censored, so the sequence
    stops undecided (resolution ∞) and the claim names a longer horizon."""
    good = slope_source(_noise(3.0))

    def runs(first, count):
        t = good(first, count)
        if first == 4:
            t[0, 1, 1] = np.nan
        return t
    out, c = _sequential(runs)
    assert out.verdict == "inconclusive", out.summary
    assert "in 1 of 24 ODE runs" in out.summary and "a longer horizon would decide" in out.summary
    assert out.evidence["legs"]["every feature specialized (ODE)"]["decision"] == "inconclusive"
    assert out.evidence["legs"]["f = 1 first (ODE)"]["decision"] == "confirmed"
    assert c.ledger.contract().families[0].resolution == np.inf


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


@pytest.mark.parametrize("late, verdict", [
    ((slice(None), 1, 1), "confirmed"),             # no f = 2 by the horizon: mean τ₂ ≥ 400 > 11
    ((0, 1, 1), "confirmed"),                       # one seed's: mean τ₂ ≥ 71.9 > 11
    ((0, 1, 0), "refuted"),                         # one seed's f = 1: mean τ₁ ≥ 59.6 > 25
    ((0, 1), "inconclusive"),                       # one seed's both: τ₁ ≥ 59.6, τ₂ ≥ 71.9, open
    ((slice(None), 1, 0), "refuted"),               # no f = 1 by 400 while every f = 2 at 25
])
def test_sgd_order_under_its_horizon(late, verdict):
    """SGD's mean order per D from bounds: a seed not specialized by the horizon (400) counts
    as at least 400 and unbounded above, so the order is decided where the bounds decide it
    and open (inconclusive, naming a longer SGD horizon) where they do not; the ODE's delay
    check runs either way."""
    sgd = SGD_TIMES.copy()
    sgd[late] = np.nan
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd)
    assert out.verdict == verdict, out.summary
    if verdict == "inconclusive":
        assert "a longer SGD horizon would decide" in out.summary
        assert out.evidence["legs"]["ODE delay slope in ln D"]["decision"] == "confirmed"
    elif verdict == "refuted":
        assert "f = 1 is not first on average" in out.summary


def test_sgd_bounds_are_the_means_where_every_seed_specialized():
    """All finite: the bounds are the means, and a tie refutes (strictly first is claimed)."""
    lower, upper = seq._sgd_mean_bounds(SGD_TIMES, 400.0)
    assert np.array_equal(lower, upper) and np.allclose(lower, [[10, 20], [11, 25]])
    tie = SGD_TIMES.copy()
    tie[:, 0, 1] = 10.0
    assert seq._sgd_order(tie, 400.0).tolist() == [-1, 1]


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


def test_sgd_refutation_shows_the_bounds_that_decide_it():
    sgd = SGD_TIMES.copy()
    sgd[0, 1, 0] = np.nan                               # mean τ₁ ≥ (7·11 + 400)/8 at D = 400
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd)
    assert out.verdict == "refuted"
    assert "D = 400: mean τ₁ ≥ 59.6, mean τ₂ = 25.0" in out.summary and "nan" not in out.summary


def test_sgd_horizon_per_d():
    """The bound is each D's own last recorded τ: a seed not specialized at D = 400 by τ = 20
    leaves f = 1's mean at ≥ (7·11 + 20)/8 < 25, so the order there is open."""
    sgd = SGD_TIMES.copy()
    sgd[0, 1, 0] = np.nan
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd, sgd_t_end=[400.0, 20.0])
    assert out.verdict == "inconclusive", out.summary
    assert "τ = [400.0, 20.0] per D" in out.summary
    assert out.evidence["sgd_t_end"] == [400.0, 20.0]


def test_confirmed_without_an_sgd_delay_slope_says_so():
    """No SGD seed specialized f = 2 at D = 400: the order is decided (mean τ₂ ≥ 400 > 11) but
    no delay slope is estimable; the summary says so instead of printing nan."""
    sgd = SGD_TIMES.copy()
    sgd[:, 1, 1] = np.nan
    out, _ = _sequential(slope_source(_noise(1.0, 8.0)), sgd=sgd, sgd_fit=(np.nan, np.nan))
    assert out.verdict == "confirmed" and "nan" not in out.summary
    assert "delay slope not estimable" in out.summary
