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
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # Streamlit's AppTest leaves the app script as sys.modules["__main__"]: worker processes
    # (spawn, forkserver) started later in the same test process would run app.py to prepare
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
