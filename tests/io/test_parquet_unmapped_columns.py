"""A Parquet dataset's unmapped list, struct, map and binary columns (a 384-float embedding) are
never read from the file nor converted: only the columns the dataset takes (mapped ones, and
unmapped scalars, kept as in CSV) are, by the whole-file reader and the streamed one; a warning
names what was left out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.stream import open_stream

ROWS = 50


def _write(path: Path) -> Path:
    embedding = pa.FixedSizeListArray.from_arrays(pa.array(np.random.default_rng(1).random(ROWS * 384),
                                                            pa.float32()), 384)
    pq.write_table(pa.table({
        "query": [f"What happened in {1900 + i}?" for i in range(ROWS)],
        "answer": [f"It happened in {1900 + i}." for i in range(ROWS)],
        "contexts": [[f"In {1900 + i} it happened."] for i in range(ROWS)],
        "embedding": embedding,
        "vectors": pa.array([[0.5] * 3] * ROWS, pa.list_(pa.float64())),
        "meta": pa.array([{"source": "web", "rank": i} for i in range(ROWS)]),
        "blob": pa.array([b"\x00\x01"] * ROWS, pa.binary()),
        "latency_ms": pa.array(range(ROWS), pa.int64()),
    }), path)
    return path


@pytest.fixture
def read_columns(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The columns each Parquet read asked for (every column when it named none)."""
    asked: list[list[str]] = []
    read, batches = pq.ParquetFile.read, pq.ParquetFile.iter_batches

    def counted_read(self, columns=None, **kwargs):
        asked.append(list(columns) if columns is not None else self.schema_arrow.names)
        return read(self, columns=columns, **kwargs)

    def counted_batches(self, batch_size=65536, row_groups=None, columns=None, **kwargs):
        asked.append(list(columns) if columns is not None else self.schema_arrow.names)
        return batches(self, batch_size=batch_size, row_groups=row_groups, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", counted_read)
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted_batches)
    return asked


LEFT_OUT = {"embedding", "vectors", "meta", "blob"}


def test_the_whole_file_reader_reads_only_the_columns_it_keeps(tmp_path: Path, read_columns) -> None:
    dataset = load_dataset(_write(tmp_path / "rows.parquet"))
    assert read_columns and all(not LEFT_OUT & set(asked) for asked in read_columns), read_columns
    assert set(dataset.frame.columns) == {"query_id", "query", "answer", "contexts", "latency_ms"}
    assert dataset.frame["latency_ms"].tolist() == list(range(ROWS))
    note = next(w for w in dataset.warnings if "not read" in w)
    assert all(repr(name) in note for name in LEFT_OUT), note


def test_the_streamed_reader_reads_only_the_columns_it_keeps(tmp_path: Path, read_columns) -> None:
    stream = open_stream(_write(tmp_path / "rows.parquet"), batch_rows=20)
    frames = [frame for _, frame in stream.batches()]
    assert sum(len(f) for f in frames) == ROWS
    assert read_columns and all(not LEFT_OUT & set(asked) for asked in read_columns), read_columns
    assert not LEFT_OUT & set(frames[0].columns) and "latency_ms" in frames[0].columns
    assert any("not read" in w and "'embedding'" in w for w in stream.warnings), stream.warnings


def test_a_list_column_the_mapping_names_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"question": ["q1"], "response": ["a"], "passages": [["ctx"]],
                             "embedding": pa.array([[0.1, 0.2]], pa.list_(pa.float32()))}), path)
    dataset = load_dataset(path, mapping={"query": "question", "answer": "response", "contexts": "passages"})
    assert dataset.frame.loc[0, "contexts"] == ["ctx"] and "embedding" not in dataset.frame.columns
