"""The workspace's job queue: long work (an evaluation, an upload's read, an NLI model check)
that the dashboard starts in a worker process and then only watches.

A job is a row of the `jobs` table: kind and arguments (JSON, never a secret), the dashboard
session that owns it (`session`, an opaque id; the one that resumes it takes it over), status
(queued, running, finished, cancelled, failed, interrupted), progress (done of total, rows per
second), its worker (pid, start time and host: a dead worker is told from a live one even when
its pid is reused), a cancel request, an error and the run it wrote. Every process that opens
the workspace sees the same queue, so a job outlives the app process that started it.

Jobs run in lanes (`lane_of`), each with its own places, so work a page waits for never waits
behind an evaluation: evaluations in `evaluations` (`limit`: the cores minus one); reading an
upload (a dataset, TREC runs, a foreign import) and Compare's scoring of run files in `pages`
(PAGE_LIMIT), which evaluations never take; checks (`CHECK_KINDS`) beside every limit. A queued
job's place is its place in its lane. Claiming is one transaction: a worker ends its finished
job and takes the oldest queued job whose lane has a free place, so no job waits beside a free
place and no two workers take one job. On SQLite claims take turns by `BEGIN IMMEDIATE`; on
PostgreSQL on an advisory lock (`Dialect.lock_claims`), reading the queued rows `FOR UPDATE SKIP
LOCKED`: workers on several machines share one queue, and two claims at the same instant never
both take a lane's last free place.

A job whose worker died (pid gone, or reused by a process started at another time) is marked
`interrupted` by whoever looks next; `requeue` queues it again, and the evaluation resumes from
the rows stored. A `pages` job running past `page_job_limit` is taken for hung: it fails and its
worker is stopped, so the lane's place goes to the next upload. A job only the worker holding its
API key may take fails when that worker ended (or never started) before taking it: the key is
never stored, so no other can.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from tempo_eval.common.identity import user_name
from tempo_eval.common.process import process_start_time
from tempo_eval.store.db import connect
from tempo_eval.store.dialect import Dialect

logger = logging.getLogger("tempo_eval.job")
ACTIVE = ("queued", "running")
ENDED = ("finished", "cancelled", "failed", "interrupted")
#: kinds that run beside the limit: short checks a page waits for
CHECK_KINDS = ("nli_check",)
#: reading what was uploaded on a page (`tempo_eval.cli.job.PAGE_KINDS`)
READ_KINDS = ("dataset_upload", "trec_runs", "foreign_import")
#: kinds of the `pages` lane: the reads, and Compare's scoring of run files
PAGE_LANE_KINDS = (*READ_KINDS, "compare_runs")
#: jobs of the `pages` lane run at once (beside the evaluations' limit)
PAGE_LIMIT = 1
#: a job on another host is taken for dead when its worker has written nothing for this long (s)
OTHER_HOST_SILENCE = 300.0
#: a `pages` lane job running longer than this (s, TEMPO_EVAL_PAGE_JOB_S) is taken for hung: it
#: fails and its worker is stopped, so the lane's one place is free for the next upload
PAGE_JOB_LIMIT_S = 3600.0
#: a job queued for the worker that holds its API key fails when no such worker has taken it
#: after this long (s): the worker started for it never started
KEYED_START_S = 120.0


def page_job_limit() -> float:
    """TEMPO_EVAL_PAGE_JOB_S (seconds, above 0), else PAGE_JOB_LIMIT_S; a bad value is logged and
    the default used (it is read while jobs are claimed: it must not stop every job)."""
    configured = os.environ.get("TEMPO_EVAL_PAGE_JOB_S", "").strip()
    try:
        value = float(configured) if configured else PAGE_JOB_LIMIT_S
    except ValueError:
        value = 0.0
    if not value > 0:
        logger.warning("TEMPO_EVAL_PAGE_JOB_S must be a number of seconds above 0, got %r: using %g",
                       configured, PAGE_JOB_LIMIT_S)
        return PAGE_JOB_LIMIT_S
    return value


def default_limit() -> int:
    """How many jobs run at once: TEMPO_EVAL_MAX_JOBS, else the number of cores minus one (>= 1)."""
    configured = os.environ.get("TEMPO_EVAL_MAX_JOBS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            raise ValueError(f"TEMPO_EVAL_MAX_JOBS must be a whole number, got {configured!r}") from None
    return max(1, (os.cpu_count() or 1) - 1)


def lane_of(kind: str) -> str:
    """The lane a job kind runs in: `check` (no limit), `pages` (PAGE_LIMIT) or `evaluations` (the limit)."""
    if kind in CHECK_KINDS:
        return "check"
    return "pages" if kind in PAGE_LANE_KINDS else "evaluations"


def process_start(pid: int) -> str | None:
    """When process `pid` started (`tempo_eval.common.process.process_start_time`, as text), or None
    when there is no such process or it has exited (a zombie, not yet collected, counts as exited)."""
    started = process_start_time(pid, exited_is_gone=True)
    return None if started is None else repr(started)


@dataclass(frozen=True)
class Worker:
    """The identity of a worker process, as stored with the jobs it runs."""

    pid: int
    start: str
    host: str

    @classmethod
    def this_process(cls) -> Worker:
        return cls(os.getpid(), process_start(os.getpid()) or "?", socket.gethostname())


def _alive(pid: int | None, start: str | None, host: str | None, updated: float | None, now: float) -> bool:
    if pid is None:
        return False
    if host != socket.gethostname():
        return updated is not None and now - updated < OTHER_HOST_SILENCE
    return process_start(pid) == start


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


class JobQueue:
    """The `jobs` table of one workspace database (its own connection)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._conn = connect(path)
        self._lock = threading.RLock()

    def close(self) -> None:
        self._conn.close()

    # ---- writing ------------------------------------------------------------------------------

    def submit(self, kind: str, arguments: dict[str, Any], *, label: str = "", dataset_id: int | None = None,
               needs_key: bool = False, session: str | None = None, user: str | None = None) -> int:
        """Queue a job; returns its id. `needs_key`: only the worker started with its key may run it;
        `session`: the dashboard session that queued it (its owner); `user`: who queued it
        (`created_by`, None: unknown), the user the worker records on what the job makes."""
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT INTO jobs (kind, label, arguments, dataset_id, status, needs_key, session, created_at,"
                " updated_at, created_by) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)",
                (kind, label, _dumps(arguments), dataset_id, int(needs_key), session, time.time(), time.time(),
                 user_name(user)),
            )
            return int(cursor.lastrowid)

    def claim(self, worker: Worker, *, limit: int, finished: dict[str, Any] | None = None,
              keys: frozenset[int] = frozenset(), kinds: tuple[str, ...] | None = None) -> dict[str, Any] | None:
        """In one transaction: end the job `finished` ({id, status, error?, run_id?, result?}),
        mark jobs of dead workers interrupted, then take the oldest queued job this worker may run
        (one needing a key only when its id is in `keys`; only `kinds` when given) whose lane has
        a free place: fewer than `limit` running in the `evaluations` lane, fewer than PAGE_LIMIT
        in the `pages` lane; checks always. Returns the job taken, or None."""
        now = time.time()
        dialect = Dialect.of(self._conn)
        with self._lock:
            # claims take turns, each counting the lanes as they are (see the module docstring)
            self._conn.execute(dialect.begin_claim)
            try:
                if dialect.lock_claims:
                    self._conn.execute(dialect.lock_claims)
                if finished is not None:
                    self._end(finished, now)
                self._reap(now)
                running = self._running()
                places = _places(limit)
                queued = self._dicts("SELECT * FROM jobs WHERE status = 'queued' ORDER BY id"
                                     + dialect.skip_locked)
                job = next((row for row in queued if (not row["needs_key"] or row["id"] in keys)
                            and (kinds is None or row["kind"] in kinds)
                            and running[lane_of(row["kind"])] < places[lane_of(row["kind"])]), None)
                if job is not None:
                    self._conn.execute(
                        "UPDATE jobs SET status = 'running', pid = ?, pid_start = ?, host = ?, started_at = ?,"
                        " updated_at = ?, cancel_requested = 0, error = NULL WHERE id = ?",
                        (worker.pid, worker.start, worker.host, now, now, job["id"]),
                    )
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise
        return None if job is None else self.get(job["id"])

    def _running(self) -> dict[str, int]:
        """Running jobs per lane."""
        running = {"check": 0, "pages": 0, "evaluations": 0}
        for (kind,) in self._conn.execute("SELECT kind FROM jobs WHERE status = 'running'"):
            running[lane_of(kind)] += 1
        return running

    def has_place(self, kind: str, limit: int) -> bool:
        """Whether a job of `kind` would be taken now (its lane has a free place): a job queued
        so for a while has no worker to take it (the worker spawned for it failed to start)."""
        with self._lock:
            return self._running()[lane_of(kind)] < _places(limit)[lane_of(kind)]

    def _end(self, finished: dict[str, Any], now: float) -> None:
        status = finished["status"]
        if status not in ENDED:
            raise ValueError(f"a job ends as one of {', '.join(ENDED)}, not {status!r}")
        self._conn.execute(
            "UPDATE jobs SET status = ?, error = ?, run_id = COALESCE(?, run_id), dataset_id = COALESCE(?, dataset_id),"
            " result = ?, finished_at = ?, updated_at = ? WHERE id = ? AND status = 'running'",
            (status, finished.get("error"), finished.get("run_id"), finished.get("dataset_id"),
             None if finished.get("result") is None else _dumps(finished["result"]), now, now, finished["id"]),
        )

    def finish(self, job_id: int, status: str, **fields: Any) -> None:
        """End a running job without taking another."""
        with self._lock, self._conn:
            self._end({"id": job_id, "status": status, **fields}, time.time())

    def _reap(self, now: float) -> int:
        """Mark the running jobs of dead workers interrupted; fail a `pages` lane job running past
        `page_job_limit` (stopping its worker) and a keyed job whose worker is gone before it took it."""
        ended = 0
        limit = None
        for row in self._dicts("SELECT id, kind, pid, pid_start, host, updated_at, started_at"
                               " FROM jobs WHERE status = 'running'"):
            if not _alive(row["pid"], row["pid_start"], row["host"], row["updated_at"], now):
                ended += self._mark(row["id"], "interrupted", "the worker process ended before the job did", now)
                continue
            if lane_of(row["kind"]) != "pages":
                continue
            limit = page_job_limit() if limit is None else limit
            if now - (row["started_at"] or now) > limit:
                ended += self._mark(row["id"], "failed", (
                    f"stopped after {limit / 60:g} min: a read or comparison for a page may take at most that long "
                    "(TEMPO_EVAL_PAGE_JOB_S), so that the next one can start; try a smaller file"), now)
                _stop(row["pid"], row["pid_start"], row["host"])
        for row in self._dicts("SELECT id, pid, pid_start, host, updated_at FROM jobs"
                               " WHERE status = 'queued' AND needs_key = 1"):
            if row["pid"] is None and now - (row["updated_at"] or now) > KEYED_START_S:
                why = "no worker with its API key (typed on the page, never stored) started to take it"
            elif row["pid"] is not None and not _alive(row["pid"], row["pid_start"], row["host"], row["updated_at"], now):
                why = "the worker holding its API key (typed on the page, never stored) ended before it took the job"
            else:
                continue
            ended += self._mark(row["id"], "failed", why + "; run it again and give the key again", now, queued=True)
        return ended

    def _mark(self, job_id: int, status: str, error: str, now: float, *, queued: bool = False) -> int:
        cursor = self._conn.execute(
            "UPDATE jobs SET status = ?, finished_at = ?, updated_at = ?, error = ? WHERE id = ? AND status = ?",
            (status, now, now, error, job_id, "queued" if queued else "running"))
        return cursor.rowcount

    def reap(self) -> int:
        """End the jobs whose worker died or hung (`_reap`); returns how many."""
        with self._lock, self._conn:
            return self._reap(time.time())

    def hold(self, job_id: int, worker: Worker) -> None:
        """Record `worker` as the one holding the API key of the queued job `job_id`: when it dies
        before taking the job, the job fails (no other worker has the key) instead of waiting for ever."""
        with self._lock, self._conn:
            self._conn.execute("UPDATE jobs SET pid = ?, pid_start = ?, host = ?, updated_at = ?"
                               " WHERE id = ? AND status = 'queued' AND needs_key = 1",
                               (worker.pid, worker.start, worker.host, time.time(), int(job_id)))

    def progress(self, job_id: int, done: int, total: int, rows_per_s: float | None, *,
                 run_id: int | None = None) -> bool:
        """Record a running job's progress; returns whether a cancel was requested."""
        with self._lock, self._conn:
            self._conn.execute(
                "UPDATE jobs SET done = ?, total = ?, rows_per_s = ?, run_id = COALESCE(?, run_id), updated_at = ?"
                " WHERE id = ?", (int(done), int(total), rows_per_s, run_id, time.time(), job_id))
            row = self._conn.execute("SELECT cancel_requested FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return bool(row and row[0])

    def request_cancel(self, job_id: int) -> None:
        """A queued job is cancelled at once; a running one when its worker next looks (within a second)."""
        with self._lock, self._conn:
            now = time.time()
            self._conn.execute("UPDATE jobs SET status = 'cancelled', finished_at = ?, updated_at = ?"
                               " WHERE id = ? AND status = 'queued'", (now, now, job_id))
            self._conn.execute("UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status = 'running'", (job_id,))

    def requeue(self, job_id: int, *, session: str | None = None) -> bool:
        """Queue an ended job again (it resumes from what is stored); False when it is active.
        With `session`, that session (the one resuming it) becomes its owner."""
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "UPDATE jobs SET status = 'queued', cancel_requested = 0, error = NULL, finished_at = NULL,"
                f" pid = NULL, session = COALESCE(?, session), updated_at = ? WHERE id = ? AND status IN ({_marks(ENDED)})",
                (session, time.time(), job_id, *ENDED))
            return cursor.rowcount == 1

    # ---- reading ------------------------------------------------------------------------------

    def _dicts(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """The rows of a query, each a dict by column name."""
        cursor = self._conn.execute(sql, params)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def get(self, job_id: int) -> dict[str, Any] | None:
        with self._lock:
            found = self._dicts("SELECT * FROM jobs WHERE id = ?", (int(job_id),))
        return _job(found[0]) if found else None

    def jobs(self, *, kind: str | None = None, dataset_id: int | None = None, active: bool = False,
             status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Jobs, newest first, filtered by kind, dataset, whether they are queued or running, and status."""
        given = {"status = ?": status, "kind = ?": kind,
                 "dataset_id = ?": None if dataset_id is None else int(dataset_id)}
        where = ["1 = 1", *(sql for sql, value in given.items() if value is not None)]
        params = [value for value in given.values() if value is not None]
        if active:
            where.append("status IN ('queued', 'running')")
        with self._lock:
            rows = self._dicts(f"SELECT * FROM jobs WHERE {' AND '.join(where)}"
                               " ORDER BY id DESC LIMIT ?", (*params, int(limit)))
        return [_job(row) for row in rows]

    def latest(self, kind: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The newest job of `kind` with exactly these arguments."""
        with self._lock:
            found = self._dicts("SELECT * FROM jobs WHERE kind = ? AND arguments = ?"
                                " ORDER BY id DESC LIMIT 1", (kind, _dumps(arguments)))
        return _job(found[0]) if found else None

    def place(self, job_id: int) -> int | None:
        """A queued job's place in its lane's queue (1 = next), or None when it is not queued."""
        with self._lock:
            found = self._conn.execute("SELECT kind FROM jobs WHERE id = ? AND status = 'queued'",
                                       (int(job_id),)).fetchone()
            if found is None:
                return None
            lane = lane_of(found[0])
            before = self._conn.execute("SELECT kind FROM jobs WHERE status = 'queued' AND id <= ?",
                                        (int(job_id),)).fetchall()
        return sum(1 for (kind,) in before if lane_of(kind) == lane)


def _stop(pid: int, start: str, host: str) -> None:
    """Stop a hung worker of this host (SIGTERM), only while `pid` is still that worker."""
    if host != socket.gethostname() or process_start(pid) != start:
        return
    with contextlib.suppress(OSError):  # ended meanwhile
        os.kill(pid, signal.SIGTERM)


def _places(limit: int) -> dict[str, float]:
    return {"check": float("inf"), "pages": PAGE_LIMIT, "evaluations": limit}


def _marks(values: tuple[str, ...]) -> str:
    return ", ".join("?" for _ in values)


def _job(job: dict[str, Any]) -> dict[str, Any]:
    job["arguments"] = json.loads(job["arguments"] or "{}")
    job["result"] = None if job["result"] is None else json.loads(job["result"])
    job["active"] = job["status"] in ACTIVE
    return job
