"""Every writer of the command line (`evaluate --out`, `diff --html`, `compare --out`, `compare
--per-query`, `runs export --out`) refuses a target that is the workspace database, its -wal or
-shm file, or a file in a folder the workspace owns (also through a link): nothing stored is lost."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tempo_eval.cli import EXIT_INPUT
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli
from tests.support.paths import ROOT
from tests.support.sample_runs import make_sample_runs

SAMPLE = ROOT / "data" / "sample"


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, int, int]:
    store = RunStore()
    baseline, candidate = make_sample_runs(store, tmp_path)
    store.close()
    return Path(os.environ["TEMPO_EVAL_HOME"]), baseline, candidate


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def _targets(home: Path, tmp_path: Path) -> dict[str, Path]:
    (home / "uploads").mkdir(exist_ok=True)
    (home / "uploads" / "saved.csv").write_text("query,answer\na,b\n")
    (home / "tempo_eval.sqlite-wal").touch()
    (home / "tempo_eval.sqlite-shm").touch()
    link = tmp_path / "innocent.csv"
    link.symlink_to(home / DB_FILENAME)
    return {"the workspace database": home / DB_FILENAME, "-wal": home / "tempo_eval.sqlite-wal",
            "-shm": home / "tempo_eval.sqlite-shm", "uploads/": home / "uploads" / "saved.csv",
            "the workspace database ": link}


def _writers(baseline: int, candidate: int) -> dict[str, object]:
    run_a, run_b, qrels = SAMPLE / "run_bm25.trec", SAMPLE / "run_dense.trec", SAMPLE / "qrels.txt"
    compare = ["compare", str(run_a), str(run_b), "--qrels", str(qrels)]
    return {
        "diff --html": lambda t: ["diff", str(baseline), str(candidate), "--html", str(t)],
        "compare --out": lambda t: [*compare, "--out", str(t)],
        "compare --per-query": lambda t: [*compare, "--per-query", str(t)],
        "runs export --out": lambda t: ["runs", "export", str(baseline), "--out", str(t)],
        "evaluate --out": lambda t: ["evaluate", str(SAMPLE / "temporal_qa.jsonl"), "--metrics",
                                     "temporal_faithfulness", "--out", str(t)],
    }


@pytest.mark.parametrize("writer", ["diff --html", "compare --out", "compare --per-query", "runs export --out",
                                    "evaluate --out"])
def test_a_writer_refuses_the_workspaces_own_files(writer: str, workspace, tmp_path: Path, capsys) -> None:
    home, baseline, candidate = workspace
    argv = _writers(baseline, candidate)[writer]
    option = writer.split()[-1]
    for what, target in _targets(home, tmp_path).items():
        before = {p.name: _digest(p) for p in home.rglob("*") if p.is_file()}
        code, said = run_cli(argv(target), capsys)  # type: ignore[operator]
        assert code == EXIT_INPUT, (what, said)
        if writer == "evaluate --out" and target.suffix not in (".csv", ".jsonl", ".parquet"):
            assert "the extension must be" in said, said  # refused before, by its name
        else:
            assert option in said and what.strip() in said and "choose another" in said, said
        assert {p.name: _digest(p) for p in home.rglob("*") if p.is_file()} == before, what
    store = RunStore()
    assert set(store.list_runs()["id"]) >= {baseline, candidate}  # nothing stored was lost
    store.close()


def test_a_writer_still_writes_a_file_outside_the_workspace(workspace, tmp_path: Path, capsys) -> None:
    home, baseline, candidate = workspace
    for writer, argv in _writers(baseline, candidate).items():
        target = tmp_path / f"{writer.replace(' ', '_').replace('-', '')}.out"
        if writer.endswith("--out") and writer != "compare --out":
            target = target.with_suffix(".csv")
        code, said = run_cli(argv(target), capsys)  # type: ignore[operator]
        assert code in (0, 1), (writer, said)  # diff may exit 1 on regressions
        assert target.is_file() and target.stat().st_size > 0, writer
