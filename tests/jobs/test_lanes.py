"""Job lanes (issue 29): reading an upload never waits behind an evaluation. Evaluations keep the
`evaluations` lane's limit; uploads and Compare's scoring have a lane of their own (PAGE_LIMIT),
and a queued job's place is its place in its lane. Across processes: an upload starts and finishes while a long evaluation
runs in another worker with the limit at 1 (this machine's cores minus one)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tempo_eval.store.jobs import PAGE_LIMIT, JobQueue, Worker, lane_of
from tempo_eval.store.runs import RunStore
from tests.support.jobs import ROOT, SETTINGS, write_rows

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def test_kinds_have_their_lanes() -> None:
    assert lane_of("evaluate") == "evaluations"
    assert lane_of("dataset_upload") == lane_of("trec_runs") == lane_of("foreign_import") == "pages"
    assert lane_of("compare_runs") == "pages"
    assert lane_of("nli_check") == "check"


def test_an_upload_is_taken_beside_a_running_evaluation_and_places_count_in_its_lane() -> None:
    queue = JobQueue()
    me = Worker.this_process()
    evaluation = queue.submit("evaluate", {"n": 1})
    waiting_evaluation = queue.submit("evaluate", {"n": 2})
    upload = queue.submit("dataset_upload", {"path": "a"})
    second_upload = queue.submit("compare_runs", {"runs": []})
    third_upload = queue.submit("trec_runs", {"runs": []})
    assert queue.claim(me, limit=1)["id"] == evaluation
    # the evaluations' place is full: the next evaluation waits, the upload is taken
    assert queue.claim(me, limit=1)["id"] == upload
    assert PAGE_LIMIT == 1 and queue.claim(me, limit=1) is None  # one upload at a time
    assert queue.place(waiting_evaluation) == 1  # the uploads before it are not in its lane
    assert queue.place(second_upload) == 1 and queue.place(third_upload) == 2
    # an ended upload hands its place to the next upload, never to the waiting evaluation
    taken = queue.claim(me, limit=1, finished={"id": upload, "status": "finished"})
    assert taken["id"] == second_upload
    assert queue.place(third_upload) == 1 and queue.place(waiting_evaluation) == 1
    # an upload never takes an evaluation's place either
    taken = queue.claim(me, limit=1, finished={"id": evaluation, "status": "finished"})
    assert taken["id"] == waiting_evaluation


def _worker() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tempo_eval", "job", "run", "--limit", "1"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _stop(worker: subprocess.Popen) -> str:
    if worker.poll() is None:
        worker.kill()
    worker.wait()
    text = worker.stdout.read().decode(errors="replace")
    worker.stdout.close()
    return text


def test_an_upload_starts_and_finishes_while_an_evaluation_runs_in_another_worker(tmp_path, monkeypatch) -> None:
    from tempo_eval.io.dataset import load_dataset

    monkeypatch.setenv("TEMPO_EVAL_ALLOWED_DIRS", str(tmp_path))  # the workers read the upload from here

    store = RunStore()
    try:
        dataset_id = store.save_dataset(load_dataset(write_rows(tmp_path / "long.jsonl", 40_000)))
    finally:
        store.close()
    upload_path = write_rows(tmp_path / "short.jsonl", 300, word="tunnel")
    queue = JobQueue()
    evaluation = queue.submit("evaluate", {**SETTINGS, "dataset_id": dataset_id}, dataset_id=dataset_id)
    evaluator = _worker()
    reader = None
    try:
        deadline = time.monotonic() + 180
        while queue.get(evaluation)["done"] == 0 and time.monotonic() < deadline:
            assert evaluator.poll() is None, _stop(evaluator)
            time.sleep(0.1)
        assert queue.get(evaluation)["status"] == "running"
        upload = queue.submit("dataset_upload", {"path": str(upload_path), "name": "short.jsonl", "store": True})
        reader = _worker()  # as the page does: a worker for the new job
        while queue.get(upload)["active"] and time.monotonic() < deadline:
            time.sleep(0.1)
        found, running = queue.get(upload), queue.get(evaluation)
        assert found["status"] == "finished", found
        assert running["status"] == "running", "the evaluation ended before the upload: make it longer"
        assert found["started_at"] > running["started_at"] and found["finished_at"] < time.time()
        assert 0 < running["done"] < 40_000
        assert reader.wait(timeout=60) == 0  # nothing else it may run: it exits
        queue.request_cancel(evaluation)
        assert evaluator.wait(timeout=120) == 0
    finally:
        log = _stop(evaluator) + (_stop(reader) if reader is not None else "")
    assert queue.get(evaluation)["status"] == "cancelled", log
    store = RunStore()
    try:
        stored = store.list_datasets()
    finally:
        store.close()
    assert found["dataset_id"] in stored["id"].tolist() and "short.jsonl" in stored["name"].tolist()
