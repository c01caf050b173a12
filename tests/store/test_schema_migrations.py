"""The workspace schema's steps (Alembic revisions, `tempo_eval.store.migrations`): a workspace
made by any earlier tempo-eval is upgraded in place and loses nothing; a new database of either
kind gets the same tables and columns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tempo_eval.store import migrations
from tempo_eval.store.db import MIGRATIONS, SCHEMA_VERSION, WorkspaceError, _statements, connect


def _old_workspace(path: Path, version: int) -> None:
    """A file as tempo-eval before Alembic left it at `PRAGMA user_version` = `version`, with rows
    in every table it had."""
    conn = sqlite3.connect(path)
    for step in range(version):
        for statement in _statements(MIGRATIONS[step]):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {step + 1}")
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "verdict_cache" in tables:
        conn.execute("INSERT INTO verdict_cache (key, record) VALUES ('k1', '{\"verdict\": \"SUPPORTED\"}')")
    if "runs" in tables:
        conn.execute("INSERT INTO datasets (id, name, content_hash, mapping, n_rows, rows)"
                     " VALUES (3, 'd', 'h', '{}', 1, '{\"columns\": [], \"rows\": []}')")
        conn.execute("INSERT INTO runs (id, dataset_id, name, config, config_hash, status)"
                     " VALUES (12, 3, 'old run', '{}', 'c', 'finished')")
        conn.execute("INSERT INTO results (run_id, row_idx, query_id, metric, score) VALUES (12, 0, 'q', 'm', 0.25)")
        conn.execute("INSERT INTO claims (run_id, row_idx, metric, idx, claim) VALUES (12, 0, 'm', 0, 'a claim')")
    if "claim_labels" in tables:
        conn.execute("INSERT INTO claim_labels (claim, premises_hash, label) VALUES ('a claim', 'p', 'SUPPORTED')")
    if "jobs" in tables:
        conn.execute("INSERT INTO jobs (kind, status, created_at, run_id) VALUES ('evaluate', 'finished', 1.0, 12)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("version", range(SCHEMA_VERSION + 1))
def test_a_workspace_of_any_earlier_version_is_upgraded_in_place_keeping_its_rows(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.sqlite"
    _old_workspace(path, version)
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert migrations.current(conn) == migrations.HEAD
    if version >= 1:
        assert conn.execute("SELECT record FROM verdict_cache WHERE key = 'k1'").fetchone()[0] == '{"verdict": "SUPPORTED"}'
    if version >= 2:
        assert conn.execute("SELECT name, status FROM runs WHERE id = 12").fetchone() == ("old run", "finished")
        assert conn.execute("SELECT score FROM results WHERE run_id = 12").fetchone()[0] == 0.25
        assert conn.execute("SELECT claim FROM claims WHERE run_id = 12").fetchone()[0] == "a claim"
        # the run id mark counts the old runs: a new run never takes a used id
        assert conn.execute("SELECT high FROM id_marks WHERE name = 'runs'").fetchone()[0] >= 12
    if version >= 5:
        assert conn.execute("SELECT label FROM claim_labels").fetchone()[0] == "SUPPORTED"
    if version >= 9:
        assert conn.execute("SELECT run_id FROM jobs").fetchone()[0] == 12
    conn.close()
    again = connect(path)  # current: opened without a step
    assert migrations.current(again) == migrations.HEAD
    again.close()


def test_the_head_read_from_the_file_names_is_alembics_only_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(migrations.FOLDER))
    assert ScriptDirectory.from_config(config).get_heads() == [migrations.HEAD]


def test_a_workspace_from_a_newer_tempo_eval_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite"
    connect(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.commit()
    conn.close()
    with pytest.raises(WorkspaceError, match="newer than this tempo-eval understands.*upgrade tempo-eval"):
        connect(path)


def _sqlite_columns(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = {t: sorted(row[1] for row in conn.execute(f"PRAGMA table_info({t})")) for t in tables}
    conn.close()
    return found


def test_a_new_postgresql_database_has_the_tables_and_columns_of_a_new_sqlite_file(tmp_path: Path, postgres_url: str) -> None:
    path = tmp_path / "new.sqlite"
    connect(path).close()
    conn = connect(postgres_url)
    rows = conn.execute("SELECT table_name, column_name FROM information_schema.columns"
                        " WHERE table_schema = 'public'").fetchall()
    conn.close()
    postgres: dict[str, list[str]] = {}
    for table, column in rows:
        postgres.setdefault(table, []).append(column)
    assert {t: sorted(c) for t, c in postgres.items()} == _sqlite_columns(path)


def test_several_processes_opening_one_new_postgresql_database_migrate_it_once(postgres_cluster) -> None:
    import multiprocessing

    url = postgres_cluster.new_database(migrated=False)
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    workers = [context.Process(target=_open_and_close, args=(url,)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    conn = connect(url)
    assert migrations.current(conn) == migrations.HEAD
    assert conn.execute("SELECT COUNT(*) FROM id_marks").fetchone()[0] == 1
    conn.close()


def _open_and_close(url: str) -> None:
    connect(url).close()


def test_opening_a_current_workspace_imports_neither_sqlalchemy_nor_alembic(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "current.sqlite"
    connect(path).close()
    code = ("import sys; from tempo_eval.store.db import connect; connect(sys.argv[1]).close(); "
            "print(sorted(m for m in ('sqlalchemy', 'alembic') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
