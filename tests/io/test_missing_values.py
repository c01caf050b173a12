"""What is a missing value when a dataset is read: in JSON / JSON Lines only `null`; in CSV / TSV
only an empty cell; in Parquet a null. The words "None", "null", "NaN", "nan", "n/a", "N/A" and
"NULL" are text in every format and on every path (whole-file `load_dataset`, streamed
`open_stream`, compressed): an answer "None" is scored, not `missing_input`, and a query id "NaN"
round-trips through `evaluate` to its output."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempo_eval.io.cells import list_cell, text_cell
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.stream import open_stream
from tests.support.cli import run_cli_streams

WORDS = ["None", "null", "NaN", "nan", "n/a", "N/A", "NULL"]
FORMATS = ["d.csv", "d.tsv", "d.json", "d.jsonl", "d.parquet", "d.csv.gz", "d.jsonl.gz"]


def _rows() -> list[dict]:
    rows = [{"query_id": word, "query": f"question {n}", "answer": word, "reference": word,
             "contexts": [word, "text"], "retrieved_ids": [word, "d2"]} for n, word in enumerate(WORDS)]
    rows.append({"query_id": "q-missing", "query": "question", "answer": None, "reference": "x",
                 "contexts": None, "retrieved_ids": None})
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    plain = path.name.removesuffix(".gz")
    if plain.endswith(".parquet"):
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif plain.endswith(".jsonl"):
        with opener(path, "wt", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(row) + "\n" for row in rows))
    elif plain.endswith(".json"):
        with opener(path, "wt", encoding="utf-8") as handle:
            handle.write(json.dumps(rows))
    else:  # CSV / TSV: a missing value is an empty cell
        with opener(path, "wt", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t" if plain.endswith(".tsv") else ",")
            writer.writerow(rows[0])
            for row in rows:
                writer.writerow(["" if v is None else json.dumps(v) if isinstance(v, list) else v
                                 for v in row.values()])
    return path


def _check(frame: pd.DataFrame) -> None:
    assert frame["query_id"].tolist() == [*WORDS, "q-missing"]
    assert frame["answer"].tolist() == [*WORDS, None]
    assert frame["reference"].tolist()[:-1] == WORDS
    assert frame["contexts"].tolist() == [[w, "text"] for w in WORDS] + [None]
    assert frame["retrieved_ids"].tolist() == [[w, "d2"] for w in WORDS] + [None]


@pytest.mark.parametrize("name", FORMATS)
def test_words_are_text_and_only_null_or_an_empty_cell_is_missing_whole_file(tmp_path: Path, name: str) -> None:
    _check(load_dataset(_write(tmp_path / name, _rows())).frame)


@pytest.mark.parametrize("name", FORMATS)
def test_words_are_text_and_only_null_or_an_empty_cell_is_missing_streamed(tmp_path: Path, name: str) -> None:
    stream = open_stream(_write(tmp_path / name, _rows()), batch_rows=3)
    _check(pd.concat([frame for _, frame in stream.batches()]).reset_index(drop=True))


def test_the_cell_readers_keep_words() -> None:
    for word in WORDS:
        assert text_cell(word) == word and text_cell(f" {word} ") == f" {word} "
        assert list_cell(word, ids=True) == [word]
    assert text_cell("") is None and text_cell("  ") is None and text_cell(None) is None
    assert list_cell("", ids=True) is None


@pytest.mark.parametrize("name", ["d.csv", "d.tsv", "d.jsonl", "d.json", "d.parquet"])
def test_an_answer_none_is_scored_and_a_query_id_nan_round_trips_through_evaluate(tmp_path, capsys, name) -> None:
    data = _write(tmp_path / name, _rows()[:-1])
    out = tmp_path / "out.jsonl"
    code, stdout, err = run_cli_streams(["evaluate", str(data), "--metrics", "answer_currency", "--out", str(out),
                                         "--no-progress"], capsys)
    assert code == 0, err
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["query_id"] for r in results] == WORDS
    assert all(r["score"] == 1.0 and r["reason_code"] is None for r in results), results
    assert "missing_input" not in stdout + err
