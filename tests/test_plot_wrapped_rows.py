"""Figures whose y tick labels wrap over lines make every row tall enough: no two tick labels overlap (the forest
and the substantive figure on the shared logs overlapped at the screen size before size_for counted the lines)."""

from __future__ import annotations

import warnings

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import tauk
import tauk.plot as tp
from tauk.stats import compare_all, summarize


def _overlaps(fig) -> list[tuple[str, str]]:
    FigureCanvasAgg(fig).draw()
    r = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        boxes = [(t.get_text(), t.get_window_extent(r)) for t in ax.get_yticklabels() if t.get_text()]
        if not any("\n" in b[0] for b in boxes):  # the row labels only (not a foot or a numeric axis)
            continue
        boxes.sort(key=lambda b: b[1].y0)
        out += [(a[0], b[0]) for a, b in zip(boxes, boxes[1:]) if a[1].y1 > b[1].y0 + 0.5]
    return out


@pytest.fixture(scope="module")
def shared_results(shared_data):
    return tauk.load(shared_data / "tau2", progress=False)


@pytest.mark.parametrize("size", [None, "single", "double"])
def test_wrapped_tick_labels_never_overlap(shared_results, size):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare_all(shared_results, k=1, adjust="holm")
        s = summarize(shared_results, by=("agent", "domain"), ci=None)
    for fig in (tp.forest(cmp, figsize=size), tp.substantive_estimates(s, figsize=size)):
        assert any("\n" in t.get_text() for ax in fig.axes for t in ax.get_yticklabels())  # the labels do wrap
        assert _overlaps(fig) == []
