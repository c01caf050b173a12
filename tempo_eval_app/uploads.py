"""Peeking into uploaded files for the column-mapping editor."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
from collections.abc import Callable
from typing import Any

import pandas as pd

#: the most of an upload the column peek reads, decompressed (bytes): enough for any header
PEEK_BYTES = 4 << 20
#: compressed uploads recognised by their first bytes, and the name ending each usually has
_COMPRESSED = ((b"\x1f\x8b", "gzip", ".gz"), (b"\x28\xb5\x2f\xfd", "zstd", ".zst"), (b"BZh", "bz2", ".bz2"),
               (b"\xfd7zXZ\x00", "xz", ".xz"))


def peek_columns(upload: Any, name: str, limit: int = PEEK_BYTES) -> list[str]:
    """The column names of an uploaded table (a binary file-like object, or bytes), best effort,
    for the mapping editor only (the loader stays the judge of the file; [] when the header
    cannot be read). The text is read from the start, decompressed as it is read (gzip,
    Zstandard, bzip2, xz, recognised by their first bytes), until the header (the first record)
    is complete, and never more than `limit` bytes: a few KB that decompress to gigabytes cost
    `limit` at most. A Parquet file's schema is read from its footer."""
    source = io.BytesIO(bytes(upload)) if isinstance(upload, (bytes, bytearray, memoryview)) else upload
    lower = name.lower()
    try:
        source.seek(0)
        head = source.read(6)
        source.seek(0)
        found = next(((codec, end) for magic, codec, end in _COMPRESSED if head.startswith(magic)), None)
        if found is not None and lower.endswith(found[1]):
            lower = lower[: -len(found[1])]
        if lower.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            # a compressed Parquet file would have to be decompressed whole: the loader reads it
            return [] if found is not None else [str(c) for c in pq.read_schema(source).names]
        json_document = lower.endswith(".json")
        data = _prefix(source, found[0] if found else None, limit, None if json_document else _first_record)
        return _columns_of_text(data, lower, cut=len(data) >= limit)
    except Exception:  # a malformed file: the loader's error is what the user sees
        return []
    finally:
        with contextlib.suppress(Exception):
            source.seek(0)


#: bytes decompressed at a time by the peek
_PIECE = 1 << 16


def _first_record(data: bytes | bytearray) -> bool:
    """Whether `data` holds a complete first record: a line with text, with no quote left open."""
    end = data.find(b"\n")
    while end >= 0:
        if data[:end].strip() and data.count(b'"', 0, end) % 2 == 0:
            return True
        end = data.find(b"\n", end + 1)
    return False


def _prefix(source: Any, codec: str | None, limit: int, enough: Callable[[bytearray], bool] | None) -> bytearray:
    """The upload's text from its start, decompressed, read until `enough(text)` (after a piece
    with a line end) or `limit` bytes."""
    if codec is None:
        stream: Any = source
    elif codec == "zstd":
        import pyarrow as pa

        stream = pa.CompressedInputStream(pa.PythonFile(_Borrowed(source), mode="r"), "zstd")
    else:  # each opens a file object as it is
        stream = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[codec](source)
    data = bytearray()
    while len(data) < limit:
        piece = bytes(stream.read(min(_PIECE, limit - len(data))))
        if not piece:
            break
        data += piece
        if enough is not None and b"\n" in piece and enough(data):
            break
    return data


class _Borrowed:
    """The upload as pyarrow reads it: pyarrow closes what it wraps once done, the upload stays open."""

    def __init__(self, source: Any) -> None:
        self._source, self.closed = source, False

    def read(self, size: int = -1) -> bytes:
        return self._source.read(size)

    def seek(self, *args: int) -> int:
        return self._source.seek(*args)

    def tell(self) -> int:
        return self._source.tell()

    def close(self) -> None:
        self.closed = True


def _columns_of_text(data: bytes | bytearray, lower: str, *, cut: bool) -> list[str]:
    """The columns the text's start names; `cut`: the text goes on past `data` (its last line
    may be cut, and a JSON document is read up to its first complete records)."""
    text = data.decode("utf-8-sig", errors="replace")
    if lower.endswith((".jsonl", ".ndjson")):
        first = next((line for line in text.splitlines() if line.strip()), "")
        record = json.loads(first)
        return [str(k) for k in record] if isinstance(record, dict) else []
    if lower.endswith(".json"):
        return _json_columns(text, cut)
    if cut:
        text = text[: text.rfind("\n") + 1]
    sep = "\t" if lower.endswith((".tsv", ".tab")) else ","
    return [str(c) for c in pd.read_csv(io.StringIO(text), sep=sep, nrows=0).columns]


def _json_columns(text: str, cut: bool) -> list[str]:
    """The keys of a JSON document's first records: those the reader reads (the elements of an
    array, or of the array under "data", by `tempo_eval.io.json_array`), else those of the object's
    first array; from a `cut` text, those of the records that are complete."""
    from tempo_eval.io.json_array import array_elements

    records: list[Any] = []
    try:
        for record in array_elements(iter([text])):
            records.append(record)
            if len(records) == 100:
                break
    except (ValueError, RecursionError):  # not one of those forms, or cut: the records read so far count
        pass
    if records:
        return list(dict.fromkeys(str(k) for r in records if isinstance(r, dict) for k in r))
    if not cut:
        value = json.loads(text)
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, list)), [])
        return list(dict.fromkeys(str(k) for r in value[:100] if isinstance(r, dict) for k in r))
    start = text.find("[")
    decoder, pos = json.JSONDecoder(), start + 1
    while start >= 0 and len(records) < 100:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            record, pos = decoder.raw_decode(text, pos)
        except ValueError:
            break
        records.append(record)
    return list(dict.fromkeys(str(k) for r in records if isinstance(r, dict) for k in r))
