"""Pages read what they show, not whole datasets or runs (issue 29): `RunStore.dataset_head`
reads the first rows from the beginning of the stored parts, the same as `dataset_frame.head`
for a dataset stored whole, in parts, in parts of different columns, or as plain text; the
Evaluate page and Datasets' preview of the active dataset never decode the whole dataset;
Agreement reads the query column alone; Evaluate summarises an ended job from its scores; a
dataset being stored is listed as storing, with its rows so far."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.jobs.uploads import read_dataset
from tempo_eval.store.runs import RunStore
from tests.app.test_pages import ROOT, TIMEOUT
from tests.support.jobs import write_rows


def _stored(tmp_path) -> dict[str, int]:
    store = RunStore()
    try:
        whole = store.save_dataset(load_dataset(write_rows(tmp_path / "whole.jsonl", 3_500)))
        parts = read_dataset({"path": str(write_rows(tmp_path / "parts.jsonl", 3_500, word="tunnel")),
                              "name": "parts.jsonl", "store": True})["dataset_id"]
        mixed, _ = store.begin_dataset(name="mixed", content_hash="h", mapping={}, source_format="jsonl")
        store.add_dataset_rows(mixed, 0, pd.DataFrame({"query_id": ["a", "b"], "query": ["é ünï \"x\"", "]"]}))
        store.add_dataset_rows(mixed, 2, pd.DataFrame({"query_id": ["c"], "query": ["y"], "gold_ids": [["d1"]]}))
        store.finish_dataset(mixed, 3, [])
        one = store.save_dataset(load_dataset(write_rows(tmp_path / "one.jsonl", 1)))
        return {"whole": whole, "parts": parts, "mixed": mixed, "one": one}
    finally:
        store.close()


@pytest.mark.parametrize("n_rows", [0, 1, 50, 1_500, 10_000])
def test_the_head_is_the_frames_head_however_the_dataset_was_stored(tmp_path, n_rows) -> None:
    for name, dataset_id in _stored(tmp_path).items():
        store = RunStore()  # a new store: nothing decoded before
        head = store.dataset_head(dataset_id, n_rows)
        whole = store.dataset_frame(dataset_id)
        assert list(head.columns) == list(whole.columns), name
        assert head.astype(str).equals(whole.head(n_rows).astype(str)), name
        assert store.dataset_head(dataset_id, n_rows).astype(str).equals(head.astype(str))  # decoded already
        store.close()
    with pytest.raises(KeyError):
        RunStore().dataset_head(999)


def test_evaluate_and_the_datasets_preview_never_decode_the_whole_dataset(tmp_path, monkeypatch) -> None:
    ids = _stored(tmp_path)

    def refused(self, dataset_id):
        raise AssertionError("the whole dataset was decoded")

    monkeypatch.setattr(RunStore, "dataset_frame", refused)
    monkeypatch.setattr(RunStore, "_stored_rows", refused)
    for name in ("whole", "parts"):
        for page in ("evaluate", "datasets"):  # each page on its own (Overview, the first page, reads rows)
            at = AppTest.from_file(str(ROOT / "views" / f"{page}.py"), default_timeout=TIMEOUT)
            at.query_params["dataset"] = str(ids[name])
            at.run()
            assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
            captions = " ".join(c.value for c in at.caption).replace("\\", "")  # markdown escapes
            if page == "evaluate":
                assert "3500 rows" in captions and "columns query_id, query, contexts, answer" in captions, captions
                assert at.button(key="run_evaluation") is not None
            else:
                assert "3,500 rows" in captions, captions
                preview = [d.value for d in at.dataframe if "query_id" in d.value.columns and len(d.value) == 50]
                assert preview and preview[0]["query_id"].tolist()[:2] == ["q0", "q1"]


def test_agreement_shows_the_queries_without_the_dataset_frame(monkeypatch) -> None:
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    fixture = ROOT / "tests" / "data" / "interop" / "ragas_result.csv"
    store = RunStore()
    foreign_run = import_foreign_results(load_foreign_results(fixture), store)
    evaluate(load_dataset(fixture), [TemporalNDCG(k=10)], store=store)
    dataset_id = store.run_info(foreign_run)["dataset_id"]
    queries = store.dataset_column(dataset_id, "query")
    store.close()

    def refused(self, dataset_id):
        raise AssertionError("the whole dataset frame was read")

    monkeypatch.setattr(RunStore, "dataset_frame", refused)
    at = AppTest.from_file(str(ROOT / "views" / "agreement.py"), default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.run()
    at.selectbox(key="agreement_theirs").set_value((foreign_run, "ragas:faithfulness")).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    table = at.dataframe[0].value
    assert table["query"].tolist() == [queries[int(row)] for row in table["row"]]


def test_an_ended_evaluation_is_summarised_from_its_scores_not_its_results(tmp_path, monkeypatch) -> None:
    # Evaluate shows an ended job's summary (mean and 95% CI per metric) and its downloads without
    # reading the run's results frame: it used to read (and keep) it and resample on every rerun
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.store.jobs import JobQueue
    from tests.support.jobs import SETTINGS, ended

    store = RunStore()
    dataset_id = store.save_dataset(load_dataset(write_rows(tmp_path / "rows.jsonl", 40)))
    run = evaluate(store.get_dataset(dataset_id), [TemporalFaithfulness(mode="focus_time")], store=store)
    expected = store.results_frame(run.run_id)
    store.close()
    queue = JobQueue()
    ended(queue, "evaluate", {**SETTINGS, "dataset_id": dataset_id}, "finished", run_id=run.run_id,
          dataset_id=dataset_id, session="this-tab")  # queued by this page's session
    queue.close()
    reads = []
    original = RunStore.results_frame
    monkeypatch.setattr(RunStore, "results_frame", lambda self, run_id: reads.append(run_id) or original(self, run_id))
    at = AppTest.from_file(str(ROOT / "views" / "evaluate.py"), default_timeout=TIMEOUT)
    at.query_params["dataset"] = str(dataset_id)
    at.session_state["_session_id"] = "this-tab"  # tempo_eval_app.worker_jobs.session_id
    at.run()
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert any(f"rows evaluated and stored (run #{run.run_id})" in s.value for s in at.success), \
        [s.value for s in at.success]
    summary = next(d.value for d in at.dataframe if "rows measured" in " ".join(map(str, d.value.columns)))
    line = summary.iloc[0]
    assert line["mean"] == f"{expected['score'].mean():.3f}" and line["rows measured"] == "40", line.to_dict()
    assert {"CSV", "JSONL", "Parquet"} <= {b.proto.label for b in at.get("download_button")}
    assert reads == []  # neither the summary nor the buttons read the results


def test_a_dataset_being_stored_is_listed_as_storing_with_its_rows_so_far_not_as_0_rows() -> None:
    from tempo_eval.store.jobs import JobQueue, Worker

    store = RunStore()
    partial, _ = store.begin_dataset(name="big.jsonl", content_hash="h", mapping={}, source_format="jsonl")
    store.add_dataset_rows(partial, 0, pd.DataFrame({"query_id": ["a", "b"], "query": ["x", "y"]}))
    store.close()
    queue = JobQueue()
    job_id = queue.submit("dataset_upload", {"path": "/nowhere/big.jsonl", "name": "big.jsonl", "store": True})
    assert queue.claim(Worker.this_process(), limit=1)["id"] == job_id
    queue.progress(job_id, 1500, 3000, None)

    def listed() -> list[str]:
        at = AppTest.from_file(str(ROOT / "views" / "datasets.py"), default_timeout=TIMEOUT)
        at.run()
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        table = next(d.value for d in at.dataframe if "rows" in d.value.columns and "format" in d.value.columns)
        return table.loc[table["name"] == "big.jsonl", "rows"].tolist()

    assert listed() == ["storing… (1,500 rows so far)"]
    queue.finish(job_id, "failed", error="killed")
    assert listed() == ["incomplete: the job storing it stopped (reading the file again completes it)"]
    queue.close()
