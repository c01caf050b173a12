"""The per-row short cuts of the focus-time metrics (issue 27, worker CPU outside extraction) give
exactly what the plain computations they replace give: each is checked against that computation,
on the cases the short cut skips (no gain, one run of years, ranks past the lookup tables, spans
that are ranges or capped) and on those it does not. The golden tests (tests/engine/test_recorded_results.py,
tests/common/test_packed_details.py) pin the metrics' results as a whole."""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from tempo_eval.common.packed_details import year_runs
from tempo_eval.common.values import require_text_list
from tempo_eval.core.focus import FocusTime, YearSpan
from tempo_eval.metrics import ndcg
from tempo_eval.metrics.temporal_faithfulness import (
    TemporalFaithfulness,
    _span_texts,
    _spans_by_year,
)
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG, _curve, _relevances
from tempo_eval.store.packing import _details_json
from tests.support.ndcg_curves import dcg_curve_unchecked, ndcg_of_curves


def _plain_dcg(gains: list[float], k: int) -> list[float]:
    curve, total = [], 0.0
    for i in range(min(k, len(gains))):
        if gains[i] > 0:
            total += gains[i] / math.log2(i + 2)
        curve.append(total)
    return curve + [total] * (k - len(curve))


@pytest.mark.parametrize("n", [0, 1, 5, 1023, 1024, 1025, 1500])
def test_dcg_curve_and_discounted_gains_are_the_plain_sums_past_the_lookup_tables(n: int) -> None:
    rng = random.Random(n)
    gains = [rng.choice([0.0, 0.0, -1.0, rng.random() * 4]) for _ in range(n)]
    for k in (1, n + 3):
        assert dcg_curve_unchecked(gains, k) == _plain_dcg(gains, k)
    assert ndcg.discounted_gains(gains, n) == [gains[i] * ndcg.discount(i + 1) for i in range(n)]
    assert ndcg.discounted_gains(gains, n) == [gains[i] * (1.0 / math.log2(i + 2)) for i in range(n)]


@pytest.mark.parametrize("gains", [[], [0.0], [0.0, 0.0, -0.0], [0.0, 1.5, 0.0], [-1.0, 0.0]])
def test_a_ranking_without_gain_has_the_curve_the_sums_give(gains: list[float]) -> None:
    for k in (1, 3, 2000):
        depth = min(k, max(len(gains), 1))
        dcg = dcg_curve_unchecked(gains, depth)
        idcg = dcg_curve_unchecked(sorted(gains, reverse=True), depth)
        expected = (ndcg_of_curves(dcg, idcg), min(k, max(depth, 1000)), dcg[-1], idcg[-1])
        assert repr(_curve(k, gains, gains)) == repr(expected)
        assert repr(_curve(k, gains, list(gains))) == repr(expected)


def test_linear_gains_are_the_relevances() -> None:
    query = {1990, 1991, 1992}
    relevances = _relevances(query, [{1990}, set(), {1850, 1991, 1992, 1993}, {1700}])
    assert ndcg.gain_list(relevances, "linear") == relevances
    assert repr(ndcg.gain_list(relevances, "linear")) == repr(relevances)


@pytest.mark.parametrize("years", [[], [1990], [1990, 1991, 1992], [1947, 1948, 1949, 1991, 2000, 2001], [5, 7]])
def test_year_runs_of_one_run_and_of_several(years: list[int]) -> None:
    runs = year_runs(years)
    assert [y for first, last in zip(runs[::2], runs[1::2], strict=True) for y in range(first, last + 1)] == years
    assert all(runs[i] + 1 < runs[i + 1] for i in range(1, len(runs) - 1, 2))  # runs do not touch


def _span(first: int, last: int, text: str, capped: bool = False) -> YearSpan:
    return YearSpan(0, len(text), text, first, last, "range" if first != last else "year", capped)


def test_answer_spans_in_one_pass_are_those_each_year_finds() -> None:
    spans = [_span(1990, 1990, "1990"), _span(1985, 1995, "1985-1995"), _span(1800, 2000, "1800-2000", capped=True),
             _span(1990, 1990, "in 1990"), _span(2000, 2000, "2000"), _span(1700, 1700, "1700", capped=True)]
    focus = FocusTime(years={1700, 1800, 1990, 1985, 1995, 2000, 1991}, spans=spans)
    ordered = [1700, 1800, 1984, 1985, 1990, 1991, 1995, 2000, 2001]
    assert _spans_by_year(focus, ordered) == [_span_texts(focus, year) for year in ordered]
    assert _spans_by_year({1990, 1991}, [1990, 1991]) == [[], []]  # a plain set of years has no spans


def test_the_checked_mode_follows_the_settings_when_they_change() -> None:
    metric = TemporalNDCG()
    inputs = {"query": "What happened in 1990?", "contexts": ["In 1990 it opened."]}
    assert metric.measure(**inputs).details["mode"] == "focus_time"

    class Judge:
        model_id = "judge"

        async def ajudge(self, prompt: str, schema: type) -> object:
            class Reply:
                ok, data = True, schema(relevance_score=4, reasoning="")
            return Reply()

    metric.llm = Judge()
    assert metric.measure(**inputs).details["mode"] == "llm"
    metric.mode = "focus_time"
    assert metric.measure(**inputs).details["mode"] == "focus_time"
    with pytest.raises(ValueError, match="gold mode does not use contexts, query"):
        TemporalNDCG(mode="gold").measure(gold_ids=["d1"], retrieved_ids=["d1"], **inputs)
    with pytest.raises(ValueError, match="gold mode does not use contexts, query"):  # the same call, refused again
        TemporalNDCG(mode="gold").measure(gold_ids=["d1"], retrieved_ids=["d1"], **inputs)


def test_text_lists_are_checked_as_before() -> None:
    class Text(str):
        pass

    texts = ["a", "b"]
    assert require_text_list(texts, "contexts") == texts and require_text_list(texts, "contexts") is not texts
    assert require_text_list([Text("a")], "contexts") == ["a"]
    assert require_text_list(("a",), "contexts") == ["a"]
    assert require_text_list([], "contexts") == []
    with pytest.raises(TypeError, match=r"contexts\[1\] must be a string, got int"):
        require_text_list(["a", 1], "contexts")
    with pytest.raises(TypeError, match="not a set"):
        require_text_list({"a"}, "contexts")


def test_packed_values_with_a_loop_are_refused_as_json_refuses_them() -> None:
    values: list = ["tf/1"]
    values.append(values)
    with pytest.raises(ValueError, match="Circular reference"):
        _details_json(values, compact=True)
    assert _details_json(["tf/1", None, [1990], [[1.5]], "é"], compact=True) == '["tf/1",null,[1990],[[1.5]],"é"]'


def test_a_row_missing_its_contexts_is_named_in_the_message() -> None:
    from tempo_eval.metrics.base import MissingInput

    row = {"query_id": "q1", "query": "In 1990?", "answer": "1990.", "contexts": None}
    for metric in (TemporalFaithfulness(), TemporalNDCG()):
        with pytest.raises(MissingInput, match="no 'contexts' value"):
            metric.inputs_from_row(row)
    assert TemporalNDCG().inputs_from_row({**row, "contexts": ["x"]}) == {"query": "In 1990?", "contexts": ["x"]}
    assert asyncio.run(TemporalNDCG().ameasure(**TemporalNDCG().inputs_from_row({**row, "contexts": ["x"]}))).score == 0.0
