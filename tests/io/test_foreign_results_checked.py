"""Foreign result files that lie (issue 19.13): a metric column or a DeepEval metric given twice, scores
outside a metric's range are refused; a rubric keeps its own range; a numeric column without a metric
name stays a dataset column."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempo_eval.io.errors import InputError
from tempo_eval.io.foreign import load_foreign_results

# ---- point 13: foreign results ---------------------------------------------------------------

RAGAS_HEAD = "user_input,response,retrieved_contexts"
RAGAS_ROW = "When did the war end?,In 1945.,\"['The war ended in 1945.']\""


def _deepeval(metrics: list[str]) -> bytes:
    case = ('{"input": "When did the war end?", "actualOutput": "In 1945.", '
            '"retrievalContext": ["The war ended in 1945."], "metricsData": [' + ", ".join(metrics) + "]}")
    return ('{"testCases": [' + case + "]}").encode("utf-8")


def test_a_metric_column_given_twice_is_refused(tmp_path: Path) -> None:
    text = f"{RAGAS_HEAD},faithfulness,Faithfulness \n{RAGAS_ROW},0.5,0.9\n"
    with pytest.raises(InputError, match=r"r.csv, column 'Faithfulness': the metric column .* twice"):
        load_foreign_results(text.encode(), name="r.csv")


def test_a_deepeval_metric_given_twice_in_a_test_case_is_refused() -> None:
    data = _deepeval(['{"name": "Faithfulness", "score": 0.5}', '{"name": "Faithfulness", "score": 0.9}'])
    with pytest.raises(InputError, match=r"run.json, test case 1, .*'Faithfulness' is given twice"):
        load_foreign_results(data, name="run.json")


@pytest.mark.parametrize("score", ["inf", "-7", "1.5", "-inf"])
def test_a_ragas_score_outside_its_range_is_refused(score: str) -> None:
    text = f"{RAGAS_HEAD},faithfulness\n{RAGAS_ROW},0.5\n{RAGAS_ROW},{score}\n"
    with pytest.raises(InputError, match=r"r.csv, row 2, column 'faithfulness': .*\[0, 1\]"):
        load_foreign_results(text.encode(), name="r.csv")


@pytest.mark.parametrize("score", ["1e999", "-7", "1.5"])
def test_a_deepeval_score_outside_its_range_is_refused(score: str) -> None:
    data = _deepeval(['{"name": "Faithfulness", "score": ' + score + "}"])
    with pytest.raises(InputError, match=r"run.json, test case 1, .*Faithfulness.*\[0, 1\]"):
        load_foreign_results(data, name="run.json")


def test_a_rubric_score_keeps_its_own_range() -> None:
    text = f"{RAGAS_HEAD},domain_specific_rubrics\n{RAGAS_ROW},4\n"
    assert [s.score for s in load_foreign_results(text.encode(), name="r.csv").scores] == [4.0]


def test_a_numeric_column_without_a_metric_name_stays_a_dataset_column() -> None:
    text = f"{RAGAS_HEAD},year,faithfulness\n{RAGAS_ROW},1945,0.5\n"
    foreign = load_foreign_results(text.encode(), name="r.csv")
    assert foreign.metrics == ["ragas:faithfulness"]
    assert "year" in foreign.dataset.frame.columns
    assert any("'year'" in warning and "not a RAGAS metric" in warning for warning in foreign.dataset.warnings)

