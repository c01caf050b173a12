"""Canonical conversion of a dataset read in batches (`tempo_eval.io.stream`), with the checks
across rows carried from batch to batch, so the rows and every message are the ones the
whole-file reader gives for the same file: a file read whole is one batch
(`canonical_frame`), so there is one canonical conversion.

`BatchTable` (`tempo_eval.io.table`) is a `_Table` of some rows of a file that places each row
in the whole file (row number counted from the file's first row; line given, or found on
demand). `Canonical` converts
one batch at a time with the whole-file reader's converters and keeps what spans batches: the
mapping (resolved on the first batch), seen query ids, generated ids, columns not empty so far,
the first list cell of each column read in another style, the first comma-separated id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from tempo_eval.common.schema import CANONICAL_COLUMNS
from tempo_eval.common.schema import index_columns as saved_index_columns
from tempo_eval.io.cells import BatchCellError, convert_columns
from tempo_eval.io.errors import InputError
from tempo_eval.io.mapping import _resolve_mapping
from tempo_eval.io.seen_keys import SeenKeys
from tempo_eval.io.table import BatchTable, _Table, duplicate_query_error, list_style_warning


class Canonical:
    """Batches of raw cells -> canonical frames (see the module docstring); the last batch
    (`batch(table, last=True)`) sets `warnings`, those of the whole file in the order the
    whole-file reader gives them."""

    def __init__(self, explicit: Mapping[str, str] | None, source: str) -> None:
        self.explicit = dict(explicit) if explicit else None
        self.source = source
        self.mapping: dict[str, str] | None = None
        #: warnings of the reader itself (byte order mark, unnamed header columns)
        self.reader_warnings: list[str] = []
        self.skipped_empty_rows = 0
        self._mapping_warnings: list[str] = []
        self._columns: list[str] = []
        self._seen = SeenKeys()  # compact: a dict of a million ids would hold ~180 MB
        self._generated: dict[Any, str] = {}
        self._filled: set[str] = set()
        self._list_notes: dict[str, tuple[str, int, dict[str, int | None]]] = {}
        self._comma: dict[str, str] = {}
        self._ignored: dict[str, str] = {}
        self._line_of: Callable[[int], int | None] | None = None
        #: the whole file's warnings, once its last batch is converted
        self.warnings: list[str] = []

    def batch(self, table: BatchTable, last: bool = False) -> pd.DataFrame:
        """The canonical frame of the next batch; `last`: the file's last, then `warnings` is set."""
        index_columns = saved_index_columns(table.columns)
        if index_columns:  # a row index pandas saved with the file is no data (as the whole-file reader)
            table = dataclasses.replace(table, columns=[c for c in table.columns if c not in index_columns])
        if self.mapping is None:
            if index_columns:
                self._mapping_warnings.append(f"{self.source}: column {', '.join(map(repr, index_columns))} is a "
                                              "saved row index; not read as data")
            self.mapping = _resolve_mapping(table.columns, self.explicit, self.source, self._mapping_warnings)
            self._columns = list(table.columns)
        else:
            self._check_new_columns(table)
        if table.line_of is not None:
            self._line_of = table.line_of
        mapping = self.mapping
        comma_checked = [c for c in ("retrieved_ids", "gold_ids") if c in mapping and c not in self._comma]
        try:  # the batch's columns converted in one call
            converted = convert_columns({canonical: table.values[column] for canonical, column in mapping.items()},
                                        comma_checked)
        except BatchCellError as error:
            raise InputError(str(error), source=self.source, column=mapping[error.canonical],
                             **table.place(error.index)) from None
        data: dict[str, Any] = converted.values
        for canonical, (notes, noted) in converted.notes.items():
            column = mapping[canonical]
            first = self._list_notes.get(column)
            if first is None:
                self._list_notes[column] = (notes[0], len(notes), table.place(noted[0]))
            else:
                self._list_notes[column] = (first[0], first[1] + len(notes), first[2])
        for canonical in mapping:
            if canonical not in self._filled and any(
                not (value is None or (isinstance(value, list | dict) and not value)) for value in data[canonical]
            ):
                self._filled.add(canonical)
        for canonical, (index, problem) in converted.commas.items():
            self._comma[canonical] = str(InputError(problem, source=self.source, column=mapping[canonical],
                                                    **table.place(index)))
        if "query_id" in data:
            for index, qid in enumerate(data["query_id"]):
                if qid is None:
                    raise InputError(
                        "the query id is empty; expected an id in every row (or remove the column to "
                        "number the rows q1, q2, ...)",
                        source=self.source, column=mapping["query_id"], **table.place(index),
                    )
        else:
            data["query_id"] = self._generated_ids(data, table)
        self._check_unique_ids(data, table)
        frame = self._frame(table, data)
        if last:
            self.warnings = self._file_warnings()
        return frame

    def _check_new_columns(self, table: BatchTable) -> None:
        new = [c for c in table.columns if c not in self._columns]
        if not new:
            return
        columns = self._columns + new
        remapped = _resolve_mapping(columns, self.explicit, self.source, [])
        changed = [c for c, source in remapped.items() if self.mapping.get(c) != source]  # type: ignore[union-attr]
        if changed:
            column = remapped[changed[0]]
            first = next((i for i, value in enumerate(table.values[column]) if value is not None), 0)
            raise InputError(
                f"the key {column!r} first appears here, after the first {table.offset:,} rows, which "
                f"fixed the columns of this streamed file; it would be read as {changed[0]!r}. Put the "
                f"key in the first row (null where there is no value), or map it with mapping={{...}}",
                source=self.source, column=column, **table.place(first),
            )
        self._columns = columns

    def _generated_ids(self, data: Mapping[str, list[Any]], table: BatchTable) -> list[str]:
        return generated_ids(data, table.n_rows, self._generated, table.offset)

    def _check_unique_ids(self, data: Mapping[str, list[Any]], table: BatchTable) -> None:
        mapping = self.mapping or {}
        runs = data.get("run")
        keys = list(zip(runs, data["query_id"], strict=True)) if runs is not None else data["query_id"]
        rows = range(table.offset, table.offset + len(keys))
        repeated = self._seen.add_batch(keys, rows, table.lines)
        if repeated is None:
            return
        index, first_row, first_line = repeated
        if first_line is None and self._line_of is not None:
            first_line = self._line_of(first_row)
        first_at = f"row {first_row + 1}" + (f" (line {first_line})" if first_line is not None else "")
        raise duplicate_query_error(data, index, mapping, runs, first_at, self.source, table.place(index))

    def _frame(self, table: BatchTable, data: dict[str, Any]) -> pd.DataFrame:
        mapping = self.mapping or {}
        columns = frame_columns(
            table, data, mapping, lambda column, message: self._ignored.setdefault(column, f"{self.source}: {message}")
        )
        frame = pd.DataFrame(columns)
        frame.index = pd.RangeIndex(table.offset, table.offset + len(frame))
        return frame

    def _file_warnings(self) -> list[str]:
        """The warnings of the whole file, once every batch is read."""
        mapping = self.mapping or {}
        warnings = list(self.reader_warnings)
        if self.skipped_empty_rows:
            warnings.append(f"{self.source}: skipped {self.skipped_empty_rows} row(s) with every cell empty")
        warnings += self._mapping_warnings
        for column in mapping.values():
            if column in self._list_notes:
                first, count, place = self._list_notes[column]
                warnings.append(list_style_warning(first, count, self.source, column, place))
        # the whole-file reader's test and words, on one stand-in value per column
        stand_ins = {c: ["filled"] if c in self._filled else [None] for c in mapping}
        warnings += empty_column_warnings(stand_ins, mapping, self.source)
        warnings += [self._comma[c] for c in ("retrieved_ids", "gold_ids") if c in self._comma]
        warnings += list(self._ignored.values())
        return warnings


def frame_columns(
    table: _Table, data: Mapping[str, Any], mapping: Mapping[str, str], ignored: Callable[[str, str], None]
) -> dict[str, Any]:
    """The columns of a dataset frame: the converted canonical ones (`data`), then every unmapped
    source column as it is (a Parquet column keeps its Arrow type through pandas). A source column
    named like a canonical one that comes from elsewhere is left out: `ignored(column, message)`."""
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


def generated_ids(data: Mapping[str, Sequence[Any]], n_rows: int, seen: dict[Any, str] | None = None,
                  offset: int = 0) -> list[str]:
    """Query ids for rows without an id column: "q1", "q2", ... by row (counted from `offset`),
    or, with a `run` column, by the first appearance of each query text (in `seen`, carried
    across batches), so the same query gets the same id in every run."""
    if "run" not in data or "query" not in data:
        return [f"q{offset + i}" for i in range(1, n_rows + 1)]
    ids = {} if seen is None else seen
    return [ids.setdefault(text, f"q{len(ids) + 1}") for text in data["query"]]


def canonical_frame(
    table: _Table, explicit: Mapping[str, str] | None, source: str, warnings: list[str]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The canonical frame of a whole table (a file read whole) and the mapping used: the table
    as one batch of `Canonical`; its warnings are added to `warnings`."""
    canonical = Canonical(explicit, source)
    batch = table if isinstance(table, BatchTable) else BatchTable(
        table.columns, table.values, table.n_rows, table.lines, table.arrow)
    frame = canonical.batch(batch, last=True)
    warnings.extend(canonical.warnings)
    return frame, canonical.mapping or {}


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
