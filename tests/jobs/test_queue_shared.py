"""Workers in several processes claim from one queue: each job is run once, by one worker, on
SQLite (claims take turns) and on PostgreSQL (claims at once, FOR UPDATE SKIP LOCKED)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from tempo_eval.store.jobs import CHECK_KINDS, JobQueue, Worker

KIND = sorted(CHECK_KINDS)[0]  # the check lane has no limit: every worker may take any job


def _work(location: str, barrier, out: str) -> None:
    """In a child process: claim until the queue is empty, ending each job with the next claim."""
    queue = JobQueue(location)
    me = Worker.this_process()
    taken: list[int] = []
    barrier.wait(timeout=60)
    finished = None
    while (job := queue.claim(me, limit=1, finished=finished)) is not None:
        taken.append(job["id"])
        finished = {"id": job["id"], "status": "finished", "result": {"by": me.pid}}
    queue.close()
    Path(out).write_text(json.dumps(taken))


def test_several_workers_claiming_from_one_queue_take_each_job_once(workspace_db: str, tmp_path: Path) -> None:
    queue = JobQueue(workspace_db)
    submitted = [queue.submit(KIND, {"n": n}, label=f"job {n}") for n in range(60)]
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    barrier = context.Barrier(4)
    outs = [tmp_path / f"worker{i}.json" for i in range(4)]
    workers = [context.Process(target=_work, args=(workspace_db, barrier, str(out))) for out in outs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=240)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    taken = [job for out in outs for job in json.loads(out.read_text())]
    assert sorted(taken) == sorted(submitted)  # every job, none twice
    jobs = queue.jobs(limit=100)
    assert {job["status"] for job in jobs} == {"finished"}
    queue.close()


def test_a_claim_on_postgresql_passes_over_jobs_another_claim_holds(postgres_url: str) -> None:
    queue, other = JobQueue(postgres_url), JobQueue(postgres_url)
    first, second = queue.submit(KIND, {}), queue.submit(KIND, {})
    connection = other._conn
    connection.execute("BEGIN")
    held = connection.execute("SELECT id FROM jobs WHERE id = ? FOR UPDATE", (first,)).fetchone()
    assert held[0] == first
    queue._conn.execute("SET lock_timeout = '5s'")  # waiting for the other's lock fails the test
    taken = queue.claim(Worker.this_process(), limit=1)  # does not wait for the other's lock
    assert taken is not None and taken["id"] == second
    connection.rollback()
    queue.close()
    other.close()
