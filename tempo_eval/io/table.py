"""The raw table every reader returns, and the conversion of its cells into canonical values.

`_Table` holds raw cell values by source column and where each row came from (for messages);
`_convert` turns one mapped column into canonical values (text, lists, gold relevance, dates),
with a fast path for the common cells and the full converters of `tempo_eval.io.cells` for the
rest, raising InputError naming the row and column of a bad cell.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tempo_eval.io.cells import (
    MAX_CELL_CHARS,
    CellError,
    date_cell,
    dates_cell,
    gold_cell,
    list_cell,
    text_cell,
)
from tempo_eval.io.errors import InputError


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


def _convert(
    table: _Table, canonical: str, column: str, source: str, warnings: list[str] | None = None
) -> list[Any]:
    converted, notes, noted = _convert_cells(table, canonical, column, source)
    if notes and warnings is not None:
        warnings.append(list_style_warning(notes[0], len(notes), source, column, table.place(noted[0])))
    return converted


def list_style_warning(first: str, count: int, source: str, column: str, place: dict[str, int | None]) -> str:
    """One warning per column for list cells read in another style: the first such cell (its
    note and place), and how many more were read the same way."""
    more = f" ({count - 1} more row(s) read the same way)" if count > 1 else ""
    return str(InputError(first + more, source=source, column=column, **place))


def _convert_cells(
    table: _Table, canonical: str, column: str, source: str
) -> tuple[list[Any], list[str], list[int]]:
    """(canonical values, notes on list cells read in another style, the rows of those notes)."""
    values = table.values[column]
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
                raise InputError(str(error), source=source, column=column, **table.place(index)) from None
    return converted, notes, noted


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
        else _SLOW
        for value in values
    ]


def frame_columns(
    table: _Table, data: Mapping[str, Any], mapping: Mapping[str, str], ignored: Callable[[str, str], None]
) -> dict[str, Any]:
    """The columns of a dataset frame: the converted canonical ones (`data`), then every unmapped
    source column as it is (a Parquet column keeps its Arrow type through pandas). A source column
    named like a canonical one that comes from elsewhere is left out: `ignored(column, message)`."""
    import pandas as pd

    from tempo_eval.common.schema import CANONICAL_COLUMNS

    columns: dict[str, Any] = {
        name: pd.Series(data[name], dtype=object) for name in CANONICAL_COLUMNS if name in data
    }
    mapped_sources = set(mapping.values())
    for column in table.columns:
        if column in mapped_sources:
            continue
        if column in columns:
            ignored(column, f"column {column!r} ignored: {column!r} comes from "
                            f"{mapping.get(column, 'generated ids')!r}")
            continue
        if table.arrow is not None:
            # by name: a saved row index may have been dropped from `table.columns`, not from the arrow table
            columns[column] = table.arrow.column(column).to_pandas(use_threads=False).to_numpy()
        else:
            columns[column] = pd.Series(list(table.values[column]), dtype=object)
    return columns


def duplicate_query_error(
    data: Mapping[str, Any], index: int, mapping: Mapping[str, str], runs: Sequence[Any] | None,
    first_at: str, source: str, place: Mapping[str, int | None],
) -> InputError:
    """The error for a query (by id, else by text) seen a second time at row `index`; `first_at`
    says where it was first ("row 3 (line 4)")."""
    from tempo_eval.io.errors import quote

    if "query_id" in mapping:
        what, column = f"query id {data['query_id'][index]!r}", mapping["query_id"]
    else:
        what, column = f"query {quote(data['query'][index])}", mapping.get("query")
    scope = f" in run {runs[index]!r}" if runs is not None else ""
    return InputError(
        f"{what} appears twice{scope}: first in {first_at}, again here; expected each query once"
        + (" per run" if runs is not None else " (several runs in one file need a 'run' column)"),
        source=source, column=column, **place,
    )
