"""The command line's summary reads the run's results once, on their way to --out: what it gathers
(`ScoresOf`) is the frame `RunStore.scores_frame` reads, NaN results and several parts included."""

from __future__ import annotations

import math

import pandas as pd
from pandas.testing import assert_frame_equal

from tempo_eval.cli.evaluate import ScoresOf
from tempo_eval.common.schema import MetricResult, not_measurable
from tempo_eval.engine.scoring import aggregate_frame
from tempo_eval.store.runs import RunStore


def _store_with_results(tmp_path, n: int) -> tuple[RunStore, int]:
    store = RunStore(tmp_path / "ws.sqlite")
    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(n)], "query": ["In 1999?"] * n})
    from tempo_eval.io.dataset import Dataset

    dataset_id = store.save_dataset(Dataset(frame=frame, name="d", content_hash="h" * 64, mapping={}, source_format="csv"))
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": ["a", "b"]}, name="r")
    rows = []
    for i in range(n):
        first = (not_measurable("b_metric", "no_temporal_claims", f"nothing in row {i}") if i % 3 == 0
                 else MetricResult(metric="b_metric", score=i / n, reason=f"b of row {i}"))
        second = (not_measurable("a_metric", "row_error", "boom") if i % 5 == 0
                  else MetricResult(metric="a_metric", score=math.sqrt(i), reason=f"a of row {i}"))
        rows.append((i, f"q{i}", [first, second], None))
    store.record_rows(run_id, rows)
    return store, run_id


def test_the_gathered_scores_are_the_stores_scores_frame(tmp_path):
    store, run_id = _store_with_results(tmp_path, 50)
    scores = ScoresOf()
    parts = list(scores.gather(store.results_frames(run_id, rows_per_frame=7)))
    assert len(parts) == 8 and sum(map(len, parts)) == 100  # every part passed on
    gathered, expected = scores.frame(), store.scores_frame(run_id)
    assert_frame_equal(gathered, expected)
    assert expected["reason_code"].notna().sum() == 17 + 10  # the NaN results' codes only
    assert_frame_equal(aggregate_frame(gathered, metrics=["b_metric", "a_metric"]),
                       aggregate_frame(store.results_frame(run_id), metrics=["b_metric", "a_metric"]))


def test_no_results_give_an_empty_frame_like_the_stores(tmp_path):
    store = RunStore(tmp_path / "ws.sqlite")
    scores = ScoresOf()
    assert list(scores.gather(iter([]))) == []
    assert_frame_equal(scores.frame(), store.scores_frame(12345))
