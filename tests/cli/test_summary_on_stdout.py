"""The command line prints its summary on stdout without library progress bars, and `compare` says one
pair of runs with the pages' test (issue 24, points 13-15), in a fresh workspace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.app_server import ROOT

pytestmark = pytest.mark.slow  # command-line runs in a fresh workspace (no browser)


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tempo_eval", *args, "--workspace", str(home)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_13_15_the_command_line_prints_its_summary_on_stdout_without_library_bars(tmp_path: Path) -> None:
    done = _cli("evaluate", str(ROOT / "data" / "sample" / "conversation_museum.json"), "--metrics",
                "turn_faithfulness", "--out", str(tmp_path / "r.csv"), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "turn_faithfulness:" in done.stdout
    assert "Loading weights" not in done.stderr


def test_14_compare_says_one_pair_of_runs_with_the_pages_test(tmp_path: Path) -> None:
    sample = ROOT / "data" / "sample"
    done = subprocess.run([sys.executable, "-m", "tempo_eval", "compare", str(sample / "run_bm25.trec"),
                           str(sample / "run_dense.trec"), "--qrels", str(sample / "qrels.txt")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 pair of runs" in done.stdout and "run pairs" not in done.stdout
    assert "t-test" in done.stdout

