"""Dohmatob Prop. 1 (linear link) judged by its finite-size behaviour (``checks.extrapolate``):
the high-temperature settings where a line in 1/√d through d ≤ 800 published a refutation are
not refuted at any of seeds 0, 1, 2; the frozen reference stays refuted at every seed, with the
participation-ratio effect in its evidence."""

from __future__ import annotations

import pytest

from verification import Context, get_claim, run_claim

CLAIM = "dohmatob2025:prop1-risk[link=linear]"
HIGH_T_ARTEFACTS = [{"alpha": 0.0957, "beta": 0.3132, "gamma": 0.6},    # the map's counterexample
                    {"alpha": 0.036, "beta": 0.121, "gamma": 0.30},
                    {"alpha": 0.252, "beta": 0.685, "gamma": 0.366}]    # next to β_c = 0.71
FROZEN = {"alpha": 0.1, "beta": 1.0, "gamma": 0.6}


def _entry(setting, seed):
    return run_claim(get_claim(CLAIM), Context(profile="quick", seed=seed, device="cpu"),
                     setting=setting)[0]


def _frozen_is_refuted_by_its_effect(entry):
    assert entry["verdict"] == "refuted"
    check = entry["evidence"]["check"]
    k = max(range(len(check["limit"])), key=lambda j: abs(check["limit"][j]))
    # R/R̄ − 1 at the on-M point with the attention off: the participation-ratio effect
    assert 1.2 < check["limit"][k] < 1.8
    rows = [r for r in check["models"][k] if r["admissible"]]
    assert rows and all(r["limit"] - r["stderr"] * check["z"] > 0 for r in rows)
    assert check["dims"][-1] == 6400                     # published at the largest d allowed


def test_a_high_temperature_artefact_is_not_refuted():
    entry = _entry(HIGH_T_ARTEFACTS[0], 0)
    assert entry["verdict"] != "refuted", entry["summary"]


def test_the_frozen_reference_stays_refuted_with_its_effect():
    _frozen_is_refuted_by_its_effect(_entry(FROZEN, 0))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("setting", HIGH_T_ARTEFACTS)
def test_no_high_temperature_artefact_at_any_seed(setting, seed):
    entry = _entry(setting, seed)
    assert entry["verdict"] != "refuted", entry["summary"]
    if entry["verdict"] == "inconclusive":
        assert "larger d" in entry["summary"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_the_frozen_reference_is_refuted_at_every_seed(seed):
    _frozen_is_refuted_by_its_effect(_entry(FROZEN, seed))


# --- the REM's constants next to β_c: a crossover, not a refutation ---------------------------
REM = "dohmatob2025:rem-constants"
NEAR_BETA_C = {"alpha": 0.1, "beta": 0.474}       # frozen, 1.06 β_c: crossover up to d ~ 3000


@pytest.mark.parametrize("seed", [1, 2])
def test_rem_constants_next_to_beta_c_grow_d_and_are_not_refuted(seed):
    """Through d ≤ 3200 every correction model fitted and refuted ψ = √(2α) here at every seed
    (the domain calibration's one consistent refutation); the check now adds d up to 25600,
    where no asymptotic model fits the crossover: undecided, naming larger d."""
    entry = run_claim(get_claim(REM), Context(profile="quick", seed=seed, device="cpu"),
                      setting=NEAR_BETA_C)[0]
    assert entry["verdict"] != "refuted", entry["summary"]
    dims = [f["dims"] for f in entry["evidence"]["families"].values()]
    assert all(d[-1] > 3200 for d in dims)


def test_rem_constants_still_refute_a_dropped_frozen_phase():
    mutation = get_claim(REM).mutations["r: frozen phase dropped (r = beta)"]()
    entry = run_claim(get_claim(REM), Context(profile="quick", seed=1, device="cpu"),
                      setting={"alpha": 0.2, "beta": 1.5}, **mutation)[0]
    assert entry["verdict"] == "refuted", entry["summary"]
