"""Publication and as-of dates: read them from text, as days, fast for big columns.

Accepted (docs/metrics.md, "As-of evaluation"):
- ISO 8601 dates (`2023-01-06`, `20230106`) and date-times (`2023-01-06T23:30:00`, with `Z` or an
  offset such as `+02:00`: a date-time with a zone is converted to UTC before its date is taken);
- `2023/01/06`;
- RFC 2822, as in news feeds (`Fri, 06 Jan 2023 10:00:00 +0100`, converted to UTC the same way);
- `6 January 2023`, `January 6, 2023` (full or three-letter month names, any case);
- `2023` and `2023-01`: intervals (the whole year / month). An interval stands for its first day
  wherever a date is compared or an age is taken (`PubDate.first`).

A missing value (None, NaN, an empty or blank text) is unknown, never an error. Anything else
raises `DateError`, whose message names the source, the row or line, the column and the value.

Days are counted from 1970-01-01 (`date.toordinal() - EPOCH`). Columns of dates become float64
arrays of days with NaN for unknown (`parse_day_column`): ISO dates go through pyarrow in C, the
other formats fall back to `parse_date` one distinct value at a time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import numpy as np

#: the ordinal of 1970-01-01: days are counted from it
EPOCH = date(1970, 1, 1).toordinal()

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
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


def day_label(day: float) -> str | None:
    """Days since 1970-01-01 as an ISO date (None for NaN)."""
    if day is None or math.isnan(day):
        return None
    return date.fromordinal(int(day) + EPOCH).isoformat()


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
    if isinstance(value, datetime):
        return _from_datetime(value)
    if isinstance(value, date):
        return PubDate(value, value, value.isoformat())
    if hasattr(value, "to_pydatetime"):  # pandas Timestamp
        return _from_datetime(value.to_pydatetime())
    if isinstance(value, np.datetime64):
        return parse_date(str(np.datetime_as_string(value, unit="s")))
    text = str(value).strip() if isinstance(value, str) else None
    parsed = _parse_text(text) if text is not None else None
    if parsed is None:
        where = where_text(source, row, column, line)
        raise DateError(
            f"{where + ': ' if where else ''}cannot read {value!r} as a date; expected {EXPECTED}"
        )
    return parsed


def _from_datetime(moment: datetime) -> PubDate:
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
        following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
        return PubDate(date(year, month, 1), date.fromordinal(following.toordinal() - 1), text)
    match = _SLASHED.match(text)
    if match:
        return _day(int(match[1]), int(match[2]), int(match[3]))
    if _ISO_START.match(text):
        try:
            return _from_datetime(datetime.fromisoformat(text))
        except ValueError:
            return None
    match = _DAY_MONTH_YEAR.match(text)
    if match and match[2].lower() in _MONTHS:
        return _day(int(match[3]), _MONTHS[match[2].lower()], int(match[1]))
    match = _MONTH_DAY_YEAR.match(text)
    if match and match[1].lower() in _MONTHS:
        return _day(int(match[3]), _MONTHS[match[1].lower()], int(match[2]))
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
    stamped = pc.strptime(pc.if_else(iso, stripped, None), format="%Y-%m-%d", unit="s",
                          error_is_null=True)
    days = pc.cast(pc.cast(stamped, pa.date32()), pa.int32()).to_numpy(zero_copy_only=False)
    days = np.where(np.isnan(days.astype(np.float64)), np.nan, days).astype(np.float64)
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


def read_id_dates(path: Any, *, kind: str = "doc") -> tuple[Any, np.ndarray]:
    """A file of `id<TAB>date` lines (a doc-dates or query-dates file) as (ids, days).

    `ids` is a pyarrow string array, `days` float64 days (NaN where the date is blank). Blank
    lines and lines starting with '#' are skipped. A line without a tab, an empty id, an id given
    twice or a date that cannot be read raises DateError naming the file and the line.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    source = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise DateError(f"{source}: cannot read the {kind}-dates file: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DateError(f"{source}: the {kind}-dates file is not UTF-8 text (byte {error.start})") from None
    lines = pa.array(text.split("\n"), type=pa.large_string())
    numbers = np.arange(1, len(lines) + 1)
    lines = pc.utf8_rtrim(lines, characters="\r")
    keep = pc.and_(
        pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(lines)), 0),
        pc.invert(pc.starts_with(lines, "#")),
    )
    lines = lines.filter(keep)
    numbers = numbers[keep.to_numpy(zero_copy_only=False)]
    parts = pc.split_pattern(lines, "\t", max_splits=1)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(counts != 2)
    if bad.size:
        first = int(bad[0])
        raise DateError(
            f"{source}, line {numbers[first]}: expected '{kind}_id<TAB>date', got "
            f"{lines[first].as_py()!r}"
        )
    ids = pc.utf8_trim_whitespace(pc.list_element(parts, 0))
    dates = pc.list_element(parts, 1)
    empty = np.flatnonzero(pc.equal(pc.utf8_length(ids), 0).to_numpy(zero_copy_only=False))
    if empty.size:
        raise DateError(f"{source}, line {numbers[int(empty[0])]}: the {kind} id is empty")
    ids = ids.cast(pa.string())
    if pc.count_distinct(ids).as_py() != len(ids):
        repeated = pc.value_counts(ids).filter(
            pc.greater(pc.struct_field(pc.value_counts(ids), "counts"), 1))[0]["values"].as_py()
        lines_of = numbers[pc.equal(ids, repeated).to_numpy(zero_copy_only=False)]
        raise DateError(
            f"{source}: {kind} id {repeated!r} is given twice (lines {lines_of[0]} and {lines_of[1]})"
        )
    return ids, parse_day_column(dates, source=source, column="date", lines=numbers)


def lookup_days(ids: Sequence[str] | Any, known_ids: Any, known_days: np.ndarray) -> np.ndarray:
    """The days of `ids` (any shape of strings, or a pyarrow array) found in (`known_ids`,
    `known_days`, from `read_id_dates`); NaN for an id that is not there. Hashing is pyarrow's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    shape = None
    if isinstance(ids, np.ndarray):
        shape = ids.shape
        ids = ids.ravel()
    array = ids if isinstance(ids, (pa.Array, pa.ChunkedArray)) else pa.array(ids, type=pa.string())
    index = pc.index_in(array, value_set=known_ids).to_numpy(zero_copy_only=False)
    found = ~np.isnan(index.astype(np.float64))
    days = np.full(len(index), np.nan)
    days[found] = known_days[index[found].astype(np.int64)]
    return days.reshape(shape) if shape is not None else days
