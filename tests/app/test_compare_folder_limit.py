"""A folder of thousands of files named on Compare is refused at once with "at most 26 runs": its
entries are counted before any file is checked or read, and a rerun of the page does not list
the folder again until it changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.store.jobs import JobQueue
from tempo_eval_app import paths
from tests.support.paths import ROOT

TIMEOUT = 120
MANY = 10_000


def _garbage_folder(n: int = MANY) -> Path:
    folder = Path(os.environ["TEMPO_EVAL_HOME"]) / "many_runs"
    folder.mkdir()
    for i in range(n):  # not TREC, not text: reading any of them would fail
        (folder / f"run{i:05d}.trec").write_bytes(b"\x00\xff garbage")
    (folder / "sub").mkdir()  # subfolders are not counted
    return folder


class _Counted:
    """Calls of a function, counted, and the folders it was called on (`os.scandir` is the whole
    process's: other code, e.g. Alembic finding its revisions when a new workspace is made, lists
    its own folders through it)."""

    def __init__(self, function):
        self.function, self.calls, self.folders = function, 0, []

    def __call__(self, *args, **kwargs):
        self.calls += 1
        self.folders.append(str(args[0]) if args else "")
        return self.function(*args, **kwargs)


def test_a_folder_over_the_limit_is_refused_from_its_count_and_listed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _garbage_folder()
    confine, scandir = _Counted(paths.confine), _Counted(os.scandir)
    monkeypatch.setattr(paths, "confine", confine)
    monkeypatch.setattr(paths.os, "scandir", scandir)
    with pytest.raises(paths.TooManyFiles, match="more than 26 files"):
        paths.files_named(str(folder), limit=26)
    assert confine.calls == 1  # the folder; none of its files was checked
    assert scandir.calls == 1
    with pytest.raises(paths.TooManyFiles):
        paths.files_named(str(folder), limit=26)
    assert scandir.calls == 1  # the second time from what was kept


def test_a_changed_folder_is_listed_again() -> None:
    folder = Path(os.environ["TEMPO_EVAL_HOME"]) / "runs"
    folder.mkdir()
    (folder / "a.run").write_text("q1 Q0 d1 1 1 a\n")
    assert [p.name for p in paths.files_named(str(folder), limit=2)] == ["a.run"]
    (folder / "b.run").write_text("q1 Q0 d1 1 1 b\n")
    os.utime(folder, ns=(0, folder.stat().st_mtime_ns + 1_000_000_000))  # a coarse clock still tells
    assert [p.name for p in paths.files_named(str(folder), limit=2)] == ["a.run", "b.run"]


def test_compare_page_refuses_a_folder_of_ten_thousand_files_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _garbage_folder()
    qrels = folder.parent / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    scandir = _Counted(os.scandir)
    monkeypatch.setattr(paths.os, "scandir", scandir)
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state["compare_run_paths"] = str(folder)
    at.session_state["compare_qrels_path"] = str(qrels)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("at most 26 runs" in m and "many_runs" in m for m in shown), shown
    assert JobQueue().jobs(kind="compare_runs") == []  # no worker was asked to read them
    at.run()  # a rerun: the same refusal, the folder not listed again
    assert any("at most 26 runs" in e.value for e in at.error)
    assert scandir.folders.count(str(folder)) == 1
