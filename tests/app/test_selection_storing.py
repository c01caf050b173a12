"""A dataset whose rows are still being stored, in the sidebar: "storing… (N rows so far)", as the
Datasets page shows it, not "0 rows"; never the dataset a session opens on; a page opened on it
says it is not ready instead of scoring (and caching) part of it (issue 29)."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from tempo_eval.store.jobs import JobQueue, Worker
from tempo_eval.store.runs import RunStore
from tempo_eval_app.selection import DATASET_KEY
from tempo_eval_app.store_reads import db_path
from tests.support.paths import ROOT

APP = str(ROOT / "app.py")


def _partial_dataset(name: str) -> int:
    """A streamed dataset with its first rows stored and not finished (row count 0)."""
    store = RunStore(db_path())
    dataset_id, complete = store.begin_dataset(name=name, content_hash=f"hash of {name}", mapping=None,
                                               source_format="jsonl")
    assert not complete
    store.add_dataset_rows(dataset_id, 0, pd.DataFrame({"query_id": ["a", "b"], "query": ["When?", "Where?"]}))
    store.close()
    return dataset_id


def _storing_job(done: int) -> int:
    """A running dataset upload that stores its rows, with `done` rows read so far."""
    queue = JobQueue(db_path())
    job_id = queue.submit("dataset_upload", {"store": True, "path": "big.jsonl"}, label="big.jsonl")
    taken = queue.claim(Worker.this_process(), limit=1, kinds=("dataset_upload",))
    assert taken is not None and taken["id"] == job_id
    queue.progress(job_id, done, 0, None)
    queue.close()
    return job_id


def _label(at: AppTest, dataset_id: int) -> str:
    box = at.sidebar.selectbox(key=DATASET_KEY)
    return box.format_func(dataset_id)


def test_a_dataset_being_stored_is_listed_as_storing_with_its_rows_so_far_and_never_opened_on() -> None:
    at = AppTest.from_file(APP, default_timeout=180).run()
    sample = at.session_state[DATASET_KEY]
    partial = _partial_dataset("big upload")
    _storing_job(12_345)

    at = AppTest.from_file(APP, default_timeout=180).run()  # a new session: newest dataset is the partial one
    assert at.session_state[DATASET_KEY] == sample
    assert _label(at, partial) == f"big upload (storing… (12,345 rows so far)) · #{partial}"
    assert "0 rows" not in _label(at, partial)

    at.sidebar.selectbox(key=DATASET_KEY).set_value(partial).run()
    assert not at.exception
    assert any("rows are not all stored yet" in info.value for info in at.info)
    assert not at.dataframe  # the Overview scored nothing of it


def test_a_dataset_left_incomplete_is_listed_as_incomplete() -> None:
    at = AppTest.from_file(APP, default_timeout=180).run()
    partial = _partial_dataset("stopped upload")
    at.run()
    assert _label(at, partial).startswith("stopped upload (incomplete: the job storing it stopped")
