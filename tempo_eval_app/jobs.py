"""Evaluations running in background threads, so the page can show progress and a cancel button.

A Streamlit script is re-run on every click; an evaluation started inside the script would be
interrupted by the click on "Cancel" itself. So the page starts a `Job` (a thread calling
`tempo_eval.runner.evaluate` with a progress callback and a cancel event) and only reads its
state. Jobs live in this process-wide registry: a page refresh finds a running job again, and
every finished row is already in the run store, so nothing is lost either way.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


@dataclass
class Job:
    """One background evaluation. `status` is queued, running, finished, cancelled or failed."""

    id: int
    label: str
    dataset_id: int
    done: int = 0
    total: int = 0
    status: str = "queued"
    error: str | None = None
    run_id: int | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event, repr=False)
    thread: threading.Thread | None = field(default=None, repr=False)
    result: Any = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.status in ("queued", "running")

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    def progress(self, done: int, total: int) -> None:
        """The runner's progress callback."""
        self.done, self.total = done, total

    def cancel(self) -> None:
        self.cancel_event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job's thread ends (tests and scripts); True when it has ended."""
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.active


_jobs: dict[int, Job] = {}
_ids = itertools.count(1)
_lock = threading.Lock()


def start(label: str, dataset_id: int, work: Callable[[Job], Any]) -> Job:
    """Run `work(job)` in a daemon thread; `work` returns a RunResult (or anything with run_id).

    Exceptions end the job as "failed" with a one-line error; the traceback goes to the log.
    """
    with _lock:
        job = Job(id=next(_ids), label=label, dataset_id=dataset_id)
        _jobs[job.id] = job

    def target() -> None:
        job.status = "running"
        try:
            job.result = work(job)
            job.run_id = getattr(job.result, "run_id", None)
            job.status = getattr(job.result, "status", "finished")
        except Exception as exc:  # the thread must never die silently: record and log
            logger.exception("evaluation job %d (%s) failed", job.id, label)
            job.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            job.status = "failed"
        finally:
            job.finished = time.monotonic()

    job.thread = threading.Thread(target=target, name=f"tempo-eval-job-{job.id}", daemon=True)
    job.thread.start()
    return job


def get(job_id: int | None) -> Job | None:
    return None if job_id is None else _jobs.get(job_id)


def active_for(dataset_id: int) -> list[Job]:
    """The running jobs on one dataset, oldest first."""
    return [job for job in _jobs.values() if job.dataset_id == dataset_id and job.active]
