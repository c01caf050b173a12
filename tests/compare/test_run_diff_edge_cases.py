"""Run diff on hostile input: empty runs, nothing in common, missing results, odd text."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from tempo_eval.compare.report_html import diff_html
from tempo_eval.compare.run_diff import diff_runs
from tests.compare.test_run_diff import _results


def test_an_empty_run_diffs_to_no_metric_and_renders_in_every_format() -> None:
    empty = _results([]).reindex(columns=["row", "query_id", "run", "metric", "score", "reason_code", "reason"])
    report = diff_runs(empty, _results([(0, "a", "m", 1.0)]))
    assert report.metrics == [] and report.matched == 0 and report.matching.unmatched_candidate == ["a"]
    assert json.loads(report.to_json())["metrics"] == {}
    assert "Only in the candidate: a" in report.to_text()
    assert report.to_markdown() and report.to_csv().startswith("metric,")
    assert "<!DOCTYPE html>" in diff_html(report)


def test_runs_with_no_row_in_common_give_nan_figures_not_an_error() -> None:
    report = diff_runs(_results([(0, "a", "m", 1.0)]), _results([(0, "b", "m", 0.0)]))
    s = report.summary.loc["m"]
    assert report.matched == 0 and s["n"] == 0
    assert all(math.isnan(s[k]) for k in ("baseline_mean", "delta", "ci_low", "p_value"))
    out = json.loads(report.to_json())
    assert out["metrics"]["m"]["delta"] is None and out["unmatched_baseline"] == ["a"]
    assert "—" in report.to_text()


def test_a_result_one_run_did_not_store_is_not_stored_not_a_regression() -> None:
    base = _results([(0, "a", "m", 1.0), (1, "b", "m", 1.0)])
    cand = _results([(0, "a", "m", 1.0), (1, "b", "other", 0.0)])  # b has no "m" result in the candidate
    report = diff_runs(base, cand)
    s = report.summary.loc["m"]
    assert (s["regressed"], s["became_not_measurable"], s["not_stored"], s["unchanged"]) == (0, 0, 1, 1)


def test_a_nan_tolerance_is_refused() -> None:
    with pytest.raises(ValueError, match="tolerance"):
        diff_runs(_results([(0, "a", "m", 1.0)]), _results([(0, "a", "m", 1.0)]), tolerance=math.nan)


def test_query_text_with_newlines_pipes_and_markup_stays_on_its_line_in_text_and_markdown() -> None:
    key = "line one\n| [x](http://e) **b**"
    report = diff_runs(_results([(0, key, "m", 1.0)]), _results([(0, key, "m", 0.0)]))
    table_lines = [line for line in report.to_markdown().splitlines() if "line one" in line]
    assert len(table_lines) == 1 and "\\|" in table_lines[0] and "\\[x\\]" in table_lines[0]
    assert len([line for line in report.to_text().splitlines() if "line one" in line]) == 1


def test_a_dataset_with_several_systems_pairs_each_system_with_itself() -> None:
    base = _results([(0, "q1", "m", 1.0), (1, "q1", "m", 0.0)])
    base["run"] = ["bm25", "dense"]
    cand = _results([(0, "q1", "m", 0.0), (1, "q1", "m", 0.0)])
    cand["run"] = ["dense", "bm25"]
    report = diff_runs(base, cand)
    pairs = report.matching.pairs.set_index("key")["row_candidate"]
    assert pairs.to_dict() == {"q1 (run bm25)": 1, "q1 (run dense)": 0}
    assert report.summary.loc["m", "regressed"] == 1 and report.matching.duplicate_keys == 0
    assert isinstance(report.rows_table(), pd.DataFrame)


def test_metric_summary_refuses_an_unknown_test_instead_of_running_fisher() -> None:
    # metric_summary is public (the module docstring names it): a misspelt test must not silently
    # give the randomisation test's p-value, as it did once the check lived only in diff_runs
    from tempo_eval.compare.run_diff import metric_summary

    rows = pd.DataFrame({"metric": "m", "outcome": ["improved", "regressed", "improved"],
                         "baseline": [0.1, 0.9, 0.2], "candidate": [0.5, 0.4, 0.8]})
    with pytest.raises(ValueError, match="test must be one of student, fisher, got 'welch'"):
        metric_summary(rows, test="welch")
    assert metric_summary(rows, test="fisher")["n"] == 3
