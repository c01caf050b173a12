"""A job remembers the dashboard session that queued it, and the session that resumes it takes it
over (tempo_eval.store.jobs); the Evaluate page's own jobs, other sessions' and the interrupted
ones come from there (the browser test: tests/browser/test_evaluate_sessions.py)."""

from __future__ import annotations

from tempo_eval.store.jobs import JobQueue, Worker
from tests.support.jobs import SETTINGS


def test_a_job_keeps_its_session_and_a_resume_hands_it_to_the_resuming_session() -> None:
    queue = JobQueue()
    try:
        job_id = queue.submit("evaluate", {**SETTINGS, "path": "/data/a.jsonl"}, label="a", session="tab-a")
        other = queue.submit("evaluate", SETTINGS, label="b", dataset_id=3)
        assert queue.get(job_id)["session"] == "tab-a" and queue.get(other)["session"] is None
        assert queue.claim(Worker.this_process(), limit=5)["id"] == job_id
        queue.finish(job_id, "interrupted", error="the worker process ended before the job did")
        assert [j["id"] for j in queue.jobs(kind="evaluate", status="interrupted")] == [job_id]
        assert queue.requeue(job_id, session="tab-b")
        resumed = queue.get(job_id)
        assert resumed["session"] == "tab-b" and resumed["status"] == "queued"
        assert resumed["arguments"]["path"] == "/data/a.jsonl"  # what a worker needs is in the row
        queue.request_cancel(job_id)
        assert queue.requeue(job_id) and queue.get(job_id)["session"] == "tab-b"  # no session given: kept
    finally:
        queue.close()
