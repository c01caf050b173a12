"""The checkout holds the project, not scratch files left by a session or a tool run in it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT


def test_no_scratch_data_or_tool_caches_are_tracked() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    # data belongs under data/ or tests/data/; DeepEval writes its run cache to ./.deepeval/
    stray = [p for p in tracked if ("/" not in p and Path(p).suffix in (".csv", ".jsonl", ".parquet"))
             or p.startswith(".deepeval/")]
    assert not stray, stray
