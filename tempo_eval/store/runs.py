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
the same column (`tempo_eval.store.packing`); text written by older versions is read as it is.
Secrets never reach the file: configuration keys named like keys, tokens, secrets or
passwords are dropped, and the values of such environment variables are masked in any text
written (error messages can quote a request).
"""

from __future__ import annotations

import os
import secrets as _random
import sqlite3
import threading
from pathlib import Path
from typing import Any

from tempo_eval.common.schema import is_retryable
from tempo_eval.common.secrets import secret_values
from tempo_eval.store.datasets import DatasetRecords, frame_content_hash
from tempo_eval.store.db import connect, files_dir
from tempo_eval.store.dialect import Dialect
from tempo_eval.store.results import ResultRecords
from tempo_eval.store.run_records import RunDeleted, RunInUse, RunRecords, config_hash

#: what the other store modules' users import from here
__all__ = ["RunDeleted", "RunInUse", "RunStore", "config_hash", "frame_content_hash",
           "is_retryable"]


class RunStore(DatasetRecords, RunRecords, ResultRecords):
    """Datasets, runs, results and claims in the workspace database (or the file at `path`).

    Each concern is a part in its own module (`datasets`, `run_records` with the run locks,
    `results` with their claims and summaries); this class holds what they share: the
    connection, the lock that serialises this store's use of it, and the run locks it holds.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 connection: sqlite3.Connection | None = None) -> None:
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

    def folder(self) -> Path | None:
        """Where this store's workspace keeps files (caches): `TEMPO_EVAL_FILES` when set or the
        database is a server (`db.files_dir`), else the folder of its database file; None for
        a SQLite database in memory."""
        if Dialect.of(self._conn).name != "sqlite" or os.environ.get("TEMPO_EVAL_FILES", "").strip():
            return files_dir()
        with self._lock:
            found = self._conn.execute("PRAGMA database_list").fetchone()
        return Path(found[2]).parent if found and found[2] else None

    def close(self) -> None:
        self._conn.close()


