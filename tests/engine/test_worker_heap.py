"""A scoring worker's batch leaves no reference cycles (so the worker freezes what it leaves
before the collector is on again, without a collection), and the focus-time memo stays nearly
full once full (a full part makes room by a sixteenth of its limit, not by half)."""

from __future__ import annotations

import asyncio
import gc
import json
import math
import random

import tempo_eval.core.focus_memo as focus_memo
import tempo_eval.engine.pool as scoring_pool
from tempo_eval.common.process import gc_paused
from tempo_eval.core.extract import extract_dft as plain_extract
from tempo_eval.core.focus_memo import extract_dft, extraction_memo
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG


def _cells(n: int, start: int = 0) -> list[list[object]]:
    """Rows as a worker gets them: most scorable, some missing a cell, some failing (a context
    that is not a list of texts), some without a year."""
    rows: list[list[object]] = []
    for i in range(start, start + n):
        contexts: object = json.dumps([f"The hall opened in {1900 + i % 50}.", "It closed in 1975."])
        answer: object = f"It opened in {1900 + i % 50} and closed in {1970 + i % 9}."
        if i % 7 == 3:
            answer = math.nan  # missing_input
        if i % 11 == 5:
            contexts = json.dumps([1, 2])  # not texts: a row error, isolated and logged
        if i % 13 == 6:
            answer = "It is open."  # no temporal claim
        rows.append([f"q{i}", f"What happened to the hall in {1900 + i % 50}?", answer, contexts])
    return rows


def test_a_scored_batch_leaves_no_reference_cycles(caplog):
    metrics = {m.name: m for m in (TemporalFaithfulness(), TemporalNDCG(k=3))}
    loop = asyncio.new_event_loop()
    columns = ["query_id", "query", "answer", "contexts"]

    def score(cells):
        for row in cells:  # the loader's lists, as the stream hands them
            row[3] = json.loads(row[3])
        pending = [(i, list(metrics)) for i in range(len(cells))]
        return loop.run_until_complete(scoring_pool._score(metrics, [], 1, columns, cells, pending, "query_id", None))

    try:
        with extraction_memo():  # as `_serve` scores its batches
            # the first batch leaves what is made once (a few hundred objects: lazily built
            # classes and caches): the worker freezes it with the rest, once
            with gc_paused():
                score(_cells(120))
            gc.collect()
            with gc_paused():
                encoded = score(_cells(120, start=120))
                # what the batch left behind, unreachable but kept by a cycle: nothing
                assert gc.collect() == 0
    finally:
        loop.close()
    codes = {row[7] for row in encoded.results}
    assert {"missing_input", "row_error", "no_temporal_claims", None} <= codes
    assert len(encoded.results) == 2 * 120


def test_a_full_memo_makes_room_by_a_sixteenth_and_gives_the_same_focus_times(monkeypatch):
    monkeypatch.setattr(focus_memo, "RECENT_WHOLE", 8)
    texts = [f"Document {i} was written in {1850 + i % 170} and revised in {1900 + i % 97}." for i in range(400)]
    rng = random.Random(5)
    limit = 160
    with extraction_memo(limit=limit, recent_limit=10_000):
        memo = focus_memo._memo.get()
        for text in texts:  # each seen once, then again: all pass through `kept`
            extract_dft(text)
        fullest = []
        for _ in range(3000):
            text = rng.choice(texts)
            found = extract_dft(text)
            assert found == plain_extract(text) and [s.text for s in found.spans] == [s.text for s in plain_extract(text).spans]
            fullest.append(len(memo.kept))
        assert max(fullest) <= limit
        filled = fullest.index(limit)
        # once full, never less than 15/16 of its limit (by half, it fell to 80)
        assert min(fullest[filled:]) >= limit - limit // focus_memo.EVICT_PART

