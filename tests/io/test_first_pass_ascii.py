"""The streamed reader's first pass (issue 27) decides as it did when every chunk was decoded: ASCII chunks
are not decoded and counts are made by numpy; JSON Lines keys are still collected from ASCII chunks."""

from __future__ import annotations

import pytest

from tempo_eval.io import _prepass


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
