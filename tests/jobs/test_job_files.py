"""The files jobs leave in the workspace (issue 29, `tempo_eval.store.job_files`): uploads removed
once the job that read them has ended and nothing else needs them, old leftovers and old or
too many saved comparisons removed when a job starts, never one in use nor a typed path."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tempo_eval.cli import job as job_cli
from tempo_eval.store import job_files
from tempo_eval.store.db import workspace_dir
from tempo_eval.store.jobs import JobQueue
from tests.support import jobs as support
from tests.support.jobs import SETTINGS, write_rows

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def test_a_stored_upload_is_removed_by_the_worker_and_a_preview_keeps_it() -> None:
    path = support.upload("u1_rows.jsonl")
    queue = JobQueue()
    preview = queue.submit("dataset_upload", {"path": str(path), "name": "rows.jsonl", "store": False})
    job_cli.run_worker(queue, limit=1)
    assert queue.get(preview)["status"] == "finished" and path.exists()  # "Use" stores it next
    stored = queue.submit("dataset_upload", {"path": str(path), "name": "rows.jsonl", "store": True})
    job_cli.run_worker(queue, limit=1)
    assert queue.get(stored)["status"] == "finished" and queue.get(stored)["dataset_id"] is not None
    assert not path.exists()


def test_a_failed_read_removes_its_upload_and_an_evaluated_upload_goes_once_stored() -> None:
    bad = workspace_dir() / "uploads"
    bad.mkdir()
    (bad / "u2_bad.csv").write_text("query_id,query\nq1,a\nq1,b\n")
    queue = JobQueue()
    failed = queue.submit("dataset_upload", {"path": str(bad / "u2_bad.csv"), "name": "bad.csv", "store": False})
    evaluated = support.upload("u3_eval.jsonl", 30)
    evaluation = queue.submit("evaluate", {**SETTINGS, "dataset_id": None, "path": str(evaluated)})
    job_cli.run_worker(queue, limit=1)
    assert queue.get(failed)["status"] == "failed" and not (bad / "u2_bad.csv").exists()
    assert queue.get(evaluation)["status"] == "finished", queue.get(evaluation)["error"]
    assert not evaluated.exists()


def test_an_upload_another_job_needs_is_kept_and_an_interrupted_evaluation_keeps_its_file() -> None:
    queue = JobQueue()
    shared = support.upload("u4_shared.jsonl")
    waiting = queue.submit("evaluate", {"path": str(shared)})
    assert job_files.release(queue, support.ended(queue, "dataset_upload", {"path": str(shared), "store": True},
                                           "finished")) == []
    assert shared.exists()
    queue.request_cancel(waiting)
    resumable = support.upload("u5_resume.jsonl")
    assert job_files.release(queue, support.ended(queue, "evaluate", {"path": str(resumable)}, "interrupted")) == []
    assert resumable.exists()
    # Compare's run files stay: a new session reopens the comparison only while they are there
    run = support.upload("u6_a.run")
    assert job_files.release(queue, support.ended(queue, "compare_runs", {"runs": [str(run)], "qrels": str(run)},
                                           "finished")) == []
    cancelled = support.upload("u7_cancel.jsonl")
    assert job_files.release(queue, support.ended(queue, "foreign_import", {"path": str(cancelled)}, "cancelled")) \
        == [cancelled.resolve()]


def test_a_path_outside_the_uploads_folder_is_never_removed(tmp_path) -> None:
    typed = write_rows(tmp_path / "mine.jsonl", 20)
    queue = JobQueue()
    assert job_files.release(queue, support.ended(queue, "evaluate", {"path": str(typed)}, "finished")) == []
    sneaky = workspace_dir() / "uploads" / ".." / "jobs_mine.jsonl"
    (workspace_dir() / "uploads").mkdir()
    sneaky.write_text("{}")
    assert job_files.release(queue, support.ended(queue, "dataset_upload", {"path": str(sneaky), "store": True},
                                           "finished")) == []
    assert typed.exists() and sneaky.exists()


def test_the_sweep_removes_old_leftover_uploads_but_not_one_a_job_names(monkeypatch) -> None:
    queue = JobQueue()
    old, named, fresh = support.upload("u8_old.jsonl"), support.upload("u9_named.jsonl"), support.upload("u10_fresh.jsonl")
    partial = workspace_dir() / "uploads" / "u11_cut.jsonl.part"
    partial.write_text("{")
    for path in (old, named, partial):
        support.age(path, 8)
    queue.submit("dataset_upload", {"path": str(named), "store": False})
    assert sorted(p.name for p in job_files.sweep(queue)) == ["u11_cut.jsonl.part", "u8_old.jsonl"]
    assert named.exists() and fresh.exists()
    monkeypatch.setenv("TEMPO_EVAL_UPLOAD_DAYS", "0")
    assert [p.name for p in job_files.sweep(queue, now=time.time() + 1)] == ["u10_fresh.jsonl"]
    monkeypatch.setenv("TEMPO_EVAL_UPLOAD_DAYS", "a week")
    with pytest.raises(ValueError, match="TEMPO_EVAL_UPLOAD_DAYS must be a number"):
        job_files.sweep(queue)


def _comparison(key: str, size: int, days: float) -> Path:
    from tempo_eval.compare.saved import cache_root

    folder = cache_root() / key
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    (folder / "curves.parquet").write_bytes(b"x" * size)
    support.age(folder, days)
    return folder


def test_saved_comparisons_go_when_old_or_over_the_cap_never_while_in_use(monkeypatch) -> None:
    queue = JobQueue()
    old = _comparison("a" * 64, 1000, 40)
    recent = _comparison("b" * 64, 600_000, 2)
    newer = _comparison("c" * 64, 600_000, 1)
    in_use = _comparison("d" * 64, 600_000, 0)
    # a job found `reused` again 3 days ago (a cache hit): it was used then, not 40 days ago
    hit = support.ended(queue, "compare_runs", {"runs": []}, "finished")["id"]
    reused = _comparison("e" * 64, 10, 40)
    with queue._conn:
        queue._conn.execute("UPDATE jobs SET result = ?, finished_at = ? WHERE id = ?",
                            ('{"key":"' + "e" * 64 + '"}', time.time() - 3 * 86400, hit))
    assert job_files.sweep(queue) == [old]
    monkeypatch.setenv("TEMPO_EVAL_CACHE_MAX_MB", "1.5")  # 1.8 MB held: least recently used go first
    assert job_files.sweep(queue) == [reused, recent]
    monkeypatch.setenv("TEMPO_EVAL_CACHE_MAX_MB", "0")
    assert job_files.sweep(queue) == [newer]  # the one used within the hour stays, whatever the cap
    assert in_use.exists()


def test_a_comparison_being_written_stays_while_its_writer_lives() -> None:
    from tempo_eval.compare.saved import cache_root

    queue = JobQueue()
    mine = cache_root() / f"{'f' * 64}.part-{os.getpid()}"
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = cache_root() / f"{'f' * 64}.part-{int(ended.stdout)}"
    for folder in (mine, orphan):
        folder.mkdir(parents=True)
        support.age(folder, 1)
    assert job_files.sweep(queue) == [orphan]
    assert mine.exists()
