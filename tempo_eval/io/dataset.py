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
`cells` converts the cells. This module puts them together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tempo_eval.common.process import gc_paused
from tempo_eval.common.schema import CANONICAL_COLUMNS  # noqa: F401 - re-exported
from tempo_eval.io._source import (  # noqa: F401 - _EXTENSIONS and FORMATS re-exported
    _EXTENSIONS,
    FORMATS,
    _too_large,
    max_input_bytes,
    read_input,
)
from tempo_eval.io.mapping import detect_mapping  # noqa: F401 - re-exported
from tempo_eval.io.stream import open_stream, read_whole


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

    A file is the collected stream of `tempo_eval.io.stream.open_stream` (the same reader, checks
    and messages as `evaluate`'s); bytes and uploads are read whole by the same stream module
    (`read_whole`), as one batch of the same canonical conversion.
    """
    limit = max_input_bytes() if max_bytes is None else max_bytes
    if isinstance(path_or_buffer, (str, os.PathLike)):
        stream = open_stream(path_or_buffer, mapping, name=name, format=format, max_bytes=limit)
        if stream.size > limit:  # a compressed file: held whole, its decompressed size counts
            raise _too_large(stream.size, limit, stream.name, "decompressed, the file holds more than")
    else:
        stream = read_whole(read_input(path_or_buffer, name=name, default_name="data", max_bytes=limit), mapping,
                            format)
    return collect(stream)


def collect(stream: Any) -> Dataset:
    """The Dataset of a `tempo_eval.io.stream.DatasetStream`: its batches, read to the end, as one frame."""
    frames = [frame for _, frame in stream.batches()]
    if len(frames) == 1:
        frame = frames[0]
    elif frames:
        with gc_paused():
            frame = pd.concat(frames, ignore_index=True)
    else:
        frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in stream.columns})
    frame.index = pd.RangeIndex(len(frame))
    return Dataset(frame=frame, name=stream.name, mapping=dict(stream.mapping), content_hash=stream.content_hash,
                   source_format=stream.source_format, warnings=list(stream.warnings))

