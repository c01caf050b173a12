"""Verdicts cached on disk, keyed by verifier, model, settings and the exact texts.

A re-run of the same evaluation asks no model and no judge: every (claim, premises) pair it has
seen is answered from here.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from tempo_eval.common.secrets import redact, secret_values
from tempo_eval.store.db import connect


def verdict_key(verifier_name: str, model_id: str, claim: str, premises: Sequence[str],
                settings: str = "") -> str:
    """sha256 over the verifier identity and the exact texts (JSON-encoded, so no separator can collide)."""
    payload = json.dumps([verifier_name, model_id, settings, claim, list(premises)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class VerdictCache:
    """A key -> ClaimVerdict record store in the workspace database (or the file at `path`)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 connection: sqlite3.Connection | None = None) -> None:
        self._conn = connection if connection is not None else connect(path)
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):  # stay under SQLite's variable limit
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, record FROM verdict_cache WHERE key IN ({marks})", chunk
                ).fetchall()
                found.update((key, json.loads(record)) for key, record in rows)
        return found

    def put_many(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        # a judge may echo its key in evidence or reason: never write it down
        secrets = secret_values()
        rows = [
            (key, redact(json.dumps(dict(record), ensure_ascii=False), secrets))
            for key, record in records.items()
        ]
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO verdict_cache (key, record) VALUES (?, ?)", rows
            )

    def add_many(self, records: Mapping[str, Mapping[str, Any]]) -> int:
        """Store records whose keys are not stored yet (INSERT OR IGNORE: a verdict reported by
        two workers is kept once); returns how many were new."""
        rows = [(key, json.dumps(dict(record), ensure_ascii=False)) for key, record in records.items()]
        with self._lock, self._conn:
            before = self._conn.total_changes
            self._conn.executemany("INSERT OR IGNORE INTO verdict_cache (key, record) VALUES (?, ?)", rows)
            return self._conn.total_changes - before

    def records(self) -> dict[str, dict[str, Any]]:
        """Every stored record by key (a snapshot for workers that cannot open this file)."""
        with self._lock:
            rows = self._conn.execute("SELECT key, record FROM verdict_cache").fetchall()
        return {key: json.loads(record) for key, record in rows}

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM verdict_cache").fetchone()[0]
