"""The Overview of a dataset too large to score on the fly (issue 23: 200,000 rows took minutes):
it shows the selected runs' stored scores, aggregated by SQLite, never scoring a row and never
reading a whole run; `RunStore.system_summary` agrees with the results it aggregates."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_pages import APP, TIMEOUT, assert_clean, table_with
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof" / "news_asof.jsonl"


@pytest.fixture
def dated_run() -> tuple[int, int]:
    """The dated news fixture (52 rows, two systems) and an engine run of focus-time and as-of
    metrics."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.answer_currency import AnswerCurrency
    from tempo_eval.metrics.evidence_age import FutureLeak, MedianEvidenceAge, StaleEvidence
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    dataset_id = store.save_dataset(load_dataset(FIXTURE))
    metrics = [TemporalFaithfulness(mode="focus_time"), FutureLeak(k=10), StaleEvidence(k=10),
               MedianEvidenceAge(k=10), AnswerCurrency()]
    run = evaluate(store.get_dataset(dataset_id), metrics, store=store, run_name="dated")
    return dataset_id, run.run_id


def test_system_summary_agrees_with_the_results_it_aggregates(dated_run) -> None:
    from tempo_eval.store.runs import RunStore

    _, run_id = dated_run
    store = RunStore()
    summary = store.system_summary(run_id).set_index(["system", "metric"])
    results = store.results_frame(run_id)
    for (system, metric), part in results.groupby(["run", "metric"]):
        line = summary.loc[(system, metric)]
        assert line["n"] == len(part) and line["n_scored"] == part["score"].notna().sum()
        assert line["mean"] == pytest.approx(part["score"].mean(), nan_ok=True)
        labels = part["reason"].str.split(":").str[0] if metric == "answer_currency" else part["reason"].map(lambda _: "")
        assert [line[x] for x in ("current", "outdated", "other")] == [int((labels == x).sum()) for x in
                                                                       ("current", "outdated", "other")]
    assert set(summary.index.get_level_values("system")) == {"live", "snapshot"}
    assert summary.loc[("live", "answer_currency"), "outdated"] + summary.loc[("snapshot", "answer_currency"),
                                                                              "outdated"] > 0


def overview(dataset_id: int, run_ids: list[int]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    if run_ids:
        at.query_params["runs"] = ",".join(map(str, run_ids))
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    return at


@pytest.fixture
def too_large_to_score(monkeypatch):
    """The fixture counts as too large (a threshold of 20 rows), and scoring a row or reading a
    whole run fails the test."""
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app import dataset_scores

    def forbidden(*args, **kwargs):
        raise AssertionError("the Overview scored the dataset on the fly or read a whole run")

    monkeypatch.setattr(dataset_scores, "ON_THE_FLY_ROWS", 20)
    monkeypatch.setattr(dataset_scores, "focus_time_scores", forbidden)
    monkeypatch.setattr(dataset_scores, "asof_scores", forbidden)
    monkeypatch.setattr(RunStore, "results_frame", forbidden)


def test_a_large_dataset_shows_its_runs_stored_scores_per_system(dated_run, too_large_to_score) -> None:
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app.words import metric_label

    dataset_id, run_id = dated_run
    at = overview(dataset_id, [run_id])
    assert any("more than the 20 the Overview scores on the fly" in i.value for i in at.info)
    summary = table_with(at, "run", "system", "current / outdated / other")
    assert sorted(summary["system"]) == ["live", "snapshot"]
    stored = RunStore().system_summary(run_id).set_index(["system", "metric"])
    live = summary[summary["system"] == "live"].iloc[0]
    mean = stored.loc[("live", "future_leak"), "mean"]
    assert live[metric_label("future_leak")] == f"{mean:.3f}"
    assert live[f"{metric_label('future_leak')} measured"] == "26/26"
    rows = table_with(at, "row", "query_id", "future_leak")
    assert len(rows) == 52
    # the age distribution reads the whole dataset: only on request
    assert not at.get("plotly_chart")
    at.toggle(key="overview_stored_ages").set_value(True).run()
    assert_clean(at)
    assert at.get("plotly_chart")
    assert "were published after their question's as-of date" in " ".join(c.value for c in at.caption).replace("\\", "")


def test_a_large_dataset_without_a_selected_run_says_how_to_get_one(dated_run, too_large_to_score) -> None:
    dataset_id, _ = dated_run
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    from tempo_eval_app import selection

    if at.session_state[selection.RUNS_KEY]:  # the sidebar selected the dataset's run itself
        at.session_state[selection.RUNS_KEY] = []
        at.run()
    assert any("No run of this dataset is selected" in i.value for i in at.info)


def test_a_runs_version_is_its_status_and_last_row_and_follows_new_results(dated_run) -> None:
    from tempo_eval.common.schema import MetricResult
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app import store_reads

    _, run_id = dated_run
    store = RunStore()
    assert store.last_row(run_id) == 51 and store_reads.run_version(run_id) == ("finished", 51)
    before = store_reads.system_summary(run_id)
    store.set_status(run_id, "running")
    store.record_row(run_id, 52, "extra", [MetricResult("future_leak", 1.0, "", None, {})], system="live")
    assert store_reads.run_version(run_id)[0] == "running"
    after = store_reads.system_summary(run_id)  # read again: the run grew
    assert after["n"].sum() == before["n"].sum() + 1
