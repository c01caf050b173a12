"""The server's heap kept out of the cycle collector (tempo_eval_app/serving.py, issue 29)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval_app import serving
from tests.support.paths import ROOT


@pytest.fixture
def fresh_serving(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(serving, "_frozen_after", set())
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cycle collector frees it


def test_the_first_run_of_a_page_collects_then_freezes_and_later_runs_do_not(fresh_serving) -> None:
    gc.unfreeze()
    garbage = _Node()
    gone = weakref.ref(garbage)
    del garbage
    kept = _Node()
    assert serving.freeze_heap_once("Results") is True
    assert gone() is None, "the garbage cycle was collected before the freeze, not frozen with the heap"
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert gc.is_tracked(kept) and kept.me is kept
    made_since = [_Node() for _ in range(10_000)]  # what a second freeze would add to the count
    assert serving.freeze_heap_once("Results") is False
    # frozen objects that another thread of the test process frees meanwhile lower the count: a
    # second freeze would have raised it by the 10,000 objects made since
    assert gc.get_freeze_count() <= frozen, "a page's second run freezes nothing more"
    assert len(made_since) == 10_000
    assert serving.freeze_heap_once("Claims") is True


def test_a_cycle_made_after_the_freeze_is_still_collected(fresh_serving) -> None:
    gc.unfreeze()
    serving.freeze_heap_once("Overview")
    later = _Node()
    gone = weakref.ref(later)
    del later
    gc.collect()
    assert gone() is None


def test_the_app_freezes_after_its_page_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_serving) -> None:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert "Overview" in serving._frozen_after  # noqa: SLF001 - the module's record of its freezes
    assert gc.get_freeze_count() > 0


def test_app_py_run_bare_has_no_error(tmp_path) -> None:
    """app.py run outside a Streamlit server (`python app.py`, or a worker process that prepares
    its parent's main script) ends cleanly: no traceback, no error logged by the sidebar."""
    import os
    import subprocess
    import sys

    root = ROOT
    done = subprocess.run([sys.executable, str(root / "app.py")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "ERROR" not in done.stderr, done.stderr[-2000:]


def _magic_statements(path: Path) -> list[str]:
    """The statements Streamlit's magic would write on the page (bare expressions that are not
    calls, and strings that are not docstrings), as "file:line"."""
    import ast

    found = []
    for parent in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            for i, node in enumerate(block if isinstance(block, list) else []):
                if not isinstance(node, ast.Expr) or isinstance(node.value, (ast.Call, ast.Await, ast.Yield)):
                    continue
                docstring = (i == 0 and field == "body" and isinstance(node.value, ast.Constant)
                             and isinstance(parent, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
                if not docstring:
                    found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_page_relies_on_magic_which_the_served_app_turns_off() -> None:
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["magicEnabled"] is False
    scripts = [ROOT / "app.py", *sorted((ROOT / "views").glob("*.py"))]
    assert len(scripts) > 10
    assert [s for path in scripts for s in _magic_statements(path)] == []


def test_the_magic_check_finds_a_bare_expression(tmp_path: Path) -> None:
    page = tmp_path / "page.py"
    page.write_text('"""Doc."""\nimport streamlit as st\nst.title("x")\ntable = 1\ntable\n"a string shown by magic"\n')
    assert _magic_statements(page) == ["page.py:5", "page.py:6"]
