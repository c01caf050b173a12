"""As-of metrics in the dashboard (AppTest): the dated news fixture on Overview, Evaluate,
Results and Heatmaps."""

from __future__ import annotations

import math

from streamlit.testing.v1 import AppTest

from tests.app.test_pages import (  # noqa: F401 - worker_in_this_process: the page's jobs run in this process
    APP,
    TIMEOUT,
    assert_clean,
    goto,
    table_with,
    wait_job,
    worker_in_this_process,
)
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof" / "news_asof.jsonl"


def open_with_fixture() -> AppTest:
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore

    dataset_id = RunStore().save_dataset(load_dataset(FIXTURE))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    return at.run()


def test_overview_shows_the_as_of_metrics_per_row_and_per_system() -> None:
    at = goto(open_with_fixture(), "overview")
    assert_clean(at)
    per_row = table_with(at, "future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg",
                         "answer_currency reason")
    assert len(per_row) == 52
    live = per_row[per_row["run"] == "live"]
    snapshot = per_row[per_row["run"] == "snapshot"]
    assert (snapshot["future_leak"] == 0).all() and (live["future_leak"] > 0).any()
    assert snapshot["median_evidence_age"].mean() > live["median_evidence_age"].mean()
    systems = table_with(at, "system", "current / outdated / other")
    assert set(systems["system"]) == {"live", "snapshot"}
    assert any("published after their question" in c.value for c in at.caption)


def test_evaluate_offers_the_as_of_metrics_and_results_explain_each_row() -> None:
    at = goto(open_with_fixture(), "evaluate")
    assert set(at.multiselect(key="keep_ev_asof").value) == {
        "future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg", "answer_currency"}
    at.checkbox(key="keep_ev_tf").uncheck()
    at.checkbox(key="keep_ev_ndcg").uncheck()
    at.number_input(key="keep_ev_max_age").set_value(30)
    at.number_input(key="keep_ev_k").set_value(5)
    at.run()
    at.button(key="run_evaluation").click().run()
    job = wait_job(at)
    assert job["status"] == "finished", job["error"]
    at.run()
    at.run()
    assert_clean(at)
    from tempo_eval.store.runs import RunStore

    result = RunStore().get_result(int(job["run_id"]), 0, "stale_evidence")
    assert result.details["max_age"] == 30 and result.details["k"] == 5
    goto(at, "results")
    assert_clean(at)
    grid = table_with(at, "query_id", "future_leak", "answer_currency reason")
    assert len(grid) == 52 and not math.isnan(grid["recency_ndcg"].iloc[0])


def test_heatmaps_draw_as_of_years_against_publication_years() -> None:
    at = goto(open_with_fixture(), "heatmaps")
    assert_clean(at)
    rows = table_with(at, "as_of", "date", "age", "future")
    assert len(rows) > 0
    assert any("pairs with both dates" in c.value for c in at.caption)
