"""Each Sec. IV claim check of Sagitova et al. can fail: fed a model that breaks the claim's
hypothesis (or another activation in a role), it says 'refuted'."""

from theory.models.sagitova2026 import DiscretePrior
from verification import Context, get_claim, run_claim

CTX = Context(profile="quick", seed=0)


def verdict(cid, **kw):
    entry, outcome = run_claim(get_claim(cid), CTX, **kw)
    assert outcome.verdict != "error", outcome.evidence.get("traceback")
    return outcome.verdict


def test_softmax_gap_refutes_an_activation_that_reaches_bayes():
    assert verdict("sagitova2026:prop-iv3-softmax-gap", activation="b-softmax") == "refuted"


def test_softmax1_claim_can_confirm_and_refute():
    # B-softmax in softmax-1's role does reach zero risk: the check can say 'confirmed'
    assert verdict("sagitova2026:softmax1-noise", activation="b-softmax") == "confirmed"
    assert verdict("sagitova2026:softmax1-noise", activation="softmax") == "refuted"


def test_mixture_claim_refutes_swapped_activations():
    assert verdict("sagitova2026:mixture-directions", softmax="b-softmax", bsoftmax="softmax",
                   t_end=(1500.0, 300.0)) == "refuted"


def test_pruning_claim_refutes_when_every_head_is_needed():
    four = DiscretePrior([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0], [0.0, -3.0]], [0.25] * 4)
    assert verdict("sagitova2026:head-pruning", activations=("b-softmax",), prior=four) == "refuted"
