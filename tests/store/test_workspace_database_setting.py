"""TEMPO_EVAL_DB and TEMPO_EVAL_FILES: which database and which files folder the workspace uses,
and a database that cannot be used said in one line (never a password, never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempo_eval.cli import main
from tempo_eval.store.db import (
    DB_FILENAME,
    WorkspaceError,
    comparisons_dir,
    connect,
    database_location,
    describe_location,
    files_dir,
    owned_by_workspace,
)
from tempo_eval.store.job_files import uploads_dir
from tests.support.app_server import free_port


def test_without_tempo_eval_db_the_workspace_is_its_sqlite_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path))
    assert database_location() == str(tmp_path / DB_FILENAME)
    connect().close()
    assert (tmp_path / DB_FILENAME).exists()


def test_a_server_that_cannot_be_reached_is_one_line_without_the_password(monkeypatch, capsys) -> None:
    url = f"postgresql://analyst:s3cret-pw@127.0.0.1:{free_port()}/tempo_eval"
    monkeypatch.setenv("TEMPO_EVAL_DB", url)
    with pytest.raises(WorkspaceError) as raised:
        connect()
    message = str(raised.value)
    assert "s3cret-pw" not in message and "127.0.0.1" in message and "cannot connect" in message
    assert "TEMPO_EVAL_DB" in message and "\n" not in message
    assert main(["runs"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: workspace database postgresql://analyst:***@127.0.0.1") and "s3cret" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", ["mysql://u@h/db", "sqlite:///x.db", "not a url"])
def test_a_tempo_eval_db_that_is_no_postgresql_url_says_what_it_should_be(value, monkeypatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_DB", value)
    with pytest.raises(WorkspaceError, match="TEMPO_EVAL_DB.*postgresql://user:password@host:port/database"):
        connect()


def test_the_password_of_a_url_is_hidden_where_the_database_is_named() -> None:
    assert describe_location("postgresql://a:pw@db:5432/x") == "postgresql://a:***@db:5432/x"
    assert describe_location("/tmp/w/tempo_eval.sqlite") == "/tmp/w/tempo_eval.sqlite"


def test_files_go_to_tempo_eval_files_when_set(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path / "home"))
    assert files_dir() == tmp_path / "home"  # the default: the workspace folder, as before
    monkeypatch.setenv("TEMPO_EVAL_FILES", str(tmp_path / "shared"))
    assert files_dir() == tmp_path / "shared"
    assert uploads_dir() == tmp_path / "shared" / "uploads"
    assert comparisons_dir() == tmp_path / "shared" / "cache" / "compare"
    # what the store owns there is never written over by an output
    assert owned_by_workspace(tmp_path / "shared" / "uploads" / "a.csv") == "a file of the workspace's uploads/ folder"
    assert owned_by_workspace(tmp_path / "home" / "uploads" / "a.csv") is not None


def test_a_postgresql_workspace_keeps_its_caches_in_the_files_folder(postgres_url, tmp_path, monkeypatch) -> None:
    from tempo_eval.store.runs import RunStore

    assert RunStore().folder() == files_dir()
    monkeypatch.setenv("TEMPO_EVAL_FILES", str(tmp_path / "shared"))
    assert RunStore().folder() == Path(tmp_path / "shared")


def test_the_cli_reads_and_writes_the_postgresql_workspace(postgres_url, tmp_path, capsys) -> None:
    data = tmp_path / "qa.csv"
    data.write_text("query,answer,contexts\nWhat happened in 2001?,In 2001 it opened.,['It opened in 2001.']\n")
    assert main(["evaluate", str(data), "--metric", "temporal_faithfulness", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["runs", "--format", "json"]) == 0
    assert '"status": "finished"' in capsys.readouterr().out


def test_without_postgresql_installed_the_reason_says_how_to_install_it(monkeypatch) -> None:
    import tests.support.postgres as support

    monkeypatch.setattr(support.shutil, "which", lambda name: None)
    monkeypatch.setattr(support.glob, "glob", lambda pattern: [])
    assert "PostgreSQL is not installed" in support.missing_reason()
    assert "apt-get install postgresql" in support.missing_reason()


def test_a_store_connects_again_after_its_postgresql_connection_was_lost(postgres_url) -> None:
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    killer = connect(postgres_url)
    killer.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                   " WHERE datname = current_database() AND pid <> pg_backend_pid()")
    with pytest.raises(WorkspaceError):  # the statement that finds the connection gone says so
        store.list_datasets()
    assert store.list_datasets().empty  # and the next one connects again
    killer.close()
