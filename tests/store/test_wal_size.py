"""The workspace's write-ahead log is cut back after a large write: SQLite reuses a -wal file
without shrinking it, so one large transaction (or a checkpoint held back by a reader) used to
leave tens of megabytes beside the database for good."""

from __future__ import annotations

import os
import sqlite3

from tempo_eval.store.db import WAL_SIZE_LIMIT, connect


def _big_write_then_small(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, data BLOB)")
    with conn:  # one transaction of about 3x the limit: the log grows past it
        conn.executemany("INSERT INTO blobs (data) VALUES (?)",
                         ((bytes(4096),) for _ in range(3 * WAL_SIZE_LIMIT // 4096)))
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    with conn:  # the next write restarts the log from its start: that is when it is truncated
        conn.execute("INSERT INTO blobs (data) VALUES (x'00')")


def _wal_size(path) -> int:
    return os.path.getsize(f"{path}-wal")


def test_wal_is_truncated_after_a_large_write(tmp_path):
    path = tmp_path / "ws.sqlite"
    conn = connect(path)
    try:
        _big_write_then_small(conn)
        assert _wal_size(path) <= WAL_SIZE_LIMIT
        assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 3 * WAL_SIZE_LIMIT // 4096 + 1
    finally:
        conn.close()


def test_without_the_limit_the_log_stays_large(tmp_path):
    """The same writes through a plain connection: the log keeps its size (what the limit fixes)."""
    path = tmp_path / "plain.sqlite"
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        _big_write_then_small(conn)
        assert _wal_size(path) > 2 * WAL_SIZE_LIMIT
    finally:
        conn.close()
