"""The users of a workspace (`tempo_eval.store.users`) and `tempo-eval users add / list / remove`:
roles stored and read back, the settings' admin, the last admin kept, a workspace of the older
schema upgraded in place, and the owner of a run."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tempo_eval.store import db
from tempo_eval.store.users import UserStore
from tests.support.cli import run_cli_streams


@pytest.fixture
def users(monkeypatch: pytest.MonkeyPatch) -> UserStore:
    monkeypatch.delenv("TEMPO_EVAL_ADMIN", raising=False)
    store = UserStore()
    yield store
    store.close()


def test_a_user_is_added_read_back_and_removed(users: UserStore) -> None:
    assert users.add(" Ana@Example.org", "analyst", added_by="root") is None
    [row] = users.users()
    assert row["email"] == "ana@example.org" and row["role"] == "analyst" and row["added_by"] == "root"
    assert row["added_at"][:4].isdigit() and "T" in row["added_at"]  # ISO text, written by Python
    assert users.role_of("ANA@example.org") == "analyst"
    assert users.add("ana@example.org", "viewer", added_by="root") == "analyst"
    assert users.role_of("ana@example.org") == "viewer"
    assert users.remove("ana@example.org") == "viewer"
    assert users.users() == []
    with pytest.raises(KeyError, match="ana@example.org is not a user"):
        users.remove("ana@example.org")


def test_a_signed_in_user_not_listed_is_a_viewer_and_nobody_has_no_role(users: UserStore) -> None:
    assert users.role_of("stranger@x.org") == "viewer"
    assert users.role_of("") is None
    assert users.role_of("not an address") is None


def test_the_settings_admin_is_admin_whatever_the_table_says(users: UserStore, monkeypatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_ADMIN", "Boss@x.org")
    assert users.role_of("boss@x.org") == "admin"
    users.add("boss@x.org", "viewer", added_by="root")
    assert users.role_of("boss@x.org") == "admin"


def test_the_last_admin_is_neither_removed_nor_demoted_without_a_settings_admin(users: UserStore, monkeypatch) -> None:
    users.add("a@x.org", "admin", added_by="root")
    with pytest.raises(ValueError, match="without an admin"):
        users.remove("a@x.org")
    with pytest.raises(ValueError, match="without an admin"):
        users.add("a@x.org", "analyst", added_by="root")
    assert users.role_of("a@x.org") == "admin"
    users.add("b@x.org", "admin", added_by="a@x.org")
    users.remove("a@x.org")  # another admin is left
    monkeypatch.setenv("TEMPO_EVAL_ADMIN", "boss@x.org")
    users.remove("b@x.org")  # the settings name one
    assert users.users() == []


def test_bad_roles_and_e_mails_are_refused(users: UserStore) -> None:
    with pytest.raises(ValueError, match="unknown role 'boss'"):
        users.add("a@x.org", "boss", added_by="root")
    with pytest.raises(ValueError, match="not an e-mail address"):
        users.add("a x.org", "viewer", added_by="root")


def test_a_workspace_of_the_previous_schema_gains_the_users_table_and_keeps_its_rows(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    for script in db.MIGRATIONS:  # a workspace made before users: every step of the SQLite file's own list
        conn.executescript(script)
    conn.execute(f"PRAGMA user_version = {len(db.MIGRATIONS)}")
    conn.execute("INSERT INTO verdict_cache (key, record) VALUES ('k', '{}')")
    conn.commit()
    conn.close()
    store = UserStore(path)
    store.add("a@x.org", "analyst", added_by="root")
    assert store.role_of("a@x.org") == "analyst"
    assert store._conn.execute("SELECT COUNT(*) FROM verdict_cache").fetchone()[0] == 1
    assert store._conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    store.close()


def test_users_and_roles_are_kept_on_both_databases(workspace_db: str) -> None:
    store = UserStore(workspace_db)
    assert store.add("a@x.org", "analyst", added_by="root") is None
    assert store.add("a@x.org", "admin", added_by="root") == "analyst"
    assert store.role_of("a@x.org") == "admin"
    store.close()


def test_the_command_line_adds_lists_and_removes_users(capsys, monkeypatch) -> None:
    monkeypatch.delenv("TEMPO_EVAL_ADMIN", raising=False)
    monkeypatch.setattr("tempo_eval.common.identity.os_user", lambda: "operator")
    code, _, err = run_cli_streams(["users", "add", "Ana@x.org", "--role", "analyst"], capsys)
    assert (code, err.strip()) == (0, "Added ana@x.org as analyst.")
    code, _, err = run_cli_streams(["users", "add", "ana@x.org", "--role", "admin"], capsys)
    assert (code, err.strip()) == (0, "ana@x.org: analyst -> admin.")
    code, out, _ = run_cli_streams(["users", "list", "--format", "json"], capsys)
    document = json.loads(out)
    assert code == 0 and [(u["email"], u["role"], u["added_by"]) for u in document["users"]] == [
        ("ana@x.org", "admin", "operator")]
    code, out, _ = run_cli_streams(["users"], capsys)
    assert code == 0 and "ana@x.org" in out and "admin" in out and "operator" in out
    code, _, err = run_cli_streams(["users", "remove", "ana@x.org"], capsys)
    assert code == 2 and err.startswith("error: removing ana@x.org would leave the workspace without an admin")
    code, _, err = run_cli_streams(["users", "remove", "bob@x.org"], capsys)
    assert code == 2 and "bob@x.org is not a user of this workspace" in err
    code, _, err = run_cli_streams(["users", "add", "bob", "--role", "viewer"], capsys)
    assert code == 2 and "'bob' is not an e-mail address" in err
    code, _, err = run_cli_streams(["users", "add", "bob@x.org", "--role", "owner"], capsys)
    assert code == 2 and "invalid choice: 'owner'" in err
    monkeypatch.setenv("TEMPO_EVAL_ADMIN", "boss@x.org")
    code, _, err = run_cli_streams(["users", "remove", "ana@x.org"], capsys)
    assert code == 0 and "Removed ana@x.org (was admin)" in err
    code, out, _ = run_cli_streams(["users", "list"], capsys)
    assert "admin by TEMPO_EVAL_ADMIN: boss@x.org" in out and "No user added" in out


def test_the_command_line_takes_the_workspace_option(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("TEMPO_EVAL_ADMIN", raising=False)
    code, _, _ = run_cli_streams(["users", "add", "a@x.org", "--role", "viewer", "--workspace", str(tmp_path)], capsys)
    assert code == 0 and (tmp_path / db.DB_FILENAME).exists()
