"""Read a dataset file in batches of canonical rows: memory grows with the batch, not the file.

    stream = open_stream("logs.csv.gz")
    for offset, frame in stream.batches():   # frame: canonical columns of rows offset, offset + 1, ...
        ...
    stream.n_rows, stream.warnings           # known when the last batch is handed out

CSV/TSV are read by pyarrow's streaming CSV reader, JSON Lines a batch of lines at a time,
Parquet a batch of rows at a time; each may be gzip or Zstandard compressed (recognised by
content). A file on disk has no size limit here (`max_bytes` sets one); only a regular file is
read (`tempo_eval.io._source.open_regular_file`).

The batches are converted by the whole-file reader's own converters (`tempo_eval.io.table`),
with the rows numbered in the whole file, so every check and message is the one `load_dataset`
gives: a bad cell names the file, its row, line and column. Checks across rows (unique query ids,
generated ids, columns empty in every row, list cells read in another style) keep their state
from batch to batch. A first pass (`tempo_eval.io._prepass`) computes the content hash (the same
as `load_dataset`'s, so a file streamed and loaded whole are one dataset) and makes the
whole-file reader's checks on all the bytes; a file they find a problem in is read whole
instead (`read_whole`), which names the problem exactly, and handed out in batches all the same.
So is a CSV file pyarrow stops on part way.

A file the streaming readers cannot take, and bytes or an upload (`read_whole`), are read whole
by the table readers (`tempo_eval.io.delimited`, `tempo_eval.io.jsonfiles`) and converted as one
batch by the same `tempo_eval.io.batches.Canonical`; `tempo_eval.io.dataset.load_dataset` is
the collected stream.

A JSON document is streamed when it is one array of objects, or an object with such an array
under "data" (`{"data": [...]}`, other keys before or after it, as the whole-file reader takes
it), an element at a time (`tempo_eval.io.json_array`); its other forms (pandas' split and
column orients, a DeepEval test run) are read whole, and so take memory with the file's size.

A compressed Parquet file is decompressed, a chunk at a time, into an unnamed temporary file in
the workspace's `tmp/` folder (Parquet is read from its footer, at the end: it needs a file it
can seek in), then read a batch at a time from there; the copy disappears when the stream is read or closed,
or its process ends, and a copy that would leave less than `MIN_FREE_BYTES` free on that disk
stops with a message saying so.

The columns are the whole file's: CSV's header, Parquet's schema, and for JSON Lines and JSON
documents every key of the file's objects, collected by the first pass, so a key first seen after
the first batch (a `gold_ids` key that appears only on row 2,500) is a column of every batch
and mapped as the whole-file reader maps it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_eval.common.process import gc_paused
from tempo_eval.io import _prepass
from tempo_eval.io._paced import paced_batches
from tempo_eval.io._source import (
    RawInput,
    _format_of,
    decode_text,
    gunzip_if_needed,
    open_dataset_file,
    open_regular_file,
    read_input,
)
from tempo_eval.io.batches import BatchTable, Canonical, canonical_frame

#: rows per batch
BATCH_ROWS = 1000

#: no limit: a file read whole because the streaming reader could not (see the module docstring)
_UNLIMITED = 1 << 62

#: the disk space a decompressed copy of a Parquet file leaves free at least
MIN_FREE_BYTES = 256 << 20


@dataclass
class DatasetStream:
    """A dataset read in batches. `mapping` is known once the stream is open (from its first
    batch); `n_rows` and the final `warnings` when `batches()` hands out the last batch (a
    file is read one table ahead, so its last batch is known as such); `estimated_rows` (from
    the first pass) is for progress until then."""

    name: str
    content_hash: str
    source_format: str
    mapping: dict[str, str]
    warnings: list[str]
    estimated_rows: int
    #: bytes of (decompressed) data, for the disk-space check
    size: int
    n_rows: int | None = None
    #: the columns of the canonical frames (those of the first batch)
    columns: list[str] = field(default_factory=list)
    #: a loaded Dataset handed out in batches (`frame_stream`), stored as one
    dataset: Any = None
    #: whether the rows were read whole (`read_whole`) rather than streamed
    read_whole: bool = False
    _batches: Iterator[tuple[int, pd.DataFrame]] | None = field(default=None, repr=False)

    def batches(self) -> Iterator[tuple[int, pd.DataFrame]]:
        """(offset of the first row, canonical frame) per batch, in file order; once only. The
        iterator's `close()` abandons the rest (the file is let go)."""
        if self._batches is None:
            raise RuntimeError("a DatasetStream is read once: open it again to read it again")
        batches, self._batches = self._batches, None
        return batches


def frame_stream(dataset: Any, batch_rows: int = BATCH_ROWS) -> DatasetStream:
    """A loaded `Dataset` handed out in batches (the same rows, the same identity)."""
    frame: pd.DataFrame = dataset.frame
    return DatasetStream(
        name=dataset.name, content_hash=dataset.content_hash, source_format=dataset.source_format,
        mapping=dict(dataset.mapping), warnings=list(dataset.warnings), estimated_rows=len(frame),
        size=int(frame.memory_usage(deep=False).sum()), n_rows=len(frame), columns=[str(c) for c in frame.columns],
        dataset=dataset, _batches=_in_batches(frame, batch_rows),
    )


def read_whole(raw: RawInput, mapping: Mapping[str, str] | None = None, format: str | None = None,
               batch_rows: int = BATCH_ROWS) -> DatasetStream:
    """A dataset read whole from its bytes (an upload, or a file the streaming readers cannot
    take): the table reader of its format, then the rows as one batch of the canonical
    conversion, handed out in batches of `batch_rows`."""
    source_format = _format_of(raw, format)
    data = gunzip_if_needed(raw)
    warnings: list[str] = []
    with gc_paused():
        if source_format == "parquet":
            from tempo_eval.io.jsonfiles import _read_parquet

            table = _read_parquet(data, raw.name, mapping, warnings)
        elif source_format in ("csv", "tsv"):
            from tempo_eval.io.delimited import _read_delimited

            table = _read_delimited(data, raw.name, "," if source_format == "csv" else "\t", warnings)
        else:
            from tempo_eval.io.jsonfiles import _read_json, _read_jsonl

            text = decode_text(data, raw.name, warnings)
            table = _read_jsonl(text, raw.name) if source_format == "jsonl" else _read_json(text, raw.name)
        frame, used = canonical_frame(table, mapping, raw.name, warnings)
    return DatasetStream(
        name=raw.name, content_hash=hashlib.sha256(raw.data).hexdigest(), source_format=source_format,
        mapping=used, warnings=warnings, estimated_rows=len(frame), size=len(data), n_rows=len(frame),
        columns=[str(c) for c in frame.columns], read_whole=True,
        _batches=_Batches([(0, frame)]) if len(frame) <= batch_rows else _in_batches(frame, batch_rows),
    )


def open_stream(
    path: str | os.PathLike[str],
    mapping: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    format: str | None = None,
    max_bytes: int | None = None,
    batch_rows: int = BATCH_ROWS,
    max_line_bytes: int = _prepass.MAX_LINE_BYTES,
) -> DatasetStream:
    """Open the dataset file at `path` for reading in batches of `batch_rows` rows (see the module
    docstring). The first pass and the first batch (and the raw rows of the next) are read here:
    a problem in the first rows, the mapping or the header raises InputError at once, the rest
    while the batches are read, each once the batches before it are handed out. A
    CSV or JSON Lines line (a JSON array's element) longer than `max_line_bytes` is refused by
    the first pass, naming the file and the line, before it is held."""
    label = name or Path(path).name
    copy = None

    def whole_file() -> DatasetStream:  # what the streaming readers cannot take (module docstring)
        limit = _UNLIMITED if max_bytes is None else max_bytes
        return read_whole(read_input(path, name=label, default_name="data", max_bytes=limit), mapping, format,
                          batch_rows)

    source_format, raw, compression = open_dataset_file(path, label, format, max_bytes)
    delimiter = {"csv": ",", "tsv": "\t"}.get(source_format)
    # an uncompressed text file is opened once: the first pass reads it (and hashes what it
    # reads), then the batches are read from the same handle; a compressed one is hashed as
    # stored, in a thread, and read through its decompressor
    shared = compression is None and source_format in ("csv", "tsv", "jsonl", "json")
    try:
        if shared:
            scan = _first_pass(path, label, source_format, compression, delimiter, max_line_bytes, raw)
        else:
            hashing = _prepass.BackgroundHash(raw)
            try:
                scan = _first_pass(path, label, source_format, compression, delimiter, max_line_bytes)
                if source_format == "parquet" and compression is not None:
                    copy = _decompressed_copy(path, label, compression)
                    scan.streamable = copy is not None
                scan.content_hash = hashing.result()
            except BaseException:
                hashing.cancel()
                raise
    except BaseException:
        raw.close()
        raise
    content_hash = scan.content_hash
    if not (shared and scan.streamable):
        raw.close()
        raw = None
    if scan.streamable and source_format == "parquet":
        scan.estimated_rows = _parquet_rows(path, label, copy)
    if not scan.streamable:
        return whole_file()

    canonical = Canonical(mapping, label)
    canonical.reader_warnings.extend(scan.warnings)
    if source_format == "parquet":
        tables = _parquet_tables(path, label, batch_rows, canonical, copy)
    elif source_format == "jsonl":
        tables = _jsonl_tables(path, label, compression, batch_rows, scan.keys, max_line_bytes, raw)
    elif source_format == "json":
        tables = _json_array_tables(path, label, compression, batch_rows, scan.keys, max_line_bytes, raw)
    else:
        tables = _csv_tables(path, label, compression, delimiter or ",", batch_rows, canonical, raw)
    tables = _closing(tables, raw)
    try:
        first_table = next(tables, None)
    except _ReadWhole:
        tables.close()
        return whole_file()
    except BaseException:
        tables.close()
        raise
    if first_table is None:  # no rows: the whole-file reader names the problem
        return whole_file()
    stream = DatasetStream(name=label, content_hash=content_hash, source_format=source_format, mapping={},
                           warnings=[], estimated_rows=scan.estimated_rows, size=scan.size)
    tail: list[tuple[int, pd.DataFrame]] = []

    def converted(table: BatchTable | None) -> Iterator[tuple[int, pd.DataFrame]]:
        """The batches, one a resume: each converted once the next table is read, so the last is
        converted knowing it is (its conversion gives the file's warnings) and the stream's end
        is known when it is handed out. The last is left in `tail`, which the chain hands out
        after this generator has ended: it is not resumed once more to end."""
        offset, failed = 0, None
        while table is not None:
            try:
                following, failed = next(tables, None), None
            except Exception as error:  # noqa: BLE001 - raised once the batch in hand is handed out
                following, failed = None, error
            last = following is None and failed is None
            frame = canonical.batch(table, last=last)
            if last:
                stream.warnings, stream.n_rows = canonical.warnings, offset + len(frame)
                tail.append((offset, frame))
                return
            yield offset, frame
            offset += len(frame)
            table = following
        if not isinstance(failed, _ReadWhole):
            raise failed  # type: ignore[misc]  # a problem of the table after the batch just handed out
        # pyarrow stopped part way: the whole-file reader names the problem, or reads the rest
        whole = whole_file()
        stream.warnings, stream.n_rows = list(whole.warnings), max(offset, whole.n_rows or 0)
        for start, frame in whole.batches():
            if start + len(frame) > offset:
                frame = frame.iloc[max(0, offset - start):]
                yield offset, frame
                offset += len(frame)

    reading = converted(first_table)
    head = list(itertools.islice(reading, 1))  # the first batch, converted here: its problems raised at once
    first = (head or tail)[0][1]
    stream.mapping, stream.columns = canonical.mapping or {}, [str(c) for c in first.columns]
    stream.estimated_rows = max(scan.estimated_rows, len(first))
    stream._batches = _Batches(head, reading, tail)
    stream._batches.reading = (reading, tables)
    return stream


class _Batches(itertools.chain):  # type: ignore[type-arg]
    """A stream's batches, handed out by a chain (no call of ours a batch but a resume of the
    reading generator, when there is one). `close()` abandons them: the generator and the tables
    it reads (`reading`) are let go, and so the file."""

    reading: tuple[Any, ...] = ()

    def close(self) -> None:
        for part in self.reading:
            part.close()


def _in_batches(frame: pd.DataFrame, batch_rows: int) -> _Batches:
    """A frame in memory handed out in batches of `batch_rows` rows (views of it)."""
    return _Batches([(start, frame.iloc[start:start + batch_rows]) for start in range(0, len(frame), batch_rows)])


def _first_pass(path: Any, label: str, source_format: str, compression: str | None, delimiter: str | None,
                max_line_bytes: int = _prepass.MAX_LINE_BYTES, handle: Any = None) -> _prepass.Scan:
    """The first pass's checks of a text file (`tempo_eval.io._prepass`): of `handle` (the
    uncompressed file, open at its start), hashed as it is read, when given; else of the file
    opened again, without the hash. A Parquet file is streamable unless compressed (then only
    when it decompresses)."""
    if source_format not in ("csv", "tsv", "jsonl", "json"):
        return _prepass.Scan("", streamable=source_format == "parquet", size=os.stat(path).st_size)
    try:
        if handle is not None:
            return _prepass.hashed_scan(handle, label, source_format, delimiter, max_line_bytes=max_line_bytes)
        with _decompressed(path, label, compression) as text:
            if source_format == "json":
                return _prepass.scan_json_array(_chunks(text), label, max_line_bytes=max_line_bytes)
            return _prepass.scan_text(_chunks(text), label, delimiter, json_lines=source_format == "jsonl",
                                      max_line_bytes=max_line_bytes)
    except (OSError, _arrow_error()):  # a damaged compressed file: the whole-file reader says how
        return _prepass.Scan("", streamable=False)


def _arrow_error() -> type[Exception]:
    import pyarrow as pa

    return pa.ArrowException


class _ReadWhole(Exception):
    """The streaming reader cannot go on: read the file whole (see the module docstring)."""


def _closing(tables: Iterator[BatchTable], handle: Any) -> Iterator[BatchTable]:
    """`tables`, then `handle` (the file they read, when shared with the first pass) closed."""
    try:
        yield from tables
    finally:
        if handle is not None:
            handle.close()


@contextlib.contextmanager
def _decompressed(path: Any, label: str, compression: str | None, handle: Any = None) -> Iterator[Any]:
    """The file's text from its start: `handle` (the uncompressed file open already, rewound; its
    owner closes it) or the file opened again, decompressed."""
    import pyarrow as pa

    if handle is not None and compression is None:
        handle.seek(0)
        yield handle
        return
    with open_regular_file(path, label) as raw:
        if compression is None:
            yield raw
        else:
            yield pa.CompressedInputStream(pa.PythonFile(raw, mode="r"), compression)


def _chunks(stream: Any) -> Iterator[bytes]:
    while chunk := stream.read(_prepass.CHUNK):
        yield bytes(chunk)


# ---- CSV / TSV ------------------------------------------------------------------------------


def _csv_tables(
    path: Any, label: str, compression: str | None, delimiter: str, batch_rows: int, canonical: Canonical,
    handle: Any = None,
) -> Iterator[BatchTable]:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    from tempo_eval.io.delimited import _check_header, delimited_batch

    with _decompressed(path, label, compression, handle) as text:
        head = text.read(1 << 16)
        head = bytes(head)
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        header_line = head[: head.find(b"\n")].rstrip(b"\r").decode("utf-8")
    header = _check_header(header_line.split(delimiter), label, delimiter, 1, canonical.reader_warnings)
    lines = _CsvLines(path, label, compression, delimiter)
    skipped = 0
    offset = 0
    with _decompressed(path, label, compression, handle) as text:
        # pyarrow's reading thread stays a few blocks ahead (`tempo_eval.io._paced`)
        paced = paced_batches(
            text, pa_csv.open_csv,
            read_options=pa_csv.ReadOptions(column_names=header, skip_rows=1, block_size=1 << 22),
            parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in header},
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        try:
            pending: list[Any] = []
            pending_rows = 0
            for record_batch in itertools.chain(_record_batches(paced), [None]):
                if record_batch is not None:
                    pending.append(record_batch)
                    pending_rows += record_batch.num_rows
                    if pending_rows < batch_rows:
                        continue
                if not pending:
                    break
                arrow, pending, pending_rows = pa.Table.from_batches(pending), [], 0
                if record_batch is not None and arrow.num_rows > batch_rows:  # keep the rest for the next
                    cut = arrow.num_rows - arrow.num_rows % batch_rows
                    rest = arrow.slice(cut)
                    arrow = arrow.slice(0, cut)
                    if rest.num_rows:
                        pending, pending_rows = rest.to_batches(), rest.num_rows
                for start in range(0, arrow.num_rows, batch_rows):
                    batch, empty = delimited_batch(arrow.slice(start, batch_rows), header, label, offset, lines)
                    skipped += empty
                    if batch is None:
                        continue
                    offset += batch.n_rows
                    yield batch
        finally:
            paced.close()  # pyarrow's reading thread let go
            canonical.skipped_empty_rows += skipped


def _record_batches(paced: Iterator[Any]) -> Iterator[Any]:
    """The paced record batches; pyarrow refusing the file (at its start or part way): `_ReadWhole`."""
    import pyarrow as pa

    while True:
        try:
            batch = next(paced)
        except StopIteration:
            return
        except (pa.ArrowException, ValueError, OSError):
            raise _ReadWhole() from None
        yield batch


class _CsvLines:
    """The line each row of a streamed CSV file starts on, found (only for messages) by reading
    the file again with the csv module, as the whole-file reader numbers them."""

    def __init__(self, path: Any, label: str, compression: str | None, delimiter: str) -> None:
        self._args = (path, label, compression, delimiter)
        self._found: dict[int, int | None] = {}

    def __call__(self, row: int) -> int | None:
        if row not in self._found:
            self._found[row] = self._line_of(row)
        return self._found[row]

    def _line_of(self, wanted: int) -> int | None:
        import csv

        from tempo_eval.io.delimited import _CSV_FIELD_LIMIT, _csv_field_limit

        path, label, compression, delimiter = self._args
        with _decompressed(path, label, compression) as raw, _csv_field_limit(_CSV_FIELD_LIMIT):
            text = io.TextIOWrapper(raw if compression is None else _Readable(raw), encoding="utf-8-sig", newline="")
            reader = csv.reader(text, delimiter=delimiter)
            header: list[str] | None = None
            line_before, row = 0, 0
            try:
                for record in reader:
                    start = line_before + 1
                    line_before = reader.line_num
                    if header is None:
                        if record:
                            header = record
                        continue
                    if len(record) != len(header) and (not record or (len(record) == 1 and record[0].isspace())):
                        continue
                    if not any(record):
                        continue
                    if row == wanted:
                        return start
                    row += 1
            except csv.Error:
                return None
        return None


class _Readable(io.RawIOBase):
    """A pyarrow stream as a Python raw stream (for io.TextIOWrapper)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


# ---- JSON Lines -----------------------------------------------------------------------------


def _jsonl_tables(
    path: Any, label: str, compression: str | None, batch_rows: int, keys: list[str] | None,
    max_line_bytes: int = _prepass.MAX_LINE_BYTES, handle: Any = None,
) -> Iterator[BatchTable]:
    """Batches of the lines' objects, each with every key of the file (`keys`, from the first
    pass) as a column, as the whole-file reader's table has them."""
    import json

    from tempo_eval.io.jsonfiles import _read_jsonl_line, _records_table

    decode = json.JSONDecoder().decode
    offset = 0
    number = 0
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    with _decompressed(path, label, compression, handle) as raw:
        leftover = b""
        first = True
        while True:
            chunk = bytes(raw.read(_prepass.CHUNK))
            if first:
                if chunk.startswith(b"\xef\xbb\xbf"):
                    chunk = chunk[3:]
                first = False
            data = leftover + chunk
            if chunk:
                cut = data.rfind(b"\n") + 1
                complete, leftover = data[:cut], data[cut:]
                if len(leftover) > max_line_bytes:  # the file grew a long line after the first pass
                    raise _prepass.line_too_long(label, number + complete.count(b"\n") + 1, max_line_bytes)
            else:
                complete, leftover = data, b""
            if complete:
                for line in complete.decode("utf-8").split("\n")[: -1 if complete.endswith(b"\n") else None]:
                    number += 1
                    _read_jsonl_line(line, number, label, decode, records, lines)
                    if len(records) >= batch_rows:
                        table = _records_table(records, lines, keys)
                        yield BatchTable(table.columns, table.values, table.n_rows, lines, offset=offset)
                        offset += table.n_rows
                        records, lines = [], []
            if not chunk:
                break
    if records:
        table = _records_table(records, lines, keys)
        yield BatchTable(table.columns, table.values, table.n_rows, lines, offset=offset)


def _json_array_tables(
    path: Any, label: str, compression: str | None, batch_rows: int, keys: list[str] | None,
    max_line_bytes: int = _prepass.MAX_LINE_BYTES, handle: Any = None,
) -> Iterator[BatchTable]:
    """Batches of the objects of a JSON document that is one array of them, or holds one under
    "data" (the first pass found it so), each with every key of the file as a column; rows are
    placed by number, as the whole-file reader places them. Anything unexpected: the whole-file
    reader reads the rest."""
    import codecs

    from tempo_eval.io.json_array import ElementTooLong, NotAnArray, array_elements
    from tempo_eval.io.jsonfiles import _records_table

    def texts(raw: Any) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8-sig")()  # the byte order mark, noted by the first pass
        while chunk := bytes(raw.read(_prepass.CHUNK)):
            yield decoder.decode(chunk)
        yield decoder.decode(b"", final=True)

    offset = 0
    records: list[dict[str, Any]] = []
    with _decompressed(path, label, compression, handle) as raw:
        try:
            for element in itertools.chain(array_elements(texts(raw), max_line_bytes), [None]):
                if element is not None:
                    if type(element) is not dict:
                        raise _ReadWhole()
                    records.append(element)
                    if len(records) < batch_rows:
                        continue
                if records:
                    table = _records_table(records, None, keys)
                    yield BatchTable(table.columns, table.values, table.n_rows, None, offset=offset)
                    offset += table.n_rows
                    records = []
        except ElementTooLong as long:  # changed since the first pass
            raise _prepass.line_too_long(label, long.index, max_line_bytes, element=True) from None
        except (NotAnArray, UnicodeDecodeError, RecursionError):  # changed since the first pass
            raise _ReadWhole() from None


# ---- Parquet --------------------------------------------------------------------------------


def _decompressed_copy(path: Any, label: str, compression: str) -> Any:
    """The decompressed bytes of a compressed Parquet file in an unnamed temporary file (open, at
    its start) in the workspace's `tmp/` folder; None when the file does not decompress (the
    whole-file reader then names the problem). Raises OSError naming the folder when the copy
    would leave less than `MIN_FREE_BYTES` free, or cannot be written."""
    import shutil
    import tempfile

    import pyarrow as pa

    from tempo_eval.store.db import files_dir

    folder = files_dir() / "tmp"
    folder.mkdir(exist_ok=True)
    # no name: nothing is left behind, even by a kill; it outlives this call (the batches close it)
    copy = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115
    written = 0
    try:
        with _decompressed(path, label, compression) as source:
            while True:
                try:
                    chunk = source.read(_prepass.CHUNK)
                except (OSError, pa.ArrowException):  # damaged
                    copy.close()
                    return None
                if not chunk:
                    break
                free = shutil.disk_usage(folder).free
                if free - len(chunk) < MIN_FREE_BYTES:
                    raise OSError(
                        f"{label}: decompressing it for reading needs more disk space than is free in {folder} "
                        f"({written / 1e6:,.0f} MB written, {free / 1e6:,.0f} MB left); free disk space, or use a "
                        "workspace on another disk (--workspace / TEMPO_EVAL_HOME), or decompress the file yourself"
                    )
                try:
                    copy.write(chunk)
                except OSError as error:
                    raise OSError(f"{label}: could not write its decompressed copy in {folder} ({error.strerror or error})"
                                  ) from None
                written += len(chunk)
    except BaseException:
        copy.close()
        raise
    copy.seek(0)
    return copy


@contextlib.contextmanager
def _parquet_file(path: Any, label: str, copy: Any) -> Iterator[Any]:
    """The Parquet bytes to read: the decompressed `copy` when there is one (left open), else the file."""
    if copy is not None:
        yield copy
        return
    with open_regular_file(path, label) as raw:
        yield raw


def _parquet_rows(path: Any, label: str, copy: Any = None) -> int:
    """The row count in a Parquet file's footer, an estimate for progress only: 0 (no estimate, as
    `_prepass.Scan` starts) when the footer cannot be read; the reader then says why."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with _parquet_file(path, label, copy) as raw:
        try:
            return int(pq.ParquetFile(pa.PythonFile(raw, mode="r")).metadata.num_rows)
        except (pa.ArrowException, OSError):
            return 0


def _parquet_tables(
    path: Any, label: str, batch_rows: int, canonical: Canonical, copy: Any = None
) -> Iterator[BatchTable]:
    """Batches of a Parquet file's rows, a batch of a row group at a time; the decompressed `copy`
    (when given) is read, then closed (and so removed) when the batches end or are abandoned."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tempo_eval.io.jsonfiles import parquet_columns, parquet_table

    offset = 0
    try:
        with _parquet_file(path, label, copy) as raw:
            try:
                parquet = pq.ParquetFile(pa.PythonFile(raw, mode="r"), pre_buffer=False)
            except Exception:  # unreadable: the whole-file reader says how
                raise _ReadWhole() from None
            if parquet.metadata.num_rows == 0:
                raise _ReadWhole()
            columns = parquet_columns(parquet.schema_arrow, canonical.explicit, label, canonical.reader_warnings)
            for record_batch in parquet.iter_batches(batch_size=batch_rows, columns=columns, use_threads=False):
                table = parquet_table(pa.Table.from_batches([record_batch]), label)
                yield BatchTable(table.columns, table.values, table.n_rows, None, arrow=table.arrow, offset=offset)
                offset += table.n_rows
    finally:
        if copy is not None:
            copy.close()
