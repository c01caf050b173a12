"""Run diff: matching rows of two runs, per-metric figures, outcome counts, renderings."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tempo_eval.compare.report_html import diff_html
from tempo_eval.compare.run_diff import (
    diff_runs,
    diff_stored,
    match_rows,
    outcomes,
    resolve_run,
    row_table,
    sort_worst_first,
)
from tempo_eval.compare.statistics import bootstrap_ci, paired_t_test, randomization_test
from tempo_eval.io.export import read_csv_export, write_frame
from tempo_eval.store.runs import RunStore
from tests.support.sample_runs import CHANGES, NO_YEAR, make_sample_runs


def _results(rows: list[tuple]) -> pd.DataFrame:
    """A results frame from (row, query_id, metric, score[, reason_code]) tuples."""
    records = []
    for r in rows:
        row, qid, metric, score, *code = r
        records.append({"row": row, "query_id": qid, "run": None, "metric": metric, "score": score,
                        "reason_code": code[0] if code else None, "reason": ""})
    return pd.DataFrame.from_records(records)


def test_outcomes_use_the_tolerance_inclusively_and_name_nan_changes() -> None:
    base = np.array([0.5, 0.5, 0.5, 0.5, math.nan, 0.3, math.nan, 0.2])
    cand = np.array([0.51, 0.52, 0.48, 0.5, 0.4, math.nan, math.nan, 0.9])
    stored = np.array([True] * 7 + [False])
    got = outcomes(base, cand, stored, 0.015).tolist()
    assert got == ["unchanged", "improved", "regressed", "unchanged", "became measurable",
                   "became not measurable", "not measured", "not stored"]
    assert outcomes(np.array([0.5]), np.array([0.5]), np.array([True]), 0.0).tolist() == ["unchanged"]
    # 0.51 - 0.50 is 0.010000000000000009: a change of exactly the tolerance is unchanged
    assert outcomes(np.array([0.5, 0.51]), np.array([0.51, 0.5]), np.array([True, True]), 0.01).tolist() == [
        "unchanged", "unchanged"]


def test_rows_are_matched_by_query_id_and_the_unmatched_are_listed() -> None:
    base = _results([(0, "a", "m", 1.0), (1, "b", "m", 0.5), (2, "c", "m", 0.2)])
    cand = _results([(0, "b", "m", 0.4), (1, "a", "m", 1.0), (2, "z", "m", 0.9)])
    report = diff_runs(base, cand)
    assert report.matched == 2
    assert report.matching.unmatched_baseline == ["c"] and report.matching.unmatched_candidate == ["z"]
    pairs = report.matching.pairs.set_index("key")
    assert pairs.loc["a", "row_candidate"] == 1 and pairs.loc["b", "row_candidate"] == 0
    assert report.summary.loc["m", "regressed"] == 1 and report.summary.loc["m", "unchanged"] == 1


def test_rows_without_ids_of_their_own_are_matched_by_query_text() -> None:
    # generated ids q1, q2 number the rows: the same questions in another order must still pair up
    base = _results([(0, "q1", "m", 1.0), (1, "q2", "m", 0.0)])
    cand = _results([(0, "q1", "m", 0.0), (1, "q2", "m", 1.0)])
    report = diff_runs(base, cand, baseline_queries=["When?", "Who?"], candidate_queries=["Who?", "When?"],
                       baseline_ids_generated=True, candidate_ids_generated=True)
    assert report.matching.by == "query"
    assert report.summary.loc["m", "unchanged"] == 2
    by_id = diff_runs(base, cand, baseline_queries=["When?", "Who?"], candidate_queries=["Who?", "When?"])
    assert by_id.matching.by == "query_id" and by_id.summary.loc["m", "improved"] == 1


def test_duplicate_keys_pair_by_occurrence_order_and_are_counted() -> None:
    base = row_table(_results([(0, "q1", "m", 1), (1, "q2", "m", 1), (2, "q3", "m", 1)]), ["A", "A", "B"])
    cand = row_table(_results([(0, "q1", "m", 1), (1, "q2", "m", 1), (2, "q3", "m", 1), (3, "q4", "m", 1)]),
                     ["A", "B", "A", "A"])
    matching = match_rows(base, cand, by="query")
    assert matching.pairs[["row_baseline", "row_candidate"]].values.tolist() == [[0, 0], [1, 2], [2, 1]]
    assert matching.unmatched_candidate == ["A"] and matching.unmatched_baseline == []
    assert matching.duplicate_keys == 1


def test_summary_reuses_the_compare_statistics_over_rows_measured_in_both() -> None:
    b = [0.1, 0.5, 0.9, 0.4, math.nan, 0.7]
    c = [0.3, 0.5, 0.6, 0.8, 0.2, math.nan]
    base = _results([(i, f"q{i}", "m", s) for i, s in enumerate(b)])
    cand = _results([(i, f"q{i}", "m", s) for i, s in enumerate(c)])
    report = diff_runs(base, cand)
    s = report.summary.loc["m"]
    x, y = np.array(b[:4]), np.array(c[:4])
    assert s["n"] == 4
    assert s["baseline_mean"] == pytest.approx(x.mean()) and s["candidate_mean"] == pytest.approx(y.mean())
    assert s["delta"] == pytest.approx((y - x).mean())
    assert (s["ci_low"], s["ci_high"]) == pytest.approx(bootstrap_ci(y - x))
    assert s["p_value"] == pytest.approx(paired_t_test(y, x))
    assert diff_runs(base, cand, test="fisher").summary.loc["m", "p_value"] == pytest.approx(randomization_test(y, x))
    assert (s["improved"], s["regressed"], s["unchanged"], s["became_measurable"], s["became_not_measurable"]) == (
        2, 1, 1, 1, 1)


def test_rows_are_sorted_worst_regression_first_with_nan_deltas_last() -> None:
    base = _results([(0, "a", "m", 0.5), (1, "b", "m", math.nan), (2, "c", "m", 0.9), (3, "d", "m", 0.2),
                     (4, "e", "m", 0.8)])
    cand = _results([(0, "a", "m", 0.4), (1, "b", "m", 0.3), (2, "c", "m", 0.1), (3, "d", "m", 0.9),
                     (4, "e", "m", math.nan, "no_temporal_claims")])
    report = diff_runs(base, cand)
    assert report.rows["query_id"].tolist() == ["c", "a", "d", "e", "b"]
    assert sort_worst_first(report.rows.iloc[::-1])["query_id"].tolist() == ["c", "a", "d", "e", "b"]
    assert report.rows.iloc[3]["reason_candidate"] == "no_temporal_claims"


def test_json_has_the_documented_shape_with_nan_as_null() -> None:
    base = _results([(0, "a", "m", 0.5), (1, "b", "m", math.nan), (0, "a", "x", 1.0)])
    cand = _results([(0, "a", "m", 0.4), (1, "b", "m", math.nan), (0, "a", "y", 1.0)])
    out = json.loads(diff_runs(base, cand).to_json())
    assert set(out) == {"baseline", "candidate", "matched", "unmatched_baseline", "unmatched_candidate",
                        "metrics", "rows"}
    assert list(out["metrics"]) == ["m"]  # only the metrics both runs hold
    assert set(out["metrics"]["m"]) == {
        "baseline_mean", "candidate_mean", "delta", "ci_low", "ci_high", "p_value", "improved", "regressed",
        "unchanged", "became_measurable", "became_not_measurable", "direction", "increased", "decreased"}
    assert out["rows"][0] == {"query_id": "a", "metric": "m", "baseline": 0.5, "candidate": 0.4,
                              "delta": pytest.approx(-0.1)}
    assert out["rows"][1]["delta"] is None and out["metrics"]["m"]["p_value"] is None


def test_a_metric_or_tolerance_that_cannot_be_diffed_is_refused_by_name() -> None:
    base = _results([(0, "a", "m", 0.5), (0, "a", "x", 1.0)])
    cand = _results([(0, "a", "m", 0.4)])
    with pytest.raises(ValueError, match="'x' is not held by both runs"):
        diff_runs(base, cand, metrics=["x"])
    with pytest.raises(ValueError, match="tolerance"):
        diff_runs(base, cand, tolerance=-0.1)


def test_markdown_escapes_query_text_that_would_break_the_table() -> None:
    base = _results([(0, "a|b", "m", 0.9)])
    cand = _results([(0, "a|b", "m", 0.1)])
    text = diff_runs(base, cand).to_markdown()
    assert "a\\|b" in text and "| m |" in text


def _hand_count(base: pd.DataFrame, cand: pd.DataFrame, metric: str, tolerance: float) -> dict[str, int]:
    """The counts, made row by row from two exported results files."""
    by_id = {r["query_id"]: r["score"] for _, r in cand[cand["metric"] == metric].iterrows()}
    counts = dict.fromkeys(["improved", "regressed", "unchanged", "became_measurable", "became_not_measurable"], 0)
    for _, r in base[base["metric"] == metric].iterrows():
        before, after = r["score"], by_id[r["query_id"]]
        if pd.isna(before) and pd.isna(after):
            continue
        if pd.isna(before):
            counts["became_measurable"] += 1
        elif pd.isna(after):
            counts["became_not_measurable"] += 1
        elif after - before > tolerance:
            counts["improved"] += 1
        elif after - before < -tolerance:
            counts["regressed"] += 1
        else:
            counts["unchanged"] += 1
    return counts


def test_counts_on_two_sample_runs_equal_a_count_by_hand_of_their_exported_results(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    baseline, candidate = make_sample_runs(store, tmp_path)
    exported = {}
    for run_id in (baseline, candidate):
        path = tmp_path / f"run{run_id}.csv"
        write_frame(store.results_frame(run_id), path)
        exported[run_id] = read_csv_export(path)
    report = diff_stored(store, baseline, candidate)
    assert report.matched == 30 and report.metrics == ["temporal_faithfulness", "temporal_ndcg"]
    for metric in report.metrics:
        expected = _hand_count(exported[baseline], exported[candidate], metric, 0.01)
        got = {key: int(report.summary.loc[metric, key]) for key in expected}
        assert got == expected, metric
    faith = report.rows_table(metric="temporal_faithfulness", outcome="regressed")
    assert set(faith["query id"]) == {"q1", "q3"}
    improved = report.rows_table(metric="temporal_faithfulness", outcome="improved")
    assert set(improved["query id"]) == {"q2", "q7"} and set(CHANGES) == {"q1", "q2", "q3", "q7"}
    assert report.summary.loc["temporal_faithfulness", "became_not_measurable"] == len(NO_YEAR)
    assert report.rows.iloc[0]["query_id"] == "q1"  # 1.0 -> 0.0: the worst regression comes first


def test_runs_are_found_by_id_or_name_and_an_unknown_one_is_named(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    baseline, candidate = make_sample_runs(store, tmp_path)
    assert resolve_run(store, str(baseline)) == baseline and resolve_run(store, f"#{candidate}") == candidate
    assert resolve_run(store, "years changed") == candidate
    with pytest.raises(LookupError, match="'nope'"):
        resolve_run(store, "nope")
    store.rename_run(baseline, "years changed")
    with pytest.raises(LookupError, match="ambiguous"):
        resolve_run(store, "years changed")


def test_html_export_is_standalone_with_plotly_embedded_and_user_text_escaped() -> None:
    base = _results([(0, "<script>alert(1)</script>", "m", 0.9), (1, "b", "m", 0.5), (2, "c", "m", 0.5)])
    cand = _results([(0, "<script>alert(1)</script>", "m", 0.1), (1, "b", "m", 0.5), (2, "c", "m", 0.5)])
    page = diff_html(diff_runs(base, cand))
    assert page.startswith("<!DOCTYPE html>") and "plotly" in page.lower()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # nothing fetched from the network: no script or stylesheet comes from an address
    assert not re.search(r"<script[^>]*\bsrc=", page) and not re.search(r"<link[^>]*\bhref=", page)
    assert len(re.findall(r"<script", page)) >= 2  # plotly.js inline, then the figures


def test_identical_points_are_one_marker_sized_by_their_count() -> None:
    from tempo_eval.viz.run_diff import diff_scatter, point_groups

    base = _results([(0, "a", "m", 0.5), (1, "b", "m", 0.5), (2, "c", "m", 0.9)])
    cand = _results([(0, "a", "m", 0.5), (1, "b", "m", 0.5), (2, "c", "m", 0.2)])
    rows = diff_runs(base, cand).rows
    groups = point_groups(rows).set_index("outcome")
    assert groups.loc["unchanged", "count"] == 2 and "2 rows" in groups.loc["unchanged", "queries"]
    fig = diff_scatter(rows, metric="m", baseline="A", candidate="B")
    unchanged = next(t for t in fig.data if t.name.startswith("unchanged"))
    assert unchanged.name == "unchanged (2)" and unchanged.marker.size[0] > 8
