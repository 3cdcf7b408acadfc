"""Figures fit to read: tick labels that do not overlap, found from the drawn text's extents
and thinned until none do. Every figure the suite writes (a report's, a map's) passes through
``fit_ticks`` before it is saved (``verification.tasks.render_png``)."""

from __future__ import annotations

__all__ = ["overlapping_tick_labels", "fit_ticks"]

PAD_PX = 2.0
"""Labels closer than this (in pixels) count as touching."""


def _visible_labels(axis, renderer, which: str) -> list:
    """The tick labels of ``axis`` that are drawn: non-empty, visible, inside the view."""
    lo, hi = sorted(axis.get_view_interval())
    locs = axis.get_minorticklocs() if which == "minor" else axis.get_majorticklocs()
    labels = axis.get_minorticklabels() if which == "minor" else axis.get_majorticklabels()
    return [(lab.get_text(), lab.get_window_extent(renderer)) for loc, lab in zip(locs, labels)
            if lo <= loc <= hi and lab.get_visible() and lab.get_text()]


def _overlaps(a, b) -> bool:
    return (a.x0 < b.x1 + PAD_PX and b.x0 < a.x1 + PAD_PX
            and a.y0 < b.y1 + PAD_PX and b.y0 < a.y1 + PAD_PX)


def _axis_overlaps(axis, renderer) -> list[tuple[str, str]]:
    drawn = _visible_labels(axis, renderer, "major") + _visible_labels(axis, renderer, "minor")
    return [(ta, tb) for i, (ta, a) in enumerate(drawn) for tb, b in drawn[i + 1:]
            if _overlaps(a, b)]


def _drawn(fig):
    """Draw ``fig`` on an Agg canvas (a bare Figure has none that draws); its renderer."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def overlapping_tick_labels(fig) -> list[tuple[str, str, str]]:
    """Every pair of tick labels of ``fig`` whose drawn extents overlap (or touch):
    [(axis, label, label)], ``axis`` as 'title: x' or 'title: y'. Draws the figure."""
    renderer = _drawn(fig)
    out = []
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            out += [(f"{ax.get_title() or 'axes'}: {name}", a, b)
                    for a, b in _axis_overlaps(axis, renderer)]
    return out


def fit_ticks(fig, rounds: int = 6) -> None:
    """Thin the tick labels of every axis of ``fig`` until none overlap: minor labels go
    first, then every other major tick, as often as needed (at most ``rounds`` times)."""
    from matplotlib.ticker import FixedLocator, NullFormatter
    for _ in range(rounds):
        renderer = _drawn(fig)
        crowded = [axis for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   if _axis_overlaps(axis, renderer)]
        if not crowded:
            return
        for axis in crowded:
            if _visible_labels(axis, renderer, "minor"):
                axis.set_minor_formatter(NullFormatter())
                continue
            lo, hi = sorted(axis.get_view_interval())
            shown = [t for t in axis.get_majorticklocs() if lo <= t <= hi]
            axis.set_major_locator(FixedLocator(shown[::2]))
