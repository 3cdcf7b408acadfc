"""The claim API (``verification.declare``, ``verification.catalogue``): every registered claim
has the id its paper's spec lists, a label and a statement; a claim run on substituted inputs
(``Claim.variant``) says so: its id carries the variant's name and its report entry a provenance
record."""

from pathlib import Path

import pytest

from theory.models.marion2025 import MODEL
from verification import get_claim, run
from verification.catalogue import claims_for, source_of


def test_every_registered_claim_has_a_spec_id_and_label():
    spec = Path(__file__).resolve().parents[3] / "shared" / "spec"
    for c in claims_for():
        assert c.label and c.statement
        if spec.exists() and source_of(c) == "built-in":   # ids are the ones the paper's spec lists
            assert f"`{c.id.split('[')[0]}`" in (spec / f"{c.paper}.md").read_text(), c.id
    claims = claims_for("marion2025")
    ids = {c.id for c in claims}
    assert ids == {"marion2025:thm1-risk", "marion2025:manifold-invariant", "marion2025:saddle",
                   "marion2025:prop3-linear", "marion2025:cor2-bayes-limit",
                   "marion2025:thm5-convergence", "marion2025:sgd-tracks-flow"}


def test_a_variant_is_named_and_traced_in_its_report_entry(tmp_path):
    paper = get_claim("marion2025:manifold-invariant")
    variant = paper.variant("same-model", model=MODEL)
    assert variant.id == "marion2025:manifold-invariant@same-model"
    assert paper.provenance is None and "@" not in paper.id
    report = run([paper, variant], show=False, out=tmp_path, figures=False)
    own, var = report["claims"]
    assert "provenance" not in own
    assert var["id"] == variant.id and var["provenance"]["claim"] == paper.id
    assert var["provenance"]["substituted"] == {"model": "marion2025"}
    assert var["provenance"]["sources"][0].endswith("theory/models/marion2025.py")
    assert var["verdict"] == own["verdict"]          # the same model: the same verdict


def test_variant_inputs_are_checked():
    paper = get_claim("marion2025:manifold-invariant")
    with pytest.raises(ValueError, match=r"unknown input\(s\) \['modle'\]; allowed: .*'model'"):
        paper.variant(modle=MODEL)
    with pytest.raises(ValueError, match="give the substituted inputs"):
        paper.variant()
    with pytest.raises(ValueError, match="variant name"):
        paper.variant("a b", model=MODEL)
