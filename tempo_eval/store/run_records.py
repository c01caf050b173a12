"""The runs of the run store and their locks: one run per (dataset, configuration), found again to
resume; one process at a time evaluates a run (a lock row with a heartbeat, taken over from a
dead holder); status, name, note, tags, usage; listing, summaries and deletion.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

import pandas as pd

from tempo_eval.common.identity import user_name
from tempo_eval.common.process import own_start_time, process_start_time
from tempo_eval.common.secrets import redact, secret_values, strip_secrets
from tempo_eval.store.datasets import _clean_name
from tempo_eval.store.db import NEXT_RUN_ID, json_or
from tempo_eval.store.packing import dumps

RUN_STATUSES = ("running", "finished", "cancelled", "failed")
#: a run lock held from another machine counts as abandoned after this long without a heartbeat
#: (on this machine the holder's process id is checked instead)
LOCK_STALE_SECONDS = 120.0
#: how often the holder of a run lock renews its heartbeat (with the row it stores anyway)
_HEARTBEAT_SECONDS = 10.0
#: the fields of `RunRecords.run_rows` (`list_runs` without n_results and n_failed)
RUN_ROW_COLUMNS = ["id", "dataset_id", "dataset", "name", "status", "config_hash", "created_at", "finished_at",
                   "duration_s", "note", "tags", "usage", "created_by"]
#: `list_runs`' columns
RUN_LIST_COLUMNS = [*RUN_ROW_COLUMNS[:6], "n_results", "n_failed", *RUN_ROW_COLUMNS[6:]]


def runs_frame(rows: list[tuple[Any, ...]], counts: Mapping[int, tuple[int, int]]) -> pd.DataFrame:
    """`list_runs`' frame of `run_rows` tuples and each run's (n_results, n_failed) by id: a
    finished run whose every result failed is "failed"; tags and usage decoded."""
    frame = pd.DataFrame([(*row[:6], *counts[row[0]], *row[6:]) for row in rows], columns=RUN_LIST_COLUMNS)
    all_failed = (frame["status"] == "finished") & (frame["n_results"] > 0) & (frame["n_failed"] == frame["n_results"])
    frame.loc[all_failed, "status"] = "failed"
    # decoded from the rows, not from the frame: pandas turns a NULL into NaN there
    frame["tags"] = pd.Series([json_or(row[10], []) for row in rows], dtype=object)
    frame["usage"] = pd.Series([json_or(row[11], None) for row in rows], dtype=object)
    frame["created_by"] = pd.Series([row[12] for row in rows], dtype=object)  # None (unknown) stays None
    frame["duration_s"] = pd.to_numeric(frame["duration_s"], errors="coerce").astype(float)
    return frame


class RunInUse(ValueError):
    """A run is being evaluated by a live process: deleting it (or its dataset) now would break
    that evaluation, whose next row could not be stored."""


class RunDeleted(ValueError):
    """The run an evaluation was about to write was deleted (on another page, by another user, or
    from the command line) between finding it and taking its lock."""


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(dumps(strip_secrets(config)).encode("utf-8")).hexdigest()


def _holder_alive(pid: int, host: str, heartbeat: float, now: float, started: float | None = None) -> bool:
    """Whether the holder of a run lock still runs: its process exists (same machine) and is the
    one that took the lock (the same start time: a pid is reused, in a restarted container even
    by this very process), or it sent a heartbeat lately (another machine sharing the file)."""
    if host != socket.gethostname():
        return now - heartbeat < LOCK_STALE_SECONDS
    if started is not None:
        current = own_start_time() if pid == os.getpid() else process_start_time(pid)
        if current is not None and current != started:
            return False  # the pid now belongs to another process: the holder is dead
    if pid == os.getpid():
        return True  # another store of this process: it is alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


class RunRecords:
    """Runs and their locks in the workspace database: a part of `tempo_eval.store.runs.RunStore`, which
    supplies the connection `_conn`, the lock `_lock` and the other parts' methods."""

    def create_or_resume_run(self, dataset_id: int, config: Mapping[str, Any], *,
                             name: str | None = None, resume: bool = True,
                             default_name: str | None = None,
                             user: str | None = None) -> tuple[int, bool]:
        """The run of `config` on the dataset: `(run_id, resumed)`.

        With `resume` the newest run with the same dataset and configuration (and `name`, when
        given: another name makes a new run; none is renamed here) is reopened, status back to
        running, whatever its status; else a new run is made by `user` (`created_by`, None:
        unknown), named `name`, else `default_name`, else "run N". A blank `name` raises
        ValueError before anything is written. Secret-named keys of `config` are removed before
        it is hashed or written.
        """
        wanted = None if name is None else _clean_name(name, "run")
        self._secrets = secret_values()
        clean = strip_secrets(dict(config))
        digest = config_hash(clean)
        # BEGIN IMMEDIATE: look up and create under the write lock, so two processes starting the
        # same evaluation at once find or make one run, not two.
        with self._lock, self._immediate():
            if resume:
                row = self._conn.execute(
                    "SELECT id FROM runs WHERE dataset_id = ? AND config_hash = ? AND (? IS NULL OR name = ?)"
                    " ORDER BY id DESC LIMIT 1",
                    (dataset_id, digest, wanted, wanted),
                ).fetchone()
                if row is not None:
                    self._conn.execute(
                        "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL WHERE id = ?",
                        (row[0],),
                    )
                    return int(row[0]), True
            chosen = wanted or (None if default_name is None else _clean_name(default_name, "run"))
            run_id = self._insert_run(dataset_id, chosen or "run", clean, user)
            if chosen is None:
                self._conn.execute("UPDATE runs SET name = ? WHERE id = ?", (f"run {run_id}", run_id))
            return run_id, False

    @contextlib.contextmanager
    def _immediate(self) -> Iterator[None]:
        """A write transaction that takes the database's write lock at once (BEGIN IMMEDIATE)."""
        if self._conn.in_transaction:
            self._conn.commit()
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.rollback()
            raise
        self._conn.commit()

    def acquire_run(self, run_id: int) -> dict[str, Any] | None:
        """Take the run's lock; None when taken, else the live holder {pid, host, heartbeat}. A
        lock whose holder is gone (`_holder_alive`) is taken over: a killed run never blocks its
        resumption."""
        with self._lock, self._immediate():
            return self._take_lock(run_id)

    def _take_lock(self, run_id: int) -> dict[str, Any] | None:
        """`acquire_run` inside the caller's write transaction (so the run and its lock can be
        made in one)."""
        now = time.time()
        if self._conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
            raise RunDeleted(f"run {run_id} was deleted before this evaluation could write to it (from the Runs "
                             "page or `tempo-eval runs delete`, by someone else); start the evaluation again "
                             "to make a new run")
        row = self._conn.execute(
            "SELECT token, pid, host, heartbeat, started FROM run_locks WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is not None and row[0] != self._lock_token and _holder_alive(*row[1:4], now, row[4]):
            return {"pid": row[1], "host": row[2], "heartbeat": row[3]}
        self._conn.execute(
            "INSERT OR REPLACE INTO run_locks (run_id, token, pid, host, heartbeat, started)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, self._lock_token, os.getpid(), socket.gethostname(), now, own_start_time()),
        )
        self._held[run_id] = now
        return None

    def import_run(self, dataset_id: int, config: Mapping[str, Any], *, origin: str,
                   name: str | None = None, default_name: str = "run", user: str | None = None) -> tuple[int, bool]:
        """The run imported from `origin`, with its lock taken in the same transaction (nobody
        resumes it half-imported): `(run_id, existed)`. An existing run is reopened (renamed when
        `name` is given); else one is made, named `name` or `default_name`, by `user`. RunInUse
        while a live process evaluates it."""
        self._secrets = secret_values()
        clean = strip_secrets(dict(config))
        with self._lock, self._immediate():
            row = self._conn.execute(
                "SELECT id FROM runs WHERE origin = ? AND dataset_id = ? ORDER BY id DESC LIMIT 1",
                (origin, dataset_id),
            ).fetchone()
            existed = row is not None
            if existed:
                run_id = int(row[0])
                holder = self._take_lock(run_id)
                if holder is not None:  # raising rolls the transaction back
                    raise RunInUse(f"run {run_id} is being evaluated by process {holder['pid']} on "
                                   f"{holder['host']}; import again when it has finished")
                self._conn.execute(
                    "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL,"
                    " name = COALESCE(?, name) WHERE id = ?",
                    (None if name is None else _clean_name(name, "run"), run_id),
                )
            else:
                chosen = _clean_name(name or default_name, "run")
                run_id = self._insert_run(dataset_id, chosen, clean, user, origin)
                self._take_lock(run_id)  # a new run: nobody else can hold it
        return run_id, existed

    def _insert_run(self, dataset_id: int, name: str, clean: Mapping[str, Any], user: str | None,
                    origin: str | None = None) -> int:
        """A new running run of the `clean` (secret-free) config, made by `user`; its id."""
        cursor = self._conn.execute(
            "INSERT INTO runs (id, dataset_id, name, config, config_hash, status, origin,"
            f" created_by) VALUES ({NEXT_RUN_ID}, ?, ?, ?, ?, 'running', ?, ?)",
            (dataset_id, name, dumps(clean), config_hash(clean), origin, user_name(user)),
        )
        return int(cursor.lastrowid)

    def release_run(self, run_id: int) -> None:
        """Give the run's lock back (only when this store holds it)."""
        self._held.pop(run_id, None)
        with self._lock, self._conn:
            self._conn.execute(
                "DELETE FROM run_locks WHERE run_id = ? AND token = ?", (run_id, self._lock_token)
            )

    def set_status(self, run_id: int, status: str, error: str | None = None) -> None:
        """Mark a run running / finished / cancelled / failed (finished_at is set unless running)."""
        if status not in RUN_STATUSES:
            raise ValueError(f"status must be one of {', '.join(RUN_STATUSES)}, got {status!r}")
        with self._lock, self._conn:
            self._conn.execute(
                "UPDATE runs SET status = ?, error = ?,"
                " finished_at = CASE WHEN ? = 'running' THEN NULL ELSE datetime('now') END WHERE id = ?",
                (status, redact(error, self._secrets), status, run_id),
            )

    def rename_run(self, run_id: int, name: str) -> None:
        """Give a run a new name (leading and trailing spaces dropped; it must not be empty)."""
        self._update_run(run_id, "name", _clean_name(name, "run"))

    def set_run_note(self, run_id: int, note: str) -> None:
        """The run's free-text note ("" clears it)."""
        self._update_run(run_id, "note", str(note).strip())

    def set_run_tags(self, run_id: int, tags: Iterable[str]) -> None:
        """The run's tags: each stripped, empty ones dropped, duplicates once, order kept."""
        clean = list(dict.fromkeys(str(t).strip() for t in tags if str(t).strip()))
        self._update_run(run_id, "tags", dumps(clean))

    def add_run_usage(self, run_id: int, usage: Mapping[str, Any] | Any) -> None:
        """Add a judge's token usage (a mapping or a `tempo_eval.llm.provider.Usage`) to the run's:
        a resumed run sums the usage of all its evaluations."""
        added = asdict(usage) if is_dataclass(usage) and not isinstance(usage, type) else dict(usage)
        with self._lock, self._conn:
            row = self._conn.execute("SELECT usage FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise KeyError(f"no run with id {run_id}")
            total = json_or(row[0], {})
            for key, value in added.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    total[key] = total.get(key, 0) + value
            self._conn.execute("UPDATE runs SET usage = ? WHERE id = ?", (dumps(total), run_id))

    def _update_run(self, run_id: int, column: str, value: Any) -> None:
        with self._lock, self._conn:
            cursor = self._conn.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
        if not cursor.rowcount:
            raise KeyError(f"no run with id {run_id}")

    def list_runs(self, dataset_id: int | None = None) -> pd.DataFrame:
        """One row per run, newest first (RUN_LIST_COLUMNS; dataset is its name, tags a list,
        usage a dict or None, created_by None when unknown). `status` is the stored one, except
        that a finished run whose every result failed (`is_retryable` codes) is "failed": nothing
        in it was measured. `n_failed` counts those results; `duration_s` is finished_at -
        created_at. The counts read every result of each run (`result_counts`); the dashboard
        reads `run_rows` and keeps a run's counts until its row changes (tempo_eval_app.run_counts).
        """
        rows = self.run_rows(dataset_id)
        return runs_frame(rows, {row[0]: self.result_counts(row[0]) for row in rows})

    def run_rows(self, dataset_id: int | None = None) -> list[tuple[Any, ...]]:
        """The runs (of one dataset; None: of all) as `list_runs` lists them, without their result
        counts: tuples of RUN_ROW_COLUMNS, tags and usage as stored (JSON). One read of the runs
        table, whatever the number of results; it changes when any process makes, renames, notes,
        tags, ends or deletes a run."""
        query = (
            "SELECT r.id, r.dataset_id, d.name, r.name, r.status, r.config_hash, r.created_at, r.finished_at,"
            " (julianday(r.finished_at) - julianday(r.created_at)) * 86400.0, r.note, r.tags, r.usage,"
            " r.created_by FROM runs r JOIN datasets d ON d.id = r.dataset_id"
        )
        params: tuple[Any, ...] = ()
        if dataset_id is not None:
            query += " WHERE r.dataset_id = ?"
            params = (dataset_id,)
        with self._lock:
            return [tuple(row) for row in self._conn.execute(query + " ORDER BY r.id DESC", params).fetchall()]

    def dataset_names(self) -> list[tuple[int, str, int]]:
        """(id, name, n_rows) of every dataset, newest first (n_rows is 0 while a dataset's rows are
        still being stored): what the pages' dataset list shows, read without the columns stored
        after a dataset's packed rows (SQLite reads through a large dataset's rows to reach them:
        `list_datasets`' created_at cost 20-80 ms with 1.9 million rows stored, measured)."""
        with self._lock:
            rows = self._conn.execute("SELECT id, name, n_rows FROM datasets ORDER BY id DESC").fetchall()
        return [(int(i), str(name), int(n or 0)) for i, name, n in rows]

    def run_stamp(self, run_id: int) -> tuple[Any, ...] | None:
        """(status, created_at, finished_at) of a run as stored (None: no such run): one seek. A
        run's results change only while its status is running (a resumed run is running again,
        and its end sets finished_at again)."""
        with self._lock:
            row = self._conn.execute("SELECT status, created_at, finished_at FROM runs WHERE id = ?",
                                     (int(run_id),)).fetchone()
        return None if row is None else tuple(row)

    def result_counts(self, run_id: int) -> tuple[int, int]:
        """(results, failed results) of a run: `list_runs`' n_results and n_failed. Each reads every
        entry of the run in the scores index, so it costs in proportion to the run's size (0.25-0.35 s
        for 600,000 results on a loaded 2-core machine; one SUM over both in one pass measured slower)."""
        with self._lock:
            n, failed = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM results WHERE run_id = ?1),"
                " (SELECT COUNT(*) FROM results WHERE run_id = ?1 AND score IS NULL"
                "  AND (reason_code = 'error' OR reason_code LIKE '%\\_error' ESCAPE '\\'))",
                (int(run_id),),
            ).fetchone()
        return int(n), int(failed)

    def run_configs(self, run_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The stored configuration of each run, in one read: {run id: config}."""
        ids = [int(r) for r in run_ids]
        if not ids:
            return {}
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, config FROM runs WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        return {int(run_id): json.loads(config) for run_id, config in rows}

    def run_scores(self, run_ids: Iterable[int]) -> pd.DataFrame:
        """The scores of several runs in one read: run_id, metric, score (NaN when not measurable),
        reason_code; for leaderboards."""
        ids = [int(r) for r in run_ids]
        if not ids:
            return pd.DataFrame(columns=["run_id", "metric", "score", "reason_code"])
        with self._lock:
            rows = self._conn.execute(
                f"SELECT run_id, metric, score, reason_code FROM results WHERE run_id IN ({','.join('?' * len(ids))})"
                " ORDER BY run_id, row_idx, metric",
                ids,
            ).fetchall()
        frame = pd.DataFrame(rows, columns=["run_id", "metric", "score", "reason_code"])
        frame["score"] = pd.to_numeric(frame["score"], errors="coerce").astype(float)
        return frame

    def run_info(self, run_id: int) -> dict[str, Any]:
        """The run's row: id, dataset_id, name, config (dict), config_hash, status (as stored), error,
        timestamps, note, tags (list), usage (dict or None) and created_by (None: unknown)."""
        keys = ["id", "dataset_id", "name", "config", "config_hash", "status", "error",
                "created_at", "finished_at", "note", "tags", "usage", "created_by"]
        with self._lock:
            row = self._conn.execute(f"SELECT {', '.join(keys)} FROM runs WHERE id = ?",
                                     (run_id,)).fetchone()
        if row is None:
            raise KeyError(f"no run with id {run_id}")
        info = dict(zip(keys, row, strict=True))
        info["config"] = json.loads(info["config"])
        info["tags"] = json_or(info["tags"], [])
        info["usage"] = json_or(info["usage"], None)
        return info

    def run_summary(self, run_id: int) -> dict[str, Any]:
        """`run_info` plus per-metric counts: {metric: {n, n_measurable, mean}} under "metrics"."""
        info = self.run_info(run_id)
        with self._lock:
            rows = self._conn.execute(
                "SELECT metric, COUNT(*), COUNT(score), AVG(score) FROM results WHERE run_id = ? GROUP BY metric",
                (run_id,),
            ).fetchall()
        info["metrics"] = {
            metric: {"n": n, "n_measurable": n_ok, "mean": float("nan") if mean is None else mean}
            for metric, n, n_ok, mean in rows
        }
        return info

    def delete_run(self, run_id: int) -> None:
        """Delete a run with its results and claims; the verdict cache is kept (verdicts are
        keyed by texts and verifier, not by run, and other runs reuse them). Raises RunInUse
        while a live process evaluates the run (see `acquire_run`)."""
        with self._lock, self._immediate():
            self._refuse_while_evaluated("SELECT ?", (run_id,))
            self._conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))  # cascades

    def _refuse_while_evaluated(self, run_ids_sql: str, params: tuple[Any, ...]) -> None:
        """RunInUse when a live process holds the lock of one of the runs `run_ids_sql` selects
        (this store included: a deleted run would fail its own evaluation's next row)."""
        now = time.time()
        for run_id, pid, host, heartbeat, started in self._conn.execute(
            f"SELECT run_id, pid, host, heartbeat, started FROM run_locks WHERE run_id IN ({run_ids_sql})", params
        ).fetchall():
            if _holder_alive(pid, host, heartbeat, now, started):
                raise RunInUse(
                    f"run {run_id} is being evaluated by process {pid} on {host}; cancel that evaluation "
                    "(or wait for it to finish), then delete"
                )

    def run_dependents(self, run_id: int) -> dict[str, int]:
        """What deleting a run takes with it: {"results": n, "claims": n}."""
        with self._lock:
            results, claims = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM results WHERE run_id = ?), (SELECT COUNT(*) FROM claims WHERE run_id = ?)",
                (run_id, run_id),
            ).fetchone()
        return {"results": int(results), "claims": int(claims)}
