"""The cheaper ways of storing results and reading a file for streaming (issue 27) give what the
plain ways give: the same details text, the same compressed bytes, the same misplaced-quote test."""

from __future__ import annotations

import json
import random
import threading
import zlib

import pytest

from tempo_eval.io._prepass import _misplaced_pattern, scan_text
from tempo_eval.io.delimited import misplaced_quote
from tempo_eval.store.packing import (
    _DETAILS_MEMLEVEL,
    _DETAILS_WBITS,
    _TAG_ZDICT_1,
    _ZDICT_1,
    _details_json,
    _jsonable,
    _pack,
    _unpack,
)

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")

DETAILS = [
    {"mode": "focus_time", "reference_date": None, "aft": [1990, 1991], "dfts": [[1990], []],
     "years": [{"year": 1990, "grounded": True, "contexts": [0], "answer_spans": ["in 1990"]}]},
    {"curve": [0.0, 1.0, 0.6309297535714575, float("nan"), float("inf")], "k": 10, "x": 1e16, "y": -0.0},
    {"text": "naïve “quotes” \u2028 \x00 \\ \" é 日本", "nested": {"a": [1, 2.5, None, True, False]}},
    {"set": {3, 1, 2}, "tuple": (1, 2), "date": __import__("datetime").date(2024, 6, 1)},
    {},
    {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},
]


@pytest.mark.parametrize("details", DETAILS)
def test_details_json_is_json_dumps(details: dict) -> None:
    assert _details_json(details) == json.dumps(details, ensure_ascii=False, default=_jsonable)


def test_details_json_after_a_failure_is_json_dumps_again() -> None:
    class Loop(dict):
        pass

    circular: dict = {"a": []}
    circular["a"].append(circular)
    with pytest.raises(ValueError, match="Circular"):
        _details_json(circular)
    unencodable = {"a": [1, {"b": object()}]}
    assert _details_json(unencodable) == json.dumps(unencodable, ensure_ascii=False, default=_jsonable)
    for details in DETAILS:  # nothing of the failed calls is left behind
        assert _details_json(details) == json.dumps(details, ensure_ascii=False, default=_jsonable)
    assert _details_json(Loop(a=1)) == '{"a": 1}'


def test_details_json_passes_an_interruption_on_and_encodes_right_after_it() -> None:
    calls = []

    def interrupted(value):  # Ctrl-C arriving while a value is encoded
        calls.append(value)
        raise KeyboardInterrupt

    class Odd:
        pass

    import tempo_eval.store.packing as packing

    original = packing._jsonable
    encoders = packing._encoders.encoder  # this thread's
    packing._jsonable = interrupted
    try:
        encoders[False] = packing._make_details_encoder()  # with the interrupting fallback
        with pytest.raises(KeyboardInterrupt):
            _details_json({"a": Odd()})
        assert len(calls) == 1  # not encoded a second time by the json.dumps fallback
    finally:
        packing._jsonable = original
        encoders[False] = packing._make_details_encoder()
    for details in DETAILS:
        assert _details_json(details) == json.dumps(details, ensure_ascii=False, default=_jsonable)


def test_details_json_from_threads() -> None:
    shared = {"years": [{"year": y, "spans": ["x"] * 3} for y in range(50)]}
    expected = json.dumps(shared, ensure_ascii=False)
    found: list[str] = []

    def work() -> None:
        found.extend(_details_json(shared) for _ in range(200))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [expected] * 800


def _pack_with_a_new_compressor(text: str) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, _DETAILS_WBITS, _DETAILS_MEMLEVEL, zlib.Z_DEFAULT_STRATEGY, _ZDICT_1)
    return _TAG_ZDICT_1 + packer.compress(text.encode("utf-8")) + packer.flush()


def test_packed_details_are_the_bytes_a_new_compressor_gives() -> None:
    rng = random.Random(3)
    for n in range(300):
        details = {"mode": "focus_time", "years": [rng.randint(1800, 2100) for _ in range(rng.randint(0, 60))],
                   "reason": "".join(rng.choice("ab é“") for _ in range(rng.randint(0, 300))), "n": n}
        text = _details_json(details)
        packed = _pack(text, details=True)
        if len(text) < 128:
            assert packed == text
            continue
        assert packed == _pack_with_a_new_compressor(text)
        assert _unpack(packed) == text


def test_the_misplaced_quote_pattern_is_the_whole_file_readers_test() -> None:
    rng = random.Random(5)
    for delimiter in (",", "\t", ";"):
        pattern = _misplaced_pattern(delimiter)
        alphabet = ['a', '"', delimiter, "\r", "\n", " ", "é"]
        for _ in range(5000):
            data = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))).encode("utf-8")
            assert (pattern.search(data) is not None) == misplaced_quote(data, delimiter), (delimiter, data)


@pytest.mark.parametrize("text, streamable", [
    ('a,b\n1,"x ""y"" z"\n2,"w"\n', True),
    ('a,b\n1,Wh"at\n', False),
    ('a,b\n1,"x"y\n', False),
])
def test_scan_text_finds_a_misplaced_quote_across_chunks(text: str, streamable: bool) -> None:
    data = text.encode("utf-8")
    for cut in range(len(b"a,b\n"), len(data)):  # the first chunk holds the header line
        chunks = iter([data[:cut], data[cut:]])
        assert scan_text(chunks, "x.csv", ",").streamable is streamable, cut


def test_recording_rows_again_without_claims_deletes_theirs_only(tmp_path) -> None:
    """A batch recorded again deletes the claims of its own (row, metric) results, whether or not
    the new results have claims; a first recording (no claims in its rows) deletes nothing."""
    import pandas as pd

    from tempo_eval.io.dataset import Dataset
    from tempo_eval.metrics.base import MetricResult
    from tempo_eval.store.runs import RunStore

    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(8)], "answer": ["a"] * 8, "contexts": [["c"]] * 8})
    store = RunStore(tmp_path / "w.db")
    dataset = Dataset(frame=frame, name="t", mapping={}, content_hash="h", source_format="dataframe")
    run_id, _ = store.create_or_resume_run(store.save_dataset(dataset), {"m": 1})

    def claimed(name: str) -> MetricResult:
        return MetricResult("faith", 1.0, details={"claims": [{"claim": name, "verdict": "SUPPORTED"}]})

    store.record_rows(run_id, [(i, f"q{i}", [claimed(f"c{i}"), MetricResult("other", 0.5)], None) for i in range(3)])
    store.record_rows(run_id, [(i, f"q{i}", [MetricResult("faith", 0.0)], None) for i in range(1, 6)])
    assert store.claims_frame(run_id)["claim"].tolist() == ["c0"]
    store.record_rows(run_id, [(7, "q7", [claimed("c7")], None)])
    assert store.claims_frame(run_id)["claim"].tolist() == ["c0", "c7"]
    scores = store.results_frame(run_id)
    assert scores[scores["metric"] == "faith"]["score"].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


def test_long_json_packed_at_any_level_reads_back() -> None:
    """Dataset rows are packed at a faster zlib level than before (issue 27); values packed at
    the old level (6) and the new one read back the same."""
    text = json.dumps({"rows": [[f"q{i}", f"In {1900 + i % 200} the bridge reopened."] for i in range(500)]})
    packed = _pack(text)
    assert isinstance(packed, bytes) and len(packed) < len(text) / 3
    assert _unpack(packed) == text
    assert _unpack(b"z" + zlib.compress(text.encode("utf-8"), 6)) == text
