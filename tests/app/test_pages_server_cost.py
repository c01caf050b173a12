"""What a page run costs the server when many analysts use the dashboard (issue 29): the Results
grid is formatted by the browser (no pandas Styler on the server), Compare's figures are built
once per input, and a comparison being scored is watched by a fragment, not by rerunning the
whole page. bench/dashboard_load.py measures the effect; these tests pin the behaviour."""

from __future__ import annotations

import json
import math

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tempo_eval.store.jobs import JobQueue
from tempo_eval_app import formatting, worker_jobs
from tests.app.test_pages import APP, SAMPLE, TIMEOUT, assert_clean, worker_in_this_process  # noqa: F401
from tests.support.paths import ROOT

FILES = "TREC run files (paths on this machine, a folder of runs, or uploads)"


def _sample_with_two_runs() -> tuple[int, list[int]]:
    """The sample QA dataset stored with two focus-time runs (no model), as the bench has it."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    try:
        dataset_id = store.save_dataset(load_dataset(SAMPLE / "temporal_qa.csv"))
        run_ids = [evaluate(store.get_dataset(dataset_id), [TemporalFaithfulness(mode="focus_time"),
                                                            TemporalNDCG(k=k, mode="focus_time")],
                            store=store, run_name=f"focus k={k}").run_id for k in (5, 10)]
    finally:
        store.close()
    return dataset_id, run_ids


def _open(page: str, dataset_id: int, run_ids: list[int]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.query_params["runs"] = ",".join(map(str, run_ids))
    at.switch_page(page).run()
    assert_clean(at)
    return at


def test_results_grid_keeps_scores_as_numbers_in_the_one_format_and_missing_as_a_dash() -> None:
    dataset_id, run_ids = _sample_with_two_runs()
    at = _open("views/results.py", dataset_id, run_ids)
    grid = next(d for d in at.dataframe if "temporal_faithfulness reason" in d.value.columns)
    frame = grid.value
    assert len(frame) == 60  # 30 rows of each run
    for metric in ("temporal_faithfulness", "temporal_ndcg"):
        assert frame[metric].dtype.kind == "f"  # numbers: the grid sorts them as numbers
    # the browser draws them: three decimals as fmt_score, a missing value as formatting.MISSING
    assert grid.proto.placeholder == formatting.MISSING
    config = json.loads(grid.proto.columns)
    assert config["temporal_faithfulness"]["type_config"]["format"] == "%.3f"
    assert f"{0.75:.3f}" == formatting.fmt_score(0.75)
    not_measured = int(frame["temporal_faithfulness"].isna().sum())
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert f"{not_measured:,} not measured" in captions
    assert all(math.isnan(v) or 0 <= v <= 1 for v in frame["temporal_faithfulness"])


def test_compare_builds_the_scatter_once_for_the_same_two_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempo_eval.viz import scatter

    st.cache_resource.clear()
    built = []
    real = scatter.paired_scatter

    def counted(*args, **kwargs):
        built.append(kwargs.get("metric"))
        return real(*args, **kwargs)

    monkeypatch.setattr(scatter, "paired_scatter", counted)
    dataset_id, run_ids = _sample_with_two_runs()
    at = _open("views/compare.py", dataset_id, run_ids)
    first = next(c for c in at.get("plotly_chart") if "per query" in c.proto.spec)
    at.run()  # a rerun (another analyst, a widget): the same figure, not built again
    assert_clean(at)
    again = next(c for c in at.get("plotly_chart") if "per query" in c.proto.spec)
    assert len(built) == 1
    assert json.loads(again.proto.spec) == json.loads(first.proto.spec)
    assert len(json.loads(first.proto.spec)["data"]) == 3  # A better, B better, tie


def test_a_comparison_waiting_for_a_worker_is_watched_without_rerunning_the_page(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The job stays queued (no worker starts): the page shows its place and returns, where the
    page that slept and reran itself every half second never ended its run."""
    monkeypatch.setattr(worker_jobs, "spawn_worker", lambda **_: None)
    monkeypatch.setenv("TEMPO_EVAL_PAGE_WAIT_S", "0.2")
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=30)
    at.session_state["compare_source"] = FILES
    at.session_state["compare_run_paths"] = f"{SAMPLE / 'run_bm25.trec'}\n{SAMPLE / 'run_dense.trec'}"
    at.session_state["compare_qrels_path"] = str(SAMPLE / "qrels.txt")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Waiting for a free worker" in p.proto.text for p in at.get("progress"))
    assert not any("label" in d.value.columns for d in at.dataframe)  # no comparison yet
    queue = JobQueue()
    try:
        waiting = queue.jobs(kind="compare_runs", active=True)
        assert len(waiting) == 1 and waiting[0]["status"] == "queued"
        job = waiting[0]
        from tempo_eval.cli.job import run_worker

        run_worker(queue, limit=1, keys={})  # a worker comes and scores it
        assert queue.get(job["id"])["status"] == "finished"
    finally:
        queue.close()
    at.run()  # what the fragment's rerun of the whole page does once the job has ended
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(d.value for d in at.dataframe if "label" in d.value.columns)
    assert len(table) == 2


def test_a_large_cached_dataset_frame_is_out_of_the_cycle_collectors_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its cells are no longer walked by each full collection (gc.freeze), and the frame is still
    freed once the cache drops it (reference counting: a frame holds no cycle)."""
    import gc
    import weakref

    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app import store_reads

    store = RunStore()
    try:
        dataset_id = store.save_dataset(load_dataset(SAMPLE / "temporal_qa.csv"))
    finally:
        store.close()
    monkeypatch.setattr(store_reads, "SETTLE_OVER_ROWS", 10)  # the 30-row sample counts as large here
    store_reads._dataset_frame.clear()
    gc.unfreeze()
    try:
        frame = store_reads.dataset_frame(dataset_id)
        contexts = frame["contexts"].iloc[0]
        assert isinstance(contexts, list) and gc.is_tracked(contexts)
        assert gc.get_freeze_count() > 0
        assert not any(obj is contexts for obj in gc.get_objects())  # in no generation a collection walks
        dropped = weakref.ref(frame)
        del frame, contexts
        store_reads._dataset_frame.clear()
        assert dropped() is None
    finally:
        gc.unfreeze()
