"""Every damaged or unusable workspace database is one WorkspaceError line (CLI: one `error:` line, exit 2),
found when the workspace opens (issue 11): damage, a full disk, a read-only folder, a newer schema; the
dashboard shows it as it is."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tempo_eval.cli import main
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store import WorkspaceError
from tempo_eval.store.db import DB_FILENAME, workspace_error
from tempo_eval.store.runs import RunStore

ROWS = [{"query_id": f"q{i}", "query": "x", "retrieved_ids": ["d1", "d2"], "gold_ids": ["d2"]} for i in range(400)]
MANY = "\n".join(json.dumps({**ROWS[0], "query_id": f"m{i}"}) for i in range(12_000))


def _dataset():
    return load_dataset("\n".join(json.dumps(r) for r in ROWS).encode(), name="d.jsonl")


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("intact") / DB_FILENAME
    store = RunStore(path)
    evaluate(_dataset(), [TemporalNDCG()], store=store)
    store.close()
    return path


def _damaged(intact: Path, tmp_path: Path, damage: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    path = home / DB_FILENAME
    shutil.copy(intact, path)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        if damage == "truncated":
            handle.truncate(size // 2)
        elif damage == "header":
            handle.write(b"this is not a database at all" * 4)
        elif damage == "middle":
            page = 4096
            handle.seek((size // page // 2) * page)
            handle.write(bytes(range(256)) * (page // 256))
    return path


@pytest.mark.parametrize(("damage", "says"), [
    ("truncated", "damaged"), ("header", "not a SQLite database"), ("middle", "damaged"),
])
def test_a_damaged_workspace_is_one_line_from_the_api_and_the_cli(
    damage: str, says: str, intact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _damaged(intact, tmp_path, damage)
    with pytest.raises(WorkspaceError) as caught:
        evaluate(_dataset(), [TemporalNDCG()], store=RunStore(path))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and says in message
    assert "restore it from a backup" in message and "new workspace" in message

    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS), encoding="utf-8")
    code = main(["evaluate", str(data), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"),
                 "--workspace", str(path.parent), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: workspace database ") and says in line
    assert not (tmp_path / "r.csv").exists()


def test_garbage_in_the_middle_is_found_before_any_result_is_reused(intact: Path, tmp_path: Path) -> None:
    path = _damaged(intact, tmp_path, "middle")
    with pytest.raises(WorkspaceError, match="damaged"):
        RunStore(path)


def test_a_full_disk_is_one_line_saying_to_free_space_and_finished_rows_stay(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    store = RunStore(path)
    (pages,) = store.connection.execute("PRAGMA page_count").fetchone()
    store.connection.execute(f"PRAGMA max_page_count = {pages + 40}")  # a disk that fills up
    with pytest.raises(WorkspaceError) as caught:
        evaluate(load_dataset(MANY.encode(), name="big.jsonl"),
                 [TemporalNDCG()], store=store)
    message = str(caught.value)
    assert "\n" not in message and "full" in message and "free disk space" in message
    store.close()
    assert RunStore(path).list_datasets().shape[0] <= 1  # the file still opens


def test_a_full_disk_in_the_cli_is_one_error_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import tempo_eval.store.runs as runs

    real_connect = runs.connect

    def small_disk(path=None):
        conn = real_connect(path)
        conn.execute("PRAGMA max_page_count = 12")
        return conn

    monkeypatch.setattr(runs, "connect", small_disk)
    data = tmp_path / "d.jsonl"
    data.write_text(MANY, encoding="utf-8")
    code = main(["evaluate", str(data), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"),
                 "--workspace", str(tmp_path / "ws"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: workspace database ") and "free disk space" in line


def test_a_read_only_workspace_says_to_make_it_writable(intact: Path, tmp_path: Path) -> None:
    message = str(workspace_error(tmp_path / "x.sqlite", sqlite3.OperationalError("attempt to write a readonly database")))
    assert "make the file and its directory writable" in message
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only files; the message mapping above is still checked")
    path = _damaged(intact, tmp_path, "none")
    path.chmod(0o444)
    path.parent.chmod(0o555)
    try:
        with pytest.raises(WorkspaceError, match="writable"):
            evaluate(_dataset(), [TemporalNDCG(k=3)], store=RunStore(path))
    finally:
        path.parent.chmod(0o755)


def test_a_newer_schema_is_one_line_too(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 999")
    with pytest.raises(WorkspaceError, match="schema version 999, newer"):
        RunStore(path)


def test_the_dashboard_shows_a_workspace_error_as_it_is(tmp_path: Path) -> None:
    from tempo_eval_app.errors import error_message

    error = WorkspaceError(tmp_path / "x.sqlite", "the database is damaged (malformed)", "restore it")
    assert error_message(error) == str(error)
