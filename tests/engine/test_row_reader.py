"""A batch reads each metric's inputs with `Metric.row_reader` (made once per batch's columns):
the same inputs, the same results and the same missing-input messages as `inputs_from_row`
row by row, in every mode the columns choose."""

from __future__ import annotations

import asyncio
import math

import pytest

from tempo_eval.engine.scoring import measure_batch, measure_row
from tempo_eval.metrics.evidence_age import FutureLeak
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

ROWS = [
    {"query_id": "q1", "query": "What happened in the 1990s?", "answer": "It reopened in 1994.",
     "contexts": ["The hall reopened in 1994.", "It burned down in 1921."]},
    {"query_id": "q2", "query": "When?", "answer": "No year here.", "contexts": ["Built in 1850."]},
    {"query_id": "q3", "query": None, "answer": "In 2001 it closed.", "contexts": ["Closed in 2001."]},
    {"query_id": "q4", "query": "During World War II?", "answer": float("nan"), "contexts": ["In 1942."]},
    {"query_id": "q5", "query": "In 1990?", "answer": "In 1990.", "contexts": None},
    {"query_id": "q6", "query": "In 1990?", "answer": "In 1990.", "contexts": "not a list"},
]
GOLD_ROWS = [
    {"query_id": "q1", "retrieved_ids": ["a", "b", "c"], "gold_ids": ["b"]},
    {"query_id": "q2", "retrieved_ids": ["a"], "gold_ids": None},
    {"query_id": "q3", "retrieved_ids": None, "gold_ids": ["a"]},
]


def _plain(result):
    score = None if result.score is None or math.isnan(result.score) else result.score
    return (result.metric, score, result.reason, result.reason_code, dict(result.details or {}))


def _both_ways(metrics, rows):
    batch = asyncio.run(measure_batch([(i, row, metrics) for i, row in enumerate(rows)]))
    alone = [asyncio.run(measure_row(metrics, row, i)) for i, row in enumerate(rows)]
    return [[_plain(r) for r in results] for results in batch], [[_plain(r) for r in results] for results in alone]


@pytest.mark.parametrize("rows", [ROWS, GOLD_ROWS], ids=["text", "gold"])
def test_a_batch_scores_as_row_by_row(rows):
    batch, alone = _both_ways([TemporalFaithfulness(), TemporalNDCG(), TemporalNDCG(mode="focus_time")], rows)
    assert batch == alone
    assert any(r[3] == "missing_input" for results in batch for r in results)


def test_the_reader_gives_what_inputs_from_row_gives():
    for metric in (TemporalFaithfulness(), TemporalNDCG(), TemporalNDCG(mode="gold"), FutureLeak()):
        for rows in (ROWS, GOLD_ROWS):
            read = metric.row_reader(tuple(rows[0]))
            for row in rows:
                try:
                    expected = metric.inputs_from_row(row)
                except Exception as error:  # the same exception, the same message
                    with pytest.raises(type(error)) as raised:
                        read(row)
                    assert str(raised.value) == str(error)
                else:
                    assert read(row) == expected


def test_a_metric_that_reads_rows_its_own_way_keeps_its_reader():
    metric = FutureLeak()
    assert metric.row_reader(("query_id", "contexts")) == metric.inputs_from_row


def test_a_subclass_that_reads_rows_its_own_way_keeps_it_in_a_batch():
    class Renamed(TemporalNDCG):
        def inputs_from_row(self, row):
            return super().inputs_from_row({**row, "query": row["question"]})

    class Plain(TemporalNDCG):  # inherits both: the reader made once per batch
        pass

    rows = [{"query_id": "q1", "question": "In the 1990s?", "contexts": ["It opened in 1994."]}]
    metric = Renamed()
    assert metric.row_reader(tuple(rows[0])) == metric.inputs_from_row
    assert Plain().row_reader(("query", "contexts")) != Plain().inputs_from_row
    [[result]] = asyncio.run(measure_batch([(0, rows[0], [metric])]))
    assert result.score == 1.0
