"""Uploads read by worker jobs (issue 29): the Datasets page's dataset file and TREC runs and the
Agreement page's foreign scores are read and stored by `python -m tempo_eval job run`, never by
the app process; errors come back in the page's words, and every session sees the outcome."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tempo_eval.cli.job import run_worker
from tempo_eval.jobs import uploads as upload_jobs
from tempo_eval.store.db import workspace_dir
from tempo_eval.store.jobs import JobQueue
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT

SAMPLE = ROOT / "data" / "sample"


def _run_all(queue: JobQueue) -> None:
    run_worker(queue, limit=1)


def test_a_dataset_job_reads_without_storing_then_stores_on_request(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_bytes((SAMPLE / "temporal_qa.jsonl").read_bytes())
    read = upload_jobs.read_dataset({"path": str(path), "name": "mine.jsonl", "mapping": None, "store": False})
    assert read["status"] == "finished" and read["result"]["rows"] == 30 and "dataset_id" not in read
    assert len(read["result"]["preview"]) == 30 and RunStore().list_datasets().empty
    stored = upload_jobs.read_dataset({"path": str(path), "name": "mine.jsonl", "mapping": None, "store": True})
    datasets = RunStore().list_datasets()
    assert datasets["id"].tolist() == [stored["dataset_id"]] and datasets["name"].tolist() == ["mine.jsonl"]


def test_a_refused_file_fails_the_job_with_the_loaders_whole_message(tmp_path: Path) -> None:
    path = workspace_dir() / "uploads" / "saved_rows.jsonl"  # where the page saves an upload
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b'{"query": "a", "answer": "b"}\n{not json}\n')
    queue = JobQueue()
    job_id = queue.submit("dataset_upload", {"path": str(path), "name": "rows.jsonl", "mapping": None, "store": False})
    _run_all(queue)
    job = queue.get(job_id)
    assert job["status"] == "failed"
    assert "rows.jsonl" in job["error"] and "line 2" in job["error"] and "saved_rows" not in job["error"]


def test_trec_runs_and_foreign_scores_are_job_kinds_of_the_worker() -> None:
    uploads = workspace_dir() / "uploads"  # where the pages save what they queue (the worker reads no other place)
    uploads.mkdir(exist_ok=True)
    queue = JobQueue()
    runs = queue.submit("trec_runs", {"runs": [["run_bm25.trec", str(SAMPLE / "run_bm25.trec")]],
                                      "qrels": ["qrels.txt", str(SAMPLE / "qrels.txt")], "store": True})
    bad = queue.submit("trec_runs", {"runs": [["r.trec", str(SAMPLE / "run_bm25.trec")]],
                                     "qrels": ["q.txt", str(_write(uploads / "q.txt", b"q1 0 d1 1\nq2 0 d2 maybe\n"))]})
    data = _write(uploads / "test_run.json",
                  (ROOT / "tests" / "data" / "interop" / "deepeval_test_run.json").read_bytes())
    foreign = queue.submit("foreign_import", {"path": str(data), "name": "test_run.json"})
    _run_all(queue)
    assert queue.get(runs)["status"] == "finished" and queue.get(runs)["dataset_id"] is not None
    assert queue.get(bad)["status"] == "failed" and "line 2" in queue.get(bad)["error"]
    imported = queue.get(foreign)
    assert imported["status"] == "finished"
    assert RunStore().run_info(imported["run_id"])["name"] == "deepeval: test_run.json"


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _datasets_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    return at.switch_page("views/datasets.py").run()


def test_the_app_process_does_not_read_the_upload_and_a_second_session_sees_it(monkeypatch) -> None:
    """The page's job runs in a real worker process: the loader is broken in this process, and
    the upload is read all the same; a second session lists the stored dataset and the job."""
    import tempo_eval.io.dataset as dataset_module

    def refuse(*args, **kwargs):
        raise AssertionError("the app process read the upload")

    at = _datasets_page()  # the sample is stored on a fresh workspace first
    monkeypatch.setattr(dataset_module, "load_dataset", refuse)
    at.file_uploader(key="dataset_upload").set_value(
        ("mine.jsonl", (SAMPLE / "temporal_qa.jsonl").read_bytes(), "application/jsonl")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Read 30 rows" in s.value for s in at.success)
    at.button(key="use_upload").click().run()
    at.run()
    assert not at.exception
    (stored,) = RunStore().list_datasets().query("name == 'mine.jsonl'")["id"].tolist()
    assert at.session_state["dataset_id"] == stored

    other = _datasets_page()
    assert not other.exception
    listed = [t.value for t in other.dataframe if "content_hash" not in t.value.columns]
    assert any("mine.jsonl" in set(t.get("name", [])) for t in listed)  # Stored datasets
    reads = next(t for t in listed if "status" in t.columns and "what" in t.columns)
    assert {"Read mine.jsonl", "Store mine.jsonl"} <= set(reads["what"]) and set(reads["status"]) == {"finished"}


def test_a_failing_upload_shows_its_error_in_this_and_another_session() -> None:
    at = _datasets_page()
    at.file_uploader(key="dataset_upload").set_value(("nothing.csv", b"colour,size\nred,3\n", "text/csv")).run()
    assert not at.exception
    message = " ".join(e.value for e in at.error).replace("\\", "")
    assert "nothing.csv" in message and "Traceback" not in message
    other = _datasets_page()
    reads = next(t.value for t in other.dataframe if "what" in t.value.columns)
    assert reads["status"].tolist() == ["failed"] and "nothing.csv" in reads["error"].iloc[0]


def test_a_read_still_running_shows_its_place_in_the_queue(monkeypatch) -> None:
    """With no wait and no worker, the page shows the job queued (not an empty page) and a
    second session finds the same job instead of queueing another."""
    from tempo_eval_app import worker_jobs

    monkeypatch.setenv("TEMPO_EVAL_PAGE_WAIT_S", "0")
    monkeypatch.setattr(worker_jobs, "spawn_worker", lambda **kwargs: None)
    at = _datasets_page()
    name = "**bold** [x](http://example.com).csv"  # a file name is user text: never markdown
    at.file_uploader(key="dataset_upload").set_value((name, b"query,answer\nWhen?,1990\n", "text/csv")).run()
    assert not at.exception
    waiting = next(i.value for i in at.info if "waiting behind other uploads" in i.value)
    assert "place 1 " in waiting
    assert "**bold**" not in waiting and "](http" not in waiting
    assert len(JobQueue().jobs(kind="dataset_upload")) == 1


def test_the_sidebar_reads_the_store_again_once_another_process_wrote_to_it() -> None:
    """The sidebar's dataset and run lists are cached by the store's version: a dataset or run
    written by another connection (a worker) shows at the next rerun."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    before = list(at.sidebar.selectbox(key="dataset_id").options)
    other = RunStore()  # another connection, as a worker's
    dataset_id = other.save_dataset(load_dataset(SAMPLE / "temporal_qa.jsonl"))
    at.run()
    assert len(at.sidebar.selectbox(key="dataset_id").options) == len(before) + 1
    at.sidebar.selectbox(key="dataset_id").set_value(dataset_id).run()
    assert at.sidebar.multiselect(key="run_ids").options == []
    evaluate(other.get_dataset(dataset_id), [TemporalFaithfulness(mode="focus_time")], store=other, run_name="fresh")
    at.run()
    assert [o for o in at.sidebar.multiselect(key="run_ids").options if "fresh" in o]
