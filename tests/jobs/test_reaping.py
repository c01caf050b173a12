"""Jobs that would hold the queue for ever (issue 29): a hung job of the pages lane is stopped
after its time limit and the next upload runs; a job only the worker holding its API key may
take fails with a clear message when that worker died (or never started) before taking it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tempo_eval.store import jobs as jobs_module
from tempo_eval.store.jobs import JobQueue, Worker, page_job_limit, process_start

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def _as(process: subprocess.Popen) -> Worker:
    for _ in range(100):  # its start time, once /proc shows it
        start = process_start(process.pid)
        if start is not None:
            return Worker(process.pid, start, Worker.this_process().host)
        time.sleep(0.05)
    raise AssertionError("the helper process did not start")


def test_a_hung_pages_job_is_stopped_after_its_limit_and_the_next_upload_runs(monkeypatch) -> None:
    queue = JobQueue()
    hung_worker = _sleeper()
    try:
        hung = queue.submit("dataset_upload", {"path": "a"})
        assert queue.claim(_as(hung_worker), limit=1)["id"] == hung
        waiting = queue.submit("dataset_upload", {"path": "b"})
        me = Worker.this_process()
        assert queue.claim(me, limit=1) is None  # the lane's one place is taken
        assert queue.get(hung)["status"] == "running"  # within its limit: left alone
        monkeypatch.setenv("TEMPO_EVAL_PAGE_JOB_S", "0.2")
        time.sleep(0.3)
        # an evaluation running as long is never stopped by the pages' limit
        evaluation = queue.submit("evaluate", {"n": 1})
        assert queue.claim(me, limit=1, kinds=("evaluate",))["id"] == evaluation
        time.sleep(0.3)
        taken = queue.claim(me, limit=1, kinds=("dataset_upload",))
        assert taken is not None and taken["id"] == waiting
        ended = queue.get(hung)
        assert ended["status"] == "failed" and "TEMPO_EVAL_PAGE_JOB_S" in ended["error"], ended
        assert "try a smaller file" in ended["error"]
        assert hung_worker.wait(timeout=10) != 0  # its worker was stopped (SIGTERM)
        assert queue.get(evaluation)["status"] == "running"
    finally:
        hung_worker.kill()
        hung_worker.wait()
        queue.close()


def test_the_pages_limit_setting_is_read_and_a_bad_value_falls_back(monkeypatch, caplog) -> None:
    monkeypatch.setenv("TEMPO_EVAL_PAGE_JOB_S", "90")
    assert page_job_limit() == 90
    monkeypatch.setenv("TEMPO_EVAL_PAGE_JOB_S", "soon")
    assert page_job_limit() == jobs_module.PAGE_JOB_LIMIT_S
    assert "TEMPO_EVAL_PAGE_JOB_S must be a number of seconds above 0, got 'soon'" in caplog.text


def test_a_keyed_job_fails_when_the_worker_holding_its_key_died_before_taking_it() -> None:
    queue = JobQueue()
    keyed = queue.submit("evaluate", {"n": 1}, needs_key=True)
    holder = _sleeper()
    queue.hold(keyed, _as(holder))
    assert queue.reap() == 0 and queue.get(keyed)["status"] == "queued"  # its worker waits for a place
    holder.kill()
    holder.wait()
    assert queue.reap() == 1
    failed = queue.get(keyed)
    assert failed["status"] == "failed" and not failed["active"]
    assert "ended before it took the job" in failed["error"] and "give the key again" in failed["error"]
    # another worker never took it meanwhile (it has no key)
    assert failed["pid"] == holder.pid
    queue.close()


def test_a_keyed_job_whose_worker_never_started_fails_after_a_while(monkeypatch) -> None:
    queue = JobQueue()
    keyed = queue.submit("evaluate", {"n": 1}, needs_key=True)
    assert queue.reap() == 0 and queue.get(keyed)["status"] == "queued"  # its worker may be starting
    monkeypatch.setattr(jobs_module, "KEYED_START_S", 0.0)
    time.sleep(0.05)
    assert queue.reap() == 1
    assert "no worker with its API key" in queue.get(keyed)["error"]
    queue.close()


def test_the_worker_started_with_a_key_holds_its_job(tmp_path) -> None:
    # the real worker: it records itself on the keyed job at start, then takes and runs it
    import os

    from tests.support.jobs import SETTINGS, write_rows

    queue = JobQueue()
    path = write_rows(tmp_path / "rows.jsonl", 5)
    keyed = queue.submit("evaluate", {**SETTINGS, "path": str(path)}, needs_key=True)
    # the worker reads a typed path only inside the allowed folders it was started with
    env = {**os.environ, "TEMPO_EVAL_JOB_KEY": "sk-test-not-a-real-key", "TEMPO_EVAL_ALLOWED_DIRS": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "tempo_eval", "job", "run", "--key-for", str(keyed), "--limit", "1"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = queue.get(keyed)
    assert found["status"] == "finished", found["error"]
    assert "sk-test-not-a-real-key" not in str(found)
    queue.close()
