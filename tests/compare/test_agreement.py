"""Foreign metric against ours: pairing by row, rank correlations as scipy, disagreement order."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from tempo_eval.compare.agreement import agreement_pairs, rank_correlations
from tests.support.paths import ROOT


def _results(metric: str, scores: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"row": range(len(scores)), "query_id": [f"q{i + 1}" for i in range(len(scores))],
                         "run": None, "metric": metric, "score": scores})


def test_pairs_leave_out_nan_rows_and_put_the_largest_rank_gap_first() -> None:
    ours = _results("temporal_faithfulness", [1.0, 0.0, 0.5, math.nan, 0.9])
    theirs = _results("ragas:faithfulness", [0.95, 0.9, 0.4, 0.2, math.nan])
    pairs = agreement_pairs(ours, theirs, ours_metric="temporal_faithfulness", theirs_metric="ragas:faithfulness")
    assert pairs["row"].tolist()[0] == 1  # ours lowest, theirs second highest
    assert sorted(pairs["row"].tolist()) == [0, 1, 2]
    assert pairs["rank_gap"].is_monotonic_decreasing


def test_correlations_equal_scipy_and_are_nan_without_an_order() -> None:
    x, y = [0.1, 0.4, 0.35, 0.8, 0.8], [0.2, 0.5, 0.1, 0.9, 0.7]
    got = rank_correlations(x, y)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert got["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert got["n"] == 5
    assert math.isnan(rank_correlations([1, 1, 1], [0.1, 0.2, 0.3])["spearman"])
    assert math.isnan(rank_correlations([1, 2], [1, 2])["kendall"])


def test_an_unknown_metric_names_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match="metrics: temporal_faithfulness"):
        agreement_pairs(_results("temporal_faithfulness", [1.0]), _results("x", [1.0]),
                        ours_metric="temporal_ndcg", theirs_metric="x")


def test_agreement_page_sets_imported_ragas_scores_against_ours() -> None:

    from streamlit.testing.v1 import AppTest

    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io import load_dataset
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.runs import RunStore

    root = ROOT
    fixture = root / "tests" / "data" / "interop" / "ragas_result.csv"
    store = RunStore()  # the test's own workspace (conftest)
    foreign_run = import_foreign_results(load_foreign_results(fixture), store)
    evaluate(load_dataset(fixture), [TemporalNDCG(k=10)], store=store)
    dataset_id = store.run_info(foreign_run)["dataset_id"]

    at = AppTest.from_file(str(root / "views" / "agreement.py"), default_timeout=120)
    at.query_params["dataset"] = str(dataset_id)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    assert at.selectbox(key="agreement_theirs").value[1] == "ragas:answer_relevancy"
    at.selectbox(key="agreement_theirs").set_value((foreign_run, "ragas:faithfulness")).run()
    assert at.selectbox(key="agreement_ours").value[1] == "temporal_ndcg"
    metrics = {m.label: m.value for m in at.metric}
    # ranx-free check: ragas faithfulness 1.0, 0.5, 1.0 against NDCG 1.0, 0.63, 1.0 order alike
    assert metrics["Rows scored by both"] == "3"
    assert metrics["Spearman ρ"] == f"{stats.spearmanr([1.0, 0.5, 1.0], [1.0, 0.63, 1.0]).statistic:.3f}"
    assert len(at.get("plotly_chart")) == 1
    table = at.dataframe[0].value
    assert table["row"].tolist()[0] in ("0", "1", "2") and "RAGAS faithfulness" in table.columns  # issue 24.8, 24.9


def test_agreement_page_imports_a_deepeval_test_run_and_makes_its_dataset_active() -> None:

    from streamlit.testing.v1 import AppTest

    from tempo_eval.store.runs import RunStore

    root = ROOT
    data = (root / "tests" / "data" / "interop" / "deepeval_test_run.json").read_bytes()
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120).run()
    at.switch_page("views/agreement.py").run()
    at.file_uploader(key="agreement_upload").set_value(("test_run.json", data, "application/json")).run()
    at.button(key="agreement_import").click().run()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    runs = RunStore().list_runs()
    (run_id,) = runs[runs["name"] == "deepeval: test_run.json"]["id"].tolist()
    assert at.session_state["dataset_id"] == int(runs.set_index("id").loc[run_id, "dataset_id"])
    assert "1 foreign and 0 of our metrics" in at.info[0].value


def test_the_scatter_escapes_query_ids_and_metric_names() -> None:
    from tempo_eval.viz.agreement import agreement_scatter

    ours = _results("temporal_faithfulness", [1.0, 0.0, 0.5])
    ours["query_id"] = ["<b>q1</b>", "q2", "q3"]
    pairs = agreement_pairs(ours, _results("ragas:<i>f</i>", [0.9, 0.8, 0.1]),
                            ours_metric="temporal_faithfulness", theirs_metric="ragas:<i>f</i>")
    fig = agreement_scatter(pairs, ours="temporal_faithfulness", theirs="ragas:<i>f</i>")
    assert "&lt;b&gt;q1&lt;/b&gt;" in fig.data[0].text
    assert fig.layout.xaxis.title.text == "ragas:&lt;i&gt;f&lt;/i&gt;"
