"""SQLite parameters None and bytes are bound through the registered adapter as they are, and an adapter
the program registered before is kept (issue 27)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from tempo_eval.store import db
from tests.support.paths import ROOT


def test_none_and_bytes_are_bound_through_the_registered_adapter_as_they_are(tmp_path):
    assert sqlite3.adapters[(type(None), sqlite3.PrepareProtocol)] is db._bound_as_is
    assert sqlite3.adapters[(bytes, sqlite3.PrepareProtocol)] is db._bound_as_is
    conn = db.connect(tmp_path / "w.sqlite")
    conn.execute("CREATE TABLE t (a, b, c)")
    blob = bytes(range(256))
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(None, blob, b""), (1, None, "x")])
    rows = conn.execute("SELECT a, typeof(a), b, typeof(b), c, typeof(c) FROM t ORDER BY rowid").fetchall()
    assert rows == [(None, "null", blob, "blob", b"", "blob"), (1, "integer", None, "null", "x", "text")]
    conn.close()


def test_an_adapter_the_program_registered_before_is_kept():
    code = (
        "import sqlite3\n"
        "def mine(value):\n"
        "    return value\n"
        "sqlite3.register_adapter(bytes, mine)\n"
        "import tempo_eval.store.db\n"
        "print(sqlite3.adapters[(bytes, sqlite3.PrepareProtocol)] is mine)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            cwd=ROOT)
    assert result.stdout.strip() == "True", result.stderr

