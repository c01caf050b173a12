"""Cancelling a running read (issue 29): a dataset upload, TREC runs or a foreign import that a
worker is reading stops at its next batch when cancelled, ends as `cancelled`, and leaves no half
dataset in the workspace; across processes as the page does it (the cancel flag on the row)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tempo_eval.jobs.uploads import import_foreign, read_dataset, read_runs
from tempo_eval.store.jobs import JobQueue
from tempo_eval.store.runs import RunStore
from tests.support.jobs import ROOT, write_rows


def _datasets() -> list[tuple[str, int]]:
    store = RunStore()
    try:
        listed = store.list_datasets()
        return list(zip(listed["name"], listed["n_rows"], strict=True))
    finally:
        store.close()


def _cancel_after(batches: int) -> tuple[threading.Event, object]:
    """A cancel event set once `batches` progress reports came (the worker's watch sets it so)."""
    cancel = threading.Event()
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if len(seen) >= batches:
            cancel.set()

    return cancel, progress


@pytest.mark.parametrize("store_it", [True, False])
def test_a_dataset_read_cancelled_between_batches_stores_nothing(tmp_path, store_it) -> None:
    path = write_rows(tmp_path / "rows.jsonl", 5_000)
    cancel, progress = _cancel_after(2)
    ended = read_dataset({"path": str(path), "name": "rows.jsonl", "store": store_it}, progress, cancel)
    assert ended["status"] == "cancelled"
    assert _datasets() == []
    # read again without a cancel: the whole dataset, once
    ended = read_dataset({"path": str(path), "name": "rows.jsonl", "store": True})
    assert ended["status"] == "finished" and ended["result"]["rows"] == 5_000
    assert _datasets() == [("rows.jsonl", 5_000)]


def test_a_cancelled_read_keeps_a_dataset_stored_before(tmp_path) -> None:
    path = write_rows(tmp_path / "rows.jsonl", 3_000)
    assert read_dataset({"path": str(path), "name": "rows.jsonl", "store": True})["status"] == "finished"
    cancel, progress = _cancel_after(1)
    assert read_dataset({"path": str(path), "name": "rows.jsonl", "store": True}, progress, cancel)["status"] \
        == "cancelled"
    assert _datasets() == [("rows.jsonl", 3_000)]


def test_a_read_refused_part_way_removes_what_it_stored(tmp_path) -> None:
    path = write_rows(tmp_path / "rows.jsonl", 4_000)
    with path.open("a") as out:  # a duplicate query id on the last line: found in the last batch
        out.write(json.dumps({"query_id": "q1", "query": "again?", "answer": "no", "contexts": []}) + "\n")
    ended = read_dataset({"path": str(path), "name": "rows.jsonl", "store": True})
    assert ended["status"] == "failed" and "q1" in ended["error"]
    assert _datasets() == []


def _trec(tmp_path: Path) -> dict:
    run_a = tmp_path / "a.run"
    run_b = tmp_path / "b.run"
    qrels = tmp_path / "qrels.txt"
    run_a.write_text("".join(f"q{q} Q0 d{d} {d + 1} {10 - d} bm25\n" for q in range(30) for d in range(5)))
    run_b.write_text("".join(f"q{q} Q0 d{4 - d} {d + 1} {10 - d} dense\n" for q in range(30) for d in range(5)))
    qrels.write_text("".join(f"q{q} 0 d{q % 5} 1\n" for q in range(30)))
    return {"runs": [["a.run", str(run_a)], ["b.run", str(run_b)]], "qrels": ["qrels.txt", str(qrels)],
            "store": True}


def test_trec_runs_cancelled_store_nothing(tmp_path) -> None:
    arguments = _trec(tmp_path)
    cancel = threading.Event()
    cancel.set()
    assert read_runs(arguments, cancel=cancel)["status"] == "cancelled"
    assert _datasets() == []
    ended = read_runs(arguments)
    assert ended["status"] == "finished" and len(_datasets()) == 1


def test_a_foreign_import_cancelled_after_reading_stores_nothing(tmp_path) -> None:
    path = tmp_path / "ragas.csv"
    path.write_text("user_input,response,retrieved_contexts,faithfulness\n"
                    + "".join(f"question {i},answer {i},\"['ctx {i}']\",0.{i}\n" for i in range(1, 9)))
    cancel = threading.Event()
    cancel.set()
    assert import_foreign({"path": str(path), "name": "ragas.csv"}, cancel=cancel)["status"] == "cancelled"
    assert _datasets() == []
    ended = import_foreign({"path": str(path), "name": "ragas.csv"})
    assert ended["status"] == "finished", ended
    assert len(_datasets()) == 1


def test_cancel_reaches_a_read_running_in_a_worker_process(tmp_path) -> None:
    from tempo_eval.store.db import workspace_dir

    uploads = workspace_dir() / "uploads"
    uploads.mkdir()
    path = write_rows(uploads / "upload1_big.jsonl", 200_000)
    queue = JobQueue()
    job_id = queue.submit("dataset_upload", {"path": str(path), "name": "big.jsonl", "store": True})
    worker = subprocess.Popen([sys.executable, "-m", "tempo_eval", "job", "run", "--limit", "1"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while queue.get(job_id)["done"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        partial = _datasets()
        queue.request_cancel(job_id)
        assert worker.wait(timeout=120) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        log = worker.stdout.read().decode(errors="replace")
        worker.stdout.close()
    found = queue.get(job_id)
    assert found["status"] == "cancelled", (found, log)
    assert 0 < found["done"] < 200_000
    assert partial and partial[0][1] == 0  # it was storing (listed, no rows yet) when cancelled
    assert _datasets() == []  # and left nothing
    assert not path.exists()  # the upload of a cancelled read is removed (job_files.release)


def test_a_read_in_batches_gives_what_the_whole_file_reader_gives(tmp_path) -> None:
    """A CSV saved with its pandas row index: the index is dropped, with the same warning."""
    import pandas as pd

    from tempo_eval.io.dataset import load_dataset

    frame = pd.read_csv(ROOT / "data" / "sample" / "temporal_qa.csv").head(3)
    path = tmp_path / "with_index.csv"
    path.write_text(frame.to_csv())
    whole = load_dataset(path)
    ended = read_dataset({"path": str(path), "name": "with_index.csv", "store": True})
    assert ended["status"] == "finished"
    assert ended["result"]["columns"] == [str(c) for c in whole.frame.columns]
    assert "Unnamed: 0" not in ended["result"]["columns"]
    assert ended["result"]["warnings"] == whole.warnings and any("saved row index" in w for w in whole.warnings)
    store = RunStore()
    try:
        assert store.dataset_frame(ended["dataset_id"]).astype(str).equals(whole.frame.astype(object).astype(str))
    finally:
        store.close()
