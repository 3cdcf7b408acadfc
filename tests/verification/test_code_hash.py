"""The code hash (``verification.codehash``): a claim's hash covers what it imports from the suite
(the claim API, theory, numerics) and not the other papers' claims nor the orchestration that
finds, schedules, runs and stores it; a claim run's key still counts ``verification.tasks``,
which builds the stored entry. (The hash against the declared layering:
tests/verification/test_layers.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from verification.codehash import import_closure

ROOT = Path(__file__).resolve().parents[2]


def test_code_hash_covers_the_claims_imports_and_not_the_other_papers():
    files = {str(p.relative_to(ROOT)) for p in import_closure("verification.claims.marion2025")}
    assert {"verification/checks/contract.py", "theory/models/marion2025.py",
            "numerics/sgd/direct.py"} <= files
    assert not any("sagitova2026" in f and f.startswith("verification/claims") for f in files)
    # what the claim computes with counts (the claim API: verification.layers); what finds,
    # schedules, runs and stores it and what writes the reports does not
    assert {"verification/declare.py", "verification/context.py"} <= files
    assert not {f"verification/{m}.py" for m in ("tasks", "engine", "store", "records", "guard",
                                                 "calibrate", "sweep", "cli", "runner", "report",
                                                 "catalogue", "userfiles", "__init__")} & files
    here = import_closure(__name__)          # a module outside the suite: its file + its imports
    assert Path(__file__) in here and ROOT / "verification" / "codehash.py" in here
    with pytest.raises(ValueError, match="no Python source"):
        import_closure("sys")


def test_a_claim_runs_key_counts_the_module_that_builds_its_entry(monkeypatch):
    """``verification.tasks`` turns an outcome into the stored entry (verdict, contract): an edit
    there keys every claim run anew, although the scheduling layer is not hashed."""
    import verification.codehash as codehash
    from verification.tasks import claim_key
    args = ("marion2025:thm1-risk", "verification.claims.marion2025.sec3_risk", "quick", 0,
            "cpu", None)
    before = claim_key(*args)
    real = codehash.code_hash
    monkeypatch.setattr(codehash, "code_hash",
                        lambda m: "edited" if m == "verification.tasks" else real(m))
    assert claim_key(*args) != before
