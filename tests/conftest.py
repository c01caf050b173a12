"""Shared fixtures. Tests never reach the network except 127.0.0.1."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

# huggingface_hub reads these once, at import; session fixtures run before the per-test fixture.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A workspace of the session's own for what runs before the per-test fixture below: module and
    session fixtures (a browser module storing its runs before its server starts, the default
    verdict cache it opens) never read or write the user's ~/.tempo_eval, which may hold another
    version's schema."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEMPO_EVAL_HOME", str(tmp_path_factory.mktemp("session_home")))
        yield


@pytest.fixture(autouse=True)
def _offline_and_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # Model hubs are unreachable here; make any accidental download fail fast instead of hanging.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    # Every test gets its own workspace so stores and caches never leak between tests.
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path_factory.mktemp("tempo_eval_home")))
    # a page waits for its upload's job to end (a worker process starts slowly on a loaded machine)
    monkeypatch.setenv("TEMPO_EVAL_PAGE_WAIT_S", "120")
    # the workspace database and files folder are the workspace's own unless a test says otherwise
    monkeypatch.delenv("TEMPO_EVAL_DB", raising=False)
    monkeypatch.delenv("TEMPO_EVAL_FILES", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # Streamlit's AppTest leaves the app script as sys.modules["__main__"]: worker processes
    # (spawn, forkserver) started later in the same test process would run app.py to prepare
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])


# ---- the workspace database: SQLite (the file, as without TEMPO_EVAL_DB) or a real PostgreSQL ----

@pytest.fixture(scope="session")
def postgres_cluster():
    """A PostgreSQL cluster for the session (tests.support.postgres); skips, or with
    TEMPO_EVAL_REQUIRE_POSTGRES=1 fails, where PostgreSQL is not installed."""
    from tests.support.postgres import PostgresCluster, missing_reason

    reason = missing_reason()
    if reason is not None:
        if os.environ.get("TEMPO_EVAL_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"TEMPO_EVAL_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    cluster = PostgresCluster.start()  # a folder of its own under /tmp: the postgres user must reach it
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh, migrated PostgreSQL database, made the workspace's (TEMPO_EVAL_DB) for this test."""
    url = postgres_cluster.new_database()
    monkeypatch.setenv("TEMPO_EVAL_DB", url)
    return url


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "workspace_db" in metafunc.fixturenames:
        kinds = ["sqlite"] if metafunc.definition.get_closest_marker("sqlite_only") else ["sqlite", "postgresql"]
        metafunc.parametrize("workspace_db", kinds, indirect=True)


@pytest.fixture
def workspace_db(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs once on each database: the workspace's SQLite file (TEMPO_EVAL_DB unset), and
    a fresh PostgreSQL database (TEMPO_EVAL_DB set). Returns what `connect()` then opens."""
    if request.param == "sqlite":
        monkeypatch.delenv("TEMPO_EVAL_DB", raising=False)
        from tempo_eval.store.db import default_db_path

        return str(default_db_path())
    return request.getfixturevalue("postgres_url")
