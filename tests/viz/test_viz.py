"""The dashboard's pure parts: highlighting (escaping first), heatmap binning, curve bands, the
paired scatter, the turn timeline, and retriever runs turned into a dataset."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tempo_eval.compare.statistics import bootstrap_ci
from tempo_eval.core.focus import YearSpan
from tempo_eval.io import trec_dataset as retrieval
from tempo_eval.io.errors import InputError
from tempo_eval.viz.curves import curve_bands, ndcg_curves_figure
from tempo_eval.viz.heatmap import (
    auto_bin_width,
    bin_label,
    bin_start,
    cell_from_selection,
    heatmap_figure,
    year_heatmap,
)
from tempo_eval.viz.highlight import (
    Mark,
    claim_marks,
    locate,
    render_marks,
    year_marks,
)
from tempo_eval.viz.scatter import paired_scatter, paired_scores
from tempo_eval.viz.timeline import turn_timeline, windows_frame
from tests.support.paths import ROOT


def highlight_claims(text: str, claims: list[dict]) -> str:
    """`text` as safe HTML with each located claim coloured by its verdict."""
    marks, _missing = claim_marks(text, claims)
    return render_marks(text, marks)


SAMPLE = ROOT / "data" / "sample"


# ---- highlighting ---------------------------------------------------------------------------

def test_user_html_is_escaped_before_claims_are_wrapped() -> None:
    answer = "The wall fell in 1989. <script>alert(1)</script> <img src=x onerror=alert(1)>"
    out = highlight_claims(answer, [{"claim": "The wall fell in 1989.", "verdict": "SUPPORTED"}])
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert out.startswith('<mark class="te-SUPPORTED"')


def test_a_claim_made_of_markup_is_highlighted_as_text() -> None:
    answer = "Before <b>bold</b> after."
    out = highlight_claims(answer, [{"claim": "<b>bold</b>", "verdict": "CONTRADICTED", "evidence": '"><script>'}])
    assert "&lt;b&gt;bold&lt;/b&gt;</mark>" in out
    assert 'title="Contradicted — evidence: &quot;&gt;&lt;script&gt;"' in out


def test_repeated_claims_take_successive_occurrences() -> None:
    text = "It rained. It rained."
    marks, missing = claim_marks(text, [{"claim": "It rained.", "verdict": "SUPPORTED"}] * 2)
    assert [(m.start, m.end) for m in marks] == [(0, 10), (11, 21)]
    assert missing == []


def test_a_respaced_claim_is_located_and_a_paraphrase_is_reported_missing() -> None:
    text = "Apollo 11 landed\non 20 July 1969."
    assert locate(text, "apollo 11 landed on 20 july 1969.") == (0, len(text))
    _, missing = claim_marks(text, [{"claim": "The Moon landing was in 1969", "verdict": "SUPPORTED"}])
    assert missing == [0]


def test_overlapping_marks_keep_the_first() -> None:
    out = render_marks("abcdef", [Mark(0, 4, "SUPPORTED"), Mark(2, 6, "CONTRADICTED")])
    assert out.count("<mark") == 1 and out.endswith("ef")


def test_year_marks_say_whether_each_span_is_in_the_contexts() -> None:
    spans = [YearSpan(0, 4, "1987", 1987, 1987, "year"), YearSpan(9, 13, "1989", 1989, 1989, "year")]
    marks = year_marks(spans, grounded={1989})
    assert [m.kind for m in marks] == ["ungrounded", "grounded"]
    assert [m.kind for m in year_marks(spans)] == ["year", "year"]


# ---- heatmaps --------------------------------------------------------------------------------

@pytest.mark.parametrize(("years", "width"), [([1989, 1991], 1), ([1914, 1989], 10), ([476, 2022], 100), ([], 1)])
def test_bins_widen_with_the_span_of_years(years: list[int], width: int) -> None:
    assert auto_bin_width(years) == width


def test_bin_labels_and_starts() -> None:
    assert bin_start(476, 10) == 470 and bin_label(470, 10) == "470s"
    assert bin_label(1900, 100) == "1900–1999" and bin_label(1989, 1) == "1989"


def test_heatmap_counts_each_item_once_per_cell_and_keeps_its_keys() -> None:
    items = [("q1", {1989, 1990}, {1989}), ("q2", {1989}, {2001}), ("q3", set(), {1999}), ("q4", {1812}, {1815})]
    data = year_heatmap(items, width=10)
    assert data.n_items == 3 and data.n_without_years == 1
    # the same bins on both axes (issue 24.12): the diagonal is a straight line
    assert data.row_labels == data.col_labels == ["1810s", "1980s", "1990s", "2000s"]
    assert data.keys_for("1980s", "1980s") == ["q1"]
    assert data.keys_for("1990s", "1980s") == ["q1"]
    assert data.keys_for("1980s", "2000s") == ["q2"]
    assert int(data.counts.sum()) == 4
    assert data.diagonal_share == pytest.approx(2 / 3)


def test_heatmap_rejects_an_unknown_bin_width() -> None:
    with pytest.raises(ValueError, match="width"):
        year_heatmap([("a", {1}, {1})], width=5)


def test_empty_heatmap_draws_a_note_instead_of_failing() -> None:
    fig = heatmap_figure(year_heatmap([]), row_title="a", col_title="b")
    assert fig.layout.annotations[0].text.startswith("No item")


def test_cell_selection_is_read_from_streamlits_event() -> None:
    event = {"selection": {"points": [{"x": "1980s", "y": "1990s", "z": 3}]}}
    assert cell_from_selection(event) == ("1990s", "1980s")
    assert cell_from_selection({"selection": {"points": []}}) is None


# ---- curves, scatter, timeline ----------------------------------------------------------------

def test_curve_bands_equal_bootstrap_ci_per_cutoff_and_drop_nan_queries() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.random((200, 4))
    matrix[5, 2] = np.nan
    bands = curve_bands({"a": matrix}, n_resamples=500, seed=7)
    kept = np.delete(matrix, 5, axis=0)
    for j in range(4):
        low, high = bootstrap_ci(kept[:, j], n_resamples=500, seed=7)
        row = bands.iloc[j]
        assert (row["low"], row["high"]) == (low, high)
        assert row["mean"] == pytest.approx(kept[:, j].mean())
        assert row["n_queries"] == 199


def test_curves_figure_has_a_band_and_a_line_per_run() -> None:
    bands = curve_bands({"bm25": np.full((3, 5), 0.5), "dense": np.full((3, 5), 0.7)})
    fig = ndcg_curves_figure(bands)
    assert [t.name for t in fig.data] == ["bm25 band", "bm25", "dense band", "dense"]


def test_hostile_run_names_are_escaped_in_the_legend_and_hover_text() -> None:
    hostile = '<a href="http://evil.example">x</a><br>'
    bands = curve_bands({hostile: np.full((3, 2), 0.5), "dense": np.full((3, 2), 0.7)})
    fig = ndcg_curves_figure(bands, title="<b>t</b>")
    rendered = [t.name for t in fig.data] + [t.hovertemplate or "" for t in fig.data] + [fig.layout.title.text]
    assert not any("<a " in text or "<br><" in text for text in rendered)
    assert fig.data[1].name == '&lt;a href="http://evil.example"&gt;x&lt;/a&gt;&lt;br&gt;'
    assert fig.layout.title.text == "&lt;b&gt;t&lt;/b&gt;"


def test_scatter_keeps_raw_query_ids_for_selection_and_escapes_the_hover_text() -> None:
    ids = ['a&b', '<q>', 'say "hi"', "it's"]
    pairs = paired_scores(pd.Series({q: 0.1 * i for i, q in enumerate(ids)}), pd.Series(dict.fromkeys(ids, 0.6)))
    fig = paired_scatter(pairs, name_a="A", name_b="B", metric="ndcg@10")
    trace = next(t for t in fig.data if len(t.x))
    assert sorted(trace.customdata) == sorted(ids)
    assert "query &lt;q&gt;" in list(trace.text) and "query a&amp;b" in list(trace.text)
    assert "%{text}" in trace.hovertemplate and "%{customdata}" not in trace.hovertemplate


def test_paired_scores_align_on_queries_scored_by_both() -> None:
    a = pd.Series({"q1": 0.5, "q2": 1.0, "q3": math.nan, "q4": 0.2})
    b = pd.Series({"q1": 0.5, "q2": 0.4, "q4": 0.9, "q5": 1.0})
    pairs = paired_scores(a, b)
    assert list(pairs["query_id"]) == ["q4", "q1", "q2"]
    assert list(pairs["outcome"]) == ["B better", "tie", "A better"]
    fig = paired_scatter(pairs, name_a="<b>A</b>", name_b="B", metric="ndcg@10")
    assert "&lt;b&gt;" in fig.layout.xaxis.title.text


def test_timeline_frame_reads_turn_faithfulness_windows() -> None:
    windows = [
        {"index": 1, "interactions": [0, 0], "turns": [0, 1], "score": 1.0,
         "counts": {"claims": 2, "yes": 2, "no": 0, "idk": 0}, "reason_code": "scored"},
        {"index": 2, "interactions": [0, 1], "turns": [0, 1, 2, 3], "score": 0.5,
         "counts": {"claims": 4, "yes": 2, "no": 2, "idk": 0}, "reason_code": "scored"},
    ]
    frame = windows_frame(windows)
    assert list(frame["window"]) == [1, 2] and list(frame["interactions"]) == ["1", "1–2"]
    assert list(frame["turns"]) == ["1, 2", "1, 2, 3, 4"]
    fig = turn_timeline(frame, threshold=0.5)
    assert list(fig.data[0].y) == [1.0, 0.5]


def test_a_window_that_scores_zero_draws_a_visible_labelled_bar() -> None:
    from tempo_eval.viz.timeline import ZERO_BAR

    windows = [
        {"index": i, "interactions": [0, i - 1], "turns": [0, 1], "score": score, "counts": {"claims": 1}}
        for i, score in ((1, 0.0), (2, 1.0), (3, math.nan))
    ]
    fig = turn_timeline(windows_frame(windows))
    assert list(fig.data[0].y) == [ZERO_BAR, 1.0, ZERO_BAR] and ZERO_BAR > 0
    assert list(fig.data[0].text) == ["0.00", "1.00", "n/a"]


# ---- retriever runs as a dataset ----------------------------------------------------------------

def _sample_runs():
    return retrieval.load_runs_dataset(
        [(name, (SAMPLE / name).read_bytes()) for name in ("run_bm25.trec", "run_dense.trec")],
        ("qrels.txt", (SAMPLE / "qrels.txt").read_bytes()),
        queries=("temporal_qa.csv", (SAMPLE / "temporal_qa.csv").read_bytes()),
        corpus=("corpus.jsonl", (SAMPLE / "corpus.jsonl").read_bytes()),
    )


def test_sample_runs_become_one_row_per_run_and_query_ranked_as_trec_eval_ranks() -> None:
    from tests.support.trec import load_run

    dataset = _sample_runs()
    frame = dataset.frame
    assert len(frame) == 60 and retrieval.systems(frame) == ["bm25", "dense-minilm"]
    runs = load_run([SAMPLE / "run_bm25.trec"])
    row = frame[(frame["run"] == "bm25") & (frame["query_id"] == "q2")].iloc[0]
    assert row["retrieved_ids"] == runs["bm25"].ranking("q2")
    assert row["query"] == "When did the Berlin Wall fall?"
    assert row["gold_ids"] == {"berlinwall-a": 2, "berlinwall-b": 1}
    assert len(row["contexts"]) == len(row["retrieved_ids"])


def test_frame_rankings_and_qrels_reproduce_the_runs_ndcg() -> None:
    from tempo_eval.compare.trec_scores import score_dataset_runs, score_trec_files

    dataset = _sample_runs()
    files = score_trec_files([SAMPLE / "run_bm25.trec", SAMPLE / "run_dense.trec"], SAMPLE / "qrels.txt")
    for qrels in (dataset.qrels, None):  # the qrels kept with the dataset, or its gold_ids
        ours = score_dataset_runs(dataset.frame, qrels)
        for name in ("bm25", "dense-minilm"):
            assert ours.per_query[name]["ndcg@10"] == pytest.approx(files.per_query[name]["ndcg@10"], abs=1e-12)


def test_a_malformed_corpus_line_is_named() -> None:
    with pytest.raises(InputError, match="line 2"):
        retrieval.load_corpus(b'{"doc_id": "a", "text": "x"}\n{"doc_id": "b"}\n', "corpus.jsonl")
    assert retrieval.load_corpus(b"a\tIn 1989 the wall fell.\n", "corpus.tsv") == {"a": "In 1989 the wall fell."}


# ---- heatmap fixes (issue 8) -----------------------------------------------------------------------

def _two_cells():
    return year_heatmap([("a", [1989], [1989]), ("b", [1989], [1990]), ("c", [1989], [1989])], width=1)


def test_heatmap_cells_are_selectable_and_empty_cells_have_no_hover() -> None:
    fig = heatmap_figure(_two_cells(), row_title="q", col_title="d")
    heat, cells = fig.data
    assert heat.hoverinfo == "skip"  # an empty cell never hovers as "NaN item(s)"
    assert cells.type == "scatter" and sorted(zip(cells.y, cells.x, cells.customdata, strict=True)) == [
        ("1989", "1989", 2), ("1989", "1990", 1)]
    assert "select" in fig.layout.clickmode and "NaN" not in cells.hovertemplate


def test_heatmap_colour_bar_counts_whole_items() -> None:
    from tempo_eval.viz.heatmap import count_tick

    fig = heatmap_figure(_two_cells(), row_title="q", col_title="d")
    assert fig.data[0].colorbar.dtick == 1 and fig.data[0].colorbar.tickformat == "d"
    assert count_tick(2) == 1 and count_tick(60) == 10


def test_heatmap_height_grows_with_its_rows() -> None:
    from tempo_eval.viz.heatmap import figure_height

    many = year_heatmap([(i, [1000 + 10 * i], [1000 + 10 * i]) for i in range(40)], width=10)
    fig = heatmap_figure(many, row_title="q", col_title="d")
    assert fig.layout.height == figure_height(40) >= 40 * 20
    assert heatmap_figure(_two_cells(), row_title="q", col_title="d").layout.height == 320


def test_year_bins_are_capped_and_merged_into_decades() -> None:
    """Issue 24.12: 200 one-year bins would make a page 4,800 px tall."""
    from tempo_eval.viz.heatmap import MAX_BINS

    data = year_heatmap([(i, [1800 + i], [1800 + i]) for i in range(200)], width=1)
    assert data.width == 10 and data.requested_width == 1
    assert len(data.row_bins) == 20 <= MAX_BINS
    assert heatmap_figure(data, row_title="q", col_title="d").layout.height < 1200
    assert data.diagonal_share == 1.0


def test_the_threshold_label_has_a_readable_background() -> None:
    import pandas as pd

    from tempo_eval.viz.timeline import turn_timeline

    frame = pd.DataFrame({"window": [1], "interactions": ["1"], "score": [0.4], "claims": [1], "yes": [0],
                          "no": [1], "idk": [0]})
    fig = turn_timeline(frame, threshold=0.5)
    (note,) = [a for a in fig.layout.annotations if "threshold" in a.text]
    assert note.bgcolor and note.font.size >= 12


def test_identical_scatter_points_are_one_bigger_point() -> None:
    """Issue 24.5: queries with the same two scores were drawn on top of each other."""
    ids = ["q1", "q2", "q3", "q4"]
    pairs = paired_scores(pd.Series({"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.2}), pd.Series(dict.fromkeys(ids, 1.0)))
    fig = paired_scatter(pairs, name_a="A", name_b="B", metric="ndcg@10")
    tie = next(t for t in fig.data if t.name.startswith("tie"))
    assert len(tie.x) == 1 and "3 queries" in tie.text[0] and tie.name == "tie (3)"
    lone = next(t for t in fig.data if t.name.startswith("B better"))
    assert tie.marker.size[0] > lone.marker.size[0]


def test_a_crowded_cell_does_not_set_every_colour_and_each_row_gets_room() -> None:
    """One cell of 22 among cells of 1 to 8: the colour scale tops out at the 90th percentile of
    the counts (the 22 shares the darkest colour, its text and hover keep 22); 9 rows of bins get
    ROW_PX pixels each inside the plot area, whatever the margins."""
    from tempo_eval.viz.heatmap import (
        ROW_PX,
        colour_cap,
        figure_height,
        heatmap_figure,
        year_heatmap,
    )

    counts = np.array([[3, 0, 2], [1, 22, 8], [2, 3, 1]])
    assert colour_cap(counts) == 8
    assert colour_cap(np.array([[0, 5]])) == 5 and colour_cap(np.zeros((2, 2), dtype=int)) == 0
    items = [(i, [1100 + 100 * (i % 9)], [1100 + 100 * (i % 9)]) for i in range(9)]
    items += [(100 + i, [1900], [1900]) for i in range(22)]
    data = year_heatmap(items)
    assert len(data.row_bins) == 9
    fig = heatmap_figure(data, row_title="query years", col_title="document years")
    trace = fig.data[0]
    assert trace.zmax < data.counts.max() and trace.colorbar.ticktext[-1] == f"≥ {int(trace.zmax)}"
    assert max(fig.data[1].customdata) == data.counts.max() == 23  # the true count in the hover
    margin = fig.layout.margin
    assert fig.layout.height == figure_height(9)
    assert fig.layout.height - margin.t - margin.b >= 9 * ROW_PX >= 9 * 24
