"""The SQLite schema steps made before Alembic, frozen: what the baseline revision applies to a
SQLite file from its `PRAGMA user_version` on (`versions/0001_baseline.py`)."""

from __future__ import annotations

import sqlite3

#: The SQLite steps made before Alembic: MIGRATIONS[i] upgrades a file from `PRAGMA user_version`
#: i to i + 1. Frozen: the Alembic baseline (`store/migrations/versions/0001_baseline.py`) applies
#: them to a SQLite file and holds their PostgreSQL form; a new step is a new Alembic revision
#: (docs/operations/upgrading.md).
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
    # run locks: one process at a time evaluates a run (tempo_eval.store.runs.RunStore.acquire_run)
    """
    CREATE TABLE IF NOT EXISTS run_locks (
        run_id    INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        token     TEXT NOT NULL,         -- the holder's random id
        pid       INTEGER NOT NULL,
        host      TEXT NOT NULL,
        heartbeat REAL NOT NULL          -- unix time of the holder's last sign of life
    );
    """,
    # where an imported run came from ("ray-output:<output_id>"), so importing again updates it
    """
    ALTER TABLE runs ADD COLUMN origin TEXT;
    CREATE INDEX IF NOT EXISTS runs_origin ON runs (origin);
    """,
    # the lock holder's process start time: a reused pid is another process (tempo_eval.common.process)
    """
    ALTER TABLE run_locks ADD COLUMN started REAL;
    """,
    # long work started from the dashboard and run by worker processes (tempo_eval.store.jobs)
    """
    CREATE TABLE IF NOT EXISTS jobs (
        id               INTEGER PRIMARY KEY,
        kind             TEXT NOT NULL,          -- 'evaluate', 'nli_check'
        label            TEXT NOT NULL DEFAULT '',
        arguments        TEXT NOT NULL DEFAULT '{}',  -- canonical JSON; never a secret
        dataset_id       INTEGER,
        status           TEXT NOT NULL CHECK (status IN
                             ('queued', 'running', 'finished', 'cancelled', 'failed', 'interrupted')),
        done             INTEGER NOT NULL DEFAULT 0,
        total            INTEGER NOT NULL DEFAULT 0,
        rows_per_s       REAL,
        pid              INTEGER,                -- the worker running it
        pid_start        TEXT,                   -- when that process started (tells a reused pid)
        host             TEXT,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        needs_key        INTEGER NOT NULL DEFAULT 0,  -- only the worker given its key may run it
        error            TEXT,
        result           TEXT,                   -- JSON, what a check found
        run_id           INTEGER,
        created_at       REAL NOT NULL,          -- unix times
        started_at       REAL,
        updated_at       REAL,
        finished_at      REAL
    );
    CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, id);
    """,
    # streamed datasets (issue 27): their rows stored a batch at a time; `complete` is 0 while a
    # stream is being stored (its chunks so far are rows 0..n of the file)
    """
    CREATE TABLE IF NOT EXISTS dataset_chunks (
        dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
        first_row  INTEGER NOT NULL,
        rows       TEXT NOT NULL,          -- packed JSON {columns, rows} of rows first_row, first_row + 1, ...
        PRIMARY KEY (dataset_id, first_row)
    ) WITHOUT ROWID;
    ALTER TABLE datasets ADD COLUMN complete INTEGER NOT NULL DEFAULT 1;
    """,
    # what the run lists and summaries count and average, apart from the details: the results
    # table holds each result's details, so counting a run's results read all of them (1-2 s for
    # 1.4M results on every page that lists runs); with this index a count reads a fifth of that
    """
    CREATE INDEX IF NOT EXISTS results_scores ON results (run_id, system, metric, score, reason_code);
    """,
    # the same index keyed by row, not by score (nothing reads it in score order; it still covers
    # the scores): a run's results then go at the end of each (system, metric, reason code) range,
    # not at random places, so a batch's commit writes a few index pages, not one per result
    # (measured, 400,000 results in batches of 2,000: 18.3 -> 10.7 us a result; no index 7.6)
    """
    DROP INDEX IF EXISTS results_scores;
    CREATE INDEX results_scores ON results (run_id, system, metric, reason_code, row_idx, score);
    """,
    # run ids are never reused (issue 38.7): SQLite gives a new row max(id) + 1, so deleting the
    # newest run handed its id to the next one, and a cache, a pinned baseline, a saved link or a
    # CI's `diff 12 15` silently meant another run. The highest id ever given is kept here (from
    # the runs and the jobs that name one, for a workspace that had deleted some), raised by every
    # insert, and new runs take the next (`RunStore` inserts with `NEXT_RUN_ID`). Rebuilding `runs`
    # with AUTOINCREMENT instead would cascade-delete every result under the foreign keys.
    """
    CREATE TABLE IF NOT EXISTS id_marks (
        name TEXT PRIMARY KEY,          -- the table whose ids are never reused
        high INTEGER NOT NULL           -- the highest id it ever held
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO id_marks (name, high) VALUES ('runs', MAX(
        COALESCE((SELECT MAX(id) FROM runs), 0), COALESCE((SELECT MAX(run_id) FROM jobs), 0)));
    CREATE TRIGGER IF NOT EXISTS runs_id_mark AFTER INSERT ON runs BEGIN
        UPDATE id_marks SET high = MAX(high, NEW.id) WHERE name = 'runs';
    END;
    """,
    # who queued a job from the dashboard (a browser session's opaque id, tempo_eval_app.worker_jobs
    # .session_id): only that session's page shows it as its own and may cancel it; NULL for jobs
    # queued elsewhere and before this column
    """
    ALTER TABLE jobs ADD COLUMN session TEXT;
    """,
    # a dataset of TREC runs keeps its qrels file as given (issue 42): its systems then compare on
    # every judged query, the ones no run retrieved and the zero grades included, as the CLI does
    """
    CREATE TABLE IF NOT EXISTS dataset_qrels (
        dataset_id INTEGER PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,
        qrels      BLOB NOT NULL           -- the qrels file's bytes as given (compressed or not)
    );
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


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
