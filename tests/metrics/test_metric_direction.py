"""Each metric declares its direction once (`Metric.direction`, read through
`tempo_eval.metrics.catalog`), and every surface follows it (issue 38.5): a rise in future_leak
is a regression in `diff` (text, JSON, Markdown) and fails --fail-on-regression; evaluate's gate
on a lower-is-better metric is a maximum (--fail-over); median evidence age has no direction, so
no row of it improves or regresses and no gate takes it; Compare and its scatter agree."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.compare.run_diff import diff_runs
from tempo_eval.compare.statistics import compare
from tempo_eval.metrics.base import Metric
from tempo_eval.metrics.catalog import direction, scale
from tempo_eval.viz.scatter import paired_scores
from tests.support.cli import run_cli_streams as run_cli

AS_OF = "2024-06-30"
#: per query: the publication dates of the top 3 documents, before and after the change
BEFORE = {"q1": ["2024-06-01", "2024-05-01", "2023-01-01"], "q2": ["2024-06-20", "2024-06-10", "2024-01-01"],
          "q3": ["2024-06-29", "2022-06-01", "2024-02-01"]}
AFTER = {"q1": ["2024-07-02", "2024-08-01", "2023-01-01"], "q2": ["2024-09-20", "2024-06-10", "2024-01-01"],
         "q3": ["2024-06-29", "2022-06-01", "2024-02-01"]}
METRICS = "future_leak,stale_evidence,median_evidence_age"


def _write(path: Path, dates: dict[str, list[str]]) -> Path:
    path.write_text("".join(json.dumps({
        "query_id": qid, "query": f"question {qid}", "retrieved_ids": [f"{qid}-d{i}" for i in range(3)],
        "context_dates": days, "reference_date": AS_OF,
    }) + "\n" for qid, days in dates.items()), encoding="utf-8")
    return path


@pytest.fixture
def leaking(tmp_path: Path, capsys) -> tuple[str, str]:
    """Two stored runs: the baseline without future documents, the candidate with some."""
    for name, dates in (("clean", BEFORE), ("leaking", AFTER)):
        code, _, err = run_cli(["evaluate", str(_write(tmp_path / f"{name}.jsonl", dates)), "--metrics", METRICS,
                                "--k", "3", "--max-age", "365", "--out", str(tmp_path / f"{name}.csv"),
                                "--run-name", name, "--no-progress"], capsys)
        assert code == 0, err
    return "clean", "leaking"


def test_every_metric_declares_its_direction_and_scale_once() -> None:
    assert [direction(m) for m in ("future_leak", "stale_evidence@10", "median_evidence_age", "median_age@5",
                                   "temporal_faithfulness", "recency_ndcg", "ndcg@10")] == [
        "lower", "lower", "none", "none", "higher", "higher", "higher"]
    assert scale("median_evidence_age").unit == "days" and scale("median_evidence_age").high is None
    assert scale("future_leak").is_unit_interval and scale("P@5").is_unit_interval

    with pytest.raises(TypeError, match="direction must be"):
        type("Sideways", (Metric,), {"name": "sideways_test_metric", "direction": "up"})


def test_a_rise_in_future_leak_is_a_regression_in_every_diff_format(leaking, capsys) -> None:
    base, cand = leaking
    code, out, _ = run_cli(["diff", base, cand, "--format", "json"], capsys)
    report = json.loads(out)["metrics"]
    leak = report["future_leak"]
    assert leak["direction"] == "lower" and leak["delta"] > 0
    assert (leak["regressed"], leak["improved"], leak["unchanged"]) == (2, 0, 1)
    age = report["median_evidence_age"]
    assert age["direction"] == "none" and (age["improved"], age["regressed"]) == (0, 0)
    assert age["increased"] + age["decreased"] == 2

    _, text, _ = run_cli(["diff", base, cand], capsys)
    line = next(x for x in text.splitlines() if x.startswith("future_leak"))
    assert "future_leak (lower is better)" in line and "0 improved, 2 regressed" in line
    age_line = next(x for x in text.splitlines() if x.startswith("median_evidence_age"))
    assert "no better direction" in age_line and "improved" not in age_line and "regressed" not in age_line
    worst = text.split("Worst regressions:")[1]
    assert "future\\_leak" not in worst and "future_leak" in worst and "median_evidence_age" not in worst

    _, markdown, _ = run_cli(["diff", base, cand, "--format", "markdown"], capsys)
    row = next(x for x in markdown.splitlines() if x.startswith("| future\\_leak"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert "lower is better" in cells[0] and (cells[5], cells[6]) == ("0", "**2**")
    age_row = next(x for x in markdown.splitlines() if x.startswith("| median\\_evidence\\_age"))
    assert [c.strip() for c in age_row.strip("|").split("|")][5:7] == ["—", "—"]

    code, _, err = run_cli(["diff", base, cand, "--metric", "future_leak", "--fail-on-regression", "1"], capsys)
    assert code == 1 and "future_leak: 2 rows regressed" in err
    code, _, _ = run_cli(["diff", cand, base, "--metric", "future_leak", "--fail-on-regression", "1"], capsys)
    assert code == 0  # leakage going away is an improvement
    code, _, _ = run_cli(["diff", base, cand, "--metric", "median_evidence_age", "--fail-on-regression", "1"], capsys)
    assert code == 0


def test_the_gate_on_a_lower_is_better_metric_is_a_maximum(tmp_path: Path, capsys) -> None:
    data = _write(tmp_path / "leaking.jsonl", AFTER)  # future_leak mean 1/3
    base = ["evaluate", str(data), "--metrics", METRICS, "--k", "3", "--out", str(tmp_path / "o.csv"), "--no-progress"]
    code, _, err = run_cli([*base, "--fail-over", "future_leak=0.1"], capsys)
    assert code == 1 and "fail: future_leak 0.3333 > 0.1" in err
    code, _, err = run_cli([*base, "--fail-over", "future_leak=0.5"], capsys)
    assert code == 0, err
    code, _, err = run_cli([*base, "--fail-under", "future_leak=0.5"], capsys)
    assert code == 2 and "lower is better for future_leak" in err and "--fail-over future_leak=0.5" in err
    code, _, err = run_cli([*base, "--fail-over", "stale_evidence=0.5,median_evidence_age=100"], capsys)
    assert code == 2 and "median_evidence_age has no better direction" in err
    code, _, err = run_cli([*base, "--fail-under", "median_evidence_age=100"], capsys)
    assert code == 2 and "no better direction" in err


def test_compare_and_its_scatter_follow_the_direction() -> None:
    per_query = {"a": {"future_leak@3": {"q1": 0.0, "q2": 0.0, "q3": 0.1}},
                 "b": {"future_leak@3": {"q1": 0.6, "q2": 0.5, "q3": 0.7}}}
    report = compare(per_query, test="student")
    assert report.best("future_leak@3") == ["a"]
    pairs = paired_scores(pd.Series(per_query["a"]["future_leak@3"]), pd.Series(per_query["b"]["future_leak@3"]),
                          metric="future_leak@3")
    assert set(pairs["outcome"]) == {"A better"}
    age = paired_scores(pd.Series({"q1": 10.0}), pd.Series({"q1": 30.0}), metric="median_age@3")
    assert list(age["outcome"]) == ["B higher"]


def test_diff_rows_of_a_lower_is_better_metric_list_the_worst_rise_first() -> None:
    def results(scores):
        return pd.DataFrame({"row": range(len(scores)), "query_id": [f"q{i}" for i in range(len(scores))],
                             "run": None, "metric": "stale_evidence", "score": scores, "reason_code": None})

    report = diff_runs(results([0.1, 0.1, 0.5]), results([0.9, 0.3, 0.1]))
    assert list(report.rows["outcome"]) == ["regressed", "regressed", "improved"]
    assert list(report.rows["query_id"]) == ["q0", "q1", "q2"]


def test_build_metric_gives_each_class_the_settings_it_takes():
    from tempo_eval.metrics.catalog import build_metric

    stale = build_metric("stale_evidence", k=7, max_age=100, half_life=30, verifier=None)
    assert (type(stale).__name__, stale.k, stale.max_age) == ("StaleEvidence", 7, 100.0)
    recency = build_metric("recency_ndcg", k=None, half_life=30)  # None: the class's default
    assert (recency.k, recency.half_life) == (type(recency)().k, 30.0)
    assert type(build_metric("answer_currency", k=7, max_age=1)).__name__ == "AnswerCurrency"
    with pytest.raises(KeyError):
        build_metric("no_such_metric")
