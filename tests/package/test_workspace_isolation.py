"""Every test, and every module or session fixture, runs in a workspace of the test session, never
the user's ~/.tempo_eval (tests/conftest.py): a module fixture runs before the per-test fixture that
gives each test its own workspace, and a browser module that stored its runs there once read a
workspace another version had upgraded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def module_fixture_home() -> str:
    return os.environ.get("TEMPO_EVAL_HOME", "")


def test_a_module_fixture_gets_a_workspace_of_the_session_not_the_users(module_fixture_home: str) -> None:
    assert module_fixture_home, "TEMPO_EVAL_HOME is unset: the default is the user's ~/.tempo_eval"
    assert not Path(module_fixture_home).resolve().is_relative_to(Path.home().resolve() / ".tempo_eval")


def test_each_test_gets_its_own_workspace_beside_the_sessions(module_fixture_home: str) -> None:
    assert os.environ["TEMPO_EVAL_HOME"] != module_fixture_home
