"""`evaluate` without `--out` stores the run in the workspace and writes nothing where it runs;
`runs export` writes the file later. The Ray engine, which writes blocks to a directory, still
needs one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tests.support.paths import ROOT

SAMPLE = ROOT / "data" / "sample" / "temporal_qa.csv"


def _cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tempo_eval", *argv], cwd=tmp_path / "cwd", env=env,
                          capture_output=True, text=True, timeout=240)


def test_the_run_is_stored_and_nothing_is_written_where_the_command_runs(tmp_path: Path) -> None:
    (tmp_path / "cwd").mkdir()
    done = _cli(tmp_path, "evaluate", str(SAMPLE), "--metric", "temporal_faithfulness", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "run 1: 30 rows" in done.stdout and "runs export 1 --out FILE" in done.stdout
    assert "temporal_faithfulness: 0.8000" in done.stdout
    assert list((tmp_path / "cwd").iterdir()) == []
    out = tmp_path / "results.csv"
    exported = _cli(tmp_path, "runs", "export", "1", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert len(pd.read_csv(out)) == 30


def test_the_ray_engine_still_asks_for_a_directory(tmp_path: Path) -> None:
    (tmp_path / "cwd").mkdir()
    done = _cli(tmp_path, "evaluate", str(SAMPLE), "--metric", "temporal_faithfulness", "--engine", "ray")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --engine ray writes its blocks to a directory: add --out DIR"]
