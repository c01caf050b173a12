"""Datasets have one reader: `load_dataset` of a file is the collected stream of `open_stream`,
and a file the streaming readers cannot take is read whole inside the stream module, by the same
canonical conversion, never by calling back into `load_dataset`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

import tempo_eval.io.dataset as dataset_module
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream

ROWS = [{"query_id": f"q{i}", "query": f"When {i}?", "answer": f"In {1990 + i}.", "retrieved_ids": ["d1", "d2"]}
        for i in range(5)]


def _files(tmp_path: Path) -> list[Path]:
    csv = tmp_path / "d.csv"
    pd.DataFrame([{**r, "retrieved_ids": json.dumps(r["retrieved_ids"])} for r in ROWS]).to_csv(csv, index=False)
    jsonl = tmp_path / "d.jsonl.gz"
    jsonl.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in ROWS).encode()))
    wrapped = tmp_path / "wrapped.json"  # pandas' split orient: read whole ({"data": [...]} is streamed)
    wrapped.write_text(json.dumps({"columns": list(ROWS[0]), "data": [list(r.values()) for r in ROWS]}), encoding="utf-8")
    return [csv, jsonl, wrapped]


def test_a_file_streamed_and_loaded_gives_one_dataset_and_the_stream_never_calls_load_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in _files(tmp_path):
        loaded = load_dataset(path)
        with monkeypatch.context() as patched:
            patched.setattr(dataset_module, "load_dataset", lambda *a, **k: pytest.fail("the stream called load_dataset"))
            stream = open_stream(path, batch_rows=2)
            frame = pd.concat([f for _, f in stream.batches()], ignore_index=True)
        pd.testing.assert_frame_equal(frame, loaded.frame, check_dtype=False)
        assert (stream.content_hash, stream.mapping, stream.warnings) == (
            loaded.content_hash, loaded.mapping, loaded.warnings)
        assert stream.read_whole == (path.name == "wrapped.json")
        assert loaded.frame["retrieved_ids"][0] == ["d1", "d2"]


def test_bytes_and_a_file_of_the_same_content_are_one_dataset(tmp_path: Path) -> None:
    for path in _files(tmp_path):
        from_file, from_bytes = load_dataset(path), load_dataset(path.read_bytes(), name=path.name)
        pd.testing.assert_frame_equal(from_file.frame, from_bytes.frame, check_dtype=False)
        assert from_file.content_hash == from_bytes.content_hash and from_file.warnings == from_bytes.warnings


def test_a_bad_cell_names_file_row_and_column_on_both_doors(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({**ROWS[1], "query_id": "q0"}) + "\n", encoding="utf-8")
    for source in (path, path.read_bytes()):
        with pytest.raises(InputError) as caught:
            load_dataset(source, name="bad.jsonl")
        assert caught.value.source == "bad.jsonl" and caught.value.row == 2 and caught.value.column == "query_id"
