"""The per-row speed-ups of issue 27 change no focus time, score, reason or detail: the code still
computes exactly what it computed before them, recorded in tests/data/recorded_results.json.gz
(`tests/data/build_recorded_results.py`: every labelled text under tests/data, the bench's rows, edge
cases, paired at random into rows, with and without reference dates)."""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest

from tempo_eval.core.extract import FocusTimeExtractor
from tempo_eval.engine.scoring import measure, measure_batch
from tempo_eval.store.packing import _details_json, _pack, _unpack
from tests.support.paths import TESTS
from tests.support.scripts import load_script

DATA = TESTS / "data"


def _builder():
    return load_script(DATA / "build_recorded_results.py")


_BUILDER = _builder()
metric_sets, result_record = _BUILDER.metric_sets, _BUILDER.result_record


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(gzip.decompress((DATA / "recorded_results.json.gz").read_bytes()))


def test_focus_times_are_those_recorded(golden: dict) -> None:
    extractor = FocusTimeExtractor()
    assert len(golden["focus"]) > 3000
    for text, ref, years, spans, reference_year in golden["focus"]:
        found = extractor.extract(text, ref)
        assert [repr(sorted(found.years)), repr(found.spans), repr(found.reference_year)] == [
            years, spans, reference_year
        ], (text, ref)


@pytest.mark.parametrize("name", ["default", "settings"])
def test_batch_results_are_those_recorded(golden: dict, name: str) -> None:
    metrics = dict(metric_sets())[name]
    rows = golden["rows"]
    scored = asyncio.run(measure_batch([(i, row, metrics) for i, row in enumerate(rows)]))
    expected = golden["results"][name]
    assert len(scored) == len(expected) == len(rows)
    for row, found, wanted in zip(rows, scored, expected, strict=True):
        assert [result_record(r) for r in found] == wanted, row["query_id"]


def test_row_by_row_results_are_those_recorded(golden: dict) -> None:
    """Outside a batch's memo (a metric scored row by row), the same results."""
    metrics = dict(metric_sets())["default"]
    rows = golden["rows"][::7]
    expected = golden["results"]["default"][::7]

    async def score() -> list[list]:
        return [[await measure(m, row, i) for m in metrics] for i, row in enumerate(rows)]

    for row, found, wanted in zip(rows, asyncio.run(score()), expected, strict=True):
        assert [result_record(r) for r in found] == wanted, row["query_id"]


def test_stored_details_read_back_as_computed(golden: dict) -> None:
    metrics = dict(metric_sets())["default"]
    rows = golden["rows"][:120]
    scored = asyncio.run(measure_batch([(i, row, metrics) for i, row in enumerate(rows)]))
    for results in scored:
        for result in results:
            text = _details_json(dict(result.details))
            assert json.loads(_unpack(_pack(text, details=True))) == json.loads(text)
            assert _unpack(_pack(text, details=True)) == text
