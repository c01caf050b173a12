"""A dataset file evaluated as a stream is stored with one call into the store a batch: the
record is made (or found) once, each batch's rows are written by one call that packs them once,
and the last batch's call completes the dataset (no separate call at the end). The runner
resumes the stream once a batch. The dataset stored is the file's, complete, with its warnings;
one left incomplete (a run killed part way) is found again and its rows written again."""

from __future__ import annotations

import json
import sys
import threading
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.stream import open_stream
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.runs import RunStore


class _Calls:
    """Counts the calls (and generator resumes) from one module into another, by the caller's
    frame: {(caller module, called module): n}."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()

    def __call__(self, frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if event != "call" or frame.f_back is None:
            return
        called, caller = frame.f_globals.get("__name__", ""), frame.f_back.f_globals.get("__name__", "")
        if called != caller and called.startswith("tempo_eval") and caller.startswith("tempo_eval"):
            self.counts[caller, called] += 1

    def __enter__(self) -> _Calls:
        sys.setprofile(self)
        threading.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def _csv(path: Path, n: int) -> Path:
    pd.DataFrame([{"query_id": f"q{i}", "query": f"What happened in {1990 + i % 30}?",
                   "retrieved_ids": json.dumps([f"d{i}", f"e{i}"]), "gold_ids": json.dumps({f"d{i}": 2}),
                   "reference": ""} for i in range(n)]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("batches", [1, 3])
def test_a_streamed_dataset_is_stored_by_one_call_a_batch_the_last_completing_it(
    tmp_path: Path, workspace_db: str, batches: int
) -> None:
    path = _csv(tmp_path / "data.csv", 25)
    store = RunStore(workspace_db)
    stream = open_stream(path, batch_rows=25 if batches == 1 else 10)
    with _Calls() as calls:
        result = evaluate(stream, [TemporalNDCG()], store=store)
    runner = "tempo_eval.engine.runner"
    assert calls.counts[runner, "tempo_eval.store.datasets"] == 1 + batches  # the record, then one a batch
    assert calls.counts["tempo_eval.store.datasets", "tempo_eval.store.packing"] == 1 + batches
    assert calls.counts[runner, "tempo_eval.io.stream"] == batches  # batches(), then one resume a batch after the first
    whole = load_dataset(path)
    info = store.dataset_info(result.dataset_id)
    assert (info["n_rows"], info["warnings"]) == (25, whole.warnings)
    assert store.find_dataset(whole.content_hash, whole.mapping) == result.dataset_id
    pd.testing.assert_frame_equal(store.dataset_frame(result.dataset_id), whole.frame.astype(object))
    assert store.begin_dataset(name="data.csv", content_hash=whole.content_hash, mapping=whole.mapping,
                               source_format="csv") == (result.dataset_id, True)


def test_a_dataset_left_incomplete_is_found_again_and_its_rows_written_again(tmp_path: Path, workspace_db: str) -> None:
    path = _csv(tmp_path / "data.csv", 25)
    store = RunStore(workspace_db)
    killed = open_stream(path, batch_rows=10)
    dataset_id, complete = store.begin_dataset(name=killed.name, content_hash=killed.content_hash,
                                               mapping=killed.mapping, source_format=killed.source_format)
    assert not complete
    offset, frame = next(iter(killed.batches()))
    store.add_dataset_rows(dataset_id, offset, frame)  # the first batch stored, then the process died
    store.add_dataset_rows(dataset_id, 40, frame)  # rows of a longer earlier read, past the file's end
    result = evaluate(open_stream(path, batch_rows=10), [TemporalNDCG()], store=store)
    assert result.dataset_id == dataset_id
    whole = load_dataset(path)
    assert store.dataset_info(dataset_id)["n_rows"] == 25
    pd.testing.assert_frame_equal(store.dataset_frame(dataset_id), whole.frame.astype(object))
