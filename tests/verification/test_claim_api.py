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


# --- a claim over its domain --------------------------------------------------------------------
def _domain_claim(verdict_at, points):
    from verification.declare import Claim, Outcome
    from verification.domain import Domain

    seen = []

    def check(ctx, a, k, scale=1.0):
        seen.append((a, k, ctx.alpha, dict(ctx.setting)))
        z = ctx.z(2, "pair")
        return Outcome(verdict_at(a, k), f"a={a}", {"z": z}, {"a": (a * scale, 0.0)})

    dom = Domain({"a": (0.0, 1.0), "k": (1, 4)})
    return Claim("toy:domain", "toy", "toy", "toy", check, domain=dom,
                 points={"quick": tuple(points), "full": tuple(points)}), seen


def test_a_profile_judges_its_points_each_at_alpha_over_n_and_combines_them():
    from verification.context import Context
    from verification.tasks import run_claim
    pts = [{"a": 0.1, "k": 1}, {"a": 0.5, "k": 2}, {"a": 0.9, "k": 4}]
    claim, seen = _domain_claim(lambda a, k: "confirmed", pts)
    entry, outcome = run_claim(claim, Context(alpha=3e-4))
    assert [s[:2] for s in seen] == [(0.1, 1), (0.5, 2), (0.9, 4)]
    assert all(abs(s[2] - 1e-4) < 1e-15 for s in seen)              # α/n each
    assert entry["contract"]["alpha"] == pytest.approx(3e-4)          # the claim's α in total
    assert entry["contract"]["comparisons"] == 6
    assert entry["verdict"] == "confirmed"
    assert entry["summary"].startswith("confirmed at all 3 settings of the domain")
    assert entry["domain"]["settings"] == pts and entry["domain"]["reference"] == {"a": 0.0, "k": 1}
    assert set(outcome.tracked) == {"s0:a", "s1:a", "s2:a"}
    # draws differ per setting: the setting is part of every derived seed
    assert len({Context(setting=tuple(sorted(p.items()))).claim_seed("x") for p in pts}) == 3


@pytest.mark.parametrize("verdicts, combined", [
    (("confirmed", "refuted", "inconclusive"), "refuted"),
    (("confirmed", "inconclusive", "confirmed"), "inconclusive"),
    (("error", "inconclusive", "confirmed"), "error"),
])
def test_settings_combine_refuted_first_and_quote_the_one_nearest_the_reference(verdicts, combined):
    from verification.context import Context
    from verification.tasks import run_claim
    pts = [{"a": 0.9, "k": 4}, {"a": 0.5, "k": 2}, {"a": 0.1, "k": 1}]
    by_a = {p["a"]: v for p, v in zip(pts, verdicts)}
    claim, _ = _domain_claim(lambda a, k: by_a[a], pts)
    entry, _ = run_claim(claim, Context())
    assert entry["verdict"] == combined
    if combined == "refuted":
        assert "refuted at 1 of 3 settings of the domain (holds at 33 %)" in entry["summary"]
        assert "a=0.5" in entry["summary"]


def test_one_setting_is_validated_and_judged_at_the_whole_alpha():
    from verification.context import Context
    claim, seen = _domain_claim(lambda a, k: "confirmed", [{"a": 0.1, "k": 1}])
    claim.at(Context(alpha=1e-3), {"a": 0.3, "k": 3}, scale=2.0)
    assert seen[-1][:3] == (0.3, 3, 1e-3) and seen[-1][3] == {"a": 0.3, "k": 3}
    with pytest.raises(ValueError, match=r"k=7; allowed: \{1, …, 4\}"):
        claim.at(Context(), {"a": 0.3, "k": 7})


def test_a_declared_domain_is_checked_when_the_claim_is_declared():
    from verification.declare import claim
    with pytest.raises(ValueError, match="does not take the domain's coordinate"):
        claim("toy:missing-arg", "toy", "toy", domain={"a": (0.0, 1.0)})(lambda ctx: None)
    with pytest.raises(ValueError, match=r"points\['quick'\]: a=2.0"):
        claim("toy:bad-point", "toy", "toy", domain={"a": (0.0, 1.0)},
              points=[{"a": 2.0}])(lambda ctx, a: None)
    with pytest.raises(ValueError, match="allowed: exactly"):
        claim("toy:bad-profile", "toy", "toy", domain={"a": (0.0, 1.0)},
              points={"quick": [{"a": 0.5}]})(lambda ctx, a: None)


def test_map_refuses_a_claim_without_a_domain():
    from verification.declare import Claim, Outcome
    from verification.mapping import map_claim
    bare = Claim("toy:bare", "toy", "toy", "toy", lambda ctx: Outcome("confirmed", ""))
    with pytest.raises(ValueError, match="declares no domain"):
        map_claim(bare, points=4)


def test_a_coordinate_is_a_setting_never_an_override():
    from verification.context import Context
    claim, _ = _domain_claim(lambda a, k: "confirmed", [{"a": 0.1, "k": 1}])
    with pytest.raises(ValueError, match=r"\['k'\] are coordinates of the claim's domain"):
        claim.variant("k5", k=5)
    with pytest.raises(ValueError, match=r"\['a'\] are coordinates"):
        claim.at(Context(), {"a": 0.3, "k": 3}, a=0.5)
    assert claim.variant("scaled", scale=2.0).id == "toy:domain@scaled"
