"""The Results page pages through a run of 400,000 results without reading them all (issue 27.6)."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.store.runs import RunStore
from tests.app.test_pages import APP, TIMEOUT, assert_clean, table_with

N_ROWS = 200_000  # x 2 metrics = 400,000 results


def big_run(n_rows: int = N_ROWS, metrics: tuple[str, ...] = ("temporal_faithfulness", "temporal_ndcg")) -> tuple[int, int]:
    from tempo_eval.io.dataset import Dataset
    from tempo_eval.store.runs import frame_content_hash

    store = RunStore()
    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_rows)], "query": [f"What happened in {1000 + i % 1000}?" for i in range(n_rows)],
        "answer": ["It happened."] * n_rows, "contexts": [["In 1000 it happened."]] * n_rows,
    }, dtype=object)
    dataset_id = store.save_dataset(Dataset(frame, f"big {n_rows}", {}, frame_content_hash(frame), "test"))
    run_id, _ = store.create_or_resume_run(dataset_id, {"test": "big"}, name="big run")
    rows = [(run_id, i, f"q{i}", None, metric, None if i % 10 == 0 else (i % 100) / 100, "test",
             "no_temporal_claims" if i % 10 == 0 else None, None, json.dumps({}))
            for i in range(n_rows) for metric in metrics]
    with store.connection:
        store.connection.executemany(
            "INSERT INTO results (run_id, row_idx, query_id, system, metric, score, reason, reason_code, success, details)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    store.set_status(run_id, "finished")
    store.close()
    return dataset_id, run_id


def test_a_page_of_a_big_run_is_read_by_its_key_range() -> None:
    _, run_id = big_run()
    store = RunStore()
    started = time.perf_counter()
    page = store.results_rows(run_id, 150_000, 150_999)
    took = time.perf_counter() - started
    assert len(page) == 2_000 and page["row"].min() == 150_000 and page["row"].max() == 150_999
    assert took < 1.0, f"a page took {took:.2f} s"
    counts = store.metric_counts(run_id).set_index("metric")
    assert counts.loc["temporal_ndcg", "n"] == N_ROWS and counts.loc["temporal_ndcg", "n_nan"] == N_ROWS // 10
    store.close()


@pytest.mark.slow
def test_the_results_page_pages_through_400000_results_without_loading_them(monkeypatch) -> None:
    dataset_id, run_id = big_run()

    def whole_run(self, run_id):  # the page must never read a whole run this size
        raise AssertionError("results_frame read the whole run")

    monkeypatch.setattr(RunStore, "results_frame", whole_run)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.query_params["runs"] = str(run_id)
    at.switch_page("views/results.py").run()  # straight to Results, as a link to it does
    assert_clean(at)
    grid = table_with(at, "query_id", "temporal_ndcg reason")
    assert len(grid) == 1_000 and grid["row"].min() == 1  # dataset rows are shown counted from 1
    caption = " ".join(c.value for c in at.caption).replace("\\", "").replace("\u2060", "")
    from tempo_eval_app.words import metric_label

    assert "400,000 results in all" in caption
    assert f"{metric_label('temporal_ndcg')}: 20,000 not measured" in caption
    at.number_input(key="results_page").set_value(200).run()
    assert_clean(at)
    grid = table_with(at, "query_id", "temporal_ndcg reason")
    assert (grid["row"].min(), grid["row"].max()) == (199_001, 200_000)
    assert at.query_params["page"] in ("200", ["200"])


@pytest.mark.slow
def test_a_run_of_100000_results_of_one_metric_opens_on_results() -> None:
    """100,000 lines of one metric, whole, were 500,000 cells: more than the pandas Styler that
    draws the grid takes (262,144), and the page showed an error; such a run is paged."""
    dataset_id, run_id = big_run(100_000, ("temporal_faithfulness",))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.query_params["runs"] = str(run_id)
    at.switch_page("views/results.py").run()
    assert_clean(at)
    grid = table_with(at, "query_id", "temporal_faithfulness reason")
    assert len(grid) == 1_000 and grid["row"].min() == 1  # dataset rows are shown counted from 1
