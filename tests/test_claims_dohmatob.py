"""The Dohmatob claims encoded so far can fail: a wrong formula is refuted."""

import sympy as sp

from theory.models.dohmatob2025 import PAPER_BETA_C, alpha, beta
from verification import Context, get_claim, run_claim

CTX = Context(profile="quick", seed=0, device="cpu")


def verdict(cid, **kw):
    return run_claim(get_claim(cid), CTX, **kw)[0]


def test_rem_constants_confirmed_and_wrong_psi_or_r_refuted():
    assert verdict("dohmatob2025:rem-constants")["verdict"] == "confirmed"
    wrong_psi = sp.Piecewise((alpha / beta + beta / 4, beta <= PAPER_BETA_C), (PAPER_BETA_C, True))
    assert verdict("dohmatob2025:rem-constants", psi=wrong_psi)["verdict"] == "refuted"
    entry = verdict("dohmatob2025:rem-constants", r=beta)   # forgets the frozen phase
    assert entry["verdict"] == "refuted" and "frozen" in entry["summary"]


def test_gibbs_average_refutes_a_wrong_limit():
    entry = verdict("dohmatob2025:prop12-gibbs-average",
                    limit=lambda F, rho, r: F(rho * 1.05 * r))
    assert entry["verdict"] == "refuted"


def test_prop1_check_confirms_a_correct_formula_and_refutes_the_papers_on_M():
    """The paper's R̄ misses the dummy tokens' Gibbs noise (1 − p)²(1 − ρ²)·E Σq², which the
    REM gives as 1 − β_c/β in the frozen phase: with that term the check confirms; without
    it, it refutes at the on-M points where the attention is off."""
    from theory.models import dohmatob2025 as dm
    corrected = dm.paper_risk("linear") + (1 - dm.paper_localisation()) ** 2 * (1 - dm.rho**2) \
        * sp.Max(0, 1 - dm.PAPER_BETA_C / dm.beta)
    assert verdict("dohmatob2025:prop1-risk[link=linear]", formula=corrected)["verdict"] == "confirmed"
    entry = verdict("dohmatob2025:prop1-risk[link=linear]")
    assert entry["verdict"] == "refuted" and "frozen" in entry["summary"]
    keys = {"link", "d", "alpha", "beta", "gamma", "mu", "nu", "zeta", "eta", "rho", "theory",
            "mc", "mc_stderr"}
    assert all(keys <= set(p) for p in entry["evidence"]["points"])


def test_cor1_refutes_a_wrong_closed_form():
    from theory.models import dohmatob2025 as dm
    assert verdict("dohmatob2025:cor1-linear")["verdict"] == "confirmed"
    wrong = dm.paper_cor1_linear() + dm.gamma**2 * dm.nu
    assert verdict("dohmatob2025:cor1-linear", formula=wrong)["verdict"] == "refuted"


def test_prop2_refutes_a_wrong_oracle_formula_and_records_both_sides():
    from theory.models import dohmatob2025 as dm
    wrong = (1 - dm.paper_localisation().subs(dm.mu, 1)) * dm.dual_kernel("linear", 1)
    entry = verdict("dohmatob2025:prop2-oracle[link=linear]", oracle_formula=wrong)
    assert entry["verdict"] == "refuted" and "R̄ at the oracle" in entry["summary"]
    sides = {(c["side"], c["phase"]): c["ok"] for c in entry["evidence"]["checks"]}
    assert sides[("learnable", "frozen")] and sides[("learnable", "high-temperature")]


def test_invariance_and_2d_flow_refuted_for_a_risk_coupling_zeta_to_mu():
    from theory.models import dohmatob2025 as dm
    assert verdict("dohmatob2025:prop5-invariance[link=linear]")["verdict"] == "confirmed"
    assert verdict("dohmatob2025:prop6-2d-flow[link=quadratic]")["verdict"] == "confirmed"
    wrong = dm.paper_risk("linear") + dm.zeta * dm.mu
    assert verdict("dohmatob2025:prop5-invariance[link=linear]", risk=wrong)["verdict"] == "refuted"
    assert verdict("dohmatob2025:prop6-2d-flow[link=linear]", risk=wrong)["verdict"] == "refuted"


def test_gradient_span_refuted_when_the_risk_has_a_linear_rho_term():
    from theory.models import dohmatob2025 as dm
    assert verdict("dohmatob2025:prop3-gradient-span[link=linear]")["verdict"] == "confirmed"
    wrong = dm.paper_risk("linear") + dm.rho * dm.mu
    assert verdict("dohmatob2025:prop3-gradient-span[link=linear]", risk=wrong)["verdict"] == "refuted"


def test_prop7_refutes_a_flow_with_an_extra_interior_stationary_point():
    from theory.models import dohmatob2025 as dm
    assert verdict("dohmatob2025:prop7-stationary-set[link=linear]")["verdict"] == "confirmed"
    wrong = dm.paper_risk("linear") + dm.nu**2 / 10
    entry = verdict("dohmatob2025:prop7-stationary-set[link=linear]", risk=wrong)
    assert entry["verdict"] == "refuted"


def test_the_shared_stationary_pieces_equal_the_direct_computation(tmp_path):
    """Props. 7 and 10 take the paper's stationary points on M as shared tasks: computed, and
    read back from the store by a later call, they equal the direct computation per setting."""
    from verification.claims.dohmatob2025._common import (
        STATIONARY_SETTINGS, _engine_stationary_uncached, _flow_on_M, paper_stationary)
    from verification.store import ResultStore
    from verification.tasks import map_subtasks
    store = ResultStore(tmp_path)
    ctx = Context(profile="quick", seed=0, device="cpu", store=store, mapper=map_subtasks)
    first = paper_stationary(ctx, "linear", [50])
    assert len(list(tmp_path.rglob("*"))) > 0                    # stored
    again = paper_stationary(ctx, "linear", [50])
    for i, setting in enumerate(STATIONARY_SETTINGS):
        direct = _engine_stationary_uncached(_flow_on_M("linear"), setting, 50)
        assert first[i, 50] == again[i, 50] == direct and direct[0]


def test_prop9_refutes_when_the_oracle_is_a_source():
    from theory.models import dohmatob2025 as dm
    assert verdict("dohmatob2025:prop9-oracle-sink[link=quadratic]")["verdict"] == "confirmed"
    entry = verdict("dohmatob2025:prop9-oracle-sink[link=quadratic]", risk=-dm.paper_risk("quadratic"))
    assert entry["verdict"] == "refuted" and "source" in entry["summary"]


def test_prop10_linear_confirmed_and_a_wrong_class_refuted():
    entry = verdict("dohmatob2025:prop10-classification[link=linear]")
    assert entry["verdict"] == "confirmed"
    wrong = ([((1, 1), "sink"), ((1, -1), "saddle"), ((-1, 1), "saddle"), ((-1, -1), "saddle")], True)
    entry = verdict("dohmatob2025:prop10-classification[link=linear]", claimed=wrong)
    assert entry["verdict"] == "refuted" and "claimed saddle: found source" in entry["summary"]


def test_prop10_quadratic_interior_saddle_sits_at_psi_over_c():
    """Finding pinned: the interior saddle on ν = 0 is where p(µ) = 1/3, i.e. at
    µ = (ψ − log 2/(βd))/c → ψ/c, not at ψ; and (−1, 0) is a source at finite d."""
    import numpy as np
    entry = verdict("dohmatob2025:prop10-classification[link=quadratic]")
    assert entry["verdict"] == "refuted"
    for row in entry["evidence"]["stationary_by_d"]:
        interior = [f for f in row["found"] if -1 < f["mu"] < 1]
        if row["psi"] < row["c"]:
            assert len(interior) == 1 and interior[0]["class"] == "saddle"
            expected = (row["psi"] - np.log(2) / (row["beta"] * row["d"])) / row["c"]
            assert abs(interior[0]["mu"] - expected) < 1e-9
        else:
            assert not interior
        assert next(f for f in row["found"] if (f["mu"], f["nu"]) == (-1, 0))["class"] == "source"


def test_prop4_finds_realisable_stationary_points_off_M():
    entry = verdict("dohmatob2025:prop4-linear-stationary")
    assert entry["verdict"] == "refuted"
    ev = entry["evidence"]
    assert ev["off_M"] and not ev["sinks_other_than_oracle"] and set(ev["oracle_classes"]) == {"sink"}
    assert all(p["residual_40_digits"] < 1e-25 for p in ev["off_M"])


def test_relu_invariance_refuted_by_the_odd_part_of_relu():
    """For σ = ReLU, ∂R̄/∂ζ ≠ 0 on M (σ is neither odd nor even), so M is not invariant."""
    entry = verdict("dohmatob2025:prop5-invariance[link=relu]")
    assert entry["verdict"] == "refuted" and "dzeta/dt" in entry["summary"]


def test_global_convergence_refuted_when_the_flow_ascends():
    from theory.models import dohmatob2025 as dm
    from verification import Context
    ctx = Context(profile="quick", seed=1)
    entry = run_claim(get_claim("dohmatob2025:global-convergence-linear"), ctx,
                      risk=-dm.paper_risk("linear"), horizon=1e6)[0]
    assert entry["verdict"] in ("refuted", "inconclusive")
    assert all(r.get("outcome") != "oracle" for r in entry["evidence"]["runs"])


def test_descent_lemma_check_detects_increase_at_too_large_a_step():
    entry = verdict("dohmatob2025:descent-lemma", step_factors=(2000.0,))
    assert entry["verdict"] == "refuted" and "increased" in entry["summary"]


def test_fig2_reproduction_records_the_trajectory_and_refutes_agreement():
    entry = verdict("dohmatob2025:fig2-agreement")
    assert entry["verdict"] == "refuted"
    keys = {"step", "mu", "nu", "zeta", "eta", "rho", "test_risk", "test_se", "theory"}
    assert all(keys <= set(p) for p in entry["evidence"]["points"])
    # the initial gap is large: R̄ ignores the dummy tokens' Gibbs noise
    first = entry["evidence"]["points"][0]
    assert first["test_risk"] > 1.5 * first["theory"]
