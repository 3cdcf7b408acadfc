"""A claim run on substituted inputs says so: its id carries the variant's name and its report
entry a provenance record (issue: the variant workflow)."""

import pytest

from theory.models.marion2025 import MODEL
from verification import get_claim, run


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
