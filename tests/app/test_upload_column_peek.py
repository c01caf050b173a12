"""The Datasets page's column peek of a JSON upload names the columns the reader reads."""

from __future__ import annotations

import json

from tempo_eval_app import uploads

ROWS = [{"query": f"q{i}", "answer": "a", "gold_ids": ["d1"]} for i in range(5)]


def test_the_peek_of_a_data_document_reads_the_records_under_data_not_the_first_list() -> None:
    document = json.dumps({"meta": ["made by x"], "data": ROWS}).encode()
    assert uploads.peek_columns(document, "rows.json") == ["query", "answer", "gold_ids"]


def test_the_peek_of_a_cut_data_document_reads_its_complete_records() -> None:
    document = json.dumps({"meta": ["made by x"], "data": ROWS}).encode()
    cut = document[: document.index(b'"q3"')]
    assert uploads._columns_of_text(cut, "rows.json", cut=True) == ["query", "answer", "gold_ids"]


def test_the_peek_of_an_array_and_of_other_objects_is_as_before() -> None:
    assert uploads.peek_columns(json.dumps(ROWS).encode(), "rows.json") == ["query", "answer", "gold_ids"]
    deepeval = {"testCases": [{"input": "q", "actualOutput": "a"}]}
    assert uploads.peek_columns(json.dumps(deepeval).encode(), "run.json") == ["input", "actualOutput"]
    assert uploads.peek_columns(json.dumps({"query": {"0": "q"}}).encode(), "cols.json") == []
