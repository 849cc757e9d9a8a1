"""tauk.plot.leaderboard_ranks: ranked rows with intervals, tie groups shaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import tauk
import tauk.plot as tp
from tauk.errors import TaukError
from tauk.leaderboard import analyze, board_from_runs


@pytest.fixture(scope="module")
def sample():
    runs = board_from_runs(tauk.load("data"))
    return analyze(runs.board, trajectories=runs.trajectories, tasks=runs.tasks)


def _bands(ax) -> int:
    return sum(1 for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0 and p.zorder == 0)


def test_one_panel_per_domain_with_one_band_per_tie_group(sample):
    fig = tp.leaderboard_ranks(sample.ranking)
    f = sample.ranking.to_frame()
    assert [a.get_title(loc="left") for a in fig.axes[:2]] == ["airline", "retail"]
    for ax, dom in zip(fig.axes[:2], ("airline", "retail")):
        assert _bands(ax) == f.filter(domain=dom)["tier"].max()
        assert [t.get_text() for t in ax.get_yticklabels()] == f.filter(domain=dom)["submission_id"].to_list()
        bold = [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
        assert bold == f.filter(domain=dom, possibly_best=True)["submission_id"].to_list()
    text = " ".join(t.get_text() for t in fig.findobj(Text))
    assert "95% interval" in text and "Welch" in text and "1 [1, 1]" in text
    paired = tp.leaderboard_ranks(sample.ranking, paired=True)
    assert "paired score test" in " ".join(" ".join(t.get_text() for t in paired.findobj(Text)).split())


@pytest.mark.parametrize("size", ["single", "double"])
def test_paper_sizes_keep_text_inside_and_legible(sample, size):
    fig = tp.leaderboard_ranks(sample.ranking, figsize=size)
    assert fig.get_size_inches()[0] == pytest.approx(tp.FIGSIZES[size])
    FigureCanvasAgg(fig).draw()
    r = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    for t in fig.findobj(Text):
        if not (t.get_visible() and t.get_text().strip()):
            continue
        assert t.get_fontsize() >= tp.MIN_FONT_SIZE, t.get_text()[:30]
        bb = t.get_window_extent(r)
        assert bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= W + 1 and bb.y1 <= H + 1, t.get_text()[:40]


def test_untrusted_names_and_bad_input(tmp_path: Path):
    doc = {"model_name": "$\\alpha$ M|2\nx", "model_organization": "o", "submitting_organization": "o",
           "submission_date": "2026-01-01", "results": {"airline": {"pass_1": 42.0, "pass_2": 27.3, "pass_3": 22.0,
                                                                    "pass_4": 20.0}}}  # fmt: skip
    (tmp_path / "evil_o_2026-01-01.json").write_text(json.dumps(doc))
    fig = tp.leaderboard_ranks(analyze(tmp_path).ranking)
    FigureCanvasAgg(fig).draw()  # mathtext in a label would fail here
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 1 and "\n" not in labels[0] and "$" in labels[0]
    with pytest.raises(TaukError, match="domain_ranking"):
        tp.leaderboard_ranks(object())


@pytest.mark.parametrize("size", [None, "single", "double"])
def test_shared_board_ranks_labels_are_whole_and_distinct(shared_data: Path, size):
    """Labels keep what tells rows apart (issue 27, Build 4): on the shared leaderboard no tick label is cut in the
    middle ("Qwen3-Max-Th…king-Preview" before), the labels of a panel are distinct, and they stay on the canvas."""
    a = analyze(shared_data / "leaderboard")
    fig = tp.leaderboard_ranks(a.ranking, figsize=size)
    FigureCanvasAgg(fig).draw()
    f = a.ranking.to_frame()
    models = set(f["model"].drop_nulls().to_list()) | {str(s).split("_", 1)[0] for s in f["submission_id"]}
    drawn = 0
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_yticklabels()]
        if not labels:
            continue
        drawn += len(labels)
        assert not any("…" in s for s in labels), [s for s in labels if "…" in s]
        assert len(set(labels)) == len(labels), labels
        # a wrapped label is the name, every character kept (a line broken at a space drops that space)
        whole = [s.replace("\n", "").replace(" ", "") for s in labels]
        names = {m.replace(" ", "") for m in models}
        assert all(any(w == m or w.startswith(m) for m in names) for w in whole), whole
    assert drawn == f.filter(modality="text").height  # the default: text rows
    assert any(s.replace("\n", "") == "Qwen3-Max-Thinking-Preview" for ax in fig.axes for s in
               (t.get_text() for t in ax.get_yticklabels()))
    tight = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    assert tight.x0 >= -0.01 and tight.y0 >= -0.01 and tight.x1 <= w + 0.01 and tight.y1 <= h + 0.01
