"""Publication and as-of dates: read them from text, as days, fast for big columns.

Accepted (docs/metrics.md, "As-of evaluation"):
- ISO 8601 dates (`2023-01-06`, `20230106`) and date-times (`2023-01-06T23:30:00`, with `Z` or an
  offset such as `+02:00`: a date-time with a zone is converted to UTC before its date is taken);
- `2023/01/06`;
- RFC 2822, as in news feeds (`Fri, 06 Jan 2023 10:00:00 +0100`, converted to UTC the same way);
- `6 January 2023`, `January 6, 2023` (full or three-letter month names, any case);
- `2023` and `2023-01`: intervals (the whole year / month); a year may be a number (JSON `2023`). An interval stands for its first day
  wherever a date is compared or an age is taken (`PubDate.first`).

A missing value (None, NaN, an empty or blank text) is unknown, never an error. Anything else
raises `DateError`, whose message names the source, the row or line, the column and the value.

Days are counted from 1970-01-01 (`date.toordinal() - EPOCH`). Columns of dates become float64
arrays of days with NaN for unknown (`parse_day_column`): ISO dates go through pyarrow in C, the
other formats fall back to `parse_date` one distinct value at a time.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from functools import cached_property
from typing import Any

import numpy as np

from tempo_eval.common.confine import confined_roots, open_binary
from tempo_eval.core.grammar import MONTH_NUMBERS

#: the ordinal of 1970-01-01: days are counted from it
EPOCH = date(1970, 1, 1).toordinal()
#: 0001-01-01 in days since 1970-01-01: the first day Python's dates hold
_FIRST_DAY = 1 - EPOCH

_YEAR = re.compile(r"^(\d{4})$")
_YEAR_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_SLASHED = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})$")
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})$")
_MONTH_DAY_YEAR = re.compile(r"^([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})$")
_ISO_START = re.compile(r"^\d{4}-?\d{2}-?\d{2}")
_RFC_2822 = re.compile(r"^([A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{2,4}\s+\d{1,2}:\d{2}")

EXPECTED = (
    "an ISO 8601 date or date-time (2023-01-06, 2023-01-06T10:00:00Z), 2023/01/06, an RFC 2822 "
    "date (Fri, 06 Jan 2023 10:00:00 +0000), '6 January 2023', 'January 6, 2023', or a year "
    "(2023) / month (2023-01)"
)


class DateError(ValueError):
    """A date that cannot be read; the message names where it was and what was expected."""


class DateOutOfRange(DateError):
    """A date that is well written but falls outside the years 1 to 9999 once converted to UTC
    (`0001-01-01T00:00:00+01:00` is 0000-12-31 in UTC): the message names the place and why."""


@dataclass(frozen=True)
class PubDate:
    """A date or an interval of dates (a whole year or month), with how to show it.

    `first` stands for the date wherever it is compared or an age is taken; `label` is
    `2023-01-06` for a day, `2023-01` for a month, `2023` for a year.
    """

    first: date
    last: date
    label: str

    @property
    def is_interval(self) -> bool:
        return self.first != self.last

    @property
    def day(self) -> int:
        """`first` in days since 1970-01-01."""
        return self.first.toordinal() - EPOCH


def is_missing(value: Any) -> bool:
    """None, a float NaN, pandas' NA / NaT, or a blank text: an unknown date."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str):
        return not value.strip()
    try:
        import pandas as pd  # lazy: only for pandas' own missing values

        return bool(pd.isna(value)) if not isinstance(value, (list, tuple, dict)) else False
    except (ImportError, TypeError, ValueError):
        return False


def where_text(source: str | None = None, row: int | None = None, column: str | None = None,
               line: int | None = None) -> str:
    parts = [part for part in (
        source,
        f"line {line}" if line is not None else None,
        f"row {row}" if row is not None else None,
        f"column {column!r}" if column else None,
    ) if part]
    return ", ".join(parts)


def parse_date(value: Any, *, source: str | None = None, row: int | None = None,
               column: str | None = None, line: int | None = None) -> PubDate | None:
    """One date (see the module docstring); None when missing; DateError naming the place."""
    if is_missing(value):
        return None
    try:
        parsed = _parse_value(value)
    except OverflowError:
        where = where_text(source, row, column, line)
        raise DateOutOfRange(
            f"{where + ': ' if where else ''}{_shown(value)} falls outside the dates that can be read once "
            "converted to UTC (0001-01-01 to 9999-12-31); give the date without its time zone, or in UTC"
        ) from None
    if parsed is None:
        where = where_text(source, row, column, line)
        raise DateError(
            f"{where + ': ' if where else ''}cannot read {value!r} as a date; expected {EXPECTED}"
        )
    return parsed


def _shown(value: Any) -> str:
    return repr(value.isoformat()) if isinstance(value, (date, datetime)) else repr(value)


def _parse_value(value: Any) -> PubDate | None:
    """`parse_date` without the place: None when the value is no date, OverflowError when it is
    one that leaves the calendar (years 1 to 9999) on its way to UTC."""
    if isinstance(value, datetime):
        return _from_datetime(value)
    if isinstance(value, date):
        return PubDate(value, value, value.isoformat())
    if hasattr(value, "to_pydatetime"):  # pandas Timestamp
        return _from_datetime(value.to_pydatetime())
    if isinstance(value, np.datetime64):
        return _parse_value(str(np.datetime_as_string(value, unit="s")))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 1000 <= value <= 9999:
        return _parse_text(str(int(value)))  # a year written as a JSON number
    return _parse_text(value.strip()) if isinstance(value, str) else None


def _from_datetime(moment: datetime) -> PubDate:
    """The UTC date of a date-time with a zone (its own date without one); OverflowError when
    the conversion leaves the years 1 to 9999."""
    if moment.tzinfo is not None and moment.utcoffset() is not None:
        moment = moment.astimezone(UTC)
    day = moment.date()
    return PubDate(day, day, day.isoformat())


def _day(year: int, month: int, day: int) -> PubDate | None:
    try:
        value = date(year, month, day)
    except ValueError:
        return None
    return PubDate(value, value, value.isoformat())


def _parse_text(text: str) -> PubDate | None:
    match = _YEAR.match(text)
    if match:
        year = int(match[1])
        if year < 1:
            return None
        return PubDate(date(year, 1, 1), date(year, 12, 31), text)
    match = _YEAR_MONTH.match(text)
    if match:
        year, month = int(match[1]), int(match[2])
        if year < 1 or not 1 <= month <= 12:
            return None
        return PubDate(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]), text)
    match = _SLASHED.match(text)
    if match:
        return _day(int(match[1]), int(match[2]), int(match[3]))
    if _ISO_START.match(text):
        try:
            return _from_datetime(datetime.fromisoformat(text))
        except ValueError:
            return None
    match = _DAY_MONTH_YEAR.match(text)
    if match and match[2].lower() in MONTH_NUMBERS:
        return _day(int(match[3]), MONTH_NUMBERS[match[2].lower()], int(match[1]))
    match = _MONTH_DAY_YEAR.match(text)
    if match and match[1].lower() in MONTH_NUMBERS:
        return _day(int(match[3]), MONTH_NUMBERS[match[1].lower()], int(match[2]))
    if _RFC_2822.match(text):
        try:
            return _from_datetime(parsedate_to_datetime(text))
        except (TypeError, ValueError, IndexError):
            return None
    return None


def parse_day(value: Any, **where: Any) -> float:
    """`parse_date(value).day` as a float; NaN when missing."""
    parsed = parse_date(value, **where)
    return math.nan if parsed is None else float(parsed.day)


def parse_day_column(values: Any, *, source: str | None = None, column: str | None = None,
                     lines: np.ndarray | None = None, first_row: int | None = None) -> np.ndarray:
    """A column of date texts (a list, numpy array or pyarrow string array) as float64 days since
    1970-01-01, NaN where missing. ISO dates (YYYY-MM-DD) are read by pyarrow in one pass; every
    other distinct value once by `parse_date`. A value that cannot be read raises DateError
    naming its line (`lines[index]`, the file's line numbers) or row (`first_row` + index) and
    `column`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(
        [None if is_missing(v) else str(v) for v in values], type=pa.string()
    )
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
        array = pc.cast(array, pa.string())
    stripped = pc.utf8_trim_whitespace(array)
    iso = pc.match_substring_regex(stripped, r"^\d{4}-\d{2}-\d{2}$")
    candidates = pc.if_else(iso, stripped, None)
    stamped = pc.cast(pc.strptime(candidates, format="%Y-%m-%d", unit="s", error_is_null=True), pa.date32())
    days = pc.cast(stamped, pa.int32()).to_numpy(zero_copy_only=False)
    days = np.where(np.isnan(days.astype(np.float64)), np.nan, days).astype(np.float64)
    _drop_impossible(days, candidates, stamped)
    blank = pc.fill_null(pc.equal(pc.utf8_length(stripped), 0), True).to_numpy(zero_copy_only=False)
    slow = np.flatnonzero(np.isnan(days) & ~blank)
    if slow.size:
        texts = stripped.take(pa.array(slow)).to_pylist()
        known: dict[str, float] = {}
        for index, text in zip(slow.tolist(), texts, strict=True):
            if text not in known:
                known[text] = parse_day(
                    text, source=source, column=column,
                    line=None if lines is None else int(lines[index]),
                    row=None if first_row is None else first_row + index,
                )
            days[index] = known[text]
    return days


def _drop_impossible(days: np.ndarray, candidates: Any, stamped: Any) -> None:
    """NaN (for `parse_date`, which refuses them with the line) where pyarrow's strptime read an
    impossible date: it rolls the day over (2023-02-30 -> March 2, 2023-04-31 -> May 1), landing
    on day 1 to 3 of the next month with another day than the text's, and it takes year 0. Only
    those few days are compared with their text, so the fast path stays fast."""
    import pyarrow as pa
    import pyarrow.compute as pc

    day = pc.day(stamped)
    suspect = np.flatnonzero(pc.fill_null(pc.less_equal(day, 3), False).to_numpy(zero_copy_only=False))
    if suspect.size:
        index = pa.array(suspect)
        written = pc.cast(pc.utf8_slice_codeunits(candidates.take(index), 8, 10), pa.int64())
        days[suspect[pc.not_equal(day.take(index), written).to_numpy(zero_copy_only=False)]] = np.nan
    days[days < _FIRST_DAY] = np.nan


@dataclass(frozen=True)
class IdDates:
    """The lines of a doc-dates or query-dates file: ids and their date texts, as read.

    Dates are parsed only for the ids looked up (`days_of`): a run touches its top-k documents,
    not the 8.8M lines of a corpus's doc-dates file. Lookups hash the wanted ids, never the file's.
    """

    source: str
    kind: str
    ids: Any  # pyarrow string array
    dates: Any  # pyarrow string array, "" where blank
    #: each entry's row in the file (non-empty lines counted from 0), when only some were kept
    rows: np.ndarray | None = None
    #: the SHA-256 of the file's bytes, when asked for (`read_id_dates(..., digest=True)`)
    digest: str | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def name(self) -> str:
        """The file's name and content digest: what identifies the dates in a run's settings."""
        from pathlib import Path

        return f"{Path(self.source).name} sha256:{self.digest}" if self.digest else Path(self.source).name

    @cached_property
    def _positions(self) -> dict[str, int]:
        """id -> entry, built once (`dates_of`, row by row); an id given twice is a DateError
        naming both lines."""
        positions: dict[str, int] = {}
        for entry, doc in enumerate(self.ids.to_pylist()):
            if positions.setdefault(doc, entry) != entry:
                lines = _line_numbers(self.source)[self._file_rows(np.array([positions[doc], entry]))]
                raise DateError(f"{self.source}: {self.kind} id {doc!r} is given twice "
                                f"(lines {lines[0]} and {lines[1]})")
        return positions

    def dates_of(self, wanted: Sequence[str]) -> list[PubDate | None]:
        """The date of each id (None when absent or blank), read by `parse_date`: the lookup of
        one dataset row (`days_of` is the one for whole runs). A date that cannot be read raises
        DateError naming the file and its line."""
        found: list[PubDate | None] = []
        for doc in wanted:
            entry = self._positions.get(doc) if isinstance(doc, str) else None
            text = None if entry is None else self.dates[entry].as_py()
            try:
                found.append(None if text is None else parse_date(text, source=self.source, column="date"))
            except DateError:
                line = int(_line_numbers(self.source)[self._file_rows(np.array([entry]))][0])
                found.append(parse_date(text, source=self.source, column="date", line=line))
        return found

    def days_of(self, wanted: Any) -> np.ndarray:
        """Days of each id in `wanted` (a numpy array of any shape, a list or a pyarrow array;
        None or "" for no id), NaN for an id not in the file or with a blank date. An id given
        on two lines of the file, or a date that cannot be read, raises DateError naming the
        file and the line(s) (checked for the ids looked up)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        shape = np.shape(wanted) if isinstance(wanted, np.ndarray) else None
        flat = np.asarray(wanted, dtype=object).ravel() if shape is not None else wanted
        array = flat if isinstance(flat, (pa.Array, pa.ChunkedArray)) else pa.array(
            [None if v is None else str(v) for v in flat], type=pa.string())
        unique = pc.unique(array).drop_null()
        rows = pc.index_in(self.ids, value_set=unique).to_numpy(zero_copy_only=False)
        matched = np.flatnonzero(~np.isnan(rows.astype(np.float64)))
        which = rows[matched].astype(np.int64)
        counts = np.bincount(which, minlength=len(unique))
        if counts.size and counts.max() > 1:
            twice = int(np.argmax(counts > 1))
            lines = _line_numbers(self.source)[self._file_rows(matched[which == twice])]
            raise DateError(f"{self.source}: {self.kind} id {unique[twice].as_py()!r} is given twice "
                            f"(lines {lines[0]} and {lines[1]})")
        parsed = _parse_rows(self.dates.take(pa.array(matched)), self.source, self._file_rows(matched))
        unique_days = np.full(len(unique), np.nan)
        unique_days[which] = parsed
        position = pc.index_in(array, value_set=unique).to_numpy(zero_copy_only=False).astype(np.float64)
        found = ~np.isnan(position)
        days = np.full(len(position), np.nan)
        days[found] = unique_days[position[found].astype(np.int64)]
        return days.reshape(shape) if shape is not None else days

    def _file_rows(self, entries: np.ndarray) -> np.ndarray:
        return entries if self.rows is None else self.rows[entries]


def _parse_rows(dates: Any, source: str, rows: np.ndarray) -> np.ndarray:
    try:
        return parse_day_column(dates, source=source, column="date")
    except DateError:  # name the line: parse again knowing each value's line (only on an error)
        return parse_day_column(dates, source=source, column="date", lines=_line_numbers(source)[rows])


def read_id_dates(path: Any, *, kind: str = "doc", wanted: Any = None, digest: bool = False) -> IdDates:
    """A file of `id<TAB>date` lines (a doc-dates or query-dates file), read by pyarrow's CSV
    reader; empty lines are skipped. With `wanted` (ids: a list, numpy or pyarrow array) the file
    is streamed in blocks and only the lines of those ids are kept, so a corpus-sized file costs
    one pass and little memory. A line without exactly one tab or with an empty id raises
    DateError naming the file and the line; dates are read when looked up (`IdDates.days_of`).
    With `digest`, the file's SHA-256 is kept (`IdDates.name`: a run's settings name the file by it)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    source = str(path)
    bad: list[Any] = []

    def invalid(row: Any) -> str:
        bad.append(row)
        return "skip"

    options = {
        "read_options": csv.ReadOptions(column_names=["id", "date"], block_size=1 << 22),
        "parse_options": csv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False,
                                          ignore_empty_lines=True, invalid_row_handler=invalid),
        "convert_options": csv.ConvertOptions(column_types={"id": pa.string(), "date": pa.string()},
                                              strings_can_be_null=False, quoted_strings_can_be_null=False),
    }
    keep = None if wanted is None else _unique_ids(wanted)
    id_parts, date_parts, row_parts = [], [], []
    # inside a dashboard job the file is opened confined (`tempo_eval.common.confine`), else by pyarrow
    handle = None
    try:
        handle = None if confined_roots() is None else open_binary(path)
        reader = csv.open_csv(path if handle is None else handle, **options)
        offset = 0
        for batch in reader:
            ids = pc.utf8_trim_whitespace(batch.column(0))
            empty = np.flatnonzero(pc.equal(pc.utf8_length(ids), 0).to_numpy(zero_copy_only=False))
            if empty.size:
                line = _line_numbers(path)[offset + int(empty[0])]
                raise DateError(f"{source}, line {line}: the {kind} id is empty")
            if keep is not None:
                chosen = np.flatnonzero(pc.is_in(ids, value_set=keep).to_numpy(zero_copy_only=False))
                index = pa.array(chosen, type=pa.int64())
                id_parts.append(ids.take(index))
                date_parts.append(batch.column(1).take(index))
                row_parts.append(chosen + offset)
            else:
                id_parts.append(ids)
                date_parts.append(batch.column(1))
            offset += batch.num_rows
    except FileNotFoundError:
        raise DateError(f"{source}: no such {kind}-dates file") from None
    except (OSError, pa.ArrowInvalid) as error:
        raise DateError(f"{source}: cannot read the {kind}-dates file: {error}") from None
    finally:
        if handle is not None:
            handle.close()
    if bad:
        raise DateError(
            f"{source}{_line_text(path, bad[0].text)}: expected '{kind}_id<TAB>date', got {bad[0].text!r}"
        )
    ids = pa.concat_arrays(id_parts) if id_parts else pa.array([], pa.string())
    dates = pa.concat_arrays(date_parts) if date_parts else pa.array([], pa.string())
    rows = np.concatenate(row_parts) if row_parts else (None if keep is None else np.zeros(0, np.int64))
    return IdDates(source, kind, ids, dates, rows, _sha256(path) if digest else None)


def _sha256(path: Any) -> str:
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _unique_ids(wanted: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(wanted, np.ndarray):
        wanted = wanted.ravel().tolist()
    array = wanted if isinstance(wanted, (pa.Array, pa.ChunkedArray)) else pa.array(
        [None if v is None else str(v) for v in wanted], type=pa.string())
    return pc.unique(array).drop_null()


def _line_numbers(path: Any) -> np.ndarray:
    """The 1-based numbers of the file's non-empty lines (the rows pyarrow's reader returns)."""
    with open_binary(path) as handle:
        lines = handle.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return np.array([n for n, line in enumerate(lines, 1) if line.rstrip(b"\r")])


def _line_text(path: Any, text: str | None) -> str:
    """", line N" for the first line equal to `text` (pyarrow's reader does not number lines)."""
    if text is None:
        return ""
    with open_binary(path) as handle:
        for number, line in enumerate(handle, 1):
            if line.rstrip(b"\r\n").decode("utf-8", "replace") == text:
                return f", line {number}"
    return ""
