"""Shared fixtures. Tests never reach the network except 127.0.0.1."""

from __future__ import annotations

import os
import sys

# huggingface_hub reads these once, at import; session fixtures run before the per-test fixture.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest


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
