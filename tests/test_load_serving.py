"""The server's heap kept out of the cycle collector (tempo_eval_app/serving.py, issue 29)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval_app import serving

ROOT = Path(__file__).resolve().parents[1]


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
    assert serving.freeze_heap_once("Results") is False
    assert gc.get_freeze_count() == frozen, "a page's second run freezes nothing more"
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
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "app.py")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "ERROR" not in done.stderr, done.stderr[-2000:]
