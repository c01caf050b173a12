"""The main process's cheaper steps (issue 27) give what the plain ones gave: the first pass's
checks with ASCII chunks not decoded and counts made by numpy, and SQLite parameters None and
bytes bound through a registered adapter, stored as before."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tempo_eval.io import _prepass
from tempo_eval.store import db

REPO = Path(__file__).resolve().parents[1]


def _plain_scan(data: bytes) -> tuple[bool, int]:
    """What the first pass decides for a CSV file, every byte decoded and counted in Python:
    (streamable, estimated rows)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False, 0
    if b"\x00" in data or data.count(b'"') % 2 or _prepass._misplaced_pattern(",").search(data):
        return False, 0
    rows = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return True, max(rows - 1, 0)


FILES = {
    "ascii": b'query_id,query\nq1,"In ""1999"""\nq2,plain\n',
    "no final line end": b"query_id,query\nq1,a\nq2,b",
    "non-ASCII": "query_id,query\nq1,Qu'est-ce qui s'est passé en 1789 ?\nq2,東京 1964 😀\n".encode(),
    "a cut character then ASCII": b"query_id,query\nq1,caf\xc3" + b"a\nq2,b\n",
    "a cut character, ASCII, then its continuation": b"query_id,query\nq1,caf\xc3a\xa9\n",
    "a character cut at the end": b"query_id,query\nq1,caf\xc3",
    "Latin-1": b"query_id,query\nq1,caf\xe9\n",
    "an odd quote count": b'query_id,query\nq1,"open\n',
}


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_the_first_pass_decides_as_when_every_chunk_was_decoded(name, chunk):
    data = FILES[name]
    head = data.index(b"\n") + 1  # the first chunk holds the header line, as a real one does
    chunks = [data[:head]] + [data[i:i + chunk] for i in range(head, len(data), chunk)]
    scan = _prepass.scan_text(iter(chunks), "d.csv", ",")
    streamable, rows = _plain_scan(data)
    assert scan.streamable == streamable
    if streamable:
        assert scan.estimated_rows == rows
        assert scan.size == len(data)


def test_json_lines_keys_are_still_collected_from_ascii_chunks():
    data = b'{"query_id": "q1", "query": "a"}\n{"query_id": "q2", "answer": "b"}\n'
    scan = _prepass.scan_text(iter([data[:20], data[20:]]), "d.jsonl", None, json_lines=True)
    assert scan.streamable and scan.keys == ["query_id", "query", "answer"]
    assert scan.estimated_rows == 2


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
                            cwd=REPO)
    assert result.stdout.strip() == "True", result.stderr
