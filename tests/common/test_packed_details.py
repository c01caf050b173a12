"""Packed details (`tempo_eval.common.packed_details`, issue 27): rows scored to be stored keep the
focus-time metrics' details as a layout's values, the store writes those, and every reader gets
back exactly the details `metric.measure` returns (recorded in tests/data/packed_details_cases.json
by tests/data/build_packed_details_cases.py before the details were packed). Details stored in
the earlier formats are still read."""

from __future__ import annotations

import asyncio
import json
import pickle
import threading
import zlib

import pandas as pd
import pytest

from tempo_eval.common.packed_details import PackedDetails, expand, packing_details, year_runs
from tempo_eval.engine.scoring import measure_batch
from tempo_eval.io.dataset import Dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store import packing
from tempo_eval.store.packing import (
    _TAG_LAYOUT,
    _TAG_ZDICT_1,
    _ZDICT_1,
    _details_json,
    _maskable_when_packed,
    _pack,
    _pack_details,
    _unpack,
    _unpack_details,
    dumps,
)
from tempo_eval.store.results import RESULT_ROW_FIELDS, encode_rows
from tempo_eval.store.runs import RunStore
from tests.support.paths import TESTS
from tests.support.scripts import load_script

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")

DATA = TESTS / "data"


def _builder():
    return load_script(DATA / "build_packed_details_cases.py")


BUILDER = _builder()
CASES = json.loads((DATA / "packed_details_cases.json").read_text(encoding="utf-8"))


def _packed(case: dict) -> MetricResult:
    metric = BUILDER.metric(case["metric"], case["settings"])
    inputs = BUILDER._inputs(case["inputs"])

    async def score() -> MetricResult:
        with packing_details():
            return await metric.ameasure(**inputs)

    return asyncio.run(score())


def test_the_cases_are_those_the_builder_makes() -> None:
    assert [[c["metric"], c["settings"], c["inputs"]] for c in CASES] == json.loads(json.dumps(BUILDER.CASES))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['metric']}-{json.dumps(c['inputs'])[:40]}")
def test_measure_returns_the_details_it_returned_before_packing(case: dict) -> None:
    result = BUILDER.metric(case["metric"], case["settings"]).measure(**BUILDER._inputs(case["inputs"]))
    assert type(result.details) is dict  # the public shape: a plain dict
    assert BUILDER.record(result) == case["expected"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['metric']}-{json.dumps(c['inputs'])[:40]}")
def test_packed_details_read_back_as_the_details_measure_returns(case: dict) -> None:
    result = _packed(case)
    details = result.details
    assert type(details) is PackedDetails
    assert BUILDER.record(result) == case["expected"]  # score, reason, and the details read as a dict
    stored = _pack_details(details, [])
    assert stored[:1] == _TAG_LAYOUT
    assert _unpack(stored) == case["expected"]["json"]  # the same text as before, for every reader
    assert repr(_unpack_details(stored)) == case["expected"]["details"]
    assert repr(json.loads(case["expected"]["json"])) == repr(dict(details)) and dict(details) == details


def test_details_stored_before_packing_are_still_read() -> None:
    case = CASES[0]
    text = case["expected"]["json"]
    packer = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, _ZDICT_1)
    old_blob = _TAG_ZDICT_1 + packer.compress(text.encode("utf-8")) + packer.flush()
    for stored in (text, old_blob, _pack(text, details=True), b"z" + zlib.compress(text.encode("utf-8"))):
        assert _unpack(stored) == text
        assert repr(_unpack_details(stored)) == case["expected"]["details"]


def test_a_layout_this_version_lacks_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="layout 'tf/99', which this version cannot read"):
        _unpack_details(_TAG_LAYOUT + b'["tf/99", 1]')


def test_the_store_and_its_readers_give_back_what_measure_gives() -> None:
    frame = pd.DataFrame({
        "query_id": ["q1", "q2", "q3"],
        "query": [BUILDER.ROW["query"], "What happened in 1968?", "No time here?"],
        "answer": [BUILDER.ROW["answer"], "In 1968.", "Never."],
        "contexts": [BUILDER.ROW["contexts"], ["In 1968 it opened."], ["Undated."]],
    })
    metrics = [BUILDER.metric("tf", {}), BUILDER.metric("ndcg", {})]
    rows = frame.to_dict("records")
    scored = asyncio.run(measure_batch([(i, row, metrics) for i, row in enumerate(rows)]))
    store = RunStore()
    dataset = Dataset(frame=frame, name="d.csv", mapping={}, content_hash="h", source_format="csv")
    run_id, _ = store.create_or_resume_run(store.save_dataset(dataset), {"m": 1})
    store.record_rows(run_id, [(i, row["query_id"], results, None) for i, (row, results) in enumerate(zip(rows, scored, strict=True))])
    for i, (row, results) in enumerate(zip(rows, scored, strict=True)):
        for result, metric in zip(results, metrics, strict=True):
            assert type(result.details) is PackedDetails
            direct = metric.measure(**metric.inputs_from_row(row))
            stored = store.get_result(run_id, i, metric.name)
            assert type(stored.details) is dict
            assert repr((stored.score, stored.reason, stored.reason_code)) == repr(
                (result.score, result.reason, result.reason_code)) == repr((direct.score, direct.reason, direct.reason_code))
            assert repr(stored.details) == repr(direct.details) == repr(result.details)


def test_a_secret_in_a_span_is_masked_as_in_the_expanded_details() -> None:
    secret = "2020-05-01"  # a secret that a span holds (a date: no JSON punctuation in it)
    inputs = {"answer": "It opened on 2020-05-01.", "contexts": ["Opened 2020-05-01.", "Closed in 2021."]}
    full = BUILDER.metric("tf", {}).measure(**inputs)
    assert full.details["years"][0]["answer_spans"] == [secret]
    with packing_details():
        packed = BUILDER.metric("tf", {}).measure(**inputs).details
    assert _maskable_when_packed([secret, "sk-test-abcdefgh12345678"])
    stored = encode_rows(1, [(0, "q1", [MetricResult("temporal_faithfulness", 1.0, details=packed)], None)], [secret])
    blob = stored.results[0][RESULT_ROW_FIELDS.index("details")]
    assert blob[:1] == _TAG_LAYOUT and secret.encode() not in blob
    assert _unpack(blob) == _details_json(full.details).replace(secret, "***")


@pytest.mark.parametrize("secret", ["discounted", "grounded", "1990], [1", 'a", "b'])
def test_a_secret_that_could_straddle_expanded_keys_stores_the_details_expanded(secret: str) -> None:
    """A secret within a key, or holding JSON punctuation, is masked in the expanded JSON."""
    assert not _maskable_when_packed([secret])
    case = CASES[6]
    details = _packed(case).details
    stored = encode_rows(1, [(0, "q1", [MetricResult("temporal_ndcg", 0.5, details=details)], None)], [secret])
    blob = stored.results[0][RESULT_ROW_FIELDS.index("details")]
    assert blob[:1] != _TAG_LAYOUT
    assert _unpack(blob) == case["expected"]["json"].replace(secret, "***")


def test_packed_details_behave_as_the_dict() -> None:
    result = _packed(CASES[0])
    details = result.details
    expected = json.loads(CASES[0]["expected"]["json"])
    assert details == expected and expected == details and dict(details) == expected
    assert list(details) == list(expected) and len(details) == len(expected)
    assert details.get("claims") is None and details["aft"] == expected["aft"]
    assert pickle.loads(pickle.dumps(details)) == expected
    assert json.loads(dumps(result.to_dict()))["details"] == expected
    assert result == MetricResult(result.metric, result.score, result.reason, result.reason_code, expected)


def test_year_runs() -> None:
    assert year_runs([]) == []
    assert year_runs([1990]) == [1990, 1990]
    assert year_runs([1947, 1948, 1949, 1991, 2000, 2001]) == [1947, 1949, 1991, 1991, 2000, 2001]
    assert expand("ndcg_ft/1", [[], 0, None, 1, "linear", [1.0], 1, [], None, [], [], 0.0, 0.0,
                                [1947, 1949, 1991, 1991], 0, 0])["qft"] == [1947, 1948, 1949, 1991]


def test_the_details_encoder_is_not_shared_between_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads encoding at once each use their own encoder: none falls back to json.dumps (a
    shared encoder's circular-reference memo took another thread's call for a loop)."""
    import sys

    fallbacks = []
    real_dumps = json.dumps

    class CountingJson:
        def __getattr__(self, name):
            return getattr(json, name)

        @staticmethod
        def dumps(*args, **kwargs):
            fallbacks.append(1)
            return real_dumps(*args, **kwargs)

    monkeypatch.setattr(packing, "json", CountingJson())
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside the encoder (in `_jsonable`, for the sets)
    try:
        shared = {"years": [{"year": y, "sets": {y, y + 1, y + 2}, "spans": ["x"] * 3} for y in range(60)]}
        expected = real_dumps(shared, ensure_ascii=False, default=packing._jsonable)
        found: list[str] = []

        def work() -> None:
            found.extend(_details_json(shared) for _ in range(150))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert found == [expected] * 600
    assert fallbacks == []
