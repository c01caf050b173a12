"""The runner freezes the heap between offline batches (so the cyclic collector does not rescan
the extraction memo again and again) and leaves the collector as it found it."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pandas as pd

import tempo_eval.engine.pool as scoring_pool
import tempo_eval.engine.runner as runner
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.stream import open_stream
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.runs import RunStore


def _csv(path: Path, n: int) -> Path:
    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n)],
        "query": [f"What happened in {1990 + i % 20}?" for i in range(n)],
        "answer": [f"It opened in {1990 + i % 20} and closed in {2000 + i % 9}." for i in range(n)],
        "contexts": [json.dumps([f"Built in {1980 + i % 30}.", "The archive opened in 1995."]) for i in range(n)],
    })
    frame.to_csv(path, index=False)
    return path


def _scores(store: RunStore, run_id: int) -> list[tuple]:
    frame = store.results_frame(run_id)
    return list(frame[["row", "metric", "score", "reason"]].itertuples(index=False))


def test_the_heap_is_frozen_between_batches_and_unfrozen_after_the_run(tmp_path, monkeypatch):
    path = _csv(tmp_path / "d.csv", 50)
    frozen_during: list[int] = []
    settle_batches = runner.heap_settled_per_batch

    def watching():
        context = settle_batches()

        class Watch:
            def __enter__(self):
                settle = context.__enter__()

                def watched(online):
                    assert online is False  # focus-time metrics: every batch scored together
                    settle(online)
                    frozen_during.append(gc.get_freeze_count())

                return watched

            def __exit__(self, *exc):
                return context.__exit__(*exc)

        return Watch()

    monkeypatch.setattr(runner, "heap_settled_per_batch", watching)
    monkeypatch.setattr(scoring_pool, "_FULL_COLLECT_BATCHES", 3)
    gc.unfreeze()
    store = RunStore(tmp_path / "ws.sqlite")
    result = evaluate(open_stream(path, batch_rows=7), [TemporalFaithfulness(), TemporalNDCG(k=3)], store=store)
    assert result.n_rows == 50 and len(frozen_during) == 8
    assert all(count > 0 for count in frozen_during)
    assert gc.get_freeze_count() == 0 and gc.isenabled()

    # the same scores as a run without any of it (the collector off, nothing frozen)
    gc.disable()
    try:
        plain_store = RunStore(tmp_path / "plain.sqlite")
        plain = evaluate(open_stream(path, batch_rows=50), [TemporalFaithfulness(), TemporalNDCG(k=3)],
                         store=plain_store)
    finally:
        gc.enable()
    assert _scores(store, result.run_id) == _scores(plain_store, plain.run_id)


def test_a_heap_frozen_by_someone_else_is_left_frozen(tmp_path):
    path = _csv(tmp_path / "d.csv", 20)
    sentinel = [object()]  # a container the collector tracks, frozen with the rest
    gc.freeze()
    try:
        evaluate(open_stream(path, batch_rows=5), [TemporalFaithfulness()], store=RunStore(tmp_path / "ws.sqlite"))
        # still in the permanent generation: get_objects lists generations 0-2 only
        assert gc.get_freeze_count() > 0
        assert not any(found is sentinel for found in gc.get_objects())
    finally:
        gc.unfreeze()
