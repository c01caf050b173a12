"""The embedded database: one SQLite file in the workspace directory, with a versioned schema.

The workspace is `TEMPO_EVAL_HOME` when set, else `~/.tempo_eval`. Every table lives in one
file (`tempo_eval.sqlite`) so a workspace can be copied, backed up or deleted as a unit.
Migrations are plain SQL scripts applied in order; `PRAGMA user_version` records how far a file
has come, so an older file is upgraded in place when opened.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

DB_FILENAME = "tempo_eval.sqlite"

#: MIGRATIONS[i] upgrades a database from version i to i + 1. Append; never edit a released one.
MIGRATIONS: list[str] = [
    # 0 -> 1: the verdict cache
    """
    CREATE TABLE verdict_cache (
        key        TEXT PRIMARY KEY,     -- sha256 of verifier, model, settings and exact texts
        record     TEXT NOT NULL,        -- ClaimVerdict.to_record() as JSON
        created_at TEXT NOT NULL DEFAULT (datetime('now'))
    );
    """,
    # 1 -> 2: datasets, evaluation runs, per-row results and per-claim verdicts (tempo_eval.store.runs)
    """
    CREATE TABLE datasets (
        id           INTEGER PRIMARY KEY,
        name         TEXT NOT NULL,
        content_hash TEXT NOT NULL,          -- sha256 of the raw uploaded bytes
        mapping      TEXT NOT NULL,          -- column mapping as canonical JSON ('{}' when none)
        format       TEXT,
        n_rows       INTEGER NOT NULL,
        rows         TEXT NOT NULL,          -- the canonical frame as JSON {columns, rows}
        warnings     TEXT NOT NULL DEFAULT '[]',
        created_at   TEXT NOT NULL DEFAULT (datetime('now')),
        UNIQUE (content_hash, mapping)       -- same bytes read the same way = same dataset
    );
    CREATE TABLE runs (
        id          INTEGER PRIMARY KEY,
        dataset_id  INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
        name        TEXT NOT NULL,
        config      TEXT NOT NULL,           -- metrics, settings, verifier ids; never secrets
        config_hash TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled', 'failed')),
        error       TEXT,
        created_at  TEXT NOT NULL DEFAULT (datetime('now')),
        finished_at TEXT
    );
    CREATE INDEX runs_by_config ON runs (dataset_id, config_hash);
    CREATE TABLE results (
        run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        row_idx     INTEGER NOT NULL,        -- position of the row in the dataset
        query_id    TEXT NOT NULL,
        system      TEXT,                    -- the dataset's `run` column, when it has one
        metric      TEXT NOT NULL,
        score       REAL,                    -- NULL for NaN
        reason      TEXT NOT NULL DEFAULT '',
        reason_code TEXT,
        success     INTEGER,
        details     TEXT NOT NULL DEFAULT '{}',  -- MetricResult.details without "claims"
        PRIMARY KEY (run_id, row_idx, metric)
    ) WITHOUT ROWID;
    CREATE TABLE claims (
        run_id        INTEGER NOT NULL,
        row_idx       INTEGER NOT NULL,
        metric        TEXT NOT NULL,
        idx           INTEGER NOT NULL,      -- order of the claim within the result
        claim         TEXT NOT NULL,
        verdict       TEXT,
        evidence      TEXT,
        probabilities TEXT,                  -- JSON or NULL
        reason        TEXT,
        extra         TEXT,                  -- any further keys of the claim record, as JSON
        PRIMARY KEY (run_id, row_idx, metric, idx),
        FOREIGN KEY (run_id, row_idx, metric) REFERENCES results (run_id, row_idx, metric)
            ON DELETE CASCADE
    ) WITHOUT ROWID;
    """,
    # run management (issue 8): a note and tags per run, and the judge's token usage
    """
    ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
    ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';   -- JSON list of strings
    ALTER TABLE runs ADD COLUMN usage TEXT;                        -- JSON token counts, NULL without a judge
    """,
    # the verifier's confidence in each claim verdict (ClaimVerdict.confidence), NULL for old rows
    """
    ALTER TABLE claims ADD COLUMN confidence REAL;
    """,
    # human labels of claim verdicts (tempo_eval.store.labels), keyed by claim text + premises hash
    # so they survive re-runs
    """
    CREATE TABLE IF NOT EXISTS claim_labels (
        claim         TEXT NOT NULL,
        premises_hash TEXT NOT NULL,          -- sha256 of the premises the claim was checked against
        label         TEXT NOT NULL,          -- SUPPORTED / NEUTRAL / CONTRADICTED
        note          TEXT NOT NULL DEFAULT '',
        premises      TEXT,                   -- the premises as JSON, for export and review
        labelled_at   TEXT NOT NULL DEFAULT (datetime('now')),
        PRIMARY KEY (claim, premises_hash)
    ) WITHOUT ROWID;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


def workspace_dir() -> Path:
    """The workspace directory (created if missing)."""
    path = Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_db_path() -> Path:
    return workspace_dir() / DB_FILENAME


#: how often a locked or busy database is tried again while a workspace is being opened, and the
#: first wait (doubled each time): other processes may be creating or migrating the same file
_OPEN_ATTEMPTS = 8
_OPEN_BACKOFF = 0.05


def connect(path: str | os.PathLike[str] | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the workspace database.

    WAL mode lets the dashboard read while a batch run writes; `synchronous=NORMAL` keeps every
    committed row across a process kill (only an OS crash can lose the last transactions).
    Several processes may open a new workspace at the same moment: switching to WAL and migrating
    are retried with a short backoff while the file is locked (see `migrate`).
    """
    db_path = Path(path) if path is not None else default_db_path()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, timeout=30.0, check_same_thread=False)
    try:
        # SQLite may answer "database is locked" at once, without waiting for the busy timeout,
        # while another connection is switching the same new file to WAL.
        _retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _retry_busy(lambda: migrate(conn))
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to SCHEMA_VERSION; returns the version found before migrating.

    The version is read, checked and every missing step applied in one `BEGIN IMMEDIATE`
    transaction: the write lock is taken before the version is read, so when two processes open
    a new workspace at once, the second waits, then finds the schema current and does nothing.
    A failed step rolls back the whole upgrade, leaving the version found intact.
    """
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    _check_version(found)
    if found == SCHEMA_VERSION:  # the common case: no write lock needed
        return found
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = conn.execute("PRAGMA user_version").fetchone()[0]  # again, under the lock
        _check_version(found)
        for version in range(found, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[version]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return found


def _check_version(found: int) -> None:
    if found > SCHEMA_VERSION:
        raise RuntimeError(
            f"The workspace database has schema version {found}, newer than this tempo-eval "
            f"understands ({SCHEMA_VERSION}); upgrade tempo-eval or use another TEMPO_EVAL_HOME."
        )


def _statements(script: str) -> list[str]:
    """The SQL statements of a migration script, one per item (`executescript` cannot run inside
    our transaction: it commits first)."""
    statements: list[str] = []
    current = ""
    for piece in script.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):  # the ';' did not sit in a string or comment
            if _has_sql(current):
                statements.append(current.strip())
            current = ""
    if _has_sql(current):
        raise ValueError(f"incomplete SQL statement in a migration: {current.strip()[:80]!r}")
    return statements


def _has_sql(text: str) -> bool:
    lines = (line.split("--", 1)[0] for line in text.splitlines())
    return bool("".join(lines).strip(" \t\n;"))


T = TypeVar("T")


def _retry_busy(action: Callable[[], T]) -> T:
    """`action()`, tried again with a doubling wait while SQLite reports the file locked or busy."""
    delay = _OPEN_BACKOFF
    for attempt in range(_OPEN_ATTEMPTS):
        try:
            return action()
        except sqlite3.OperationalError as error:
            message = str(error).lower()
            if attempt == _OPEN_ATTEMPTS - 1 or not ("locked" in message or "busy" in message):
                raise
            time.sleep(delay * (1 + random.random()))  # jitter: the contenders do not retry in step
            delay *= 2
    raise AssertionError("unreachable")
