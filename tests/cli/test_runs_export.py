"""`tempo-eval runs export` says which file it wrote (issue 38.16): the path, not just the format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli_streams as run_cli
from tests.support.sample_runs import make_sample_runs

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")


def test_runs_export_names_the_file_it_wrote(tmp_path: Path, capsys) -> None:
    a, _ = make_sample_runs(RunStore(), tmp_path)
    for name in ("results.csv", "results.jsonl", "claims dir/out.parquet"):
        target = tmp_path / name
        code, _, err = run_cli(["runs", "export", str(a), "--out", str(target)], capsys)
        assert code == 0 and target.is_file()
        assert f"written to {target.resolve()} ({target.suffix[1:]})" in err, err
