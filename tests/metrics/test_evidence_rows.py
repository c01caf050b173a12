"""The dataset-wide table of top-k documents, dates and ages (`evidence_table`, built column-wise)
lists exactly what each row's as-of metric lists in its details, row by row, hostile rows included."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from tempo_eval.metrics.evidence_age import FutureLeak
from tempo_eval.metrics.evidence_rows import COLUMNS, evidence_table
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof" / "news_asof.jsonl"

HOSTILE = [
    # duplicate ids: the first keeps its rank and date; an undated document
    {"retrieved_ids": ["a", "b", "a", "c"], "context_dates": ["2023-01-03", "2023", "1999", None],
     "reference_date": "2023-01-10"},
    # no ids: documents are list positions; a month interval, an RFC 2822 date, a year as a number
    {"contexts": ["x", "y", "z"], "context_dates": ["2023-02", "Fri, 06 Jan 2023 23:30:00 -0500", 2022],
     "reference_date": "6 January 2023"},
    # 2023.0 is no date: the row is left out, as its metrics fail
    {"retrieved_ids": ["a"], "context_dates": [2023.0], "reference_date": "2023-01-10"},
    # an unreadable date past the cutoff still leaves the row out (the metrics read every date)
    {"retrieved_ids": ["a", "b"], "context_dates": ["2023-01-01", "soon"], "reference_date": "2023-01-10"},
    # not aligned: left out
    {"retrieved_ids": ["a", "b"], "context_dates": ["2023-01-01"], "reference_date": "2023-01-10"},
    # no as-of date: ages unknown, documents listed
    {"retrieved_ids": ["a", "b"], "context_dates": ["2023-01-01", "2022-12-01"]},
    # an unreadable as-of date: left out
    {"retrieved_ids": ["a"], "context_dates": ["2023-01-01"], "reference_date": "someday"},
    # no dates cell: nothing
    {"retrieved_ids": ["a"], "reference_date": "2023-01-10"},
    # empty lists
    {"retrieved_ids": [], "context_dates": [], "reference_date": "2023-01-10"},
]


def frame_of(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, dtype=object)
    frame["query_id"] = [f"q{i}" for i in range(len(frame))]
    return frame.astype(object).where(frame.notna(), None)


def missing_as_none(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def expected(frame: pd.DataFrame, k: int) -> list[dict]:
    """What each row's Future leak@k lists in its details, as table lines."""
    lines = []
    metric = FutureLeak(k=k)
    for position, row in enumerate(frame.to_dict(orient="records")):
        if not isinstance(row.get("context_dates"), list):
            continue
        try:
            result = metric.measure(**metric.inputs_from_row(row))
        except ValueError:
            continue
        for entry in result.details["ranks"]:
            lines.append({"row": position, "rank": entry["rank"], "doc": entry["doc"], "date": entry["date"],
                          "age": math.nan if entry["age"] is None else float(entry["age"]),
                          "future": entry["future"], "as_of": result.details["as_of"]})
    return lines


@pytest.mark.parametrize("k", [1, 2, 10])
def test_the_table_lists_what_each_rows_metrics_list(k) -> None:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    canonical = [{"retrieved_ids": r["retrieved_ids"], "context_dates": r["published"],
                  "reference_date": r["question_date"], "run": r["run"]} for r in rows]
    frame = frame_of(canonical + HOSTILE)
    table = evidence_table(frame, k)
    assert list(table.columns) == COLUMNS
    got = table[["row", "rank", "doc", "date", "age", "future", "as_of"]].to_dict(orient="records")
    want = expected(frame, k)
    assert len(got) == len(want)
    for line, entry in zip(got, want, strict=True):
        assert {key: missing_as_none(line[key]) for key in entry} == {key: missing_as_none(entry[key]) for key in entry}
    hostile = set(table["row"]) - set(range(len(canonical)))
    assert hostile == {len(canonical) + i for i in (0, 1, 5)}  # the rows the metrics can read
    first = table[table["row"] == len(canonical)]
    assert list(first["doc"])[:3] == ["a", "b", "c"][:min(k, 3)]
    years = table[table["row"] == len(canonical) + 1]
    assert list(years["year"])[:3] == [2023, 2023, 2022][:min(k, 3)]  # the RFC date in UTC: 7 January


def test_a_frame_without_dates_gives_an_empty_table() -> None:
    assert evidence_table(pd.DataFrame({"query_id": ["q1"]}), 10).empty
