"""A hostile review of the jobs' lanes, cancelled reads and the workspace's file tidying (issue
29): each test here failed before its fix. Uploads named by an interrupted evaluation, links and
folders that are links out of the workspace, a half dataset left by a killed read then cancelled,
and a queued job left without a worker when the one holding its lane died."""

from __future__ import annotations

import subprocess
import sys
import time

from tempo_eval.store import job_files
from tempo_eval.store.db import workspace_dir
from tempo_eval.store.jobs import JobQueue, Worker
from tests.support import jobs as support
from tests.support.jobs import write_rows
from tests.support.paths import ROOT


def test_a_later_run_of_the_same_upload_keeps_it_for_the_interrupted_one() -> None:
    # an evaluation of an upload is interrupted; the user runs the same file again with other
    # metrics: when that one ends, the first one's Resume still needs the file
    queue = JobQueue()
    upload = support.upload("r1_eval.jsonl")
    interrupted = support.ended(queue, "evaluate", {"path": str(upload), "tf": True}, "interrupted")
    assert job_files.release(queue, support.ended(queue, "evaluate", {"path": str(upload), "ndcg": True},
                                           "finished")) == []
    assert upload.exists()
    # once it is resumed and ends, nothing needs the file any more
    assert queue.requeue(interrupted["id"])
    assert queue.claim(Worker.this_process(), limit=5)["id"] == interrupted["id"]
    queue.finish(interrupted["id"], "finished")
    assert job_files.release(queue, queue.get(interrupted["id"])) == [upload.resolve()]


def test_the_sweep_never_removes_a_link_nor_follows_one(tmp_path) -> None:
    queue = JobQueue()
    mine = write_rows(tmp_path / "mine.jsonl", 10)
    support.age(mine, 30)
    link = support.upload("r2_real.jsonl").with_name("r2_link.jsonl")
    link.symlink_to(mine)
    support.age(link, 30)
    assert job_files.sweep(queue) == []
    assert link.is_symlink() and mine.exists()
    # a link named as a job's upload is not released either (it is someone's own file)
    assert job_files.release(queue, support.ended(queue, "dataset_upload", {"path": str(link), "store": True},
                                           "finished")) == []
    assert link.is_symlink()


def test_an_uploads_folder_that_links_out_of_the_workspace_is_never_tidied(tmp_path) -> None:
    # someone pointed uploads/ at their own data folder: its old files, or a path typed on a page
    # that lies there, are theirs
    data = tmp_path / "data"
    data.mkdir()
    old = write_rows(data / "old.jsonl", 10)
    typed = write_rows(data / "typed.jsonl", 10)
    support.age(old, 30)
    (workspace_dir() / "uploads").symlink_to(data, target_is_directory=True)
    queue = JobQueue()
    assert job_files.sweep(queue) == []
    assert job_files.release(queue, support.ended(queue, "evaluate", {"path": str(typed)}, "finished")) == []
    assert old.exists() and typed.exists()


def test_a_comparison_folder_that_links_out_is_never_removed(tmp_path) -> None:
    from tempo_eval.compare.saved import cache_root

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "keep.txt").write_text("mine")
    support.age(theirs, 90)  # rmtree refuses a link; the sweep named it removed all the same
    cache_root().mkdir(parents=True)
    link = cache_root() / ("a" * 64)
    link.symlink_to(theirs, target_is_directory=True)
    support.age(link, 90)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    part_link = cache_root() / f"{'b' * 64}.part-{int(ended.stdout)}"
    part_link.symlink_to(theirs, target_is_directory=True)
    support.age(part_link, 90)
    assert job_files.sweep(JobQueue()) == []
    assert (theirs / "keep.txt").exists()


def test_a_cancelled_read_removes_the_half_dataset_a_killed_read_left(tmp_path) -> None:
    from tempo_eval.io.stream import open_stream
    from tempo_eval.jobs.uploads import read_dataset
    from tempo_eval.store.runs import RunStore

    path = write_rows(tmp_path / "rows.jsonl", 5_000)
    store = RunStore()
    try:  # a read killed after its first batch: the dataset is listed, incomplete
        stream = open_stream(path, name="rows.jsonl")
        dataset_id, complete = store.begin_dataset(name=stream.name, content_hash=stream.content_hash,
                                                   mapping=stream.mapping, source_format=stream.source_format)
        offset, frame = next(iter(stream.batches()))
        store.add_dataset_rows(dataset_id, offset, frame)
        assert not complete and len(store.list_datasets()) == 1
    finally:
        store.close()
    # the page reads it again and the user cancels it: nothing half stored stays listed
    import threading

    cancel = threading.Event()
    ended = read_dataset({"path": str(path), "name": "rows.jsonl", "store": True},
                         lambda done, total: cancel.set(), cancel)
    assert ended["status"] == "cancelled"
    store = RunStore()
    try:
        assert store.list_datasets().empty
    finally:
        store.close()


def _backdate(queue: JobQueue, job_id: int, seconds: float) -> None:
    with queue._conn:
        queue._conn.execute("UPDATE jobs SET updated_at = ? WHERE id = ?", (time.time() - seconds, job_id))


def test_a_page_job_queued_behind_a_dead_worker_gets_a_worker(monkeypatch) -> None:
    # a worker reading an upload is killed (out of memory); the worker started for the next
    # upload found the pages lane taken and exited: the page used to show "place 1" for ever
    from tempo_eval_app import worker_jobs

    queue = worker_jobs.queue()
    started = []
    monkeypatch.setattr(worker_jobs, "spawn_worker", lambda **kw: started.append(kw))
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = Worker(int(ended.stdout), "gone", Worker.this_process().host)
    first = queue.submit("dataset_upload", {"path": "/nowhere/a.jsonl", "store": True})
    assert queue.claim(dead, limit=1)["id"] == first
    waiting = queue.submit("dataset_upload", {"path": "/nowhere/b.jsonl", "store": True})
    assert worker_jobs.job(waiting)["status"] == "queued" and started == []  # just queued: its worker starts
    _backdate(queue, waiting, 60)
    assert worker_jobs.job(waiting)["status"] == "queued"
    assert queue.get(first)["status"] == "interrupted" and started == [{}]
    assert worker_jobs.job(waiting) is not None and started == [{}]  # once per ORPHAN_AFTER_S, not per look
    # a live worker holding the lane: the job waits its turn, no worker is started
    queue.request_cancel(waiting)
    third = queue.submit("trec_runs", {"runs": [], "store": False})
    fourth = queue.submit("foreign_import", {"path": "/nowhere/c.csv"})
    assert queue.claim(Worker.this_process(), limit=1)["id"] == third
    _backdate(queue, fourth, 60)
    assert worker_jobs.job(fourth)["status"] == "queued" and started == [{}]


def test_a_job_whose_upload_was_removed_says_so_in_the_pages_words() -> None:
    from tempo_eval.cli import job as job_cli

    gone = workspace_dir() / "uploads" / "abc123_rows.jsonl"
    run = workspace_dir() / "uploads" / "abc123_a.run"
    queue = JobQueue()
    read = queue.submit("dataset_upload", {"path": str(gone), "name": "rows.jsonl", "store": True})
    runs = queue.submit("trec_runs", {"runs": [["a.run", str(run)]], "qrels": ["q.txt", str(run)], "store": False})
    job_cli.run_worker(queue, limit=1)
    for job_id, name in ((read, "rows.jsonl"), (runs, "a.run")):
        error = queue.get(job_id)["error"]
        assert queue.get(job_id)["status"] == "failed"
        assert error.startswith(f"{name}: the uploaded file is no longer in the workspace") and "upload it again" in error
        assert "Errno" not in error and str(workspace_dir()) not in error


def test_use_these_runs_writes_the_runs_again_when_the_sweep_removed_them() -> None:
    # the runs were read for the preview (their files kept for "Use"), then a sweep removed the
    # files (the page stayed open for days): "Use these runs" stores them all the same
    from streamlit.testing.v1 import AppTest

    from tempo_eval.store.runs import RunStore

    root = ROOT
    sample = root / "data" / "sample"
    at = AppTest.from_file(str(root / "app.py"), default_timeout=180).run()
    at = at.switch_page("views/datasets.py").run()
    before = len(RunStore().list_datasets())
    at.file_uploader(key="trec_runs").set_value(
        [("run_bm25.trec", (sample / "run_bm25.trec").read_bytes(), "text/plain")])
    at.file_uploader(key="trec_qrels").set_value(("qrels.txt", (sample / "qrels.txt").read_bytes(), "text/plain"))
    at.run()
    at.button(key="read_runs").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    saved = sorted((workspace_dir() / "uploads").iterdir())
    assert len(saved) == 2
    for path in saved:  # what the sweep does to week-old uploads no job names
        path.unlink()
    at.button(key="use_runs").click().run()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(RunStore().list_datasets()) == before + 1


def test_an_evaluation_cancelled_while_it_waited_says_so() -> None:
    # it used to read "Cancelled after 0 of 0 rows. Run it again to resume where it stopped."
    from streamlit.testing.v1 import AppTest

    root = ROOT
    at = AppTest.from_file(str(root / "app.py"), default_timeout=180).run()
    dataset_id = int(at.session_state["dataset_id"])
    queue = JobQueue()
    at.session_state["_session_id"] = "this-tab"  # the job is this session's (tempo_eval_app.worker_jobs.session_id)
    waited = queue.submit("evaluate", {"dataset_id": dataset_id, "tf": True}, label="faithfulness",
                          dataset_id=dataset_id, session="this-tab")
    queue.request_cancel(waited)
    at.switch_page("views/evaluate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value.replace("\\", "") for w in at.warning]  # markdown escapes
    assert "faithfulness: cancelled before it started; nothing was evaluated." in warnings, warnings
    assert not any("0 of 0" in w for w in warnings)
