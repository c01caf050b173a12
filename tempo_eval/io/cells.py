"""Reading one cell: text, a list of strings, or gold relevance (a list or {doc: grade}).

A list cell may be written three ways, tried in this order:

1. a JSON list: `["first context", "second context"]` (the fast, common case: `json.loads`);
2. a Python list literal: `['first', 'second']`, read with `ast.literal_eval` (never `eval`), or
   the numpy-style repr that pandas and Arrow write for an array cell, items separated by
   spaces or line breaks: `['d1' 'd2' 'd3']` (RAGAS `to_hf_dataset().to_csv()`);
3. values separated by `|`: `d1 | d2 | d3`; a cell without `|` is a one-item list.

Adjacent strings are never glued into one item (`ast` would read `['a' 'b']` as `['ab']`): a cell
mixing commas and space-separated strings (`['a', 'b' 'c']`) and numpy's shortened repr
(`['a' 'b' ... 'z']`) are errors. A cell that starts with `[` but is no list and was not meant as
one (`[Source 1] The report says ...`) is text, split at `|`, with a note; a broken list (a quote
or bracket right after the `[`, or only ids and commas: `["a", `, `[1, 2`) is an error, never
silently read as text. Gold ids are
a list (binary relevance) or an object `{"doc": grade}` with integer grades (graded relevance).
Missing values are `None`, not `[]`: JSON's `null` (and a Parquet null, a float NaN), and in a
CSV / TSV file an empty (or blank) cell. Words are text: an answer "None", a query id "NaN", the
texts "null", "nan" and "n/a" are read as written, in every format (no reader applies pandas' or
pyarrow's default list of missing-value words).

The functions here raise `CellError` with the problem only; the loader adds the place.
"""

from __future__ import annotations

import ast
import io
import json
import numbers
import re
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tempo_eval.common.values import is_na
from tempo_eval.core.pubdates import EXPECTED as DATES_EXPECTED
from tempo_eval.core.pubdates import DateError, DateOutOfRange, parse_date
from tempo_eval.io.errors import InputError, json_error_text, quote

#: the largest cell we read, in characters; larger cells are nearly always a broken quote or a
#: file pasted into one cell, and would make every metric slow.
MAX_CELL_CHARS = 1_000_000

LIST_EXPECTED = "expected a JSON list, a Python list literal or values separated by '|'"
GRADES_EXPECTED = 'expected a JSON object of integer grades like {"d1": 2, "d7": 1}'

#: a `[`-led cell that was meant as a list (broken ones are errors, not text): a quote, bracket or
#: brace right after the `[`, or nothing but ids, numbers and commas ("[1, 2", "[oops")
_LIST_ATTEMPT = re.compile(r"\[\s*['\"\[\]{]")
_LIST_ATTEMPT_PLAIN = re.compile(r"\[[\w\s.,:+-]*\]?")


class CellError(Exception):
    """A problem with one cell; the caller turns it into an InputError with the place."""


def describe(value: Any) -> str:
    """'a number (3.5)', 'an object', ... for messages about a value of the wrong kind."""
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the text {quote(value)}"
    return f"a {type(value).__name__}"


def is_missing(value: Any) -> bool:
    """None, NaN, pandas' NA/NaT (`is_na`), empty or blank text; a word ("None", "NaN") is text."""
    if isinstance(value, str):
        return not value or value.isspace()
    return is_na(value)


def check_size(text: str) -> None:
    if len(text) > MAX_CELL_CHARS:
        raise CellError(
            f"the cell holds {len(text):,} characters; expected at most {MAX_CELL_CHARS:,} "
            "(is a closing quote missing, or a whole document pasted into one cell?)"
        )


def text_cell(value: Any) -> str | None:
    """A text value: strings as they are; numbers written as text (7.0 -> "7"); missing -> None."""
    if isinstance(value, str):  # numpy.str_ too
        check_size(value)
        return None if not value or value.isspace() else str(value)
    if is_missing(value):
        return None
    if isinstance(value, bool):
        raise CellError(f"found {describe(value)}; expected text")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    raise CellError(f"found {describe(value)}; expected text")


def date_cell(value: Any) -> str | None:
    """An ISO date "YYYY-MM-DD" from any date the as-of reader accepts (`tempo_eval.core.pubdates`:
    ISO dates and date-times, a zone converted to UTC first, YYYY/MM/DD, RFC 2822, '6 January
    2023'), or a date/datetime. A year or a month (an interval) gives its first day."""
    if is_missing(value):
        return None
    try:
        parsed = parse_date(value)
    except DateOutOfRange as error:
        raise CellError(str(error)) from None
    except DateError:
        parsed = None
    if parsed is None:
        raise CellError(f"found {describe(value)}; expected an ISO date like 2024-05-31 or {DATES_EXPECTED}")
    return parsed.first.isoformat()


def dates_cell(value: Any) -> list[str | None] | None:
    """A list of publication dates (`context_dates`), aligned with the row's documents: each
    item normalised (`2023-01-06`, or `2023-01` / `2023` for a month / year), None where the
    date is unknown (null, empty). The list is a JSON list (nulls allowed), a Python list
    literal, values separated by '|', or a list value; a missing cell is None."""
    if is_missing(value):
        return None
    items: Any
    if isinstance(value, str):
        text = value.strip()
        check_size(text)
        try:
            items = json.loads(text) if text[:1] == "[" else None
        except (ValueError, RecursionError):
            items = None
        if not isinstance(items, list):
            items = list_cell(text, ids=True)
    elif isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else list(value)
    else:
        items = [value]
    labels: list[str | None] = []
    for position, item in enumerate(items or [], 1):
        try:
            parsed = parse_date(item)
        except DateOutOfRange as error:
            raise CellError(f"item {position} of the list: {error}") from None
        except DateError:
            raise CellError(
                f"item {position} of the list is {describe(item)}, not a date; expected {DATES_EXPECTED} "
                "(null where a date is unknown)"
            ) from None
        labels.append(None if parsed is None else parsed.label)
    return labels


def arrow_values(column: Any, name: str, source: str) -> list[Any]:
    """The Python values of one Arrow column (a ChunkedArray, one value per row), as
    `to_pylist` gives them. A date or timestamp Python cannot hold (a year before 1 or after
    9999, which Parquet can store) raises InputError naming the file, the row, the column and
    the value, where pyarrow raises a bare OverflowError."""
    try:
        return column.to_pylist()
    except (OverflowError, ValueError):
        index, shown = _first_out_of_range(column)
        raise InputError(
            f"found {shown} ({column.type}), outside the dates Python can hold (years 1 to 9999); "
            "expected a date from 0001-01-01 to 9999-12-31, or the value stored as text",
            source=source, row=index + 1, column=name,
        ) from None


def _first_out_of_range(column: Any) -> tuple[int, str]:
    """(0-based row, the value for a message) of the first value of `column` with no Python value."""
    for index, scalar in enumerate(column):
        try:
            scalar.as_py()
        except (OverflowError, ValueError):
            return index, _arrow_value_text(scalar)
    return 0, "a value"


def _arrow_value_text(scalar: Any) -> str:
    """Arrow's own text for a value ('10183-09-21'), else the number it stores."""
    import pyarrow as pa

    try:
        text = str(scalar.cast(pa.string()))
    except (pa.ArrowException, ValueError, OverflowError):
        text = ""
    if text and "out of range" not in text:
        return quote(text)
    value = getattr(scalar, "value", None)
    if isinstance(value, int) and pa.types.is_timestamp(scalar.type):
        year = 1970 + value / _PER_SECOND[scalar.type.unit] / _SECONDS_PER_YEAR
        return f"{value} {scalar.type.unit} since 1970 (about the year {year:,.0f})"
    return "a value"


_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
#: the mean Gregorian year
_SECONDS_PER_YEAR = 365.2425 * 86400


def list_cell(value: Any, *, ids: bool, notes: list[str] | None = None) -> list[str] | None:
    """A list of strings from any of the three cell styles, or from a list value (JSON, Parquet).

    With `ids=True` integer items become strings (document ids written as numbers); with
    `ids=False` (contexts) every item must already be text. A cell read in a way worth telling
    the user (a `[`-led text read as text) appends a note to `notes` when given.
    """
    if type(value) is str:
        text = value.strip()
        if not text:
            return None
        check_size(text)
        if text[0] == "[":
            try:
                parsed = _parse_list_text(text)
            except CellError:
                if _LIST_ATTEMPT.match(text) or _LIST_ATTEMPT_PLAIN.fullmatch(text):
                    raise  # a broken list, never silently read as text
                parts = _split_bars(text)
                if notes is not None:
                    how = f"{len(parts)} items split at '|'" if len(parts) > 1 else "one item"
                    notes.append(
                        f"{quote(text)} starts with '[' but is not a list: read as text ({how}); "
                        "write a JSON list to be sure of the items"
                    )
                return parts
            return _items(parsed, ids)
        if text[0] == "{":
            raise CellError(f"found an object {quote(text)}; {LIST_EXPECTED}")
        return _split_bars(text)
    if is_missing(value):
        return None
    if isinstance(value, (list, tuple)):
        return _items(value, ids)
    if hasattr(value, "tolist") and not isinstance(value, (int, float)):  # numpy arrays (Parquet lists)
        items = value.tolist()
        if isinstance(items, list):
            return _items(items, ids)
    if isinstance(value, str):
        return list_cell(str(value), ids=ids, notes=notes)
    raise CellError(f"found {describe(value)}; {LIST_EXPECTED}")


def _split_bars(text: str) -> list[str]:
    return [part.strip() for part in text.split("|") if part.strip()]


def _parse_list_text(text: str) -> Sequence[Any]:
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as json_error:
        numpy_items = _numpy_style_fast(text)
        if numpy_items is None and _MAYBE_ADJACENT.search(text):
            numpy_items = _numpy_style_items(text)  # the careful reading, with its errors
        if numpy_items is not None:
            return numpy_items
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise CellError(
                f"could not read a list: found {quote(text)} ({_list_syntax_reason(text, json_error)}); "
                f"{LIST_EXPECTED}"
            ) from None
    if not isinstance(parsed, (list, tuple)):
        raise CellError(f"could not read a list: found {quote(text)}; {LIST_EXPECTED}")
    return parsed


#: one item of a numpy-style repr: a quoted string without line breaks, or a plain number
_NUMPY_ITEM = re.compile(
    r"""\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))"""
)
#: a string literal right after another one (only whitespace between): what ast would glue
_MAYBE_ADJACENT = re.compile(r"""['"]\s+['"]""")


def _numpy_style_fast(text: str) -> list[Any] | None:
    """The items of a plain numpy-style repr (two or more quoted strings or numbers separated
    only by whitespace), read with one regex pass; None for anything else (the careful reading,
    `_numpy_style_items`, decides)."""
    if text[-1] != "]":
        return None
    items: list[Any] = []
    position, end = 1, len(text) - 1
    while True:
        match = _NUMPY_ITEM.match(text, position)
        if match is None:
            break
        single, double, number = match.groups()
        quoted = single if single is not None else double
        if quoted is None:
            items.append(ast.literal_eval(number))
        elif "\\" in quoted:
            items.append(ast.literal_eval(match.group(0).strip()))
        else:
            items.append(quoted)
        position = match.end()
        if position < end and not text[position].isspace():
            return None  # a comma or anything else after an item: not numpy-style
    if len(items) < 2 or text[position:end].strip():
        return None
    return items


def _numpy_style_items(text: str) -> list[Any] | None:
    """The items of a numpy-style repr `['d1' 'd2'\n 'd3']` or `[3 1 2]` (items separated by
    whitespace, no commas), or None when the text is not one. Raises CellError for a cell whose
    strings would glue together (commas mixed with adjacent strings) and for numpy's shortened
    repr with `...`, which has lost items."""
    if len(text) < 2 or text[-1] != "]":
        return None
    try:
        tokens = [
            token for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT,
                                  tokenize.DEDENT, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if len(tokens) < 3 or tokens[0].string != "[" or tokens[-1].string != "]":
        return None
    inner: list[Any] = []
    for token in tokens[1:-1]:  # "-" then a number: one negative number, as numpy writes it
        if inner and inner[-1].string == "-" and token.type == tokenize.NUMBER:
            inner[-1] = token._replace(string="-" + token.string)
        else:
            inner.append(token)
    values = (tokenize.STRING, tokenize.NUMBER)
    adjacent = any(
        a.type in values and b.type in values for a, b in zip(inner, inner[1:], strict=False)
    )
    if not adjacent:
        return None  # an ordinary literal (or not a list at all): ast decides
    if any(token.string == "..." or token.string == "." for token in inner):
        raise CellError(
            f"found {quote(text)}, a numpy array shortened with '...': items are missing; expected "
            "the full list (write the file with the items as a JSON list)"
        )
    if any(token.type not in values for token in inner):
        raise CellError(
            f"could not read a list: found {quote(text)}, where some items are separated by commas "
            "and some only by spaces; reading it would glue strings together. "
            f"{LIST_EXPECTED[0].upper()}{LIST_EXPECTED[1:]}"
        )
    try:
        return [ast.literal_eval(token.string) for token in inner]
    except (ValueError, SyntaxError):
        return None


def _list_syntax_reason(text: str, error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    if text.count("[") > text.count("]") or not text.endswith("]"):
        return "unclosed bracket"
    if isinstance(error, json.JSONDecodeError):
        return json_error_text(error.msg.lower(), error.pos + 1)
    return "not a list"


def _items(items: Sequence[Any], ids: bool) -> list[str]:
    # the common case first: every item already a string
    if all(type(item) is str for item in items):
        out = list(items)
    else:
        out = []
        for position, item in enumerate(items, start=1):
            if isinstance(item, str):
                out.append(str(item))
            elif ids and not isinstance(item, bool) and _is_integer(item):
                out.append(str(int(item)))
            else:
                kind = "a document id" if ids else "text"
                raise CellError(f"item {position} of the list is {describe(item)}; expected {kind}")
    if sum(map(len, out)) > MAX_CELL_CHARS:
        check_size("".join(out))
    return out


def _is_integer(value: Any) -> bool:
    real = isinstance(value, numbers.Real)
    return isinstance(value, numbers.Integral) or (real and float(value).is_integer())


def gold_cell(value: Any) -> list[str] | dict[str, int] | None:
    """Gold relevance: a list of ids (binary) or {doc id: integer grade} (graded)."""
    if type(value) is str and value.lstrip()[:1] == "{":
        text = value.strip()
        check_size(text)
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError) as json_error:
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                reason = (
                    "nested too deeply" if isinstance(json_error, RecursionError)
                    else "unclosed brace" if not text.endswith("}") else "not valid JSON"
                )
                raise CellError(
                    f"could not read graded relevance: found {quote(text)} ({reason}); {GRADES_EXPECTED}"
                ) from None
        if not isinstance(parsed, dict):
            raise CellError(f"found {quote(text)}; {GRADES_EXPECTED}")
        return _grades(parsed)
    if isinstance(value, dict):
        return _grades(value)
    return list_cell(value, ids=True)


def _grades(mapping: dict[Any, Any]) -> dict[str, int]:
    grades: dict[str, int] = {}
    for doc, grade in mapping.items():
        if isinstance(grade, bool) or not _is_integer(grade):
            raise CellError(f"the grade of {str(doc)!r} is {describe(grade)}; {GRADES_EXPECTED}")
        grades[str(doc)] = int(grade)
    return grades


def comma_separated_problem(values: Sequence[Any]) -> tuple[int, str] | None:
    """(row, problem) of the first cell of an id column that reads as one id but looks like
    several separated by commas: text such as "d1, d2, d3" with no '|' and no bracket. It is still
    read as one id (an id may contain a comma: parsing does not guess); the problem names the two
    ways to write a list. None when no cell looks like that."""
    for index, value in enumerate(values):
        if not isinstance(value, str):
            continue
        text = value.strip()
        if "," in text and "|" not in text and text[:1] not in ("[", "{"):
            return index, (
                f"{quote(text)} is read as one id containing commas; if it lists several ids, "
                "separate them with '|' (d1 | d2) or write a JSON list ([\"d1\", \"d2\"])"
            )
    return None


# -- a batch of columns at once (the readers' one call a batch) --------------------------------


class BatchCellError(CellError):
    """A bad cell of a batch (`convert_columns`): the problem, the canonical column and the row
    (0-based, in the batch); the reader adds the file, the source column and the line."""

    def __init__(self, problem: str, canonical: str, index: int) -> None:
        super().__init__(problem)
        self.canonical = canonical
        self.index = index


@dataclass
class Converted:
    """A batch's mapped columns in canonical values (`convert_columns`)."""

    #: canonical column -> its canonical values, in row order
    values: dict[str, list[Any]]
    #: canonical column -> (notes on list cells read in another style, the rows of those notes)
    notes: dict[str, tuple[list[str], list[int]]]
    #: id column -> (row, problem) of its first cell that looks like several comma-separated ids
    commas: dict[str, tuple[int, str]]


def convert_columns(columns: Mapping[str, Sequence[Any]], comma_checked: Sequence[str] = ()) -> Converted:
    """Every mapped column of a batch (canonical name -> raw cells) in canonical values, in one
    call: a fast path for the common cells and the full converters above for the rest, column
    after column in the order given (the first bad cell raises `BatchCellError`). The id columns
    named in `comma_checked` are also searched for a cell that looks like several ids separated
    by commas (`comma_separated_problem`)."""
    values: dict[str, list[Any]] = {}
    notes: dict[str, tuple[list[str], list[int]]] = {}
    for canonical, raw in columns.items():
        converted, found, noted = _convert_column(raw, canonical)
        values[canonical] = converted
        if found:
            notes[canonical] = (found, noted)
    found = {name: comma_separated_problem(columns[name]) for name in comma_checked
             if name in columns}
    return Converted(values, notes, {name: problem for name, problem in found.items() if problem})


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
    "context_dates": dates_cell,
    "outdated_references": lambda v: list_cell(v, ids=False),
}


def _convert_column(values: Sequence[Any], canonical: str) -> tuple[list[Any], list[str], list[int]]:
    """(canonical values, notes on list cells read in another style, the rows of those notes);
    `BatchCellError` names the column and row of a bad cell."""
    if canonical in ("contexts", "retrieved_ids", "gold_ids", "outdated_references"):
        converted = _fast_lists(values)
    elif canonical in ("query", "answer", "reference", "run", "query_id"):
        converted = _fast_texts(values)
    else:
        converted = [_SLOW] * len(values)
    convert = _CONVERTERS[canonical]
    if canonical in ("reference_date", "context_dates"):
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
                raise BatchCellError(str(error), canonical, index) from None
    return converted, notes, noted


def _memoized(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    seen: dict[str, Any] = {}

    def cached(value: Any) -> Any:
        if type(value) is not str:
            return convert(value)
        if value not in seen:
            seen[value] = convert(value)
        return seen[value]

    return cached


_SLOW = object()  # marks a cell the fast path left for the full converter
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
        else _SLOW
        for value in values
    ]


