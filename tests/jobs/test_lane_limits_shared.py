"""A lane's limit holds when workers claim from one PostgreSQL queue at the same instant: a claim
that counted the running jobs before another claim took the last free place does not take one too."""

from __future__ import annotations

import threading

from tempo_eval.store.jobs import JobQueue, Worker

KIND = "evaluate"  # the `evaluations` lane


def test_two_claims_at_once_never_run_more_evaluations_than_the_limit(postgres_url: str) -> None:
    queue = JobQueue(postgres_url)
    queue.submit(KIND, {"n": 1})
    queue.submit(KIND, {"n": 2})
    first, second = JobQueue(postgres_url), JobQueue(postgres_url)
    counted, go = threading.Event(), threading.Event()
    count_running = first._running

    def counted_then_wait() -> dict[str, int]:  # the first claim has counted the running jobs...
        running = count_running()
        counted.set()
        go.wait(timeout=10)  # ...and goes on only once the second claim had its chance
        return running

    first._running = counted_then_wait  # type: ignore[method-assign]
    taken: dict[str, object] = {}
    claims = [threading.Thread(target=lambda: taken.update(first=first.claim(Worker(1, "a", "h1"), limit=1))),
              threading.Thread(target=lambda: taken.update(second=second.claim(Worker(2, "b", "h2"), limit=1)))]
    claims[0].start()
    assert counted.wait(timeout=30)
    claims[1].start()
    claims[1].join(timeout=2)  # the second claim: done at once (the limit broken), or waiting its turn
    go.set()
    for claim in claims:
        claim.join(timeout=30)
    assert not any(claim.is_alive() for claim in claims)
    running = [job for job in queue.jobs(limit=10) if job["status"] == "running"]
    assert len(running) == 1, [(job["id"], job["status"]) for job in queue.jobs(limit=10)]
    assert sum(job is not None for job in taken.values()) == 1
    for q in (queue, first, second):
        q.close()
