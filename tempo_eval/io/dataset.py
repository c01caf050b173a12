"""Load a dataset of RAG outputs (CSV, TSV, JSONL, JSON, Parquet) into canonical columns.

Canonical columns (see the project vocabulary): `query_id`, `query`, `contexts` (list[str]),
`answer`, `reference`, `retrieved_ids` (list[str]), `gold_ids` (list[str] for binary relevance or
dict[str, int] for graded), `run`, `reference_date` (ISO date text).

Columns are mapped automatically from our names, RAGAS names and DeepEval names (`ALIASES`; the
match ignores case, spaces and hyphens); `mapping={"query": "Frage"}` maps anything else and wins
over the automatic choice. Source columns that map to nothing are kept under their own names.

Required: a `query` or a query id column, and at least one of `answer`, `contexts` or
`retrieved_ids` (without one of those there is nothing to evaluate). Every problem raises
`InputError` naming the file, the row (1-based, header not counted) and its line in the file
where known, the column, what was found and what was expected.

Formats: CSV/TSV with a header line and standard double-quote quoting (cells may span lines);
JSON Lines (one object per line); JSON (a list of objects, or {"data": [...]}); Parquet. Text must
be UTF-8: a UTF-8 byte order mark is removed with a warning; rows with every cell empty are
skipped with a warning; a cell may hold at most `MAX_CELL_CHARS` (1,000,000) characters. List
cells: a JSON list, a Python list literal or `|`-separated values (see `tempo_eval.io.cells`).

Missing cells (empty text, null, NaN) become None. Query ids must be present in every row when
an id column exists, and unique (per run, when there is a `run` column); when there is no id
column they are generated: "q1", "q2", ... by row, or, when there is a `run` column, by the first
appearance of each query text, so the same query gets the same id in every run.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import gc
import hashlib
import io
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import pandas as pd

from tempo_eval.io._source import (
    RawInput,
    check_text_bytes,
    decode_text,
    decode_utf8,
    gunzip_if_needed,
    read_input,
)
from tempo_eval.io.cells import (
    MAX_CELL_CHARS,
    MISSING_WORDS,
    CellError,
    check_size,
    comma_separated_ids_warning,
    date_cell,
    gold_cell,
    list_cell,
    text_cell,
)
from tempo_eval.io.errors import InputError, json_error_text, list_columns, quote
from tempo_eval.schema import CANONICAL_COLUMNS

#: source column names recognised for each canonical column, in order of preference:
#: ours, then RAGAS (user_input, retrieved_contexts, response, reference, retrieved_context_ids,
#: reference_context_ids; legacy question, ground_truth), then DeepEval (input, actual_output,
#: expected_output, retrieval_context).
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "id", "qid", "question_id"),
    "query": ("query", "user_input", "input", "question"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context"),
    "answer": ("answer", "response", "actual_output"),
    "reference": ("reference", "expected_output", "ground_truth"),
    "retrieved_ids": ("retrieved_ids", "retrieved_context_ids"),
    "gold_ids": ("gold_ids", "reference_context_ids"),
    "run": ("run", "run_name"),
    "reference_date": ("reference_date",),
}

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl", "json", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_EVALUABLE = ("answer", "contexts", "retrieved_ids")
_DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "'|'"}


@dataclass
class Dataset:
    """A loaded dataset: canonical columns plus any unmapped source columns.

    `mapping` says which source column each canonical column came from (a generated `query_id`
    has no entry); `content_hash` is the sha256 of the bytes as given, so identical content is
    recognised whatever the file is called; `warnings` holds non-fatal notes.
    """

    frame: pd.DataFrame
    name: str
    mapping: dict[str, str]
    content_hash: str
    source_format: str
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.frame)


def detect_mapping(columns: Sequence[str]) -> dict[str, str]:
    """The automatic mapping {canonical name: source column} for these source column names.

    A column matches when its name, lower-cased with spaces and hyphens turned into underscores,
    is one of `ALIASES[canonical]`; the earlier alias wins when several columns match, and a
    source column is used at most once.
    """
    by_normal: dict[str, str] = {}
    for column in columns:
        by_normal.setdefault(_normal(column), column)
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for canonical, aliases in ALIASES.items():
        for alias in aliases:
            column = by_normal.get(alias)
            if column is not None and column not in used:
                mapping[canonical] = column
                used.add(column)
                break
    return mapping


def load_dataset(
    path_or_buffer: Any,
    mapping: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    format: str | None = None,
    max_bytes: int | None = None,
) -> Dataset:
    """Read a dataset file into canonical columns.

    `path_or_buffer` is a path, bytes, or a binary file-like object (an upload with `.name` and
    `.getvalue()`); the format comes from `format=` or the extension (.csv, .tsv/.tab,
    .jsonl/.ndjson, .json, .parquet/.pq, each optionally .gz). `mapping` maps canonical names to
    source columns for anything the automatic detection does not recognise. An input over
    `max_bytes` (default: `tempo_eval.io._source.max_input_bytes()`, 128 MB unless the
    environment variable TEMPO_EVAL_MAX_INPUT_MB says otherwise) is refused before it is read.
    Raises InputError.
    """
    raw = read_input(path_or_buffer, name=name, default_name="data", max_bytes=max_bytes)
    source_format = _format_of(raw, format)
    data = gunzip_if_needed(raw)
    warnings: list[str] = []
    with _gc_paused():
        if source_format == "parquet":
            table = _read_parquet(data, raw.name)
        elif source_format in ("csv", "tsv"):
            table = _read_delimited(data, raw.name, "," if source_format == "csv" else "\t", warnings)
        else:
            text = decode_text(data, raw.name, warnings)
            table = _read_jsonl(text, raw.name) if source_format == "jsonl" else _read_json(text, raw.name)
        frame, used = _canonical_frame(table, mapping, raw.name, warnings)
    return Dataset(
        frame=frame,
        name=raw.name,
        mapping=used,
        content_hash=hashlib.sha256(raw.data).hexdigest(),
        source_format=source_format,
        warnings=warnings,
    )


# ---- format detection ---------------------------------------------------------------------


def _format_of(raw: RawInput, requested: str | None) -> str:
    if requested is not None:
        fmt = requested.lower().lstrip(".")
        if fmt not in FORMATS:
            raise InputError(
                f"format={requested!r} is not supported; expected one of {', '.join(FORMATS)}",
                source=raw.name,
            )
        return fmt
    suffixes = [s.lower() for s in PurePath(raw.name).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    hint = " Excel workbooks are not read directly: save as 'CSV UTF-8'." if ext in (".xlsx", ".xls") else ""
    raise InputError(
        f"cannot tell the format from the name {raw.name!r}; expected a name ending in .csv, .tsv, "
        f".jsonl, .json or .parquet (optionally .gz), or pass format=...{hint}",
        source=raw.name,
    )


# ---- readers: each returns a _Table of raw cell values ---------------------------------------


@dataclass
class _Table:
    """Raw values by source column, plus where each row came from (for messages)."""

    columns: list[str]
    values: dict[str, Sequence[Any]]
    n_rows: int
    lines: Sequence[int] | None  # line in the file where each row starts, when known
    arrow: Any = None  # the pyarrow Table a Parquet file was read into: unmapped columns keep types

    def place(self, index: int) -> dict[str, int | None]:
        return {"row": index + 1, "line": self.lines[index] if self.lines is not None else None}


_csv_limit_lock = threading.Lock()
# The csv module stops at the first cell longer than our own cell limit, before the rest of a
# huge cell is read into memory; `_long_cell_column` then finds which column it was in.
_CSV_FIELD_LIMIT = MAX_CELL_CHARS + 1


@contextlib.contextmanager
def _csv_field_limit(limit: int) -> Iterator[None]:
    # csv.field_size_limit is process-wide; raise it to our own cell limit only while parsing.
    with _csv_limit_lock:
        previous = csv.field_size_limit(limit)
        try:
            yield
        finally:
            csv.field_size_limit(previous)


def _read_delimited(data: bytes, source: str, delimiter: str, warnings: list[str]) -> _Table:
    """CSV/TSV. A fast pass with pyarrow reads well-formed files; anything it refuses (or cannot
    place precisely) is read again by the `csv` module, which finds and names the problem.
    An Excel `sep=X` first line sets the delimiter and is skipped (with a warning)."""
    data = check_text_bytes(data, source, warnings)
    data, delimiter, skipped = _excel_separator_line(data, source, delimiter, warnings)
    try:
        table = _read_delimited_fast(data, source, delimiter, warnings)
        if table is None:
            table = _read_delimited_csv(decode_utf8(data, source), source, delimiter, warnings)
        if skipped:
            table.lines = _ShiftedLines(table.lines, skipped) if table.lines is not None else None
        _check_cell_sizes(table, source)
    except InputError as error:
        if not skipped or error.line is None:
            raise
        raise InputError(
            error.problem, source=error.source, line=error.line + skipped, row=error.row,
            column=error.column, row_label=error.row_label, column_label=error.column_label,
        ) from None
    return table


def _excel_separator_line(
    data: bytes, source: str, delimiter: str, warnings: list[str]
) -> tuple[bytes, str, int]:
    """(data without Excel's `sep=;` line, the delimiter it names, 1) or (data, delimiter, 0)."""
    if data[:4].lower() != b"sep=":
        return data, delimiter, 0
    end = data.find(b"\n")
    line = data[: end if end >= 0 else len(data)].rstrip(b"\r")
    named = line[4:].decode("utf-8", errors="replace")
    if named not in _DELIMITER_NAMES:
        raise InputError(
            f"the first line {line.decode('utf-8', errors='replace')!r} names the separator "
            f"{named!r}; expected sep= followed by one of , ; | or a tab",
            source=source,
            line=1,
        )
    warnings.append(
        f"{source}: line 1 {line.decode()!r} (Excel's separator line) read as the separator, not "
        "as the header"
    )
    return (data[end + 1:] if end >= 0 else b""), named, 1


class _ShiftedLines(Sequence[int]):
    """Line numbers of rows read after `offset` skipped lines."""

    def __init__(self, lines: Sequence[int], offset: int) -> None:
        self._lines, self._offset = lines, offset

    def __getitem__(self, index: Any) -> Any:
        found = self._lines[index]
        return [n + self._offset for n in found] if isinstance(index, slice) else found + self._offset

    def __len__(self) -> int:
        return len(self._lines)


def _check_cell_sizes(table: _Table, source: str) -> None:
    for name in table.columns:
        values = table.values[name]
        if max(map(len, values)) > MAX_CELL_CHARS:
            index = next(i for i, value in enumerate(values) if len(value) > MAX_CELL_CHARS)
            try:
                check_size(values[index])
            except CellError as error:
                raise InputError(str(error), source=source, column=name, **table.place(index)) from None


class _LazyLines(Sequence[int]):
    """Row start lines, computed on first use: only error messages need them."""

    def __init__(self, compute: Callable[[], Sequence[int]]) -> None:
        self._compute = compute
        self._lines: Sequence[int] | None = None

    def _get(self) -> Sequence[int]:
        if self._lines is None:
            self._lines = self._compute()
        return self._lines

    def __getitem__(self, index: Any) -> Any:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())


def _read_delimited_fast(
    data: bytes, source: str, delimiter: str, warnings: list[str]
) -> _Table | None:
    first_end = data.find(b"\n")
    first = data[:first_end].rstrip(b"\r") if first_end > 0 else b""
    if not first.strip() or b'"' in first:
        return None  # no header on line 1, or a quoted header: leave it to the csv module
    try:
        header_line = first.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if data.count(b'"') % 2:
        # pyarrow silently reads an unclosed quote to the end of the file; the csv module
        # reports it (an odd number of quotes also comes from a stray quote inside a value)
        return None
    notes: list[str] = []
    header = _check_header(header_line.split(delimiter), source, delimiter, 1, notes)

    import pyarrow as pa
    import pyarrow.csv as pa_csv

    try:
        table = pa_csv.read_csv(
            io.BytesIO(data),
            read_options=pa_csv.ReadOptions(column_names=header, skip_rows=1),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, newlines_in_values=True, ignore_empty_lines=True
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows == 0:
        return None
    result = delimited_table(table, header, source, notes)
    if result is None:
        return None
    warnings.extend(notes)
    result.lines = _LazyLines(
        lambda: _read_delimited_csv(decode_utf8(data, source), source, delimiter, []).lines
    )
    return result


def delimited_table(table: Any, header: list[str], source: str, notes: list[str]) -> _Table | None:
    """A `_Table` from a pyarrow Table of CSV/TSV text cells (every column read as strings, empty
    cells as ""), without rows whose every cell is empty (noted in `notes`); None when no row is
    left. Shared by the fast CSV path and the Ray engine's reader."""
    values = {name: table.column(i).to_pylist() for i, name in enumerate(header)}
    # rows with every cell empty (",,," lines a spreadsheet leaves behind) are skipped, as the
    # csv-module reader does; cheap, since the first column is rarely empty
    empty = [i for i, value in enumerate(values[header[0]]) if not value]
    for name in header[1:]:
        column = values[name]
        empty = [i for i in empty if not column[i]]
    if empty:
        if len(empty) == table.num_rows:
            return None
        dropped = set(empty)
        keep = [i for i in range(table.num_rows) if i not in dropped]
        values = {name: [column[i] for i in keep] for name, column in values.items()}
        notes.append(f"{source}: skipped {len(empty)} row(s) with every cell empty")
    return _Table(header, values, table.num_rows - len(empty), None)


def _read_delimited_csv(text: str, source: str, delimiter: str, warnings: list[str]) -> _Table:
    if not text or text.isspace():  # not text.strip(): that copies the whole file
        raise InputError(
            "the file is empty; expected a header line with column names, then one row per query",
            source=source,
        )
    rows: list[list[str]] = []
    lines: list[int] = []
    skipped_blank = 0
    with _csv_field_limit(_CSV_FIELD_LIMIT):
        reader = csv.reader(_text_lines(text), delimiter=delimiter, strict=True)
        header: list[str] = []
        line_before = 0
        try:
            for record in reader:
                start = line_before + 1
                line_before = reader.line_num
                if not header:
                    if record:
                        header = _check_header(record, source, delimiter, start, warnings)
                        width = len(header)
                    continue
                if len(record) != width:
                    if not record or (len(record) == 1 and record[0].isspace()):
                        continue  # a blank line
                    raise _ragged(record, header, delimiter, source, len(rows) + 1, start)
                if not any(record):
                    skipped_blank += 1
                    continue
                rows.append(record)
                lines.append(start)
        except csv.Error as error:
            if "field larger than field limit" in str(error):
                raise InputError(
                    f"the cell holds more than {MAX_CELL_CHARS:,} characters; expected at most "
                    f"{MAX_CELL_CHARS:,} (is a closing quote missing, or a whole document pasted into "
                    "one cell?)",
                    source=source, row=len(rows) + 1, line=line_before + 1,
                    column=_long_cell_column(text, line_before + 1, delimiter, header),
                ) from None
            raise _csv_error(error, source, delimiter, len(rows) + 1, line_before + 1, reader.line_num) from None
    if skipped_blank:
        warnings.append(f"{source}: skipped {skipped_blank} row(s) with every cell empty")
    if not rows:
        raise InputError(
            f"the file has a header ({', '.join(header[:10])}) but no data rows; expected one row per query",
            source=source,
            line=2,
        )
    columns = list(zip(*rows, strict=True))
    return _Table(header, dict(zip(header, columns, strict=True)), len(rows), lines)


#: a line with its ending (\r\n, \r or \n, as `newline=""` reads them), or the last line without one
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _text_lines(text: str) -> Iterator[str]:
    """The lines of `text` one at a time. Not io.StringIO: it copies the whole text into a buffer
    of 4 bytes per character, so a 1 GB file needed 4 GB more before its first row was read."""
    return (match.group() for match in _LINE.finditer(text))


def _long_cell_column(text: str, line: int, delimiter: str, header: list[str]) -> str | None:
    """The header name of the first cell longer than MAX_CELL_CHARS in the record starting at
    `line` (1-based; None for the header itself or when not found)."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    column, length, quoted, i = 0, 0, False, start
    while i < len(text):
        char = text[i]
        if char == '"' and (quoted or length == 0):
            if quoted and text.startswith('""', i):
                i += 1  # an escaped quote: one character of the value
            else:
                quoted = not quoted
                i += 1
                continue
        elif not quoted and char == delimiter:
            column, length = column + 1, 0
            i += 1
            continue
        elif not quoted and char in "\r\n":
            return None
        length += 1
        if length > MAX_CELL_CHARS:
            return header[column] if header and column < len(header) else None
        i += 1
    return None


def _check_header(
    header: list[str], source: str, delimiter: str, line: int, warnings: list[str]
) -> list[str]:
    if len(header) == 1:
        for other in (",", "\t", ";", "|"):
            if other != delimiter and other in header[0]:
                fix = (
                    "name the file .tsv or pass format='tsv'" if other == "\t"
                    else "name the file .csv or pass format='csv'" if other == ","
                    else "save it with commas (CSV) or tabs (TSV) between values"
                )
                raise InputError(
                    f"the header is one column {quote(header[0])} that contains {_DELIMITER_NAMES[other]}; "
                    f"expected columns separated by {_DELIMITER_NAMES[delimiter]}: {fix}",
                    source=source,
                    line=line,
                )
    names: list[str] = []
    seen: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        name = name.strip()
        if not name:
            name = f"Unnamed: {position - 1}"
            warnings.append(f"{source}: column {position} has no name in the header; kept as {name!r}")
        if name in seen:
            raise InputError(
                f"the column name {name!r} appears twice in the header (columns {seen[name]} and "
                f"{position}); expected unique column names",
                source=source,
                line=line,
            )
        seen[name] = position
        names.append(name)
    return names


def _ragged(
    record: list[str], header: list[str], delimiter: str, source: str, row: int, line: int
) -> InputError:
    sep = _DELIMITER_NAMES[delimiter]
    if len(record) > len(header):
        why = f"does a value contain {sep} without double quotes around it?"
    else:
        why = "is a value missing, or does a value contain a line break without double quotes around it?"
    return InputError(
        f"found {len(record)} value{'s' if len(record) != 1 else ''}; expected {len(header)}, one per header column "
        f"({', '.join(header[:10])}{', ...' if len(header) > 10 else ''}): {why}",
        source=source,
        row=row,
        line=line,
    )


def _csv_error(
    error: csv.Error, source: str, delimiter: str, row: int, start: int, line: int
) -> InputError:
    message = str(error)
    if "unexpected end of data" in message:
        problem = (
            "a value opened with a double quote is never closed; expected a closing double quote "
            "(inside a quoted value, write a double quote as \"\")"
        )
    elif "expected after" in message:
        problem = (
            f"found text right after a closing double quote; expected {_DELIMITER_NAMES[delimiter]} "
            "after a quoted value (inside a quoted value, write a double quote as \"\")"
        )
    else:
        problem = f"could not read the row ({message}); expected {_DELIMITER_NAMES[delimiter]}-separated values"
    if "unexpected end of data" in message:
        return InputError(problem, source=source, row=row, line=start)
    where = f" (the row starts at line {start})" if start != line else ""
    return InputError(problem + where, source=source, row=row, line=line)


def _read_jsonl(text: str, source: str) -> _Table:
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    decode = json.JSONDecoder().decode
    for number, line in enumerate(text.split("\n"), start=1):
        _read_jsonl_line(line, number, source, decode, records, lines)
    if not records:
        raise InputError("the file is empty; expected one JSON object per line", source=source)
    return _records_table(records, lines)


def _read_jsonl_line(
    line: str,
    number: int,
    source: str,
    decode: Callable[[str], Any],
    records: list[dict[str, Any]],
    lines: list[int],
) -> None:
    if not line or line.isspace():
        return
    try:
        record = decode(line)
    except RecursionError:
        raise InputError(
            "the JSON is nested too deeply to read; expected one flat JSON object per line",
            source=source,
            line=number,
        ) from None
    except json.JSONDecodeError as error:
        hint = ""
        if not records and line.lstrip().startswith("["):
            hint = "; this looks like a JSON array: name the file .json"
        raise InputError(
            f"not valid JSON ({json_error_text(error.msg, error.colno)}); expected one JSON object "
            f"per line{hint}",
            source=source,
            line=number,
        ) from None
    if type(record) is not dict:
        raise InputError(
            f"found {_json_kind(record)}; expected one JSON object per line, like "
            '{"query": "...", "answer": "..."}',
            source=source,
            line=number,
        )
    records.append(record)
    lines.append(number)


def _is_json_lines(text: str, extra: int) -> bool:
    """True when the text is an object followed, on a later line, by another object (`extra` is
    where json.loads found the second one)."""
    before = text[max(0, extra - 200):extra]
    return (
        text.lstrip()[:1] == "{" and text[extra:extra + 1] == "{"
        and "\n" in before[len(before.rstrip()):]
    )


def _pandas_split(document: dict[str, Any]) -> bool:
    columns, data = document.get("columns"), document.get("data")
    return (
        isinstance(columns, list) and isinstance(data, list)
        and all(isinstance(row, list) and len(row) == len(columns) for row in data)
    )


def _pandas_columns(document: dict[str, Any]) -> bool:
    values = list(document.values())
    return bool(values) and all(isinstance(v, dict) and v.keys() == values[0].keys() for v in values) \
        and bool(values[0])


def _read_json(text: str, source: str) -> _Table:
    if not text.strip():
        raise InputError('the file is empty; expected a JSON list of objects or {"data": [...]}', source=source)
    try:
        document = json.loads(text)
    except RecursionError:
        raise InputError(
            'the JSON is nested too deeply to read; expected a list of flat objects or {"data": [...]}',
            source=source,
        ) from None
    except json.JSONDecodeError as error:
        if error.msg == "Extra data" and _is_json_lines(text, error.pos):
            # Hugging Face datasets' to_json and pandas' to_json(lines=True) write JSON Lines
            # under a .json name
            return _read_jsonl(text, source)
        hint = ""
        if error.msg == "Extra data" and error.lineno > 1:
            hint = "; this looks like JSON Lines (one object per line): name the file .jsonl"
        raise InputError(
            f"not valid JSON ({json_error_text(error.msg, error.colno)}); expected a list of objects "
            f'or {{"data": [...]}}{hint}',
            source=source,
            line=error.lineno,
        ) from None
    records = document
    if isinstance(document, dict):
        from tempo_eval.io.foreign import deepeval_case_records, is_deepeval_test_run

        if is_deepeval_test_run(document):  # a DeepEval test run: its test cases are the rows
            records = deepeval_case_records(document)
        elif _pandas_split(document):  # pandas to_json(orient="split")
            records = [dict(zip(document["columns"], row, strict=True)) for row in document["data"]]
        elif isinstance(document.get("data"), list):
            records = document["data"]
        elif _pandas_columns(document):  # pandas to_json() default: {column: {index: value}}
            index = list(next(iter(document.values())))
            records = [{column: cells.get(i) for column, cells in document.items()} for i in index]
        else:
            keys = ", ".join(map(str, list(document)[:10]))
            raise InputError(
                f'found an object with keys {keys or "(none)"}; expected a list of objects or an '
                'object with the list under "data": {"data": [...]}',
                source=source,
            )
    if not isinstance(records, list):
        raise InputError(
            f'found {_json_kind(records)}; expected a list of objects or {{"data": [...]}}', source=source
        )
    if not records:
        raise InputError("the list of rows is empty; expected one object per query", source=source)
    for index, record in enumerate(records):
        if type(record) is not dict:
            raise InputError(
                f'found {_json_kind(record)}; expected an object like {{"query": "...", "answer": "..."}}',
                source=source,
                row=index + 1,
            )
    return _records_table(records, None)


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, str):
        return f"a JSON string {quote(value)}"
    if value is None:
        return "null"
    return f"a JSON {type(value).__name__} ({value!r})"


def _records_table(records: list[dict[str, Any]], lines: list[int] | None) -> _Table:
    columns: dict[str, None] = {}
    for record in records:
        if len(record) != len(columns) or not all(key in columns for key in record):
            columns.update(dict.fromkeys(record))
    names = [str(key) for key in columns]
    values = {str(key): [record.get(key) for record in records] for key in columns}
    return _Table(names, values, len(records), lines)


def _read_parquet(data: bytes, source: str) -> _Table:
    if not data.startswith(b"PAR1"):
        raise InputError(
            "this is not a Parquet file (it does not start with the bytes 'PAR1'); expected a Parquet "
            "file, or a name ending in .csv, .tsv, .jsonl or .json for text",
            source=source,
        )
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # ParquetFile.read without threads or pre-buffering starts no Arrow worker thread:
        # `read_table` does, and a process that then exits at once (an input error found right
        # after reading) could abort in C++ ("terminate called without an active exception").
        table = pq.ParquetFile(pa.BufferReader(data), pre_buffer=False).read(use_threads=False)
    except Exception as error:  # pyarrow raises many types; all mean "unreadable"
        raise InputError(
            f"could not read the Parquet file ({type(error).__name__}: {error}); expected a complete "
            "Parquet file",
            source=source,
        ) from None
    return parquet_table(table, source)


def parquet_table(table: Any, source: str) -> _Table:
    """A `_Table` from a pyarrow Table read from Parquet (checked: unique names, some rows).
    Shared by the Parquet reader and the Ray engine's reader."""
    names = [str(name) for name in table.column_names]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"the column name {dup!r} appears twice; expected unique column names", source=source)
    if table.num_rows == 0:
        raise InputError("the file has no rows; expected one row per query", source=source)
    # Python values for the converters (lists come out as lists); unmapped columns keep their
    # Arrow types through pandas (`_Table.arrow`).
    values = {name: table.column(i).to_pylist() for i, name in enumerate(names)}
    return _Table(names, values, table.num_rows, None, arrow=table)


# ---- mapping and canonical conversion ------------------------------------------------------


def _normal(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def _resolve_mapping(
    columns: list[str], explicit: Mapping[str, str] | None, source: str, warnings: list[str]
) -> dict[str, str]:
    if not explicit:
        resolved = detect_mapping(columns)
    else:
        for canonical, column in explicit.items():
            if canonical not in CANONICAL_COLUMNS:
                raise InputError(
                    f"mapping key {canonical!r} is not a canonical column; expected one of "
                    f"{', '.join(CANONICAL_COLUMNS)}",
                    source=source,
                )
            if column not in columns:
                raise InputError(
                    f"mapping={{{canonical!r}: {column!r}}} names a column that does not exist; "
                    f"expected one of the columns found: {_list_columns(columns)}",
                    source=source,
                )
        targets = list(explicit.values())
        twice = next((c for c in targets if targets.count(c) > 1), None)
        if twice is not None:
            keys = [k for k, v in explicit.items() if v == twice]
            raise InputError(
                f"the mapping uses column {twice!r} for {', '.join(map(repr, keys))}; expected each "
                "source column for one canonical column",
                source=source,
            )
        resolved = dict(explicit)
        # the automatic mapping fills in the rest, from the columns the mapping left free
        for canonical, column in detect_mapping([c for c in columns if c not in targets]).items():
            resolved.setdefault(canonical, column)
    used = set(resolved.values())
    for canonical, aliases in ALIASES.items():
        if canonical not in resolved:
            continue
        for column in columns:
            if column not in used and _normal(column) in aliases:
                warnings.append(
                    f"{source}: column {column!r} also looks like {canonical!r}; used "
                    f"{resolved[canonical]!r} and kept {column!r} unchanged"
                )
    _require(resolved, columns, source)
    return {c: resolved[c] for c in CANONICAL_COLUMNS if c in resolved}


def _require(mapping: Mapping[str, str], columns: list[str], source: str) -> None:
    if "query" not in mapping and "query_id" not in mapping:
        raise InputError(_missing_message(["query", "query_id"], columns), source=source)
    if not any(name in mapping for name in _EVALUABLE):
        raise InputError(_missing_message(list(_EVALUABLE), columns), source=source)


def _missing_message(wanted: list[str], columns: list[str]) -> str:
    if wanted[0] == "query":
        head = "no column for 'query'; expected the query text or a query id"
    else:
        head = (
            "no column for 'answer', 'contexts' or 'retrieved_ids'; expected at least one of them, "
            "or there is nothing to evaluate"
        )
    recognised = ", ".join(alias for name in wanted for alias in ALIASES[name])
    message = f"{head} (recognised names: {recognised}); found columns: {_list_columns(columns)}"
    known = {alias: canonical for canonical in wanted for alias in ALIASES[canonical]}
    for column in columns:
        close = difflib.get_close_matches(_normal(column), list(known), n=1, cutoff=0.75)
        if close:
            return f"{message}; did you mean mapping={{{known[close[0]]!r}: {column!r}}}?"
    return f"{message}; map one with mapping={{{wanted[0]!r}: '...'}}"


_list_columns = list_columns


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "query_id": text_cell,
    "query": text_cell,
    "answer": text_cell,
    "reference": text_cell,
    "run": text_cell,
    "reference_date": date_cell,
    "contexts": lambda v: list_cell(v, ids=False),
    "retrieved_ids": lambda v: list_cell(v, ids=True),
    "gold_ids": gold_cell,
}


def _convert(
    table: _Table, canonical: str, column: str, source: str, warnings: list[str] | None = None
) -> list[Any]:
    values = table.values[column]
    if canonical in ("contexts", "retrieved_ids", "gold_ids"):
        converted = _fast_lists(values)
    elif canonical in ("query", "answer", "reference", "run", "query_id"):
        converted = _fast_texts(values)
    else:
        converted = [_SLOW] * len(values)
    convert = _CONVERTERS[canonical]
    if canonical == "reference_date":
        convert = _memoized(convert)  # dates repeat: the same few values in most files
    notes: list[str] = []
    noted: list[int] = []
    ids = canonical == "retrieved_ids"
    for index, value in enumerate(values):
        if converted[index] is _SLOW:
            try:
                if canonical in ("contexts", "retrieved_ids"):
                    before = len(notes)
                    converted[index] = list_cell(value, ids=ids, notes=notes)
                    if len(notes) > before:
                        noted.append(index)
                else:
                    converted[index] = convert(value)
            except CellError as error:
                raise InputError(str(error), source=source, column=column, **table.place(index)) from None
    if notes and warnings is not None:
        # one warning per column: the first cell, and how many more were read the same way
        more = f" ({len(notes) - 1} more row(s) read the same way)" if len(notes) > 1 else ""
        warnings.append(str(InputError(notes[0] + more, source=source, column=column, **table.place(noted[0]))))
    return converted


_SLOW = object()  # marks a cell the fast path left for the full converter


def _memoized(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    seen: dict[str, Any] = {}

    def cached(value: Any) -> Any:
        if type(value) is not str:
            return convert(value)
        if value not in seen:
            seen[value] = convert(value)
        return seen[value]

    return cached


_scan_json = json.JSONDecoder().scan_once  # the C scanner behind json.loads, without its wrappers
_STR_ONLY = {str}


def _fast_lists(values: Sequence[Any]) -> list[Any]:
    # The common case, a JSON list of strings, read with the bare JSON scanner; every other cell
    # (another style, an error, a number among the items) is left to the full converter.
    out: list[Any] = []
    append = out.append
    scan = _scan_json
    for value in values:
        if type(value) is list:  # JSON, JSON Lines, Parquet: already a list
            if set(map(type, value)) <= _STR_ONLY and sum(map(len, value)) <= MAX_CELL_CHARS:
                append(value)
            else:
                append(_SLOW)
            continue
        if type(value) is str and value[:1] == "[" and len(value) <= MAX_CELL_CHARS:
            try:
                parsed, end = scan(value, 0)
            except (StopIteration, ValueError, RecursionError):
                append(_SLOW)
                continue
            if end == len(value) and type(parsed) is list and set(map(type, parsed)) <= _STR_ONLY:
                append(parsed)
                continue
        append(_SLOW)
    return out


def _fast_texts(values: Sequence[Any]) -> list[Any]:
    return [
        value if type(value) is str and value and not value.isspace() and len(value) <= MAX_CELL_CHARS
        and value not in MISSING_WORDS
        else _SLOW
        for value in values
    ]


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    # Reading a large file creates millions of small lists and strings that all stay alive; the
    # cyclic collector would rescan them again and again for nothing (a fifth to a half of the
    # time). Nothing made while loading holds a reference cycle that needs collecting.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _canonical_frame(
    table: _Table, explicit: Mapping[str, str] | None, source: str, warnings: list[str]
) -> tuple[pd.DataFrame, dict[str, str]]:
    mapping = _resolve_mapping(table.columns, explicit, source, warnings)
    data: dict[str, Any] = {}
    for canonical, column in mapping.items():
        data[canonical] = _convert(table, canonical, column, source, warnings)
    warnings.extend(empty_column_warnings(data, mapping, source))
    for canonical in ("retrieved_ids", "gold_ids"):
        if canonical in mapping:
            # "d1, d2, d3" parses as one id; say so rather than score it silently
            note = comma_separated_ids_warning(
                table.values[mapping[canonical]], source=source, column=mapping[canonical], place=table.place
            )
            if note is not None:
                warnings.append(note)
    if "query_id" in data:
        id_column = mapping["query_id"]
        for index, qid in enumerate(data["query_id"]):
            if qid is None:
                raise InputError(
                    "the query id is empty; expected an id in every row (or remove the column to "
                    "number the rows q1, q2, ...)",
                    source=source,
                    column=id_column,
                    **table.place(index),
                )
    else:
        data["query_id"] = _generated_ids(data, table.n_rows)
    _check_unique_ids(data, mapping, table, source)

    columns: dict[str, Any] = {
        name: pd.Series(data[name], dtype=object) for name in CANONICAL_COLUMNS if name in data
    }
    mapped_sources = set(mapping.values())
    positions = {column: position for position, column in enumerate(table.columns)}
    for column in table.columns:
        if column in mapped_sources:
            continue
        if column in columns:
            warnings.append(
                f"{source}: column {column!r} ignored: {column!r} comes from "
                f"{mapping.get(column, 'generated ids')!r}"
            )
            continue
        if table.arrow is not None:
            columns[column] = table.arrow.column(positions[column]).to_pandas(use_threads=False).to_numpy()
        else:
            columns[column] = pd.Series(list(table.values[column]), dtype=object)
    # One frame built at once: adding thousands of columns one by one is quadratic (and pandas
    # warns about fragmentation once per column).
    frame = pd.DataFrame(columns)
    return frame, mapping


#: what a user gets when a column is empty in every row
_EMPTY_CONSEQUENCE = {
    "query": "metrics that read the query report missing_input on every row",
    "answer": "metrics that judge the answer (temporal_faithfulness, factual_correctness) report "
              "missing_input on every row",
    "contexts": "metrics that check the answer against the contexts report missing_input on every row",
    "retrieved_ids": "temporal_ndcg has no ranking to score and reports missing_input on every row",
    "reference": "factual_correctness has no reference and reports missing_input on every row",
    "gold_ids": "temporal_ndcg has no gold relevance and reports missing_input on every row",
}


def empty_column_warnings(data: Mapping[str, Sequence[Any]], mapping: Mapping[str, str], source: str) -> list[str]:
    """A warning for each mapped column that is empty in every row (a DeepEval golden has no
    actual_output or retrieval_context yet), naming the column and what the user will get."""
    notes = []
    for canonical, consequence in _EMPTY_CONSEQUENCE.items():
        values = data.get(canonical)
        if canonical not in mapping or values is None or not len(values):
            continue
        if all(value is None or (isinstance(value, list | dict) and not value) for value in values):
            notes.append(
                f"{source}: column {mapping[canonical]!r} ({canonical}) is empty in every row; "
                f"{consequence}. Fill it in (a DeepEval golden has no actual_output or "
                "retrieval_context until your application answers) or map another column"
            )
    return notes


def _generated_ids(data: Mapping[str, list[Any]], n_rows: int) -> list[str]:
    if "run" not in data or "query" not in data:
        return [f"q{i}" for i in range(1, n_rows + 1)]
    # several runs in one file: the same query text gets the same id in every run
    ids: dict[Any, str] = {}
    return [ids.setdefault(text, f"q{len(ids) + 1}") for text in data["query"]]


def _check_unique_ids(
    data: Mapping[str, list[Any]], mapping: Mapping[str, str], table: _Table, source: str
) -> None:
    runs = data.get("run")
    keys = zip(runs, data["query_id"], strict=True) if runs is not None else data["query_id"]
    seen: dict[Any, int] = {}
    for index, key in enumerate(keys):
        first = seen.setdefault(key, index)
        if first == index:
            continue
        first_place = table.place(first)
        first_at = f"row {first_place['row']}" + (
            f" (line {first_place['line']})" if first_place["line"] is not None else ""
        )
        if "query_id" in mapping:
            what, column = f"query id {data['query_id'][index]!r}", mapping["query_id"]
        else:
            what, column = f"query {quote(data['query'][index])}", mapping.get("query")
        scope = f" in run {runs[index]!r}" if runs is not None else ""
        raise InputError(
            f"{what} appears twice{scope}: first in {first_at}, again here; expected each query once"
            + (" per run" if runs is not None else " (several runs in one file need a 'run' column)"),
            source=source,
            column=column,
            **table.place(index),
        )
