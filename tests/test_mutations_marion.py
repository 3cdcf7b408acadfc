"""Every mutation a Marion et al. claim declares (``@claim(mutations=...)``) is refuted by the
claim's check at the quick profile; and every claim declares enough of them (three for an exact
claim; one beyond the two generic ones for a statistical claim on the check library)."""

import pytest

from verification import Context, claims_for, run_claim

CTX = Context(profile="quick", seed=0, device="cpu")
CLAIMS = claims_for("marion2025")

# declared mutations that take more than ~20 s at the quick profile
SLOW = {("marion2025:manifold-invariant", "added term: value x_ℓᵀ(v + ½k)"),
        *{("marion2025:thm5-convergence", n) for n in ("sign flip: label y = −x_Jᵀv*",
                                                         "dropped term: label (y = εξ)",
                                                         "dropped term: signal mean √(d/2)k*")},
        ("marion2025:sgd-tracks-flow", "wrong factor: the ODE's time scale ×1.25 "
                                       "(right-hand side ×1.25)")}
# (sgd-tracks-flow's dropped term, ~70 s, stays in the fast tier: it is the claim's fast
# can-fail test; the weaker wrong-γ test in test_claims_marion.py is the slow one)


def _cases():
    for c in CLAIMS:
        for name in c.mutations or {}:
            marks = [pytest.mark.slow] if (c.id, name) in SLOW else []
            yield pytest.param(c, name, id=f"{c.id}|{name}", marks=marks)


@pytest.mark.parametrize("claim,name", list(_cases()))
def test_declared_mutation_is_refuted(claim, name):
    entry, _ = run_claim(claim, CTX, **claim.mutations[name]())
    assert entry["verdict"] == "refuted", f"{name}: {entry['summary']}"


def test_slow_list_names_declared_mutations():
    declared = {(c.id, n) for c in CLAIMS for n in c.mutations or {}}
    assert SLOW <= declared


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_every_claim_declares_enough_mutations(claim):
    need = 1 if claim.statistical else 3
    assert len(claim.mutations or {}) >= need, claim.id
    if claim.statistical:     # the declared one is a dropped term of the formula or the flow
        assert any(n.startswith("dropped term") for n in claim.mutations), claim.id


def test_claims_live_in_section_modules():
    mods = {c.check.__module__.rsplit(".", 1)[-1] for c in CLAIMS}
    assert mods == {"sec3_risk", "sec5_dynamics", "sgd"}
