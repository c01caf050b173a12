"""Small compressed files that decompress to a huge line cost a bounded amount of memory: the
Datasets page's column peek reads a bounded decompressed start of an upload; the streamed dataset
reader refuses a line (a JSON array's element) over its limit while reading it, naming the file
and the line; the TREC reader refuses a line over its limit and a query id, document id or run
name over 1,000 characters the same way."""

from __future__ import annotations

import bz2
import gzip
import lzma
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from tempo_eval.io import _prepass, trec_columns
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream
from tempo_eval_app import uploads

MB = 1 << 20


def _zstd(parts: list[bytes], fill: bytes = b"", fill_mb: int = 0, tail: bytes = b"") -> bytes:
    out = pa.BufferOutputStream()
    with pa.CompressedOutputStream(out, "zstd") as stream:
        for part in parts:
            stream.write(part)
        block = fill * MB
        for _ in range(fill_mb):
            stream.write(block)
        stream.write(tail)
    return out.getvalue().to_pybytes()


def _peak(action: Callable[[], object]) -> tuple[object, int]:
    """What `action` returned (or raised), and the peak of Python memory it allocated (bytes)."""
    tracemalloc.start()
    try:
        try:
            result: object = action()
        except Exception as error:  # the refusal is part of what is measured
            result = error
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---- the Datasets page's column peek ---------------------------------------------------------

CSV_BOMB = b"query,answer,contexts\nq," + b"a" * (24 * MB) + b",c\n"
COMPRESSORS = {".gz": lambda data: gzip.compress(data, 9), ".bz2": lambda data: bz2.compress(data, 9),
               ".xz": lambda data: lzma.compress(data), ".zst": lambda data: _zstd([data])}


#: a header longer than the peek reads: at most PEEK_BYTES of it are decompressed
HEADER_BOMB = b"query,answer," + b"c" * (24 * MB) + b"\nq,a,c\n"


@pytest.mark.parametrize("ending", list(COMPRESSORS))
def test_the_column_peek_reads_a_bounded_start_of_a_compressed_upload(ending: str) -> None:
    packed = COMPRESSORS[ending](CSV_BOMB)
    assert len(packed) < len(CSV_BOMB) // 100  # a small upload that decompresses to 24 MB
    columns, peak = _peak(lambda: uploads.peek_columns(packed, "bomb.csv" + ending))
    assert columns == ["query", "answer", "contexts"]
    # read until the header is complete (xz's decoder holds its 8 MB dictionary whatever it reads)
    assert peak < (9 if ending == ".xz" else 1) * MB, f"{peak / MB:.1f} MB to read a header"
    packed = COMPRESSORS[ending](HEADER_BOMB)
    columns, peak = _peak(lambda: uploads.peek_columns(packed, "bomb.csv" + ending))
    assert columns == []  # the header is not complete within the peek: the loader says what is wrong
    dictionary = 8 * MB if ending == ".xz" else 0  # xz's decoder holds its dictionary whatever it reads
    assert peak < 3 * uploads.PEEK_BYTES + dictionary, f"{peak / MB:.1f} MB for a {uploads.PEEK_BYTES / MB:.0f} MB peek"


def test_the_column_peek_of_a_lowered_limit_and_of_json_and_json_lines() -> None:
    array = b'[{"query": "q", "answer": "a"}, {"query": "q2", "contexts": ["' + b"c" * (8 * MB) + b'"]}]'
    lines = b'{"query": "q", "answer": "' + b"a" * (8 * MB) + b'"}\n'
    assert uploads.peek_columns(gzip.compress(array), "rows.json.gz", limit=64 << 10) == ["query", "answer"]
    assert uploads.peek_columns(gzip.compress(lines), "rows.jsonl.gz", limit=64 << 10) == []  # cut: no record
    packed = gzip.compress(array)
    columns, peak = _peak(lambda: uploads.peek_columns(packed, "rows.json.gz", limit=64 << 10))
    assert columns == ["query", "answer"] and peak < 2 * MB


# ---- the streamed dataset reader -----------------------------------------------------------

def _bomb_files(folder: Path, fill_mb: int) -> dict[str, Path]:
    """Three good rows, then a row whose cell holds `fill_mb` MB, in each text format, as .zst."""
    good = b"".join(b'{"query": "q%d", "answer": "a%d"}\n' % (i, i) for i in range(3))
    files = {
        "rows.jsonl.zst": _zstd([good, b'{"query": "q9", "answer": "'], b"a", fill_mb, b'"}\n'),
        "rows.csv.zst": _zstd([b"query,answer\nq0,a0\nq1,a1\nq2,a2\nq9,"], b"a", fill_mb, b"\n"),
        "rows.json.zst": _zstd([b'[{"query": "q0", "answer": "a0"},\n{"query": "q1", "answer": "a1"},\n'
                                b'{"query": "q2", "answer": "a2"},\n{"query": "q9", "answer": "'],
                               b"a", fill_mb, b'"}]'),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = folder / name
        paths[name].write_bytes(data)
    return paths


def _read_all(path: Path, **options: int) -> None:
    stream = open_stream(path, **options)
    for _ in stream.batches():
        pass


@pytest.mark.parametrize("name, place", [("rows.jsonl.zst", "line 4"), ("rows.csv.zst", "line 5"),
                                         ("rows.json.zst", "element 4")])
def test_the_streamed_reader_refuses_a_long_line_while_reading_it(tmp_path: Path, name: str, place: str) -> None:
    path = _bomb_files(tmp_path, 40)[name]
    limit = 256 << 10
    refused, peak = _peak(lambda: _read_all(path, max_line_bytes=limit))
    assert isinstance(refused, InputError), refused
    assert str(refused).startswith(f"{name}, {place}") and f"longer than {limit:,}" in str(refused), str(refused)
    # 40 MB in the line: held whole, it would cost more than that
    assert peak < 24 * MB, f"{peak / MB:.1f} MB"


def test_the_default_line_limit_refuses_a_line_just_over_it(tmp_path: Path) -> None:
    over = _prepass.MAX_LINE_BYTES // MB + 1
    path = _bomb_files(tmp_path, over)["rows.jsonl.zst"]
    refused, peak = _peak(lambda: _read_all(path))
    assert isinstance(refused, InputError) and "line 4" in str(refused), refused
    assert f"longer than {_prepass.MAX_LINE_BYTES:,} bytes" in str(refused)
    assert peak < 3 * _prepass.MAX_LINE_BYTES


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    cell = "a" * 2000
    path.write_text(f'{{"query": "q", "answer": "{cell}"}}\n')
    stream = open_stream(path, max_line_bytes=path.stat().st_size - 1)  # the line without its end
    assert [len(frame) for _, frame in stream.batches()] == [1]


# ---- TREC runs and qrels -----------------------------------------------------------------------

def _run_blocks(data: bytes, name: str = "run.trec.gz", kind: str = "run", **options: int) -> list:
    return list(trec_columns.iter_blocks(gzip.compress(data), kind, name=name, **options))


def test_trec_fields_longer_than_1000_characters_are_refused_with_the_line() -> None:
    ok = b"q1 Q0 d1 1 1.0 run\n"
    assert _run_blocks(ok + b"q1 Q0 d2 2 0.5 " + b"r" * 1000 + b"\n")  # at the limit: read
    for line, what in ((b"q1 Q0 d2 2 0.5 " + b"r" * 1001, "run name"), (b"q" * 1001 + b" Q0 d2 2 0.5 run", "query id"),
                       ("q1 Q0 d\u00e9".encode() + "\u00e9".encode() * 1000 + b" 2 0.5 run", "document id")):
        with pytest.raises(InputError, match=rf"^run\.trec\.gz, line 3: the {what} is 1,00\d characters long"):
            _run_blocks(ok + b"# a comment\n" + line + b"\n")
    with pytest.raises(InputError, match=r"qrels\.gz, line 2: the document id is 5,000 characters"):
        _run_blocks(b"q1 0 d1 1\nq1 0 " + b"d" * 5000 + b" 1\n", name="qrels.gz", kind="qrels")
    with pytest.raises(InputError, match=r"line 2: the run name is 50 characters long"):
        _run_blocks(ok + b"q1 Q0 d2 2 0.5 " + b"r" * 50 + b"\n", max_field_chars=40)


def test_a_trec_line_over_the_limit_is_refused_before_it_is_held() -> None:
    packed = gzip.compress(b"q1 Q0 d1 1 1.0 run\nq1 Q0 d2 2 0.5 " + b"r" * (40 * MB) + b"\n", 9)
    assert len(packed) < 100_000

    def read() -> list:
        return list(trec_columns.iter_blocks(packed, "run", name="bomb.trec.gz", block_bytes=MB))

    refused, peak = _peak(read)
    assert isinstance(refused, InputError), refused
    assert str(refused).startswith("bomb.trec.gz, line 2: the line is longer than 65,536 bytes"), str(refused)
    assert peak < 8 * MB, f"{peak / MB:.1f} MB"
