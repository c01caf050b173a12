"""The hand-inlined forms of the metrics' math (issue 27, CPU per row) give exactly, bit for bit,
what the plain functions give, on varied random inputs."""

from __future__ import annotations

import math
import random

from tempo_eval.core.extract import FocusTimeExtractor
from tempo_eval.core.focus import FocusTime, YearSpan
from tempo_eval.metrics.ndcg import discount, gain_list, year_set_relevance
from tempo_eval.metrics.temporal_faithfulness import _span_texts, focus_time_faithfulness
from tempo_eval.metrics.temporal_ndcg import _relevances
from tests.support.ndcg_curves import dcg_curve, gain

RNG = random.Random(11)


def _years() -> set[int]:
    first = RNG.randint(1800, 2100)
    return {RNG.randint(first, first + RNG.choice([0, 3, 10, 100])) for _ in range(RNG.randint(0, 12))}


def test_relevances_are_year_set_relevance() -> None:
    for _ in range(2000):
        query, docs = _years(), [_years() for _ in range(RNG.randint(0, 8))]
        expected = [year_set_relevance(query, d) if query else 0.0 for d in docs]
        assert _relevances(query, docs) == expected
        assert _relevances(frozenset(query), [frozenset(d) for d in docs]) == expected


def test_gain_list_is_gain() -> None:
    values = [0.0, -1.0, 1, 2, 3.5, 4.0, math.nan, math.inf, 1e-300, 0.36363636363636365, True]
    for kind in ("linear", "exponential"):
        found, expected = gain_list(values, kind), [gain(v, kind) for v in values]
        assert [repr(x) for x in found] == [repr(x) for x in expected]


def test_dcg_curve_is_the_sum_of_discounted_gains() -> None:
    for _ in range(500):
        gains = [RNG.choice([0.0, 1.0, 4.0 * RNG.random(), -1.0]) for _ in range(RNG.randint(0, 30))]
        k = RNG.randint(1, 1100)
        expected, total = [], 0.0
        for i in range(k):
            if i < len(gains) and gains[i] > 0:
                total += gains[i] / math.log2(i + 2)
            expected.append(total)
        assert dcg_curve(gains, k) == expected
    assert [discount(rank) for rank in (1, 2, 10, 1024, 1025, 5000)] == [
        1.0 / math.log2(rank + 1) for rank in (1, 2, 10, 1024, 1025, 5000)
    ]


def test_faithfulness_is_the_share_of_grounded_years() -> None:
    for _ in range(2000):
        answer, contexts = _years(), [_years() for _ in range(RNG.randint(1, 6))]
        if answer:
            grounded = [y for y in sorted(answer) if any(y in c for c in contexts)]
            assert len(grounded) / len(answer) == focus_time_faithfulness(answer, contexts)


def test_span_texts_are_the_spans_for_the_year() -> None:
    extractor = FocusTimeExtractor()
    text = "From 1000 to 1500, then 1914-18, the 1990s, in 2001 and the 19th century; 2020-2021."
    focus = extractor.extract(text)
    assert any(span.capped for span in focus.spans)
    spans = [*focus.spans, YearSpan(0, 4, "From", 1200, 1300, "range", True)]
    focus = FocusTime(years=focus.years | {1200, 1300}, spans=spans, text=text)

    class Sub(FocusTime):
        pass

    sub = Sub(years=focus.years, spans=spans, text=text)
    for year in range(990, 2030):
        expected = [span.text for span in focus.spans_for(year)]
        assert _span_texts(focus, year) == expected
        assert _span_texts(sub, year) == expected
    assert _span_texts({1990}, 1990) == []
