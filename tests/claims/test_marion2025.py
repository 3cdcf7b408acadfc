"""The claims of Marion et al. (ICLR 2025) can fail: each check, fed a deliberately wrong model
or formula, says 'refuted' at the quick profile (one fast test per claim, mostly at one setting
of its domain); every mutation a claim declares (``@claim(mutations=...)``) is refuted, except
those declared ``missed``, which are still not refuted (slow where a run takes more than a few
seconds); every claim declares enough mutations (three caught for an exact claim, one beyond
the two generic ones for a statistical claim on the check library); the paper's models are
confirmed on the full profile (slow). (The whole run: ``python -m verification run``.)"""

import functools
import warnings

import numpy as np
import pytest
import sympy as sp

from numerics import reduced
from numerics.sgd import SGDResult
from theory.models import marion2025 as m
from verification import Context, claims_for, get_claim, run_claim
from verification.claims.marion2025 import sgd as sgd_module
from verification.claims.marion2025._common import SETTINGS, as_setting
from verification.claims.marion2025.sec5_dynamics import THM5_SETTINGS
from verification.declare import Missed
from verification.simulations.marion2025 import sgd as sgd_simulations
from verification.store import ResultStore, StoreNotStored
from verification.tasks import map_subtasks

CTX = Context(profile="quick", seed=0, device="cpu")
CLAIMS = claims_for("marion2025")


def verdict(claim_id, **overrides):
    entry, _ = run_claim(get_claim(claim_id), CTX, **overrides)
    return entry


def at_one_setting(claim_id, setting, **overrides):
    """The entry of ``claim_id`` judged at one setting of its domain (at the whole α)."""
    entry, _ = run_claim(get_claim(claim_id), CTX, setting=setting, **overrides)
    return entry


def mutation(claim_id, name):
    return get_claim(claim_id).mutations[name]()


def per_setting(entry):
    """The evidence of each setting the entry's claim judged (one setting: the entry's own)."""
    ev = entry["evidence"]
    if len(ev["domain"]["settings"]) == 1:
        return [ev]
    return [s["evidence"] for s in ev["settings"]]


def families(entry):
    return {f["name"]: f["comparisons"] for f in entry["contract"]["families"]}


# -- one fast can-fail test per claim ---------------------------------------------------------
def test_thm1_refutes_a_mutated_risk_formula():
    entry = at_one_setting("marion2025:thm1-risk", as_setting(SETTINGS[0]),
                           **mutation("marion2025:thm1-risk",
                                      "dropped term: signal cross term −2γ²ν·erf"))
    assert entry["verdict"] == "refuted", entry["summary"]
    assert families(entry) == {"derived risk vs Monte Carlo": 2}


def test_prop3_refutes_a_wrong_formula():
    wrong = m.eps**2 + m.gamma**2 - m.gamma**4 / (m.gamma**2 + m.L)
    entry = verdict("marion2025:prop3-linear", formula=wrong)
    assert entry["verdict"] == "refuted"
    assert all(ev["rows"][0]["difference"] != "0" for ev in per_setting(entry))


def test_cor2_refuted_without_a_signal_in_the_key_direction():
    entry = verdict("marion2025:cor2-bayes-limit",
                    **mutation("marion2025:cor2-bayes-limit", "dropped term: signal mean √(d/2)k*"))
    assert entry["verdict"] == "refuted", entry["summary"]


def test_manifold_invariance_refuted_when_the_label_sees_k_star():
    entry = at_one_setting("marion2025:manifold-invariant", as_setting(SETTINGS[0]),
                           **mutation("marion2025:manifold-invariant",
                                      "added term: label x_Jᵀ(v* + ½k*)"))
    assert entry["verdict"] == "refuted", entry["summary"]


def test_saddle_refuted_when_the_risk_ignores_nu():
    wrong = m.MODEL.perturbed(label=sp.S.Zero, name="marion-no-label")
    entry = at_one_setting("marion2025:saddle", as_setting(SETTINGS[0]), model=wrong)
    assert entry["verdict"] == "refuted", entry["summary"]


def test_thm5_refuted_when_pgd_converges_elsewhere():
    entry = at_one_setting("marion2025:thm5-convergence", as_setting(THM5_SETTINGS[0]),
                           **mutation("marion2025:thm5-convergence",
                                      "sign flip: label y = −x_Jᵀv*"))
    assert entry["verdict"] == "refuted", entry["summary"]


@functools.lru_cache(maxsize=8)
def _true_ode(d, steps, record_every, lr):
    rm = reduced(m.MODEL, {"d": d, **sgd_module.SGD_PARAMS})
    t = np.arange(0, steps + 1, record_every) * lr
    return t, rm.integrate(sgd_module.SGD_INIT, t).y, tuple(rm.state_names)


def _synthetic_sgd(model, p, cfg, split=False):
    """A stand-in for the SGD engine (the SGD runs are the slow tier's): the true ODE's
    trajectory, an O(x) offset that vanishes as the step (x = lr·d/batch) → 0, and noise per
    seed of SGD's O(√x) (``split``: noise of one size at every step and an offset that stays
    as the step shrinks, smaller at larger d, as where the seeds split along an unstable
    direction)."""
    assert {k: v for k, v in p.items() if k != "d"} == sgd_module.SGD_PARAMS
    t, y, names = _true_ode(p["d"], cfg.steps, cfg.record_every, cfg.lr)
    x = cfg.lr * p["d"] / cfg.batch
    noise = np.random.default_rng(cfg.seed).standard_normal((len(t), cfg.seeds, y.shape[1]))
    runs = (y[:, None, :] * (1 + 30 / p["d"]) + 0.05 * noise if split else
            y[:, None, :] * (1 + x) + 0.05 * np.sqrt(x) * noise)
    return SGDResult(t, {n: runs[:, :, k] for k, n in enumerate(names)}, None, names)


def test_sgd_tracking_judges_each_order_parameter_and_refutes_a_wrong_ode(monkeypatch):
    """On a synthetic SGD that follows the true ODE: one family per order parameter over every
    d and record (and the decrease over the d range, a trend), confirmed; the ODE run 1.25×
    too fast (a declared mutation) is refuted."""
    monkeypatch.setattr(sgd_simulations, "simulate", _synthetic_sgd)
    cid = "marion2025:sgd-tracks-flow"
    true = verdict(cid)
    assert true["verdict"] == "confirmed", true["summary"]
    assert families(true) == {**{f"SGD − ODE deviation at lr → 0: {s}": 8 * 3 for s in "κνθηρ"},
                              "mean square SGD − ODE deviation against log d": 1}
    wrong = verdict(cid, **mutation(cid, "wrong factor: the ODE's time scale ×1.25 "
                                         "(right-hand side ×1.25)"))
    assert wrong["verdict"] == "refuted", wrong["summary"]
    assert "ν leg refuted" in wrong["summary"], wrong["summary"]


def _synthetic_sgd_growing_with_d(model, p, cfg):
    """As ``_synthetic_sgd``, with an offset that vanishes as the step → 0 at each d but grows
    with d at the claim's step (x·d²/384: the deviation does not shrink as d grows)."""
    res = _synthetic_sgd(model, p, cfg)
    t, y, names = _true_ode(p["d"], cfg.steps, cfg.record_every, cfg.lr)
    grow = cfg.lr * p["d"] / cfg.batch * p["d"] ** 2 / 384
    return SGDResult(t, {n: res[n] + y[:, None, k] * grow for k, n in enumerate(names)}, None,
                     names)


def test_a_deviation_that_grows_with_d_is_refuted(monkeypatch):
    """SGD that tracks the ODE as lr → 0 at every d, but whose deviation at the claim's step
    grows with d: the ODE legs pass, the decrease leg refutes."""
    monkeypatch.setattr(sgd_simulations, "simulate", _synthetic_sgd_growing_with_d)
    out = verdict("marion2025:sgd-tracks-flow")
    assert out["verdict"] == "refuted", out["summary"]
    assert "decrease over the d range leg refuted" in out["summary"], out["summary"]


def test_seeds_that_split_leave_the_limit_unjudged_not_refuted(monkeypatch):
    """SGD whose seed variance does not shrink with the step (its seeds split near an unstable
    direction) and whose mean stays off the ODE at every step simulated: outside the small-step
    regime, where the deviation is no series in the step, the lr → 0 limit is not judged, so
    the claim is inconclusive, naming the regime, not refuted; in the regime the same offset
    is refuted (the previous tests' SGD, the offset vanishing with the step, is confirmed)."""
    monkeypatch.setattr(sgd_simulations, "simulate",
                        functools.partial(_synthetic_sgd, split=True))
    out = verdict("marion2025:sgd-tracks-flow")
    assert out["verdict"] == "inconclusive", out["summary"]
    assert "small-step regime leg undecided" in out["summary"] and "d = 96 (×" in out["summary"]
    ratio = out["evidence"]["seed_variance_ratio"]
    assert ratio["judged_d"] == [] and min(ratio["smallest/largest step"]) > 0.5


def test_one_d_outside_the_regime_is_set_aside_and_the_others_judged(monkeypatch):
    """Only d = 96's seeds split: its limit is not judged, d = 192 and 384 are (their
    families' columns, the figure's points), and the claim is inconclusive, naming d = 96."""
    def sgd(model, p, cfg):
        return _synthetic_sgd(model, p, cfg, split=p["d"] == 96)
    monkeypatch.setattr(sgd_simulations, "simulate", sgd)
    out, outcome = run_claim(get_claim("marion2025:sgd-tracks-flow"), CTX)
    assert out["verdict"] == "inconclusive", out["summary"]
    ratio = out["evidence"]["seed_variance_ratio"]
    assert ratio["judged_d"] == [192, 384]
    from matplotlib.figure import Figure
    fig = Figure()
    outcome.figures["deviation_vs_step"](fig)               # the judged d only
    assert len(fig.axes[0].get_lines()) >= 2
    assert "at d = 96 (×" in out["summary"] and "d = 192 (×" not in out["summary"]
    assert families(out) == {**{f"SGD − ODE deviation at lr → 0: {s}": 8 * 2 for s in "κνθηρ"},
                             "mean square SGD − ODE deviation against log d": 1}
    assert out["evidence"]["legs"]["small-step regime leg"]["decision"] == "inconclusive"
    assert all(out["evidence"]["legs"][f"{s} leg"]["decision"] == "confirmed" for s in "κνθηρ")


def _synthetic_sgd_offset(model, p, cfg):
    """In the small-step regime (noise O(√x)), but 30 % off the ODE at every step."""
    res = _synthetic_sgd(model, p, cfg)
    t, y, names = _true_ode(p["d"], cfg.steps, cfg.record_every, cfg.lr)
    return SGDResult(t, {n: res[n] + 0.3 * y[:, None, k] for k, n in enumerate(names)}, None,
                     names)


def test_an_offset_that_stays_as_the_step_shrinks_is_refuted_in_the_regime(monkeypatch):
    monkeypatch.setattr(sgd_simulations, "simulate", _synthetic_sgd_offset)
    out = verdict("marion2025:sgd-tracks-flow")
    assert out["verdict"] == "refuted", out["summary"]
    assert out["evidence"]["seed_variance_ratio"]["judged_d"] == [96, 192, 384]


def test_a_mutation_of_the_compared_risk_reuses_the_models_simulations(tmp_path):
    """Thm 1's declared mutations change the risk compared, not what is simulated: at one
    setting the mutant reuses the true model's Monte Carlo estimates from the store and
    evaluates its own risk only; every result is data the store holds."""
    cid, setting = "marion2025:thm1-risk", as_setting(SETTINGS[0])
    store = ResultStore(tmp_path / "store")
    true, mutant = (Context(profile="quick", seed=0, device="cpu", store=store,
                            mapper=map_subtasks) for _ in range(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreNotStored)
        assert get_claim(cid).at(true, setting).verdict == "confirmed"
        wrong = mutation(cid, "dropped term: signal cross term −2γ²ν·erf")
        assert get_claim(cid).at(mutant, setting, **wrong).verdict == "refuted"
    assert true.tally.counts() == {"computed": 3, "reused": 0}          # two points' MC, their risk
    assert mutant.tally.counts() == {"computed": 1, "reused": 2}        # the mutant's risk alone


# -- the three-way rules as legs of the check library -----------------------------------------
def _cor2_rule_before(excess):
    """Cor. 2's hand rule before it was written as legs (the reference the legs must match)."""
    excess = np.asarray(excess, float)
    decreasing = bool(np.all(np.diff(excess) < 0))
    with np.errstate(divide="ignore", over="ignore"):
        ratio = float(excess[-1] / excess[0]) if excess[0] != 0 else float("nan")
    if np.any(excess < -1e-30):
        return "refuted"
    if decreasing and abs(ratio) <= 0.01:
        return "confirmed"
    if ratio >= 0.5 or (len(excess) >= 3 and excess[-1] >= excess[-3]):
        return "refuted"
    return "inconclusive"


def _cor2_rule_now(excess):
    from verification.checks import combine
    from verification.claims.marion2025.sec3_risk import cor2_legs
    with np.errstate(divide="ignore", over="ignore"):
        legs = cor2_legs(Context(profile="quick", seed=0, device="cpu"), excess)
    return combine(list(legs.values()))


def _below(x):
    return float(np.nextafter(x, -np.inf))


def _above(x):
    return float(np.nextafter(x, np.inf))
COR2_BOUNDARY_CASES = [
    [1.0, 0.1, 0.01],                                   # ratio exactly 0.01, decreasing
    [1.0, 0.1, _above(0.01)],                           # just above 0.01
    [1.0, 0.1, _below(0.01)],
    [1.0, 0.7, 0.5], [1.0, 0.7, _below(0.5)], [1.0, 0.7, _above(0.5)],  # the stall ratio
    [1.0, 0.2, 0.2, 0.1], [1.0, 0.3, 0.2, 0.3], [1.0, 0.3, 0.2, 0.2],   # e[-1] vs e[-3]
    [1.0, 0.01, 0.02, 0.005], [1.0, 0.01, 0.01, 0.001],                # not monotone, stall-free
    [1.0, 0.5, -1e-30, 0.005], [1.0, 0.5, _below(-1e-30), 0.005],      # the Bayes floor
    [1.0, 0.5, -1e-31, -2e-31], [0.0, -1e-31, -2e-31], [0.0, 0.0, 0.0],  # a first excess of 0
    [-1e-31, 1e-31, 0.0], [-1e-31, -2e-31, -3e-31], [5e-324, 1e300, 1e299],  # ratio < 0, ±inf
    [1.0, 0.9, 0.8, 0.7, 0.6, 0.3, 0.2], [1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6],
    [2.0, 1.0, 0.02], [2.0, 1.0, 0.0], [1.0, -0.0, -0.0], [1.0, 0.4], [1.0, 0.001]]


@pytest.mark.parametrize("excess", COR2_BOUNDARY_CASES, ids=lambda e: str(list(map(float, e))))
def test_cor2_legs_give_the_hand_rules_verdict_at_its_boundaries(excess):
    assert _cor2_rule_now(excess) == _cor2_rule_before(excess)


def test_cor2_legs_give_the_hand_rules_verdict_on_random_excesses():
    """Values drawn from the rule's thresholds and their float neighbours, sorted or not."""
    rng = np.random.default_rng(0)
    atoms = np.array([0.0, 1e-30, -1e-30, _below(-1e-30), 1e-31, -1e-31, 0.01, _above(0.01),
                      0.5, _below(0.5), 1.0, 0.3, 0.005, 2.0, 5e-324])
    seen = set()
    for _ in range(1500):
        e = rng.choice(atoms, rng.integers(2, 8)) * rng.choice([1.0, 0.01, 0.5, 100.0])
        e = np.sort(e)[::-1] if rng.random() < 0.4 else e
        before = _cor2_rule_before(e)
        assert _cor2_rule_now(e) == before, e.tolist()
        seen.add(before)
    assert seen == {"confirmed", "refuted", "inconclusive"}


def test_saddle_legs_refute_an_eigenvalue_at_the_tolerance():
    """The hand rule refuted unless one eigenvalue < −tol and one > tol: an eigenvalue at ±tol
    (0 at the working accuracy) still refutes, as does a flow beyond 1e-25 or an extra order
    parameter."""
    from verification.checks import combine
    from verification.claims.marion2025.sec5_dynamics import saddle_legs

    def verdict(ops=("kappa", "nu"), rhs=(0.0,) * 5, eig=(-1.0, 1.0), tol=1e-12):
        ctx = Context(profile="quick", seed=0, device="cpu")
        return combine(list(saddle_legs(ctx, list(ops), list(rhs), np.array(eig), tol).values()))
    assert verdict() == "confirmed"
    assert verdict(eig=(-1e-12, 1.0)) == verdict(eig=(-1.0, 1e-12)) == "refuted"
    assert verdict(eig=(_below(-1e-12), _above(1e-12))) == "confirmed"
    assert verdict(rhs=(0, 0, 1e-25, 0, 0)) == "confirmed"
    assert verdict(rhs=(0, 0, _above(1e-25), 0, 0)) == "refuted"
    assert verdict(ops=("kappa", "nu", "rho")) == "refuted"


def test_thm5_legs_refute_a_stalled_run_and_wait_for_a_moving_one():
    """A run beyond 1e-3 of ±(1, 1) refutes when its last move is < 1e-9, leaves the claim
    undecided when ≥ 1e-9; a sink of the flow on M beyond 1e-6 of ±(1, 1) refutes."""
    from verification.checks import combine
    from verification.claims.marion2025.sec5_dynamics import thm5_legs

    def verdict(dist, move, sink=(1.0, 1.0)):
        runs = [{"distance_to_oracle": 0.0, "last_move": 0.0},
                {"distance_to_oracle": dist, "last_move": move}]
        stationary = [{"point": [0.0, 0.0], "class": "saddle"},
                      {"point": list(sink), "class": "sink"}]
        ctx = Context(profile="quick", seed=0, device="cpu")
        return combine(list(thm5_legs(ctx, runs, stationary)[0].values()))
    assert verdict(1e-3, 0.0) == "confirmed"
    assert verdict(_above(1e-3), 1e-9) == "inconclusive"
    assert verdict(_above(1e-3), _below(1e-9)) == "refuted"
    assert verdict(0.0, 0.0, sink=(1.0 + 1e-6, 1.0)) == "confirmed"
    assert verdict(0.0, 0.0, sink=(1.0 + 2e-6, 1.0)) == "refuted"


# -- what the checks record and where they cannot see ----------------------------------------
@pytest.mark.slow    # the quick profile's 8 settings
def test_thm1_confirms_the_derived_risk_and_records_the_spec_evidence():
    entry = verdict("marion2025:thm1-risk")
    assert entry["verdict"] == "confirmed", entry["summary"]
    keys = {"d", "L", "lam", "gamma", "eps", "kappa", "nu", "theta", "eta", "rho", "theory",
            "mc", "mc_stderr"}
    pts = [p for ev in per_setting(entry) for p in ev["points"]]
    assert len(pts) >= 8 and all(keys <= set(p) for p in pts)
    assert {p["d"] for p in pts} >= {8, 16, 32} and any(abs(p["rho"]) > 0.05 for p in pts)
    # one checked quantity, the risk: its comparisons at every setting are one family
    assert families(entry) == {"derived risk vs Monte Carlo": len(pts)}


def test_prop3_confirms_the_papers_formula():
    entry = verdict("marion2025:prop3-linear")
    assert entry["verdict"] == "confirmed"
    assert [ev["rows"][0]["L"] for ev in per_setting(entry)] == [1, 2, 3, 4, 5, 6]


@pytest.mark.slow    # symbolic best linear risk up to L = 32
def test_exact_claims_hold_at_sampled_settings_of_their_domains():
    """One setting at a time (what ``map`` does): Prop. 3 and Cor. 2 at Sobol points of their
    domains, the edges ε = 0 and L = 1 among them."""
    for cid in ("marion2025:prop3-linear", "marion2025:cor2-bayes-limit"):
        c = get_claim(cid)
        for s in c.domain.sample(3, seed=1) + [c.domain.reference]:
            out = c.at(CTX, s)
            assert out.verdict == "confirmed", (cid, s, out.summary)


def test_a_setting_outside_the_domain_is_rejected_with_its_range():
    with pytest.raises(ValueError, match="L=0"):
        get_claim("marion2025:prop3-linear").at(CTX, {"L": 0, "gamma": 1.0, "eps": 0.5})


def test_prop3_cannot_see_a_dropped_eps_squared_at_eps_zero():
    """A setting where the statement and the mutant agree (ε = 0): confirmed there; the profile's
    other settings refute it (test_declared_mutation_is_refuted)."""
    c = get_claim("marion2025:prop3-linear")
    out = c.at(CTX, {"L": 3, "gamma": 1.0, "eps": 0.0}, **c.mutations["dropped term: ε²"]())
    assert out.verdict == "confirmed", out.summary


def test_risk_terms_named_for_mutations_are_unique():
    from verification.claims.marion2025 import TERMS, risk_term
    terms = [risk_term(name) for name in TERMS]
    assert len(set(terms)) == len(TERMS)


# -- declared mutations -----------------------------------------------------------------------
# claims whose declared mutations run in a few seconds at the quick profile; the others' are
# slow (each claim's fast can-fail test is above)
FAST = {"marion2025:prop3-linear", "marion2025:cor2-bayes-limit"}


def _cases(caught):
    for c in CLAIMS:
        for name, mut in (c.mutations or {}).items():
            if isinstance(mut, Missed) == caught:
                continue
            marks = [] if c.id in FAST else [pytest.mark.slow]
            yield pytest.param(c, name, id=f"{c.id}|{name}", marks=marks)


@pytest.mark.parametrize("claim,name", list(_cases(caught=True)))
def test_declared_mutation_is_refuted(claim, name):
    entry, _ = run_claim(claim, CTX, **claim.mutations[name]())
    assert entry["verdict"] == "refuted", f"{name}: {entry['summary']}"


@pytest.mark.parametrize("claim,name", list(_cases(caught=False)))
def test_declared_missed_mutation_is_still_missed(claim, name):
    """A mutation declared ``missed`` is still not refuted (and not an error): a check that
    learns to see it says so here, and its declaration moves to the caught ones."""
    entry, _ = run_claim(claim, CTX, **claim.mutations[name]())
    assert entry["verdict"] in ("confirmed", "inconclusive"), f"{name}: {entry['summary']}"


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_every_claim_declares_enough_mutations(claim):
    caught = [n for n, mut in (claim.mutations or {}).items() if not isinstance(mut, Missed)]
    need = 1 if claim.statistical else 3
    assert len(caught) >= need, claim.id
    if claim.statistical:     # the declared one is a dropped term of the formula or the flow
        assert any(n.startswith("dropped term") for n in caught), claim.id
    for mut in (claim.mutations or {}).values():
        assert not isinstance(mut, Missed) or mut.why.strip(), claim.id


def test_every_claim_declares_its_domain_and_points():
    for c in CLAIMS:
        assert c.domain.coordinates and c.points, c.id
    # the d → ∞ claims sweep d inside a setting: d is not their coordinate
    for cid in ("marion2025:cor2-bayes-limit", "marion2025:sgd-tracks-flow"):
        assert "d" not in get_claim(cid).domain.coordinates


def test_claims_live_in_section_modules():
    mods = {c.check.__module__.rsplit(".", 1)[-1] for c in CLAIMS}
    assert mods == {"sec3_risk", "sec5_dynamics", "sgd"}


# -- the paper's models on the full profile ---------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("claim_id", ["marion2025:thm5-convergence", "marion2025:sgd-tracks-flow",
                                      "marion2025:manifold-invariant", "marion2025:saddle",
                                      "marion2025:cor2-bayes-limit"])
def test_paper_models_are_confirmed_on_the_full_profile(claim_id):
    entry, _ = run_claim(get_claim(claim_id), Context(profile="full", device="cpu"))
    assert entry["verdict"] == "confirmed", entry["summary"]
