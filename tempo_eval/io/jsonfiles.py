"""The JSON, JSON Lines and Parquet readers, and the DeepEval test-run detection.

JSON: a list of objects, {"data": [...]}, pandas' split and column orients, or a DeepEval test
run (its test cases are the rows); JSON Lines: one object per line; Parquet: read with pyarrow.
Each returns a `_Table` of raw cell values; every problem raises InputError naming the line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tempo_eval.io.cells import arrow_values
from tempo_eval.io.errors import InputError, json_error_text, quote
from tempo_eval.io.jsonlines import json_lines
from tempo_eval.io.table import _Table

#: keys of a DeepEval test case -> our dataset columns (its own snake_case names, which we map)
_DEEPEVAL_CASE_KEYS = {
    "input": "input",
    "actualOutput": "actual_output",
    "expectedOutput": "expected_output",
    "retrievalContext": "retrieval_context",
    "context": "context",
    "name": "name",
}


def deepeval_test_run(document: Any) -> dict[str, Any] | None:
    """The test run in a DeepEval test run JSON: the document itself (a results folder's file,
    .latest_run_full.json) or under "testRunData" (.deepeval/.latest_test_run.json); else None."""
    if isinstance(document, dict) and isinstance(document.get("testRunData"), dict):
        document = document["testRunData"]
    if isinstance(document, dict) and isinstance(document.get("testCases"), list):
        return document
    return None


def _read_jsonl(text: str, source: str) -> _Table:
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    decode = json.JSONDecoder().decode
    for number, line in json_lines(text):
        _read_jsonl_line(line, number, source, decode, records, lines)
    if not records:
        raise InputError("the file is empty; expected one JSON object per line", source=source)
    return _records_table(records, lines)


def _read_jsonl_line(line: str, number: int, source: str, decode: Callable[[str], Any],
                     records: list[dict[str, Any]], lines: list[int]) -> None:
    """Add the line's object to `records` and its number to `lines` (a blank line adds nothing)."""
    if not line or line.isspace():
        return
    try:
        record = decode(line)
    except RecursionError:
        raise InputError(
            "the JSON is nested too deeply to read; expected one flat JSON object per line",
            source=source, line=number,
        ) from None
    except json.JSONDecodeError as error:
        hint = ""
        if not records and line.lstrip().startswith("["):
            hint = "; this looks like a JSON array: name the file .json"
        raise InputError(
            f"not valid JSON ({json_error_text(error.msg, error.colno)}); expected one JSON object "
            f"per line{hint}",
            source=source, line=number,
        ) from None
    if type(record) is not dict:
        raise InputError(
            f"found {_json_kind(record)}; expected one JSON object per line, like "
            '{"query": "...", "answer": "..."}',
            source=source, line=number,
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
            source=source, line=error.lineno,
        ) from None
    records = document
    if isinstance(document, dict):
        test_run = deepeval_test_run(document)
        if test_run is not None:  # a DeepEval test run: its test cases are the rows
            records = [{ours: case.get(theirs) for theirs, ours in _DEEPEVAL_CASE_KEYS.items()}
                       for case in test_run["testCases"] if isinstance(case, dict)]
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
                source=source, row=index + 1,
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


def _records_table(records: list[dict[str, Any]], lines: list[int] | None,
                   keys: list[str] | None = None) -> _Table:
    """The table of `records`: one column per key, in the order keys first appear (after `keys`,
    the whole file's keys when the records are a batch of it: every batch then has every column)."""
    columns: dict[str, None] = dict.fromkeys(keys) if keys else {}
    for record in records:
        if len(record) != len(columns) or not all(key in columns for key in record):
            columns.update(dict.fromkeys(record))
    names = [str(key) for key in columns]
    values = {str(key): [record.get(key) for record in records] for key in columns}
    return _Table(names, values, len(records), lines)


def parquet_columns(schema: Any, explicit: Mapping[str, str] | None, source: str,
                    warnings: list[str]) -> list[str] | None:
    """The columns of a Parquet file (its pyarrow `schema`) worth reading for a dataset: all but
    the unmapped ones of a nested or binary type (a list such as a 384-float embedding, a
    struct, a map, a union, bytes): no metric reads them, and turning them into Python values
    for the frame (and storing them) cost 3.4x the load of the file without them (issue 38).
    Unmapped scalar columns (numbers, text, dates) are kept, as in CSV. A note naming what is
    left out goes to `warnings`; None when every column is read."""
    import pyarrow as pa

    from tempo_eval.io.mapping import _resolve_mapping

    names = [str(name) for name in schema.names]
    try:
        mapped = set(_resolve_mapping(names, explicit, source, []).values())
    except InputError:  # said once the columns are read, as before
        return None
    left_out = [f for f in schema if f.name not in mapped and (
        pa.types.is_nested(f.type) or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)
        or pa.types.is_fixed_size_binary(f.type))]
    if not left_out or len(set(names)) != len(names):  # duplicated names: the reader says so
        return None
    shown = ", ".join(f"{f.name!r} ({f.type})" for f in left_out)
    warnings.append(f"{source}: column{'s' * (len(left_out) > 1)} {shown} not read: no dataset column comes "
                    "from it, and unmapped list, struct, map and binary columns are left out (no metric reads them)")
    return [name for name in names if name not in {f.name for f in left_out}]


def _read_parquet(data: bytes, source: str, explicit: Mapping[str, str] | None = None,
                  warnings: list[str] | None = None) -> _Table:
    """A Parquet file's table; with `warnings` (a dataset, not conversations) only the columns
    `parquet_columns` keeps are read."""
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
        parquet = pq.ParquetFile(pa.BufferReader(data), pre_buffer=False)
        columns = None if warnings is None else parquet_columns(parquet.schema_arrow, explicit, source, warnings)
        table = parquet.read(columns=columns, use_threads=False)
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
    # Python values for the converters (lists come out as lists), made only for the columns that
    # are read (the mapped ones): an unmapped 384-float embedding column is never turned into
    # Python objects; unmapped columns keep their Arrow types through pandas (`_Table.arrow`).
    return _Table(names, _ArrowColumns(table, source), table.num_rows, None, arrow=table)


class _ArrowColumns(Mapping[str, list[Any]]):
    """Column name -> Python values of a pyarrow Table, converted on first access, then kept."""

    def __init__(self, table: Any, source: str) -> None:
        self._table, self._source = table, source
        self._positions = {str(name): i for i, name in enumerate(table.column_names)}
        self._converted: dict[str, list[Any]] = {}

    def __getitem__(self, name: str) -> list[Any]:
        if name not in self._converted:
            column = self._table.column(self._positions[name])  # KeyError for an unknown name
            self._converted[name] = arrow_values(column, name, self._source)
        return self._converted[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)
