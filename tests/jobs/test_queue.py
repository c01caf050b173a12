"""The workspace job queue and its worker process (issue 29): limits, queue places, claiming the
next job in the transaction that ends one, cancel across processes, dead workers, resume."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from tempo_eval.cli import job as job_cli
from tempo_eval.store.jobs import JobQueue, Worker, default_limit, process_start
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")

SETTINGS = {"tf": True, "tf_mode": "focus_time", "ndcg": False, "ndcg_mode": "gold", "fc": False, "k": 10,
            "verifier": "lexical", "nli_model": "", "judge_url": "", "judge_model": "", "run_name": "",
            "reference_date": None}


def _dataset(n_rows: int) -> int:
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.db import workspace_dir

    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_rows)],
        "query": [f"What happened in {1900 + i % 120}?" for i in range(n_rows)],
        # every text its own (bridge i), so the focus-time memo cannot make a large run finish
        # before a cancel sent after its first progress reaches it
        "answer": [f"In {1900 + i % 120} bridge {i} opened; it closed in {1950 + i % 60}." for i in range(n_rows)],
        "contexts": [[f"Bridge {i} opened in {1900 + i % 120}.", f"Bridge {i} closed later."] for i in range(n_rows)],
    })
    store = RunStore()
    try:
        path = workspace_dir() / f"generated_{n_rows}.jsonl"
        frame.to_json(path, orient="records", lines=True)
        return store.save_dataset(load_dataset(path))
    finally:
        store.close()


def test_claims_respect_the_limit_and_the_queue_shows_places() -> None:
    queue = JobQueue()
    me = Worker.this_process()
    first, second, third = (queue.submit("evaluate", {"n": i}) for i in range(3))
    check = queue.submit("nli_check", {"model": "m"})
    assert queue.claim(me, limit=1)["id"] == first
    assert queue.place(second) == 1 and queue.place(third) == 2 and queue.place(first) is None
    taken = queue.claim(me, limit=1)
    assert taken["id"] == check  # a check runs beside the limit; the evaluations wait
    assert queue.claim(me, limit=1) is None
    # ending a job takes the next in the same transaction
    assert queue.claim(me, limit=1, finished={"id": first, "status": "finished", "run_id": 7})["id"] == second
    assert queue.get(first)["status"] == "finished" and queue.get(first)["run_id"] == 7
    assert queue.place(third) == 1


def test_a_job_with_a_key_is_taken_only_by_the_worker_holding_it() -> None:
    queue = JobQueue()
    keyed = queue.submit("evaluate", {}, needs_key=True)
    plain = queue.submit("evaluate", {})
    me = Worker.this_process()
    assert queue.claim(me, limit=5)["id"] == plain
    assert queue.claim(me, limit=5) is None
    assert queue.claim(me, limit=5, keys=frozenset({keyed}))["id"] == keyed


def test_a_dead_worker_leaves_its_job_interrupted_and_it_can_be_queued_again() -> None:
    queue = JobQueue()
    job_id = queue.submit("evaluate", {})
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = Worker(int(ended.stdout), "1", Worker.this_process().host)
    assert queue.claim(gone, limit=1)["id"] == job_id
    # a live pid whose process started at another time is not the worker either
    reused = queue.submit("evaluate", {})
    queue.claim(Worker(os.getpid(), "0", Worker.this_process().host), limit=5)  # reaps the first
    assert queue.get(job_id)["status"] == "interrupted"
    assert queue.reap() == 1
    assert queue.get(job_id)["status"] == "interrupted" == queue.get(reused)["status"]
    assert queue.requeue(job_id) and queue.get(job_id)["status"] == "queued"
    assert not queue.requeue(job_id)  # already queued


def test_process_start_tells_a_live_process_from_a_missing_one() -> None:
    assert process_start(os.getpid()) is not None
    assert process_start(2**22 + 12345) is None


def test_a_queued_job_is_cancelled_at_once() -> None:
    queue = JobQueue()
    job_id = queue.submit("evaluate", {})
    queue.request_cancel(job_id)
    assert queue.get(job_id)["status"] == "cancelled"


def test_the_limit_defaults_to_cores_minus_one_and_reads_the_setting(monkeypatch) -> None:
    monkeypatch.delenv("TEMPO_EVAL_MAX_JOBS", raising=False)
    assert default_limit() == max(1, (os.cpu_count() or 1) - 1)
    monkeypatch.setenv("TEMPO_EVAL_MAX_JOBS", "3")
    assert default_limit() == 3
    monkeypatch.setenv("TEMPO_EVAL_MAX_JOBS", "many")
    with pytest.raises(ValueError, match="TEMPO_EVAL_MAX_JOBS"):
        default_limit()


def test_the_worker_evaluates_a_queued_job_and_records_its_run() -> None:
    dataset_id = _dataset(30)
    queue = JobQueue()
    job_id = queue.submit("evaluate", {**SETTINGS, "dataset_id": dataset_id}, dataset_id=dataset_id)
    assert job_cli.run_worker(queue, limit=1) == 0
    found = queue.get(job_id)
    assert found["status"] == "finished", found["error"]
    assert (found["done"], found["total"]) == (30, 30)
    store = RunStore()
    assert store.result_counts(found["run_id"])[0] == 30
    store.close()


def test_a_failing_job_fails_with_one_line_and_the_worker_goes_on() -> None:
    queue = JobQueue()
    bad = queue.submit("evaluate", {**SETTINGS, "dataset_id": 999})
    other = queue.submit("nli_check_unknown", {})
    job_cli.run_worker(queue, limit=1)
    assert queue.get(bad)["status"] == "failed" and "\n" not in queue.get(bad)["error"]
    assert "unknown job kind" in queue.get(other)["error"]


def test_cancel_reaches_a_worker_in_another_process() -> None:
    dataset_id = _dataset(20_000)
    queue = JobQueue()
    job_id = queue.submit("evaluate", {**SETTINGS, "dataset_id": dataset_id}, dataset_id=dataset_id)
    worker = subprocess.Popen([sys.executable, "-m", "tempo_eval", "job", "run", "--limit", "1"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while queue.get(job_id)["done"] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        queue.request_cancel(job_id)
        assert worker.wait(timeout=120) == 0, worker.stdout.read().decode()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        worker.stdout.close()  # left open, it warns (ResourceWarning) in whichever test collects it
    found = queue.get(job_id)
    assert found["status"] == "cancelled", found
    assert 0 < found["done"] < 20_000
    assert found["rows_per_s"] and found["rows_per_s"] > 0
