"""Load a dataset of RAG outputs (CSV, TSV, JSONL, JSON, Parquet) into canonical columns.

Canonical columns (see the project vocabulary): `query_id`, `query`, `contexts` (list[str]),
`answer`, `reference`, `retrieved_ids` (list[str]), `gold_ids` (list[str] for binary relevance or
dict[str, int] for graded), `run`, `reference_date` (ISO date text: the as-of date),
`context_dates` (list of publication dates aligned with the documents, None where unknown) and
`outdated_references` (list[str]: answers that were right before the as-of date).

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

The readers live beside this module, one per kind of file (`delimited`: CSV/TSV; `jsonfiles`:
JSON, JSON Lines, Parquet); `mapping` picks the source column of each canonical column and
`table` converts the cells. This module puts them together.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import pandas as pd

from tempo_eval.common.schema import CANONICAL_COLUMNS, is_index_column  # noqa: F401  (CANONICAL_COLUMNS re-exported)
from tempo_eval.io._source import RawInput, decode_text, gunzip_if_needed, read_input
from tempo_eval.io.cells import comma_separated_ids_warning
from tempo_eval.io.delimited import _read_delimited
from tempo_eval.io.errors import InputError
from tempo_eval.io.jsonfiles import _read_json, _read_jsonl, _read_parquet
from tempo_eval.io.mapping import ALIASES, _resolve_mapping, detect_mapping  # noqa: F401 - re-exported
from tempo_eval.io.table import _convert, _Table, duplicate_query_error, frame_columns

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
    #: TREC runs: the qrels file as given (every judged query), kept by the store with the dataset
    qrels: bytes | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.frame)


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
    .jsonl/.ndjson, .json, .parquet/.pq, each optionally .gz or .zst). `mapping` maps canonical names to
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
            table = _read_parquet(data, raw.name, mapping, warnings)
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
    if suffixes and suffixes[-1] in (".gz", ".zst"):
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    hint = " Excel workbooks are not read directly: save as 'CSV UTF-8'." if ext in (".xlsx", ".xls") else ""
    raise InputError(
        f"cannot tell the format from the name {raw.name!r}; expected a name ending in .csv, .tsv, "
        f".jsonl, .json or .parquet (optionally .gz or .zst), or pass format=...{hint}",
        source=raw.name,
    )


# ---- readers: each returns a _Table of raw cell values ---------------------------------------


# ---- mapping and canonical conversion ------------------------------------------------------


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
    index_columns = [c for c in table.columns if is_index_column(c)]
    if index_columns:
        # a row index pandas saved with the file (to_csv without index=False) is no data
        table = _Table([c for c in table.columns if c not in index_columns], table.values, table.n_rows,
                       table.lines, table.arrow)
        warnings.append(f"{source}: column {', '.join(map(repr, index_columns))} is a saved row index; "
                        "not read as data")
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

    columns = frame_columns(table, data, mapping, lambda _, message: warnings.append(f"{source}: {message}"))
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
        raise duplicate_query_error(data, index, mapping, runs, first_at, source, table.place(index))
