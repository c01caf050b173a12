"""The delimited-text reader (CSV, TSV): a fast pass with pyarrow, the `csv` module for the rest.

Well-formed files are read by pyarrow; anything it refuses (or cannot place precisely) is read
again by the `csv` module, which finds and names the problem (row, line, column). An Excel
`sep=X` first line sets the delimiter and is skipped with a warning.
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tempo_eval.io._prepass import _fast_header, _misplaced_pattern
from tempo_eval.io._source import check_text_bytes, decode_utf8
from tempo_eval.io.cells import MAX_CELL_CHARS, CellError, check_size
from tempo_eval.io.errors import InputError, quote
from tempo_eval.io.table import BatchTable, _Table

_DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "'|'"}
#: what to do about a header that is one column holding another delimiter, by that delimiter
_FIXES = {"\t": "name the file .tsv or pass format='tsv'",
          ",": "name the file .csv or pass format='csv'"}


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
        if skipped and table.lines is not None:
            lines = table.lines  # found after the separator line: one line further down the file
            table.lines = _LazyLines(lambda: [number + skipped for number in lines])
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
            source=source, line=1,
        )
    warnings.append(
        f"{source}: line 1 {line.decode()!r} (Excel's separator line) read as the separator, not "
        "as the header"
    )
    return (data[end + 1:] if end >= 0 else b""), named, 1


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
    if not _fast_header(data):
        return None  # no header on line 1, or a quoted header: leave it to the csv module
    header_line = data[:data.find(b"\n")].rstrip(b"\r").decode("utf-8")
    if data.count(b'"') % 2:
        # pyarrow silently reads an unclosed quote to the end of the file; the csv module
        # reports it (an odd number of quotes also comes from a stray quote inside a value)
        return None
    if misplaced_quote(data, delimiter):
        return None  # pyarrow and the csv module may read it differently: the csv module decides
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
                column_types={name: pa.string() for name in header}, strings_can_be_null=False,
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


def misplaced_quote(data: bytes, delimiter: str) -> bool:
    """True when a quote has neither a cell edge (line start or end, the delimiter) nor another
    quote on either side. A quote that opens or closes a cell, or is doubled inside one, always
    has one; any other quote (a stray quote inside a value, `Wh"at`) is where pyarrow silently
    goes on reading while the csv module stops and names the line. With an unclosed quote before
    it, such a stray quote evens the quote count and pyarrow reads the rows between as one cell."""
    return _misplaced_pattern(delimiter).search(data) is not None


def delimited_table(table: Any, header: list[str], source: str, notes: list[str], offset: int = 0,
                    line_of: Callable[[int], int | None] | None = None) -> BatchTable | None:
    """A table from a pyarrow Table of CSV/TSV text cells (every column read as strings, empty
    cells as ""), without rows whose every cell is empty (noted in `notes`), its rows placed at
    row `offset` of the file (`BatchTable`); None when no row is left. Shared by the fast CSV
    path, the streaming reader (`delimited_batch`) and the Ray engine's reader."""
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
    return BatchTable(header, values, table.num_rows - len(empty), None, offset=offset, line_of=line_of)


def delimited_batch(
    table: Any, header: list[str], source: str, offset: int, line_of: Callable[[int], int | None]
) -> tuple[BatchTable | None, int]:
    """(the rows of a streamed CSV/TSV batch as a `BatchTable` placed at row `offset`, its cells'
    sizes checked; None when every row is empty) and the count of rows skipped as empty: the
    streaming reader's one call a batch (`delimited_table`, then `_check_cell_sizes`)."""
    batch = delimited_table(table, header, source, [], offset, line_of)
    if batch is None:
        return None, table.num_rows
    _check_cell_sizes(batch, source)
    return batch, table.num_rows - batch.n_rows


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
            source=source, line=2,
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
                fix = _FIXES.get(other, "save it with commas (CSV) or tabs (TSV) between values")
                raise InputError(
                    f"the header is one column {quote(header[0])} that contains {_DELIMITER_NAMES[other]}; "
                    f"expected columns separated by {_DELIMITER_NAMES[delimiter]}: {fix}",
                    source=source, line=line,
                )
    names: list[str] = []
    seen: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        name = name.strip()
        if not name:
            name = f"Unnamed: {position - 1}"
            warnings.append(f"{source}: column {position} has no name in the header; named {name!r}")
        if name in seen:
            raise InputError(
                f"the column name {name!r} appears twice in the header (columns {seen[name]} and "
                f"{position}); expected unique column names",
                source=source, line=line,
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
        source=source, row=row, line=line,
    )


def _csv_error(
    error: csv.Error, source: str, delimiter: str, row: int, start: int, line: int
) -> InputError:
    message = str(error)
    if "unexpected end of data" in message:
        return InputError("a value opened with a double quote is never closed; expected a closing "
                          'double quote (inside a quoted value, write a double quote as "")',
                          source=source, row=row, line=start)
    if "expected after" in message:
        problem = (
            f"found text right after a closing double quote; expected {_DELIMITER_NAMES[delimiter]} "
            "after a quoted value (inside a quoted value, write a double quote as \"\")"
        )
    else:
        problem = f"could not read the row ({message}); expected {_DELIMITER_NAMES[delimiter]}-separated values"
    where = f" (the row starts at line {start})" if start != line else ""
    return InputError(problem + where, source=source, row=row, line=line)
