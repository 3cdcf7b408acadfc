"""Figures fit to read: no overlapping tick labels (found from the drawn text's extents), the
reference drawn above the counterexample, fixed coordinates named as fixed, and every committed
map folder holding what its map.json lists (map.html included)."""

from __future__ import annotations

import json
from pathlib import Path

from matplotlib.figure import Figure
import numpy as np
import pytest

from verification.figures import fit_ticks, overlapping_tick_labels
from verification.map_pages import _pairs_of, draw_pair
from verification.tasks import render_png

ROOT = Path(__file__).resolve().parents[2]
MAPS = sorted((ROOT / "docs" / "maps").glob("*/map.json"))


def _figure() -> Figure:
    return Figure(figsize=(6.4, 4.2), layout="constrained")     # as render_png draws


def _crowded(fig) -> None:
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_xticks(np.linspace(0, 1, 41))
    ax.set_xticklabels([f"{v:.3f}" for v in np.linspace(0, 1, 41)])


def test_overlap_is_found_from_the_drawn_extents_and_thinned_away():
    fig = _figure()
    _crowded(fig)
    assert overlapping_tick_labels(fig), "41 labels on 6 inches must collide"
    fit_ticks(fig)
    assert overlapping_tick_labels(fig) == []
    assert len([t for t in fig.axes[0].get_xticklabels() if t.get_text()]) >= 3


def test_every_figure_the_suite_renders_is_fitted():
    drawn = {}
    render_png({"crowded": lambda fig: (_crowded(fig), drawn.setdefault("fig", fig))})
    assert overlapping_tick_labels(drawn["fig"]) == []


def test_the_maps_are_committed():
    assert len(MAPS) >= 5


@pytest.mark.parametrize("path", MAPS, ids=[p.parent.name for p in MAPS])
def test_committed_map_folder_holds_what_its_map_json_lists(path):
    doc = json.loads(path.read_text())
    folder = path.parent
    assert "map.html" in doc["files"] and (folder / "map.html").is_file()
    missing = [f for f in doc["files"] if not (folder / f).is_file()]
    assert not missing, f"{folder.name}: map.json lists {missing}, absent"
    committed = sorted(p.name for p in (folder / "figures").glob("*.png"))
    if committed:
        assert committed == sorted(f"{x}-{y}.png" for x, y in _pairs_of(doc))


PANELS = [(p, x, y) for p in MAPS for x, y in _pairs_of(json.loads(p.read_text()))
          if (p.parent / "figures" / f"{x}-{y}.png").is_file()]


@pytest.mark.parametrize("path,x,y", PANELS, ids=[f"{p.parent.name}/{x}-{y}" for p, x, y in PANELS])
def test_committed_map_figures_have_no_overlapping_tick_labels(path, x, y):
    from verification.catalogue import load_all
    doc = json.loads(path.read_text())
    registered = load_all().get(doc["claim"])          # drawn as committed: the paper's curves
    fig = _figure()
    draw_pair(fig, doc, x, y, boundaries=registered.boundaries if registered else ())
    fit_ticks(fig)
    assert overlapping_tick_labels(fig) == []
    for axis in (fig.axes[0].xaxis, fig.axes[0].yaxis):     # thinned, not emptied
        assert len([t for t in axis.get_majorticklabels() if t.get_text()]) >= 2


def _doc(points, counterexample=None):
    coords = {"a": {"kind": "real", "lo": 0.1, "hi": 1.0, "log": True},
              "b": {"kind": "real", "lo": 0.0, "hi": 1.0},
              "c": {"kind": "integer", "lo": 1, "hi": 8}, "d": {"kind": "real", "lo": 0, "hi": 1}}
    return {"claim": "p:c", "domain": {"coordinates": coords, "where": []},
            "reference": {"a": 0.3, "b": 0.5, "c": 4, "d": 0.5},
            "points": [{"setting": s, "verdict": "confirmed"} for s in points],
            "boundary": [], "counterexample": counterexample}


def test_a_coordinate_with_one_value_is_named_fixed_and_the_reference_is_drawn_above_the_star():
    pts = [{"a": 0.2, "b": 0.1, "c": 4, "d": 0.1}, {"a": 0.5, "b": 0.9, "c": 4, "d": 0.7}]
    ce = {"setting": {"a": 0.3, "b": 0.5, "c": 4, "d": 0.5}, "summary": "", "judgements": 1}
    fig = _figure()
    draw_pair(fig, _doc(pts, ce), "a", "b")
    ax = fig.axes[0]
    assert ax.get_title() == "p:c: a × b\n(projected over d; c = 4 fixed)"
    z = {c.get_label(): c.get_zorder() for c in ax.collections}
    assert z["reference"] > z["minimal counterexample"]
    ref = next(c for c in ax.collections if c.get_label() == "reference")
    assert ref.get_facecolor().size == 0 or ref.get_facecolor()[0][3] == 0   # hollow: star shows
