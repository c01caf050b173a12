"""A stream knows its end when it hands out its last batch: `n_rows` and the whole file's
`warnings` are set by then (the reader reads one table ahead, and the last batch's conversion
gives the warnings), so a consumer can complete what it writes with the last batch. Reading
ahead does not move a problem earlier: a problem in a later batch is raised after the batches
before it are handed out, as before."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.io.cells import MAX_CELL_CHARS
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream


def _rows(n: int) -> list[dict]:
    return [{"query_id": f"q{i}", "query": f"What happened in {1990 + i % 30}?", "answer": f"In {1990 + i} it rose.",
             "contexts": json.dumps([f"In {1990 + i} it rose."]), "reference": ""} for i in range(n)]


def _write(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize(("n_rows", "batch_rows"), [(25, 10), (30, 10), (7, 10), (10, 10)])
def test_the_row_count_and_warnings_are_known_when_the_last_batch_is_handed_out(
    tmp_path: Path, suffix: str, n_rows: int, batch_rows: int
) -> None:
    path = _write(tmp_path / f"data{suffix}", _rows(n_rows))
    whole = load_dataset(path)
    assert any("empty in every row" in w for w in whole.warnings)  # the reference column
    stream = open_stream(path, batch_rows=batch_rows)
    seen = 0
    for offset, frame in stream.batches():
        assert offset == seen
        seen += len(frame)
        if seen < n_rows:
            assert stream.n_rows is None  # not known before the end
        else:
            assert stream.n_rows == n_rows  # known with the last batch, before the loop ends
            assert stream.warnings == whole.warnings
    assert seen == n_rows and stream.n_rows == n_rows and stream.warnings == whole.warnings


def test_a_cell_too_long_in_a_later_batch_is_raised_after_the_batches_before_it(tmp_path: Path) -> None:
    rows = _rows(30)
    rows[24]["answer"] = "x" * (MAX_CELL_CHARS + 1)  # refused by the reader, while reading its table
    stream = open_stream(_write(tmp_path / "data.csv", rows), batch_rows=10)
    handed: list[int] = []
    with pytest.raises(InputError) as raised:
        for offset, _ in stream.batches():
            handed.append(offset)
    assert handed == [0, 10]
    assert raised.value.row == 25 and raised.value.column == "answer"


def test_a_bad_cell_in_a_later_batch_is_raised_after_the_batches_before_it(tmp_path: Path) -> None:
    rows = _rows(30)
    rows[14]["contexts"] = "[not json"  # refused by the conversion of its batch
    stream = open_stream(_write(tmp_path / "data.csv", rows), batch_rows=10)
    handed: list[int] = []
    with pytest.raises(InputError) as raised:
        for offset, _ in stream.batches():
            handed.append(offset)
    assert handed == [0]
    assert raised.value.row == 15 and raised.value.column == "contexts"


def test_an_abandoned_stream_lets_its_file_go(tmp_path: Path) -> None:
    stream = open_stream(_write(tmp_path / "data.csv", _rows(30)), batch_rows=10)
    batches = stream.batches()
    assert next(batches)[0] == 0
    batches.close()
    assert list(batches) == [] and stream.n_rows is None
