"""The main process's shortcuts (issue 27) store what the plain path stores, byte for byte: a
streamed batch's rows written without the JSON encoder are `dumps`'s text, and results written
with a plain INSERT (a first recording) are the rows INSERT OR REPLACE writes."""

from __future__ import annotations

import hashlib
import math
import zlib

import pandas as pd
import pytest

from tempo_eval.common.schema import MetricResult, not_measurable
from tempo_eval.io.dataset import Dataset
from tempo_eval.store.datasets import (
    _frame_rows,
    _plain_texts_json,
    frame_content_hash,
    frame_rows_json,
)
from tempo_eval.store.packing import _TAG_ZLIB, dumps
from tempo_eval.store.results import encode_rows
from tempo_eval.store.runs import RunStore


def _plain_json(frame: pd.DataFrame) -> str:
    """What the store wrote before the shortcut: the JSON encoder's text of every cell."""
    return dumps({"columns": [str(c) for c in frame.columns], "rows": _frame_rows(frame)})


def _texts(**columns: list) -> pd.DataFrame:
    return pd.DataFrame(columns, dtype=object)


# frames the shortcut writes itself: every cell text or a list of texts, nothing to escape
WRITTEN = {
    "bench rows": _texts(query_id=["q1", "q2"], query=["What in the 1990s?", "And in 2001?"],
                         contexts=[["In 1995 it opened.", "It closed in 1999."], []],
                         answer=["It opened in 1995.", ""]),
    "non-ASCII": _texts(query=["Qu'est-ce qui s'est passé en 1789 ?", "東京 1964", "emoji 😀 in 2020"],
                        contexts=[["é"], ["\u2028 and \x7f are not escaped"], [""]]),
    "one column": _texts(query_id=["a", "b", "c"]),
    "no rows": _texts(query_id=[], contexts=[]),
    "a quote in a column name": pd.DataFrame({'say "when"': ["1999"]}, dtype=object),  # the names: by `dumps`
    "numbered columns": pd.DataFrame({0: ["x"], 1: [["y"]]}, dtype=object),
    "a backslash in a column name": pd.DataFrame({"C:\\x": ["1999"], "y": [["a"]]}, dtype=object),
    "empty lists first and last": _texts(contexts=[[], ["a"]], query=["x", "y"], outdated=[["b"], []]),
    "a list of one empty text": _texts(contexts=[[""], ["", ""]]),
}

# frames left to the JSON encoder (it escapes a text, or a cell is not text), or written by it
# because a text needs an escape: the same text either way
ENCODED = {
    "a quote": _texts(query=['said "no" in 1999', "x"], contexts=[["a"], ["b"]]),
    "a backslash": _texts(query=["C:\\data in 2001", "x"]),
    "a line break": _texts(answer=["line one\nline two in 1990", "x"]),
    "a tab in a list": _texts(contexts=[["a\tb"], ["c"]]),
    "a control character": _texts(query=["bell \x07 in 1999"]),
    "a quote in the last list": _texts(query=["x"], contexts=[['a "b" c']]),
    "a backslash in the first column": _texts(query_id=["q\\1"], query=["x"]),
    "a NUL": _texts(query=["x\x00y"]),
    "a missing cell": _texts(query=["x", None], contexts=[["a"], None]),
    "NaN": _texts(query=["x", math.nan]),
    "a number in a list": _texts(contexts=[["a", 2]]),
    "a number column": pd.DataFrame({"query": ["x", "y"], "n": [1, 2]}),
    "a string column": pd.DataFrame({"query": pd.array(["x", None], dtype="string")}),
    "a dict": _texts(meta=[{"b": 1, "a": [1]}]),
    "a tuple": _texts(contexts=[("a", "b")]),
    "columns only": pd.DataFrame(index=range(3)),
}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_rows_written_without_the_encoder_are_its_text(name):
    frame = WRITTEN[name]
    assert _plain_texts_json(frame, [str(c) for c in frame.columns]) is not None  # the shortcut wrote it
    assert frame_rows_json(frame) == _plain_json(frame)


@pytest.mark.parametrize("name", sorted(ENCODED))
def test_rows_with_anything_to_escape_are_the_encoders_text(name):
    frame = ENCODED[name]
    assert _plain_texts_json(frame, [str(c) for c in frame.columns]) is None  # left to the encoder
    assert frame_rows_json(frame) == _plain_json(frame)


def test_a_streamed_batch_is_stored_as_the_encoder_would_store_it(tmp_path):
    store = RunStore(tmp_path / "ws.sqlite")
    dataset_id, _ = store.begin_dataset(name="d", content_hash="h" * 64, mapping={}, source_format="csv")
    frame = WRITTEN["bench rows"]
    frame = pd.concat([frame] * 40, ignore_index=True)  # long enough to be packed
    store.add_dataset_rows(dataset_id, 0, frame)
    (stored,) = store._conn.execute("SELECT rows FROM dataset_chunks WHERE dataset_id = ?", (dataset_id,)).fetchone()
    assert stored[:1] == _TAG_ZLIB and zlib.decompress(stored[1:]).decode("utf-8") == _plain_json(frame)
    store.finish_dataset(dataset_id, len(frame), [])
    assert store.dataset_frame(dataset_id).equals(frame)


def test_a_lone_surrogate_is_left_to_the_encoder_and_fails_where_it_is_stored():
    frame = _texts(query=["x\ud800y"], contexts=[["a"]])
    assert _plain_texts_json(frame, ["query", "contexts"]) is None
    assert frame_rows_json(frame) == _plain_json(frame)
    with pytest.raises(UnicodeEncodeError):
        frame_content_hash(frame)


def test_a_dataset_hash_is_that_of_the_encoders_text():
    for frame in [*WRITTEN.values(), *ENCODED.values()]:
        assert frame_content_hash(frame) == hashlib.sha256(_plain_json(frame).encode("utf-8")).hexdigest()


def _results(rows: range, tag: str) -> list:
    out = []
    for i in rows:
        first = MetricResult(metric="a_metric", score=i / 10, reason=f"{tag} a {i}", details={"years": [1990 + i]})
        second = (not_measurable("b_metric", "row_error", f"{tag} boom {i}") if i % 3 == 0
                  else MetricResult(metric="b_metric", score=1.0, reason=f"{tag} b {i}"))
        out.append((i, f"q{i}", [first, second], None))
    return out


def _stored(store: RunStore, run_id: int) -> list[tuple]:
    return store._conn.execute("SELECT * FROM results WHERE run_id = ? ORDER BY row_idx, metric", (run_id,)).fetchall()


def _run(tmp_path, name: str) -> tuple[RunStore, int]:
    store = RunStore(tmp_path / f"{name}.sqlite")
    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(30)], "query": ["In 1999?"] * 30})
    dataset_id = store.save_dataset(Dataset(frame=frame, name="d", content_hash="h" * 64, mapping={}, source_format="csv"))
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": ["a", "b"]}, name="r")
    return store, run_id


def test_results_written_by_insert_are_those_insert_or_replace_writes(tmp_path, monkeypatch):
    """A first recording (plain INSERT), a re-recording of some rows (OR REPLACE) and a batch
    naming a (row, metric) twice (OR REPLACE: the last kept) store the rows the plain path
    (always OR REPLACE) stores."""
    batches = [_results(range(0, 10), "first"), _results(range(10, 20), "first"),
               _results(range(5, 15), "again"),  # rows stored already: replaced
               _results(range(20, 25), "x") + _results(range(22, 25), "twice")]  # given twice: the last kept
    fast, fast_run = _run(tmp_path, "fast")
    verbs = []
    for batch in batches:
        statements: list[str] = []
        fast._conn.set_trace_callback(statements.append)
        fast.write_encoded(encode_rows(fast_run, batch, []))
        fast._conn.set_trace_callback(None)
        verbs.append({s.split(" INTO ")[0] for s in statements if " INTO results " in s})
    assert verbs == [{"INSERT"}, {"INSERT"}, {"INSERT OR REPLACE"}, {"INSERT OR REPLACE"}]

    plain, plain_run = _run(tmp_path, "plain")
    for batch in batches:  # every batch as OR REPLACE: a result of each row in its range stored first
        encoded = encode_rows(plain_run, batch, [])
        with plain._conn:
            plain._conn.executemany(
                "INSERT OR REPLACE INTO results (run_id, row_idx, query_id, system, metric, score, reason,"
                " reason_code, success, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", encoded.results)
    assert _stored(fast, fast_run) == _stored(plain, plain_run)
    assert len(_stored(fast, fast_run)) == 50
    assert fast.get_result(fast_run, 23, "b_metric").reason == "twice b 23"
    assert fast.get_result(fast_run, 7, "a_metric").reason == "again a 7"


def test_rows_with_nothing_stored_share_one_list_of_metrics(tmp_path):
    """A batch's pending (row, metrics) are those the plain filter gives, stored pairs left out;
    the rows with nothing stored share one list (and the pool one list of names: pickled once)."""
    from tempo_eval.engine.runner import _Run
    from tempo_eval.metrics import TemporalFaithfulness, TemporalNDCG

    metrics = [TemporalFaithfulness(), TemporalNDCG()]
    store, run_id = _run(tmp_path, "pending")
    stored = [(i, f"q{i}", [MetricResult(metric=metrics[i % 2].name, score=1.0, reason="x")], None) for i in (3, 4)]
    store.record_rows(run_id, stored)
    run = _Run(store, 1, run_id, metrics, [m.name for m in metrics], None, True, None, None, None)
    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(2, 6)]}, index=range(2, 6))
    for resumed in (False, True):
        done = {(3, metrics[1].name), (4, metrics[0].name)} if resumed else set()
        plain = [(i, [m for m in metrics if (i, m.name) not in done]) for i in range(2, 6)]
        assert run._pending(frame, 2, resumed) == plain
    fresh = run._pending(frame, 2, False)
    assert all(todo is fresh[0][1] for _, todo in fresh)
