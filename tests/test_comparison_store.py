"""The saved comparison of run files (tempo_eval.comparison_store) and its `compare_runs` job in a
worker process (issue 29.1): one folder per content and settings, reused whatever the files are
called; the values equal `compare`'s; the worker is a process of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tempo_eval import comparison_store
from tempo_eval.store.jobs import JobQueue

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "data" / "asof"


def _arguments(folder: Path = FIXTURE, **settings) -> dict:
    return {"runs": [str(folder / "run_live.trec"), str(folder / "run_snapshot.trec")],
            "qrels": str(folder / "qrels.txt"), "doc_dates": str(folder / "doc-dates.tsv"),
            "query_dates": str(folder / "query-dates.tsv"), "missing": "zero", "k": 5, **settings}


def test_the_same_bytes_under_other_names_are_scored_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = comparison_store.compute(_arguments())
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURE, copy)
    import tempo_eval.trec_scores as trec_scores

    def refuse(*args, **kwargs):
        raise AssertionError("scored again")

    monkeypatch.setattr(trec_scores, "score_trec_files", refuse)
    assert comparison_store.compute(_arguments(copy)) == first
    with pytest.raises(AssertionError, match="scored again"):  # other settings: another comparison
        comparison_store.compute(_arguments(copy, max_age=30))


def test_settings_that_change_the_values_change_the_key() -> None:
    keys = {comparison_store.content_key(_arguments(**change)) for change in
            ({}, {"k": 10}, {"max_age": 30}, {"half_life": 90}, {"missing": "drop"})}
    assert len(keys) == 5
    undated = _arguments(doc_dates=None, query_dates=None)
    assert comparison_store.content_key(undated) == comparison_store.content_key({**undated, "k": 99})


def test_the_saved_values_are_the_command_lines(tmp_path: Path, capsys) -> None:
    import pandas as pd

    from tests.support.cli import run_cli

    found = comparison_store.load(comparison_store.compute(_arguments(max_age=30, half_life=90))["key"])
    lines = tmp_path / "pq.csv"
    code, err = run_cli(["compare", *_arguments()["runs"], "--qrels", str(FIXTURE / "qrels.txt"), "--doc-dates",
                         str(FIXTURE / "doc-dates.tsv"), "--query-dates", str(FIXTURE / "query-dates.tsv"),
                         "--max-age", "30", "--half-life", "90", "--metric", "ndcg@7",
                         *[a for m in comparison_store.AS_OF for a in ("--metric", f"{m}@5")],
                         "--per-query", str(lines)], capsys)
    assert code == 0, err
    expected = pd.read_csv(lines)
    mine = found.per_query(7)
    for run, query, metric, value in expected.itertuples(index=False):
        assert mine[run][metric][query] == pytest.approx(value, nan_ok=True), (run, query, metric)
    assert found.leaking("snapshot").empty and set(found.leaking("live")["future documents"]) == {1}
    ranked = found.ranked("live", "w01-fed", 5)
    assert ranked["rank"].tolist() == [1, 2, 3, 4, 5] and ranked.loc[2, "flag"] == "undated"


def test_a_compare_runs_job_is_run_by_a_worker_process() -> None:
    queue = JobQueue()
    job_id = queue.submit("compare_runs", _arguments(), label="compare run files")
    workspace = os.environ["TEMPO_EVAL_HOME"]
    done = subprocess.run([sys.executable, "-m", "tempo_eval", "job", "run", "--workspace", workspace, "--limit", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    job = queue.get(job_id)
    assert job["status"] == "finished" and job["pid"] != os.getpid() and job["done"] == job["total"] == 1000
    found = comparison_store.load(job["result"]["key"])
    assert found.runs == ["live", "snapshot"] and found.as_of[0] == "future_leak@5"
    assert (Path(workspace) / "cache" / "compare" / job["result"]["key"] / "documents.parquet").is_file()


def test_a_bad_file_fails_the_job_with_the_readers_message() -> None:
    from tempo_eval.cli.job import run_worker

    queue = JobQueue()
    bad = Path(os.environ["TEMPO_EVAL_HOME"]) / "q.tsv"
    bad.write_text("w01-fed\tyesterday\n")
    job_id = queue.submit("compare_runs", _arguments(query_dates=str(bad)))
    run_worker(queue, limit=1)
    job = queue.get(job_id)
    assert job["status"] == "failed"
    assert job["error"].startswith("DateError: ") and f"{bad}, line 1" in job["error"] and "'yesterday'" in job["error"]
    assert not list((Path(os.environ["TEMPO_EVAL_HOME"]) / "cache" / "compare").glob("*"))  # nothing half-written
