"""The read path's seams are column- and batch-wide: a dataset file streamed into the store is
opened once (uncompressed), a batch's cells are converted by one call into the cell converters,
and a batch's rows are encoded by one call into the store's packing (the missing cells found by
one call too), not by a call per column or per cell. The rows, hash and messages stay the same."""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.io import _source
from tempo_eval.io.batches import BatchTable, Canonical
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream
from tempo_eval.store.runs import RunStore


class _Entries:
    """Counts the entries into `modules` from code of another module (sys.setprofile), as
    `bench/read_path.py` counts a visit."""

    def __init__(self, *modules: str) -> None:
        self.modules = set(modules)
        self.counts: Counter[str] = Counter()
        self._stack: list[str] = []

    def __call__(self, frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            caller = self._stack[-1] if self._stack else ""
            if module in self.modules and module != caller:
                self.counts[module] += 1
            self._stack.append(module)
        elif event == "return" and self._stack:
            self._stack.pop()

    def __enter__(self) -> _Entries:
        sys.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)


def _rows(n: int) -> list[dict]:
    return [{"query_id": f"q{i}", "query": f"What happened in {1990 + i % 30}?",
             "answer": f"In {1990 + i % 30} it rose.", "contexts": json.dumps([f"In {1990 + i} it rose.", "Nothing."]),
             "retrieved_ids": json.dumps([f"d{i}", f"e{i}"]), "gold_ids": json.dumps({f"d{i}": 2}),
             "reference_date": "2024-05-01", "context_dates": json.dumps(["2020-01-01", None]),
             "grade": 1.5 if i % 2 else None}
            for i in range(n)]


def _csv(path: Path, n: int) -> Path:
    pd.DataFrame(_rows(n)).to_csv(path, index=False)
    return path


def test_a_batch_of_cells_is_converted_by_one_call_into_the_cell_converters() -> None:
    raw = pd.DataFrame(_rows(40)).astype(object).where(lambda f: f.notna(), None)
    table = BatchTable(list(raw.columns), {c: raw[c].tolist() for c in raw.columns}, len(raw), None)
    canonical = Canonical(None, "data.csv")
    with _Entries("tempo_eval.io.cells", "tempo_eval.common.schema") as entries:
        frame = canonical.batch(table)
    assert len(frame) == 40 and frame["gold_ids"][0] == {"d0": 2}
    assert entries.counts["tempo_eval.io.cells"] == 1, entries.counts  # not one per column, nor per cell
    assert entries.counts["tempo_eval.common.schema"] <= 1, entries.counts  # the index-column check: one call


def test_a_bad_cell_in_a_converted_batch_still_names_the_file_row_line_and_column(tmp_path: Path) -> None:
    rows = _rows(5)
    rows[3]["gold_ids"] = '{"d3": "high"}'
    path = tmp_path / "data.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    stream = open_stream(path, batch_rows=2)
    with pytest.raises(InputError) as error:
        list(stream.batches())
    message = str(error.value)
    assert "data.csv" in message and "row 4" in message and "line 5" in message and "gold_ids" in message


def test_a_batch_of_rows_is_encoded_and_packed_by_one_call_into_the_store(tmp_path: Path) -> None:
    frame = pd.DataFrame(_rows(50)).astype(object)
    frame["grade"] = [1.5 if i % 2 else float("nan") for i in range(50)]  # missing cells: NaN stored as null
    store = RunStore(tmp_path / "runs.db")
    dataset_id, _ = store.begin_dataset(name="d", content_hash="h", mapping=None, source_format="csv")
    with _Entries("tempo_eval.store.packing", "tempo_eval.common.values") as entries:
        store.add_dataset_rows(dataset_id, 0, frame)
    store.finish_dataset(dataset_id, 50, [])
    assert entries.counts["tempo_eval.store.packing"] == 1, entries.counts
    assert entries.counts["tempo_eval.common.values"] <= 1, entries.counts  # not one call per cell
    stored = store.dataset_frame(dataset_id)
    assert stored["grade"].tolist() == [1.5 if i % 2 else None for i in range(50)]
    assert stored["query"].tolist() == frame["query"].tolist()
    store.close()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_an_uncompressed_dataset_file_is_opened_once_while_it_is_streamed(tmp_path: Path, monkeypatch, suffix) -> None:
    path = tmp_path / f"data{suffix}"
    rows = _rows(7)
    if suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    elif suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    opened: list[str] = []
    real = _source.open_regular

    def counted(*args, **kwargs):
        opened.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(_source, "open_regular", counted)
    stream = open_stream(path, batch_rows=3)
    n_rows = sum(len(frame) for _, frame in stream.batches())
    assert n_rows == stream.n_rows == 7
    assert opened == [str(path)]  # the first pass, the hash, the header and the batches: one handle
    assert stream.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_content_hash_of_a_file_read_once_covers_every_chunk(tmp_path: Path) -> None:
    # larger than the first pass's chunk (4 MB): the hash is of every chunk the pass read
    path = _csv(tmp_path / "big.csv", 9000)
    pad = pd.DataFrame(_rows(8)).assign(query_id=[f"pad{i}" for i in range(8)], answer="x" * 900_000)
    with path.open("a", encoding="utf-8") as out:
        out.write(pad.to_csv(index=False, header=False))
    assert path.stat().st_size > 2 * (1 << 22)
    stream = open_stream(path)
    frames = [frame for _, frame in stream.batches()]
    assert stream.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert sum(map(len, frames)) == stream.n_rows == 9008


def test_a_streamed_csv_batch_enters_the_table_and_the_conversion_once_each(tmp_path: Path) -> None:
    path = _csv(tmp_path / "data.csv", 30)
    with _Entries("tempo_eval.io.table", "tempo_eval.io.batches") as entries:
        stream = open_stream(path, batch_rows=10)
        frames = [frame for _, frame in stream.batches()]
    assert [len(f) for f in frames] == [10, 10, 10] and stream.n_rows == 30
    assert entries.counts["tempo_eval.io.table"] == 3, entries.counts  # the batch's table, made once
    assert entries.counts["tempo_eval.io.batches"] == 1 + 3, entries.counts  # the converter, then one call a batch
