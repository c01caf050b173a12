"""TREC run and qrels files read as Arrow columns, one block of lines at a time.

The file is never held whole: it is opened as a stream (gzip, bzip2 and zstd decompressed as
they are read, recognised by their first bytes, whatever the name), cut into blocks of whole
lines, and each block is parsed by pyarrow's CSV reader, whose number parsing takes ASCII
digits only, as trec_eval does. A block pyarrow cannot take as is (several spaces or tabs
between fields, comment lines, fields after the sixth, a NaN score) is normalised and tried
again, and failing that read line by line with the rules and messages below (`run_line`,
`qrels_line`), so every error names the file, the line and the field.

Run lines: `qid Q0 docid rank score tag` (6 fields separated by spaces or tabs); as trec_eval
does, fields after the sixth are ignored (with a note). `rank` must be an integer, which catches
swapped columns, but orders nothing. Qrels lines: `qid iter docid rel` (4 fields); `rel` is an
integer grade (0 = not relevant). Blank lines and lines starting with `#` are skipped.

A run block gives the columns qid, docid (strings), score (float64) and tag; a qrels block
qid, docid and rel (int64). Only regular files are read: a FIFO, a device or a directory is
refused before it is opened.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from tempo_eval.io.errors import InputError, quote

#: bytes of text parsed at once (whole lines)
BLOCK_BYTES = 16 << 20
#: the longest query id, document id and run name (tag) read, in characters: ids are far shorter;
#: a longer field is a broken file or a bomb (a 130 KB .gz whose run name is 512 MB)
MAX_FIELD_CHARS = 1_000
#: the longest line read, in bytes (six fields of at most MAX_FIELD_CHARS characters, with room):
#: a line not ended this far past a block's end is refused before more of it is read
MAX_LINE_BYTES = 64 << 10
_FIELD_NAMES = (("qid", "query id"), ("docid", "document id"), ("tag", "run name"))
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\x28\xb5\x2f\xfd": "zstd"}
_FIELDS = {
    "run": (("qid", "q0", "docid", "rank", "score", "tag"), {"rank": pa.int64(), "score": pa.float64()}),
    "qrels": (("qid", "iter", "docid", "rel"), {"rel": pa.int64()}),
}
_KEPT = {"run": ("qid", "docid", "rank", "score", "tag"), "qrels": ("qid", "docid", "rel")}
_SPACES = re.compile(rb"[ \t]+")
#: a field starting like a hexadecimal integer: pyarrow reads "0x1" as 1, trec_eval (ASCII
#: digits) does not; a block holding one is read line by line, where the rank and grade are checked
_HEX_FIELD = re.compile(rb"(?:^|[ \t])0[xX][0-9a-fA-F]", re.MULTILINE)
_EDGES = re.compile(rb" ?(\r?\n) ?")


RUN_EXPECTED = "expected 6 fields separated by spaces or tabs: qid Q0 docid rank score tag"
QRELS_EXPECTED = "expected 4 fields separated by spaces or tabs: qid iter docid rel"
#: what trec_eval reads as an integer (rank, relevance) and as a score: ASCII digits only, so
#: Python's `int("1_0")` or Arabic-Indic digits do not slip through
ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")
ASCII_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:inf|infinity)")


def run_line(fields: list[str], source: str, number: int) -> tuple[str, str, float, str]:
    """(qid, docid, score, tag) of one run line split on whitespace; InputError naming the line
    and field when it is not `qid Q0 docid rank score tag` (fields after the sixth are the
    caller's to note)."""
    if len(fields) < 6:
        hint = {4: " (this looks like a qrels line: load it with read_qrels)",
                5: " (is the Q0 field or the run tag missing?)"}.get(len(fields), "")
        raise InputError(f"found {len(fields)} fields {quote(' '.join(fields))}; {RUN_EXPECTED}{hint}",
                         source=source, line=number)
    qid, _, docid, rank, score_text, tag = fields[:6]
    if not ASCII_INTEGER.fullmatch(rank):
        raise InputError(
            f"found {rank!r}; expected an integer rank in ASCII digits (the 4th field: qid Q0 docid rank score tag)",
            source=source, line=number, column="rank", column_label="field",
        )
    if not ASCII_DECIMAL.fullmatch(score_text):
        raise InputError(
            f"found {score_text!r}; expected a number as the score, in ASCII digits (the 5th field: "
            "qid Q0 docid rank score tag)",
            source=source, line=number, column="score", column_label="field",
        )
    return qid, docid, float(score_text), tag


def qrels_line(fields: list[str], source: str, number: int) -> tuple[str, str, int]:
    """(qid, docid, grade) of one qrels line split on whitespace; InputError naming the line and
    field when it is not `qid iter docid rel`."""
    if len(fields) != 4:
        hint = " (this looks like a run line: load it with read_runs)" if len(fields) == 6 else ""
        raise InputError(f"found {len(fields)} fields {quote(' '.join(fields))}; {QRELS_EXPECTED}{hint}",
                         source=source, line=number)
    qid, _, docid, rel = fields
    if not ASCII_INTEGER.fullmatch(rel):
        raise InputError(
            f"found {rel!r}; expected an integer relevance grade in ASCII digits (0 = not relevant)",
            source=source, line=number, column="rel", column_label="field",
        )
    return qid, docid, int(rel)


def pair_lines(source: Any, name: str, qid: str, docid: str, tag: str | None = None) -> list[int]:
    """The numbers of the lines holding (qid, docid) (in run `tag`, for a run file), read again
    from the start: only called to name both lines of a pair given twice."""
    stream, raw, _ = _open(source, name)
    found: list[int] = []
    try:
        rest, number = b"", 0
        while len(found) < 2:
            chunk = _read(stream, BLOCK_BYTES, name)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop() if chunk else b""
            for line in lines:
                number += 1
                line = line.removeprefix(b"\xef\xbb\xbf") if number == 1 else line
                fields = line.decode("utf-8", "replace").split()
                if fields[2:3] == [docid] and fields[0] == qid and (tag is None or fields[5:6] == [tag]):
                    found.append(number)
            if not chunk:
                break
    finally:
        _close(stream, raw)
    return found


@dataclass
class Block:
    """The columns of a block of lines and what was read leniently in it."""

    columns: dict[str, Any]
    first_line: int
    #: line numbers with fields after the last expected one (ignored, as trec_eval does)
    extra_lines: list[int] = field(default_factory=list)


def _open(source: Any, name: str) -> tuple[Any, Any, int]:
    """(decompressed stream, the raw stream under it, the raw size in bytes)."""
    if isinstance(source, (str, os.PathLike)):
        from tempo_eval.io._source import open_regular

        # a FIFO, a device, a directory or a link loop is refused by name before anything is read
        fd = open_regular(source, name)
        try:
            head = os.pread(fd, 4, 0)
            raw = pa.PythonFile(os.fdopen(fd, "rb", buffering=0), mode="r")
        except OSError as error:
            os.close(fd)
            raise InputError(f"could not read the file: {error.strerror or error}", source=name) from None
    else:
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        elif hasattr(source, "getvalue"):
            data = source.getvalue()
        elif hasattr(source, "read"):
            if hasattr(source, "seek"):
                source.seek(0)
            data = source.read()
        else:
            raise TypeError(f"expected a path, bytes or a binary file-like object, got {type(source).__name__}")
        if isinstance(data, str):
            data = data.encode("utf-8")
        head = data[:4]
        raw = pa.BufferReader(data)
    codec = next((c for magic, c in _MAGIC.items() if head.startswith(magic)), None)
    size = raw.size()
    return (pa.CompressedInputStream(raw, codec) if codec else raw), raw, size


def iter_blocks(
    source: Any, kind: str, *, name: str, block_bytes: int = BLOCK_BYTES, progress: Any = None,
    max_field_chars: int = MAX_FIELD_CHARS, max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Block]:
    """The blocks of a run (`kind` "run") or qrels ("qrels") file; InputError on the first bad line.
    A file whose text starts with "{" is JSON: the caller reads it whole (`tempo_eval.io.trec_stream`)
    (`starts_with_json`). `progress(fraction)` is called after each block with the share of the
    (compressed) file read so far. A query id, document id or run name longer than
    `max_field_chars` characters, and a line longer than `max_line_bytes` bytes past a block's
    end, are refused with the file and the line while the file is read (memory stays at a block)."""
    stream, raw, size = _open(source, name)
    rest = b""
    line = 1
    first = True
    delimiter = b" "
    try:
        while True:
            chunk = _read(stream, block_bytes, name)
            data = rest + chunk if rest else chunk
            if not chunk:
                cut, rest = len(data), b""
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # no line end yet: read on, unless the line is already too long
                    if len(data) > max_line_bytes:
                        raise _long_line(name, line, max_line_bytes)
                    rest = data
                    continue
                rest = data[cut:]  # the block is data[:cut], parsed without a copy
                if len(rest) > max_line_bytes:
                    raise _long_line(name, line + data.count(b"\n", 0, cut), max_line_bytes)
            if first:
                start = len(data)
                data = _check_start(data, name)
                cut -= start - len(data)
                delimiter = b"\t" if data[: data.find(b"\n")].count(b"\t") >= 3 else b" "
                first = False
            if cut:
                block = _parse(data, cut, kind, name, line, delimiter)
                yield _check_fields(block, data, cut, name, max_field_chars)
                line += data.count(b"\n", 0, cut)
                if progress is not None and size:
                    progress(min(1.0, raw.tell() / size))
            if not chunk:
                return
    finally:  # also when the caller stops early (a bad line, a cancel): no file left open
        _close(stream, raw)


def _long_line(name: str, line: int, limit: int) -> InputError:
    return InputError(f"the line is longer than {limit:,} bytes; expected a TREC line of six fields (query id, "
                      f"Q0, document id, rank, score, run name) of at most {MAX_FIELD_CHARS:,} characters each",
                      source=name, line=line)


def _check_fields(block: Block, data: bytes, end: int, name: str, limit: int) -> Block:
    """`block` when none of its query ids, document ids and run names is longer than `limit`
    characters; else InputError naming the line (found only then)."""
    for column, what in _FIELD_NAMES:
        values = block.columns.get(column)
        if values is None or not len(values) or pc.max(pc.binary_length(values)).as_py() <= limit:
            continue  # bytes are at least characters: the common case costs one pass
        lengths = pc.utf8_length(values)
        if pc.max(lengths).as_py() <= limit:
            continue
        row = int(pc.index(pc.greater(lengths, limit), True).as_py())
        value = values[row].as_py()
        raise InputError(
            f"the {what} is {len(value):,} characters long (it starts {value[:40]!r}); expected at most {limit:,}",
            source=name, line=_line_of_row(data, end, block.first_line, row),
        )
    return block


def _line_of_row(data: bytes, end: int, first_line: int, row: int) -> int | None:
    """The line number of the block's `row`-th field line (blank and comment lines skipped)."""
    seen = -1
    for number, text in enumerate(bytes(data[:end]).split(b"\n"), start=first_line):
        fields = text.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        seen += 1
        if seen == row:
            return number
    return None


def starts_with_json(source: Any, name: str) -> bool:
    """Whether the text starts with "{" (a ranx / pytrec_eval JSON file)."""
    stream, raw, _ = _open(source, name)
    try:
        head = _read(stream, 4096, name).lstrip(b"\xef\xbb\xbf").lstrip()
    finally:
        _close(stream, raw)
    return head.startswith(b"{")


def _close(stream: Any, raw: Any) -> None:
    for part in (stream, raw):
        with contextlib.suppress(OSError, pa.ArrowException):  # a decompressor that failed
            part.close()


def _read(stream: Any, size: int, name: str) -> bytes:
    try:
        return stream.read(size)
    except (OSError, pa.ArrowException) as error:
        raise InputError(
            f"the file could not be read or decompressed ({error}); expected a complete .gz, .bz2 or "
            ".zst file, or plain text",
            source=name,
        ) from None


def _check_start(data: bytes, name: str) -> bytes:
    if data.startswith(b"PAR1") or data.startswith(b"PK\x03\x04"):
        raise InputError("this is a Parquet or zip file, not text; expected TREC lines in UTF-8 text", source=name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("the file is UTF-16 text; expected UTF-8: save the file as UTF-8", source=name)
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def _parse(data: bytes, end: int, kind: str, name: str, first_line: int, delimiter: bytes) -> Block:
    """The columns of the lines in data[:end]."""
    nul = data.find(b"\x00", 0, end)
    if nul >= 0:
        raise InputError(
            "found a NUL byte: this looks like a binary file; expected TREC lines in UTF-8 text",
            source=name, line=first_line + data.count(b"\n", 0, nul),
        )
    if _may_hold_hex(data, end) and _HEX_FIELD.search(data, 0, end):
        return _parse_lines(data[:end], kind, name, first_line)
    columns = _parse_fast(memoryview(data)[:end], kind, delimiter)
    if columns is None:  # normalised (one space between fields, none at the edges), tried again
        normal = _EDGES.sub(rb"\1", _SPACES.sub(b" ", data[:end])).lstrip(b" ")
        columns = _parse_fast(normal, kind, b" ")
    if columns is None:
        return _parse_lines(data[:end], kind, name, first_line)
    return Block(columns, first_line)


def _may_hold_hex(data: bytes, end: int) -> bool:
    """Whether data[:end] holds "0x" or "0X": an "x" is looked for first (one memchr pass, where
    "0x" alone is slow in text full of zeros)."""
    return any(data.find(x, 0, end) >= 0 and data.find(b"0" + x, 0, end) >= 0 for x in (b"x", b"X"))


def _parse_fast(data: Any, kind: str, delimiter: bytes) -> dict[str, Any] | None:
    """The block's columns from pyarrow, or None when it needs the line-by-line reader."""
    names, types = _FIELDS[kind]
    column_types = {n: types.get(n, pa.string()) for n in names}
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(column_names=list(names), block_size=1 << 22),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter.decode(), quote_char=False, double_quote=False, escape_char=False,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=column_types, include_columns=list(_KEPT[kind]), null_values=[],
                strings_can_be_null=False, true_values=[], false_values=[],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    columns = {n: table.column(n).combine_chunks() for n in _KEPT[kind]}
    for text in ("qid", "docid", "tag"):
        if text in columns and len(columns[text]) and pc.min(pc.binary_length(columns[text])).as_py() == 0:
            return None  # an empty field: two delimiters in a row
    if len(columns["qid"]) and pc.any(pc.starts_with(columns["qid"], "#")).as_py():
        return None  # a comment line that happens to have the right number of fields
    if kind == "run":
        scores = columns["score"].to_numpy(zero_copy_only=False)
        if np.isnan(scores).any():
            return None
        columns["score"] = scores
    else:
        columns["rel"] = columns["rel"].to_numpy(zero_copy_only=False)
    columns.pop("rank", None)  # parsed to check it is an integer, not used
    return columns


def _parse_lines(data: bytes, kind: str, name: str, first_line: int) -> Block:
    """The slow, exact reader: every line checked by `run_line` / `qrels_line`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"byte 0x{data[error.start:error.start + 1].hex()} is not valid UTF-8; expected UTF-8 text: "
            "save the file as UTF-8",
            source=name, line=first_line + data.count(b"\n", 0, error.start),
        ) from None
    rows: list[tuple[Any, ...]] = []
    extra: list[int] = []
    for number, line in enumerate(io.StringIO(text), start=first_line):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if kind == "run":
            if len(fields) > 6:
                extra.append(number)
            rows.append(run_line(fields, name, number))
        else:
            rows.append(qrels_line(fields, name, number))
    names = ("qid", "docid", "score", "tag") if kind == "run" else ("qid", "docid", "rel")
    values = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    columns: dict[str, Any] = {}
    for column, items in zip(names, values, strict=True):
        if column in ("score", "rel"):
            columns[column] = np.asarray(items, dtype=np.float64 if column == "score" else np.int64)
        else:
            columns[column] = pa.array(items, type=pa.string())
    return Block(columns, first_line, extra)
