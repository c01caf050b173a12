"""Datasets, evaluation runs, per-row results and per-claim verdicts in the workspace database.

Vocabulary:
- a *dataset* is stored once per (content hash of the raw bytes, column mapping): uploading the
  same file again finds the stored copy and therefore every result computed on it;
- a *run* is one evaluation of a dataset with one configuration (metrics, their settings, the
  verifier identity). The same dataset with the same configuration is the same run, so starting an
  evaluation again resumes it;
- a *result* is one (row, metric) score with its reason and details, keyed by the row's position in
  the dataset (query ids may repeat when a dataset holds several systems' rows);
- a *claim* is one verified claim of a result, with its verdict and evidence.

Every row is committed in its own transaction, so a killed process loses at most the rows in
flight. Large JSON (a result's details, a dataset's rows) is stored zlib-compressed as a BLOB in
the same column (`tempo_eval.store.packing`); text written by older versions is read as it is. Secrets never reach the file: configuration keys named like keys, tokens, secrets or
passwords are dropped, and the values of such environment variables are masked in any text
written (error messages can quote a request).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets as _random
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval._secrets import redact, secret_values, strip_secrets
from tempo_eval._values import is_na
from tempo_eval.schema import MetricResult
from tempo_eval.store.db import connect, json_or
from tempo_eval.store.packing import _details_json, _json_text_of_container, _pack, _unpack, dumps

RUN_STATUSES = ("running", "finished", "cancelled", "failed")

#: a run lock held from another machine counts as abandoned after this long without a heartbeat
#: (on this machine the holder's process id is checked instead)
LOCK_STALE_SECONDS = 120.0
#: how often the holder of a run lock renews its heartbeat (with the row it stores anyway)
_HEARTBEAT_SECONDS = 10.0


RESULT_COLUMNS = ["row", "query_id", "run", "metric", "score", "reason_code", "reason"]
CLAIM_COLUMNS = [
    "row", "query_id", "run", "metric", "idx", "claim", "verdict", "evidence",
    "probabilities", "reason", "confidence", "error", "side",
]


# ---- failures -------------------------------------------------------------------------------

class RunInUse(ValueError):
    """A run is being evaluated by a live process: deleting it (or its dataset) now would break
    that evaluation, whose next row could not be stored."""

def is_retryable(reason_code: str | None) -> bool:
    """True for the reason codes of a failure rather than of a not-measurable input: "error" and
    every code ending in "_error" (row_error, judge_error, verifier_error). A later attempt may
    succeed, so a resumed run computes these again; no_temporal_claims, empty_query_time,
    missing_input and the like are answers, and stay."""
    return reason_code is not None and (reason_code == "error" or reason_code.endswith("_error"))


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(dumps(strip_secrets(config)).encode("utf-8")).hexdigest()


def frame_content_hash(frame: pd.DataFrame) -> str:
    """sha256 of a frame's columns and values (for datasets built in memory, without raw bytes)."""
    payload = dumps({"columns": [str(c) for c in frame.columns], "rows": _frame_rows(frame)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _frame_rows(frame: pd.DataFrame) -> list[list[Any]]:
    return [[_plain(v) for v in row] for row in frame.itertuples(index=False, name=None)]


def _plain(value: Any) -> Any:
    return None if is_na(value) else value


# ---- the store ------------------------------------------------------------------------------

class RunStore:
    """Datasets, runs, results and claims in the workspace database (or the file at `path`)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        connection: sqlite3.Connection | None = None,
    ) -> None:
        self._conn = connection if connection is not None else connect(path)
        self._lock = threading.RLock()
        self._rows_memo: tuple[tuple[Any, ...], dict[str, Any]] | None = None
        # Secrets to mask in stored text: read from the environment here and at every run start,
        # not per row (scanning the environment costs more than storing a row).
        self._secrets = secret_values()
        self._lock_token = _random.token_hex(8)  # this store's identity in run_locks
        self._held: dict[int, float] = {}  # run id -> time of the last heartbeat written

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection (for reading; writes go through the store's methods)."""
        return self._conn

    def close(self) -> None:
        self._conn.close()

    # -- datasets ---------------------------------------------------------------------------

    def save_dataset(self, dataset: Any) -> int:
        """Store a dataset (a `tempo_eval.io` Dataset) and return its id.

        A dataset with the same content hash and mapping is stored once: its existing id is
        returned and the rows are not written again.
        """
        frame: pd.DataFrame = dataset.frame
        content_hash = getattr(dataset, "content_hash", None) or frame_content_hash(frame)
        mapping = dumps(dict(getattr(dataset, "mapping", None) or {}))
        existing = self.find_dataset(content_hash, getattr(dataset, "mapping", None))
        if existing is not None:
            return existing
        rows = dumps({"columns": [str(c) for c in frame.columns], "rows": _frame_rows(frame)})
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO datasets (name, content_hash, mapping, format, n_rows, rows, warnings)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    str(getattr(dataset, "name", None) or "dataset"),
                    content_hash,
                    mapping,
                    getattr(dataset, "source_format", None),
                    len(frame),
                    _pack(rows),
                    dumps([str(w) for w in (getattr(dataset, "warnings", None) or [])]),
                ),
            )
            if cursor.rowcount:
                return int(cursor.lastrowid)
        found = self.find_dataset(content_hash, getattr(dataset, "mapping", None))
        assert found is not None  # a concurrent writer inserted the same dataset
        return found

    def find_dataset(self, content_hash: str, mapping: Mapping[str, Any] | None = None) -> int | None:
        """The id of the dataset with this content hash and mapping, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id FROM datasets WHERE content_hash = ? AND mapping = ?",
                (content_hash, dumps(dict(mapping or {}))),
            ).fetchone()
        return None if row is None else int(row[0])

    def dataset_frame(self, dataset_id: int) -> pd.DataFrame:
        """The stored canonical frame of a dataset."""
        stored = self._stored_rows(dataset_id)
        return pd.DataFrame(stored["rows"], columns=stored["columns"], dtype=object)

    def dataset_column(self, dataset_id: int, column: str) -> list[Any] | None:
        """One column of a stored dataset, in row order; None when the dataset has no such column.
        Meant for text and number columns: a list or dict cell comes back as its JSON text."""
        stored = self._stored_rows(dataset_id)
        if column not in stored["columns"]:
            return None
        index = stored["columns"].index(column)
        return [_json_text_of_container(row[index]) for row in stored["rows"]]

    def dataset_row(self, dataset_id: int, row: int) -> dict[str, Any]:
        """One row of a stored dataset as {column: value}."""
        stored = self._stored_rows(dataset_id)
        if not 0 <= row < len(stored["rows"]):
            raise KeyError(f"dataset {dataset_id} has no row {row}")
        return dict(zip(stored["columns"], stored["rows"][row], strict=True))

    def _stored_rows(self, dataset_id: int) -> dict[str, Any]:
        """The stored {columns, rows} of a dataset, decoded once: the last one decoded is kept,
        keyed by its content hash and mapping too, since a deleted dataset's id can be reused.
        Rows are stored compressed (`_pack`), so SQLite's JSON functions cannot reach into them."""
        with self._lock:
            found = self._conn.execute(
                "SELECT content_hash, mapping FROM datasets WHERE id = ?", (dataset_id,)
            ).fetchone()
            if found is None:
                raise KeyError(f"no dataset with id {dataset_id}")
            key = (dataset_id, *found)
            if self._rows_memo is not None and self._rows_memo[0] == key:
                return self._rows_memo[1]
            (packed,) = self._conn.execute("SELECT rows FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
            stored = json.loads(_unpack(packed))
            stored["columns"] = [str(c) for c in stored["columns"]]
            self._rows_memo = (key, stored)
            return stored

    def get_dataset(self, dataset_id: int) -> Any:
        """The stored dataset as a `tempo_eval.io.dataset.Dataset`."""
        # the loaders' noun; imported here so the store does not depend on the io package at import
        from tempo_eval.io.dataset import Dataset

        info = self.dataset_info(dataset_id)
        return Dataset(
            frame=self.dataset_frame(dataset_id),
            name=info["name"],
            mapping=info["mapping"],
            content_hash=info["content_hash"],
            source_format=info["format"],
            warnings=info["warnings"],
        )

    def dataset_info(self, dataset_id: int) -> dict[str, Any]:
        """Name, hash, mapping, format, row count and warnings of a dataset (without its rows)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, name, content_hash, mapping, format, n_rows, warnings, created_at"
                " FROM datasets WHERE id = ?",
                (dataset_id,),
            ).fetchone()
        if row is None:
            raise KeyError(f"no dataset with id {dataset_id}")
        return {
            "id": row[0], "name": row[1], "content_hash": row[2], "mapping": json.loads(row[3]),
            "format": row[4], "n_rows": row[5], "warnings": json.loads(row[6]), "created_at": row[7],
        }

    def list_datasets(self) -> pd.DataFrame:
        """One row per dataset: id, name, content_hash, format, n_rows, created_at (newest first)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, name, content_hash, format, n_rows, created_at FROM datasets ORDER BY id DESC"
            ).fetchall()
        return pd.DataFrame(rows, columns=["id", "name", "content_hash", "format", "n_rows", "created_at"])

    # -- runs -------------------------------------------------------------------------------

    def create_or_resume_run(
        self,
        dataset_id: int,
        config: Mapping[str, Any],
        *,
        name: str | None = None,
        resume: bool = True,
    ) -> tuple[int, bool]:
        """The run of `config` on the dataset: `(run_id, resumed)`.

        With `resume` (the default) the newest run with the same dataset and configuration is
        reopened (status back to running) whatever its status; otherwise a new run is created.
        Secret-named keys are removed from `config` before it is hashed or written.
        """
        self._secrets = secret_values()
        clean = strip_secrets(dict(config))
        digest = config_hash(clean)
        # BEGIN IMMEDIATE: look up and create under the write lock, so two processes starting the
        # same evaluation at once find or make one run, not two.
        with self._lock, self._immediate():
            if resume:
                row = self._conn.execute(
                    "SELECT id FROM runs WHERE dataset_id = ? AND config_hash = ? ORDER BY id DESC LIMIT 1",
                    (dataset_id, digest),
                ).fetchone()
                if row is not None:
                    self._conn.execute(
                        "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL WHERE id = ?",
                        (row[0],),
                    )
                    return int(row[0]), True
            cursor = self._conn.execute(
                "INSERT INTO runs (dataset_id, name, config, config_hash, status) VALUES (?, ?, ?, ?, 'running')",
                (dataset_id, name or "run", dumps(clean), digest),
            )
            run_id = int(cursor.lastrowid)
            if name is None:
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

    # -- run locks: one process evaluates a run at a time ------------------------------------

    def acquire_run(self, run_id: int) -> dict[str, Any] | None:
        """Take the run's lock; None when taken, else the live holder {pid, host, heartbeat}.

        A lock whose holder is gone (its process no longer exists on this machine, or no
        heartbeat for LOCK_STALE_SECONDS from another machine) is taken over, so a killed run
        never blocks its resumption."""
        with self._lock, self._immediate():
            return self._take_lock(run_id)

    def _take_lock(self, run_id: int) -> dict[str, Any] | None:
        """`acquire_run` inside the caller's write transaction (so the run and its lock can be
        made in one)."""
        now = time.time()
        row = self._conn.execute(
            "SELECT token, pid, host, heartbeat FROM run_locks WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is not None and row[0] != self._lock_token and _holder_alive(row[1], row[2], row[3], now):
            return {"pid": row[1], "host": row[2], "heartbeat": row[3]}
        self._conn.execute(
            "INSERT OR REPLACE INTO run_locks (run_id, token, pid, host, heartbeat) VALUES (?, ?, ?, ?, ?)",
            (run_id, self._lock_token, os.getpid(), socket.gethostname(), now),
        )
        self._held[run_id] = now
        return None

    def import_run(self, dataset_id: int, config: Mapping[str, Any], *, origin: str,
                   name: str | None = None, default_name: str = "run") -> tuple[int, bool]:
        """The run imported from `origin` (created, with `config` and `name` or `default_name`,
        if there is none), with its lock taken in the same transaction, so nobody else resumes it
        half-imported: `(run_id, existed)`. An existing run is reopened (status running; renamed
        when `name` is given). Raises RunInUse while a live process evaluates it."""
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
                cursor = self._conn.execute(
                    "INSERT INTO runs (dataset_id, name, config, config_hash, status, origin)"
                    " VALUES (?, ?, ?, ?, 'running', ?)",
                    (dataset_id, _clean_name(name or default_name, "run"), dumps(clean), config_hash(clean), origin),
                )
                run_id = int(cursor.lastrowid)
                self._take_lock(run_id)  # a new run: nobody else can hold it
        return run_id, existed

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

    def rename_dataset(self, dataset_id: int, name: str) -> None:
        """Give a dataset a new name (it must not be empty)."""
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "UPDATE datasets SET name = ? WHERE id = ?", (_clean_name(name, "dataset"), dataset_id)
            )
        if not cursor.rowcount:
            raise KeyError(f"no dataset with id {dataset_id}")

    def list_runs(self, dataset_id: int | None = None) -> pd.DataFrame:
        """One row per run (newest first): id, dataset_id, dataset (its name), name, status,
        config_hash, n_results, n_failed, created_at, finished_at, duration_s, note, tags (list),
        usage (dict or None).

        `status` is the stored one, except that a finished run whose every result failed
        (`is_retryable` reason codes) is "failed": nothing in it was measured.
        `n_failed` counts those failed results; `duration_s` is finished_at - created_at.
        """
        query = (
            "SELECT r.id, r.dataset_id, d.name, r.name, r.status, r.config_hash,"
            " (SELECT COUNT(*) FROM results WHERE run_id = r.id),"
            " (SELECT COUNT(*) FROM results WHERE run_id = r.id AND score IS NULL"
            "  AND (reason_code = 'error' OR reason_code LIKE '%\\_error' ESCAPE '\\')),"
            " r.created_at, r.finished_at,"
            " (julianday(r.finished_at) - julianday(r.created_at)) * 86400.0,"
            " r.note, r.tags, r.usage"
            " FROM runs r JOIN datasets d ON d.id = r.dataset_id"
        )
        params: tuple[Any, ...] = ()
        if dataset_id is not None:
            query += " WHERE r.dataset_id = ?"
            params = (dataset_id,)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY r.id DESC", params).fetchall()
        frame = pd.DataFrame(
            rows,
            columns=["id", "dataset_id", "dataset", "name", "status", "config_hash", "n_results", "n_failed",
                     "created_at", "finished_at", "duration_s", "note", "tags", "usage"],
        )
        all_failed = (frame["status"] == "finished") & (frame["n_results"] > 0) & (frame["n_failed"] == frame["n_results"])
        frame.loc[all_failed, "status"] = "failed"
        # decoded from the fetched rows, not from the frame: pandas turns a NULL into NaN there
        frame["tags"] = pd.Series([json_or(row[12], []) for row in rows], dtype=object)
        frame["usage"] = pd.Series([json_or(row[13], None) for row in rows], dtype=object)
        frame["duration_s"] = pd.to_numeric(frame["duration_s"], errors="coerce").astype(float)
        return frame

    def default_run(self, dataset_id: int) -> int | None:
        """The run a page opens on for a dataset: the newest run with results that is not failed
        (see `list_runs`), else None. A run whose rows all failed is never the default."""
        runs = self.list_runs(dataset_id)
        usable = runs[(runs["status"] != "failed") & (runs["n_results"] > 0)]
        return None if usable.empty else int(usable["id"].iloc[0])

    def count_results(self, run_id: int) -> int:
        """How many results a run has stored (cheap: it reads the primary-key index only)."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()[0])

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
        timestamps, note, tags (list) and usage (dict or None)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, dataset_id, name, config, config_hash, status, error, created_at, finished_at,"
                " note, tags, usage FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
        if row is None:
            raise KeyError(f"no run with id {run_id}")
        keys = ["id", "dataset_id", "name", "config", "config_hash", "status", "error", "created_at", "finished_at",
                "note", "tags", "usage"]
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
        for run_id, pid, host, heartbeat in self._conn.execute(
            f"SELECT run_id, pid, host, heartbeat FROM run_locks WHERE run_id IN ({run_ids_sql})", params
        ).fetchall():
            if _holder_alive(pid, host, heartbeat, now):
                raise RunInUse(
                    f"run {run_id} is being evaluated by process {pid} on {host}; cancel that evaluation "
                    "(or wait for it to finish), then delete"
                )

    def dataset_dependents(self, dataset_id: int) -> dict[str, int]:
        """What deleting a dataset takes with it: {"runs": n, "results": n, "claims": n}."""
        with self._lock:
            runs, results, claims = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM runs WHERE dataset_id = ?),"
                " (SELECT COUNT(*) FROM results WHERE run_id IN (SELECT id FROM runs WHERE dataset_id = ?)),"
                " (SELECT COUNT(*) FROM claims WHERE run_id IN (SELECT id FROM runs WHERE dataset_id = ?))",
                (dataset_id, dataset_id, dataset_id),
            ).fetchone()
        return {"runs": int(runs), "results": int(results), "claims": int(claims)}

    def run_dependents(self, run_id: int) -> dict[str, int]:
        """What deleting a run takes with it: {"results": n, "claims": n}."""
        with self._lock:
            results, claims = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM results WHERE run_id = ?), (SELECT COUNT(*) FROM claims WHERE run_id = ?)",
                (run_id, run_id),
            ).fetchone()
        return {"results": int(results), "claims": int(claims)}

    def delete_dataset(self, dataset_id: int) -> None:
        """Delete a dataset with all its runs, results and claims (see `dataset_dependents`);
        the verdict cache is kept. Raises RunInUse while one of its runs is being evaluated."""
        with self._lock, self._immediate():
            self._refuse_while_evaluated("SELECT id FROM runs WHERE dataset_id = ?", (dataset_id,))
            self._conn.execute("DELETE FROM datasets WHERE id = ?", (dataset_id,))  # cascades

    # -- results ----------------------------------------------------------------------------

    def record_row(
        self,
        run_id: int,
        row: int,
        query_id: str,
        results: Iterable[MetricResult],
        *,
        system: str | None = None,
    ) -> None:
        """Write every metric's result for one dataset row in one transaction.

        `details["claims"]` (a list of claim records or ClaimVerdicts) goes to the claims table;
        the rest of `details` is stored as JSON with the result. NaN scores are stored as NULL.
        """
        secrets = self._secrets
        result_rows = []
        claim_rows = []
        for result in results:
            details = dict(result.details or {})
            claims = details.pop("claims", None) or []
            score = None if result.score is None or math.isnan(result.score) else float(result.score)
            result_rows.append((
                run_id, row, str(query_id), system, result.metric, score,
                redact(result.reason or "", secrets), result.reason_code,
                None if result.success is None else int(bool(result.success)),
                _pack(redact(_details_json(details), secrets), details=True),
            ))
            for idx, claim in enumerate(claims):
                record = _claim_record(claim)
                probabilities = record.pop("probabilities", None)
                verdict = record.pop("verdict", None)
                confidence = record.pop("confidence", None)
                extra = {k: v for k, v in record.items() if k not in ("claim", "evidence", "reason")}
                evidence = record.get("evidence")
                claim_rows.append((
                    run_id, row, result.metric, idx, redact(str(record.get("claim", "")), secrets),
                    None if verdict is None else str(getattr(verdict, "value", verdict)),
                    redact(evidence, secrets) if isinstance(evidence, str) else evidence,
                    None if probabilities is None else dumps(probabilities),
                    redact(record.get("reason"), secrets),
                    redact(dumps(extra), secrets) if extra else None,
                    None if is_na(confidence) else float(confidence),
                ))
        if not result_rows:
            return
        metrics = [r[4] for r in result_rows]
        with self._lock, self._conn:
            # claims of an earlier recording of these results (a re-run of the row) go first
            self._conn.execute(
                f"DELETE FROM claims WHERE run_id = ? AND row_idx = ? AND metric IN ({','.join('?' * len(metrics))})",
                (run_id, row, *metrics),
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO results (run_id, row_idx, query_id, system, metric, score, reason,"
                " reason_code, success, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                result_rows,
            )
            if claim_rows:
                self._conn.executemany(
                    "INSERT INTO claims (run_id, row_idx, metric, idx, claim, verdict, evidence,"
                    " probabilities, reason, extra, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    claim_rows,
                )
            beat = self._held.get(run_id)
            now = time.time()
            if beat is not None and now - beat > _HEARTBEAT_SECONDS:  # in this row's transaction
                self._held[run_id] = now
                self._conn.execute(
                    "UPDATE run_locks SET heartbeat = ? WHERE run_id = ? AND token = ?",
                    (now, run_id, self._lock_token),
                )

    def completed(self, run_id: int, *, retry_failed: bool = False) -> set[tuple[int, str]]:
        """The (row, metric) pairs that have a stored result in this run.

        With `retry_failed`, results that failed (NaN with a retryable reason code, see
        `is_retryable`) do not count as completed, so a resumed run computes them again.
        """
        with self._lock:
            rows = self._conn.execute(
                "SELECT row_idx, metric, score IS NULL, reason_code FROM results WHERE run_id = ?",
                (run_id,),
            ).fetchall()
        return {
            (int(r), m) for r, m, is_nan, code in rows
            if not (retry_failed and is_nan and is_retryable(code))
        }

    def results_frame(self, run_id: int) -> pd.DataFrame:
        """One row per (row, metric): row, query_id, run, metric, score (NaN when not measurable),
        reason_code, reason; sorted by row then metric. `run` is the dataset's run column."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT row_idx, query_id, system, metric, score, reason_code, reason FROM results"
                " WHERE run_id = ? ORDER BY row_idx, metric",
                (run_id,),
            ).fetchall()
        # column by column: much faster than a list of row tuples for 100,000s of results
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(RESULT_COLUMNS)
        data = dict(zip(RESULT_COLUMNS, columns, strict=True))
        frame = pd.DataFrame({
            "row": np.asarray(data["row"], dtype=np.int64),
            "query_id": np.asarray(data["query_id"], dtype=object),
            "run": np.asarray(data["run"], dtype=object),
            "metric": np.asarray(data["metric"], dtype=object),
            "score": np.asarray([math.nan if s is None else s for s in data["score"]], dtype=float),
            "reason_code": np.asarray(data["reason_code"], dtype=object),
            "reason": np.asarray(data["reason"], dtype=object),
        }, columns=RESULT_COLUMNS)
        return frame

    def claims_frame(self, run_id: int) -> pd.DataFrame:
        """One row per verified claim: row, query_id, run, metric, idx, claim, verdict, evidence,
        probabilities (dict or None), reason, confidence (NaN when the verifier gave none), error
        (the verifier's error text for ERROR verdicts, else None), side (Factual Correctness:
        "response" or "reference", else None)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT c.row_idx, r.query_id, r.system, c.metric, c.idx, c.claim, c.verdict, c.evidence,"
                " c.probabilities, c.reason, c.confidence, c.extra FROM claims c JOIN results r"
                " ON r.run_id = c.run_id AND r.row_idx = c.row_idx AND r.metric = c.metric"
                " WHERE c.run_id = ? ORDER BY c.row_idx, c.metric, c.idx",
                (run_id,),
            ).fetchall()
        rows = [
            (*r[:8], None if r[8] is None else json.loads(r[8]), r[9],
             math.nan if r[10] is None else float(r[10]), *_claim_extra(r[11]))
            for r in rows
        ]
        frame = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
        frame["probabilities"] = pd.Series([r[8] for r in rows], dtype=object)
        frame["confidence"] = pd.to_numeric(frame["confidence"], errors="coerce").astype(float)
        return frame

    def get_result(self, run_id: int, row: int, metric: str) -> MetricResult:
        """The stored result of one (row, metric), details with their "claims" put back."""
        with self._lock:
            found = self._conn.execute(
                "SELECT score, reason, reason_code, success, details FROM results"
                " WHERE run_id = ? AND row_idx = ? AND metric = ?",
                (run_id, row, metric),
            ).fetchone()
            claims = self._conn.execute(
                "SELECT claim, verdict, evidence, probabilities, reason, extra, confidence FROM claims"
                " WHERE run_id = ? AND row_idx = ? AND metric = ? ORDER BY idx",
                (run_id, row, metric),
            ).fetchall()
        if found is None:
            raise KeyError(f"run {run_id} has no result for row {row}, metric {metric!r}")
        score, reason, reason_code, success, details_json = found
        details = json.loads(_unpack(details_json))
        if claims:
            details["claims"] = [
                {
                    "claim": c[0], "verdict": c[1], "evidence": c[2],
                    "probabilities": None if c[3] is None else json.loads(c[3]), "reason": c[4],
                    **(json.loads(c[5]) if c[5] else {}),
                    "confidence": c[6],
                }
                for c in claims
            ]
        return MetricResult(
            metric=metric,
            score=float("nan") if score is None else float(score),
            reason=reason,
            reason_code=reason_code,
            details=details,
            success=None if success is None else bool(success),
        )


def _clean_name(name: Any, what: str) -> str:
    clean = " ".join(str(name).split())
    if not clean:
        raise ValueError(f"a {what} name must not be empty")
    return clean


def _claim_extra(extra: str | None) -> tuple[str | None, str | None]:
    """(error, side) from a claim row's `extra` JSON: the verifier's error text (ERROR verdicts)
    and the Factual Correctness side."""
    if not extra:
        return None, None
    found = json.loads(extra)
    error, side = found.get("error"), found.get("side")
    return (None if error is None else str(error)), (None if side is None else str(side))


def _holder_alive(pid: int, host: str, heartbeat: float, now: float) -> bool:
    """Whether the holder of a run lock still runs: its process exists (same machine), or it
    sent a heartbeat lately (another machine sharing the file)."""
    if host != socket.gethostname():
        return now - heartbeat < LOCK_STALE_SECONDS
    if pid == os.getpid():
        return True  # another store of this process: it is alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _claim_record(claim: Any) -> dict[str, Any]:
    """A claim entry of `details["claims"]` as a dict (a ClaimVerdict, a mapping, or any text)."""
    if hasattr(claim, "to_record"):
        return dict(claim.to_record())
    if isinstance(claim, Mapping):
        return dict(claim)
    return {"claim": str(claim)}
