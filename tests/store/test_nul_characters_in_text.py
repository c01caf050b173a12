"""A text value holding a NUL character (\\x00; `\\u0000` in a JSON dataset): SQLite stores it,
PostgreSQL's text cannot hold one. On PostgreSQL the store says which column and value hold it
and what to do, instead of the driver's bare "text fields cannot contain NUL" (no column, no row)."""

from __future__ import annotations

import pytest

from tempo_eval.common.schema import MetricResult
from tempo_eval.store.errors import WorkspaceError
from tempo_eval.store.runs import RunStore
from tests.store.test_run_store import _frame, _frame_dataset


def _run(store: RunStore) -> int:
    dataset = store.save_dataset(_frame_dataset(_frame()))
    run, _ = store.create_or_resume_run(dataset, {"m": 1}, name="kept")
    store.acquire_run(run)
    return run


@pytest.mark.parametrize(("query_id", "reason", "column", "shown"), [
    ("q\x00x", "because", "results.query_id", "'q\\x00x'"),
    ("q1", "quoted the answer: a\x00b", "results.reason", "'quoted the answer: a\\x00b'"),
])
def test_a_result_holding_a_nul_character_names_its_column_and_value(postgres_url, query_id, reason, column,
                                                                     shown) -> None:
    store = RunStore(postgres_url)
    run = _run(store)
    store.record_row(run, 0, "q0", [MetricResult("faith", 0.5, reason="fine")])
    with pytest.raises(WorkspaceError) as caught:
        store.record_row(run, 1, query_id, [MetricResult("faith", 0.25, reason=reason)])
    message = str(caught.value)
    assert f"cannot store {column} {shown}" in message and "NUL character" in message
    assert "remove the NUL characters from the input" in message
    store.close()
    store = RunStore(postgres_url)
    assert store.results_frame(run)["row"].tolist() == [0]  # the row finished before is kept
    store.close()


def test_a_run_name_holding_a_nul_character_names_its_column(postgres_url) -> None:
    store = RunStore(postgres_url)
    dataset = store.save_dataset(_frame_dataset(_frame()))
    with pytest.raises(WorkspaceError, match=r"cannot store runs\.name 'a\\x00b': it holds a NUL character"):
        store.create_or_resume_run(dataset, {"m": 1}, name="a\x00b")
    store.close()


@pytest.mark.sqlite_only  # PostgreSQL refuses them (above)
def test_the_same_rows_are_stored_as_they_are_on_sqlite(workspace_db) -> None:
    store = RunStore(workspace_db)
    run = _run(store)
    store.record_row(run, 0, "q\x00x", [MetricResult("faith", 0.25, reason="a\x00b")])
    assert store.results_frame(run)["query_id"].tolist() == ["q\x00x"]
    store.close()
