"""The boundaries a paper states, declared on a claim (``@claim(boundaries=...)``): validated at
declaration, Dohmatob's taken from the theory module, drawn on a map's panels as contours; and a
map's own boundary points marked by kind (decided and replicated, or not)."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
import numpy as np
import pytest
import sympy as sp

from theory.models import dohmatob2025 as dm
from verification import Outcome
from verification.declare import REGISTRY, Claim, PaperBoundary, claim
from verification.domain import Domain, Interval
from verification.map_pages import boundary_kind, draw_pair, map_html, map_markdown
from verification.mapping import map_claim
from verification.paper_boundaries import validate_boundaries

a, b = sp.symbols("a b", positive=True)
DOMAIN = Domain({"x": Interval(0.1, 1.0, log=True), "y": Interval(0.0, 1.0),
                 "k": ["u", "v"]}, reference={"x": 0.3, "y": 0.5, "k": "u"})
LINE = PaperBoundary("y = x", b - a, {"x": a, "y": b}, where="above: one phase")


def test_a_valid_boundary_is_kept_and_evaluates_on_arrays():
    (kept,) = validate_boundaries(DOMAIN, [LINE])
    assert kept is LINE
    z = LINE(x=np.array([0.2, 0.5]), y=np.array([0.4, 0.1]))
    assert np.allclose(z, [0.2, -0.4])
    assert LINE.to_json() == {"statement": "y = x", "where": "above: one phase",
                              "expression": "-a + b", "coordinates": ["x", "y"]}


@pytest.mark.parametrize("make,message", [
    (lambda: PaperBoundary(" ", b - a, {"x": a, "y": b}), "statement"),
    (lambda: PaperBoundary("s", "b - a", {"x": a, "y": b}), "SymPy expression"),
    (lambda: PaperBoundary("s", b - a, {"x": a}), "not mapped to a coordinate"),
    (lambda: PaperBoundary("s", b - a, {}), "non-empty mapping"),
])
def test_a_malformed_boundary_is_refused_naming_what_is_wrong(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("boundary,message", [
    (PaperBoundary("z = x", b - a, {"x": a, "z": b}), r"\['z'\] are not ranged"),
    (PaperBoundary("k = x", b - a, {"x": a, "k": b}), r"\['k'\] are not ranged"),
    (PaperBoundary("y = x + 5", b - a - 5, {"x": a, "y": b}), "keeps one sign"),
    (PaperBoundary("log y = x", sp.log(b) - a, {"x": a, "y": b}), "at the reference"),
])
def test_a_boundary_off_the_domain_is_refused_at_declaration(boundary, message):
    if "reference" in message:        # log(y) − x is finite at y = 0.5: move the reference to 0
        dom = Domain({"x": Interval(0.1, 1.0), "y": Interval(0.0, 1.0)},
                     reference={"x": 0.3, "y": 0.0})
    else:
        dom = DOMAIN
    with pytest.raises(ValueError, match=message):
        validate_boundaries(dom, [boundary])
    with pytest.raises(ValueError, match="claim toy:bad"):     # before anything is registered
        claim("toy:bad", "-", "s", domain=dom.coordinates, reference=dom.reference,
              boundaries=[boundary])
    assert "toy:bad" not in REGISTRY


def test_repeated_statements_are_refused():
    with pytest.raises(ValueError, match="repeat"):
        validate_boundaries(DOMAIN, [LINE, LINE])


def test_dohmatobs_boundaries_are_the_theory_modules_beta_c_and_psi():
    import verification.claims.dohmatob2025.risk  # noqa: F401 - registers the claims
    for name in ("prop1-risk", "prop2-oracle"):
        for link in dm.LINKS:
            c = REGISTRY[f"dohmatob2025:{name}[link={link}]"]
            freezing, learnable = c.boundaries
            assert sp.simplify(freezing.expression - (dm.beta - dm.PAPER_BETA_C)) == 0
            assert learnable.expression.has(dm.PAPER_PSI)
    alpha = np.array([0.05, 0.1, 0.5])
    assert np.allclose(freezing(alpha=alpha, beta=np.sqrt(2 * alpha)), 0.0)
    # learnable where c = √(1 − γ²) > ψ: ψ(0.1, 0.3) = 0.483 < 0.8; ψ(0.5, 0.5) = 1.25 > 0.8
    assert learnable(alpha=0.1, beta=0.3, gamma=0.6) > 0 > learnable(alpha=0.5, beta=0.5,
                                                                      gamma=0.6)
    assert learnable(alpha=0.1, beta=1.0, gamma=np.sqrt(1 - 0.2)) == pytest.approx(0.0)


def _doc(boundary=(), points=None):
    points = points or [
        {"setting": {"x": 0.2, "y": 0.1, "k": "u"}, "verdict": "confirmed", "stage": "sample",
         "summary": "-"},
        {"setting": {"x": 0.8, "y": 0.9, "k": "u"}, "verdict": "refuted", "stage": "sample",
         "summary": "-"}]
    return {"claim": "toy:c", "statement": "s", "domain": DOMAIN.to_json(),
            "reference": DOMAIN.reference, "points": points, "boundary": list(boundary),
            "counterexample": None, "seed": 0, "profile": "quick", "seconds": 1.0,
            "complete": True, "paper_boundaries": [LINE.to_json()]}


def _panel(doc, boundaries=(LINE,)):
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    draw_pair(fig, doc, "x", "y", boundaries=boundaries)
    return fig.axes[0]


def test_a_panel_draws_the_papers_boundary_where_it_is():
    ax = _panel(_doc())
    labels = [h.get_label() for h in ax.get_legend().legend_handles]
    assert any(t.startswith("paper: y = x") for t in labels)
    (contour,) = [c for c in ax.collections if type(c).__name__.endswith("ContourSet")]
    xy = np.concatenate([p.vertices for p in contour.get_paths()])
    assert len(xy) > 10 and np.allclose(xy[:, 1], xy[:, 0], atol=1e-2)   # on y = x


def test_a_coordinate_the_panel_hides_is_named_fixed_or_reference_in_the_legend():
    c, d = sp.symbols("c d", positive=True)
    dom = Domain({"x": Interval(0.1, 1.0), "y": Interval(0.0, 1.0), "z": Interval(0.0, 1.0)},
                 reference={"x": 0.3, "y": 0.5, "z": 0.25})
    plane = PaperBoundary("y = x + z", d - a - c, {"x": a, "y": d, "z": c})
    validate_boundaries(dom, [plane])
    pts = [{"setting": {"x": 0.2, "y": 0.1, "z": z}, "verdict": "confirmed"} for z in (0.1, 0.4)]
    doc = {**_doc(points=pts), "domain": dom.to_json(), "reference": dom.reference}
    labels = [t.get_text() for t in _panel(doc, (plane,)).get_legend().get_texts()]
    assert "paper: y = x + z\nat z = 0.25 (reference)" in labels
    doc["points"] = [{"setting": {"x": 0.2, "y": 0.1, "z": 0.4}, "verdict": "confirmed"}]
    labels = [t.get_text() for t in _panel(doc, (plane,)).get_legend().get_texts()]
    assert "paper: y = x + z\nat z = 0.4 (fixed)" in labels


def test_a_boundary_that_misses_the_panel_is_not_drawn():
    far = PaperBoundary("y = x + 5", b - a - 5, {"x": a, "y": b})
    ax = _panel(_doc(), (far,))
    assert not [c for c in ax.collections if type(c).__name__.endswith("ContourSet")]
    assert not any(isinstance(h, Line2D) and h.get_label().startswith("paper")
                   for h in ax.get_legend().legend_handles)


SIDE = {"seeds": [1, 2], "verdicts": ["refuted", "refuted"], "replicated": True}
KINDS = {
    "decided": {"between": ["confirmed", "refuted"], "replication": [
        {**SIDE, "verdicts": ["confirmed", "confirmed"]}, SIDE]},
    "inconclusive": {"between": ["inconclusive", "refuted"], "replication": [SIDE, SIDE]},
    "unreplicated": {"between": ["confirmed", "refuted"], "replication": [
        {**SIDE, "verdicts": ["confirmed", "inconclusive"], "replicated": False}, SIDE]},
    "error": {"between": ["confirmed", "refuted"], "error_between": "boom"}}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_boundary_points_kind_says_whether_both_sides_are_decided_and_kept(kind):
    assert boundary_kind(KINDS[kind]) == kind
    assert boundary_kind({"between": ["confirmed", "refuted"]}) == "unreplicated"  # never tried


def test_boundary_kinds_are_marked_apart_on_the_panel_and_named_in_the_pages():
    rows = [{"setting": {"x": 0.1 + 0.2 * i, "y": 0.5, "k": "u"}, "bracket": [],
             "resolution": [0.02, None], **KINDS[k]} for i, k in enumerate(KINDS)]
    doc = _doc(rows)
    ax = _panel(doc)
    labels = {c.get_label() for c in ax.collections}
    assert {"boundary: both sides decided and replicated", "boundary: a side inconclusive",
            "boundary: a side not kept at another seed", "boundary: an error between"} <= labels
    md = map_markdown(doc, [])
    assert "| decided | 0.02 / – | confirmed: 1 confirmed, 2 confirmed; refuted: 1 refuted, " \
           "2 refuted |" in md
    assert "- y = x: above: one phase" in md
    assert "1 decided" in map_html(doc, {}) and "1 unreplicated" in map_html(doc, {})


def test_a_map_records_each_boundarys_kind_and_the_papers_boundaries(tmp_path):
    x = sp.Symbol("x")
    dom = Domain({"x": (0.0, 1.0)}, reference={"x": 0.0})
    half = PaperBoundary("x = 1/2", x - sp.Rational(1, 2), {"x": x})
    toy = Claim("toymap:kinds", "toymap", "-", "s",
                lambda ctx, x: Outcome("refuted" if x > 0.5 else "inconclusive" if x > 0.3
                                       else "confirmed", f"x={x}"),
                domain=dom, boundaries=validate_boundaries(dom, [half]))
    doc = map_claim(toy, points=16, seed=0, out=tmp_path / "map", figures=False, workers=0)
    assert doc["paper_boundaries"] == [half.to_json()]
    kinds = {b["kind"] for b in doc["boundary"]}
    assert kinds == {"inconclusive"}           # confirmed | inconclusive | refuted: two, both
    assert all(b["to_decide"] for b in doc["boundary"])         # say what the side needs
    n = doc["judgements"]         # every bracket side (and refutation shrunk) at 2 more seeds
    assert n["map_seed"] == len(doc["points"])
    sides = len({str(s) for b in doc["boundary"] for s in b["bracket"]})
    assert n["replicate"] % 2 == 0 and n["replicate"] >= 2 * sides
