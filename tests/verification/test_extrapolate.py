"""``checks.extrapolate``: a limit judged by its finite-size behaviour. A true limit whose
correction is e^{−0.01·d} is never refuted; moved by one resolution it is; a REM-like correction
that a line in 1/√d would turn into a refutation is not one."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from verification.checks import Ledger, extrapolate, limit

DIMS = [100, 200, 400, 800]
SE = 0.01


def _ctx(perturbation=None):
    return SimpleNamespace(ledger=Ledger(), alpha=1e-4, perturbation=perturbation)


def _exp_limit(seed, perturbation=None, shift=0.0):
    rng = np.random.default_rng(seed)

    def at(dims):
        d = np.asarray(dims, float)
        return shift + np.exp(-0.01 * d) + SE * rng.standard_normal(d.size), np.full(d.size, SE)
    y, se = at(DIMS)
    return extrapolate(_ctx(perturbation), DIMS, y, se, 0.0, grow=at, max_dim=6400, scale=1.0,
                       name="L")


def test_a_true_limit_with_an_exponential_correction_is_never_refuted_and_a_moved_one_is():
    null, power = [], []
    for seed in range(200):
        check = _exp_limit(seed)
        null.append(check.decision)
        for sign in (1, -1):
            moved = _exp_limit(seed, ("relative", sign * check.resolution, "L"))
            power.append(moved.decision == "refuted")
    assert "refuted" not in null
    assert null.count("confirmed") >= 180           # it also decides
    assert np.mean(power) >= 0.8, np.mean(power)


def test_the_papers_rem_shaped_deviation_is_not_a_refutation():
    """The issue's probe at (α, β, γ) = (0.0957, 0.3132, 0.6): +0.15, +0.03, 0, 0 at d = 100…800,
    flat beyond. A line in 1/√d fits (χ² p ≈ 0.2) and extrapolates 3 se below 0; extrapolate
    finds the plateau and confirms."""
    y = np.array([0.15, 0.03, 0.002, -0.001])
    se = np.array([0.027, 0.024, 0.023, 0.023])
    line = limit(_ctx(), DIMS, y, se, 0.0, terms=("1/sqrt(d)",), scale=1.0)
    assert line.details["gof_p"][0] > 0.1
    assert line.details["limit"][0] < -2.5 * line.details["limit_stderr"][0]

    def flat(dims):
        return np.zeros(len(dims)), np.full(len(dims), 0.023)
    check = extrapolate(_ctx(), DIMS, y, se, 0.0, grow=flat, max_dim=3200, scale=1.0)
    assert check.decision == "confirmed"
    admitted = {r["model"] for r in check.details["models"][0] if r["admissible"]}
    assert "1/sqrt(d)" in admitted and any(m.startswith("plateau") for m in admitted)


def test_a_deviation_that_stays_is_refuted_under_every_model_at_the_largest_d():
    rng = np.random.default_rng(1)

    def at(dims):
        d = np.asarray(dims, float)
        return 0.3 + 1 / np.sqrt(d) + SE * rng.standard_normal(d.size), np.full(d.size, SE)
    y, se = at(DIMS)
    check = extrapolate(_ctx(), DIMS, y, se, 0.0, grow=at, max_dim=3200, scale=1.0)
    assert check.decision == "refuted"
    assert check.details["dims"][-1] == 3200.0             # published at the largest d allowed
    rows = [r for r in check.details["models"][0] if r["admissible"]]
    assert rows and all(abs(r["limit"]) > check.z * r["stderr"] for r in rows)


def test_models_that_disagree_out_of_budget_say_inconclusive_and_what_would_decide():
    """A slow 1/√d approach: the plateau and the line disagree on the verdict at d ≤ 800."""
    y = 0.02 + 0.5 / np.sqrt(np.asarray(DIMS, float))
    check = extrapolate(_ctx(), DIMS, y, np.full(4, 0.004), 0.0, scale=1.0,
                        corrections=("1/sqrt(d)", "1/d", "plateau"))
    assert check.decision in ("refuted", "inconclusive")
    if check.decision == "inconclusive":
        assert "larger d" in check.needs


def test_a_confirmed_limit_stops_growing():
    calls = []

    def at(dims):
        calls.append(list(dims))
        return np.zeros(len(dims)), np.full(len(dims), SE)
    y = 0.5 / np.asarray(DIMS, float) + np.array([0.003, -0.004, 0.001, 0.002])
    check = extrapolate(_ctx(), DIMS, y, np.full(4, SE), 0.0, grow=at, max_dim=6400, scale=1.0)
    assert check.decision == "confirmed" and not calls


@pytest.mark.parametrize("kw, needle", [
    ({"corrections": ("1/d", "cubic")}, "corrections"),
    ({"corrections": ()}, "corrections"),
    ({"grow": lambda d: (d, d)}, "max_dim"),
])
def test_bad_options_name_what_is_wrong(kw, needle):
    with pytest.raises(ValueError, match=needle):
        extrapolate(_ctx(), DIMS, np.zeros(4), np.full(4, SE), 0.0, **kw)


def test_non_finite_values_are_refused():
    with pytest.raises(ValueError):
        extrapolate(_ctx(), DIMS, [0.1, np.nan, 0.0, 0.0], np.full(4, SE), 0.0)


def test_a_column_no_model_identifies_is_undecided_and_has_no_pull():
    """Two dimensions cannot identify a line in 1/√d (it needs three): the column is
    inconclusive, marked not identified, and calibration reads no pull from its placeholder
    estimate (its se is recorded as 0 in the family data)."""
    ctx = _ctx()
    check = extrapolate(ctx, [200, 800], [0.3, 0.1], [0.05, 0.05], 0.0, scale=1.0,
                        corrections=("1/sqrt(d)", "1/d"), name="slope gap")
    assert check.decision == "inconclusive" and "no correction model" in check.needs
    assert check.columns["identified"].tolist() == [False]
    assert ctx.ledger.family_data()["slope gap"]["se"] == [0.0]
