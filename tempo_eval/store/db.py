"""The embedded database: one SQLite file in the workspace directory, with a versioned schema.

The workspace is `TEMPO_EVAL_HOME` when set, else `~/.tempo_eval`. Every table lives in one
file (`tempo_eval.sqlite`) so a workspace can be copied, backed up or deleted as a unit.
Migrations are plain SQL scripts applied in order; `PRAGMA user_version` records how far a file
has come, so an older file is upgraded in place when opened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

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
]

SCHEMA_VERSION = len(MIGRATIONS)


def workspace_dir() -> Path:
    """The workspace directory (created if missing)."""
    path = Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_db_path() -> Path:
    return workspace_dir() / DB_FILENAME


_migrate_lock = threading.Lock()


def connect(path: str | os.PathLike[str] | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the workspace database.

    WAL mode lets the dashboard read while a batch run writes; `synchronous=NORMAL` keeps every
    committed row across a process kill (only an OS crash can lose the last transactions).
    """
    db_path = Path(path) if path is not None else default_db_path()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, timeout=30.0, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to SCHEMA_VERSION; returns the version found before migrating."""
    with _migrate_lock:
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise RuntimeError(
                f"The workspace database has schema version {found}, newer than this tempo-eval "
                f"understands ({SCHEMA_VERSION}); upgrade tempo-eval or use another TEMPO_EVAL_HOME."
            )
        for version in range(found, SCHEMA_VERSION):
            with conn:  # one transaction per step: a failed step leaves the previous version intact
                conn.executescript(f"BEGIN; {MIGRATIONS[version]}; PRAGMA user_version = {version + 1}; COMMIT;")
        return found
