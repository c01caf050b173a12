"""The saved comparison of run files (tempo_eval.compare.saved) and its `compare_runs` job in a
worker process (issue 29.1): one folder per content and settings, reused whatever the files are
called; the values equal `compare`'s; the worker is a process of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tempo_eval.compare import saved as saved_comparisons
from tempo_eval.store.jobs import JobQueue
from tests.support.paths import ROOT

FIXTURE = ROOT / "data" / "asof"


def _arguments(folder: Path = FIXTURE, **settings) -> dict:
    return {"runs": [str(folder / "run_live.trec"), str(folder / "run_snapshot.trec")],
            "qrels": str(folder / "qrels.txt"), "doc_dates": str(folder / "doc-dates.tsv"),
            "query_dates": str(folder / "query-dates.tsv"), "missing": "zero", "k": 5, **settings}


def test_the_same_bytes_under_other_names_are_scored_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = saved_comparisons.compute(_arguments())
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURE, copy)
    import tempo_eval.compare.trec_scores as trec_scores

    def refuse(*args, **kwargs):
        raise AssertionError("scored again")

    monkeypatch.setattr(trec_scores, "score_trec_files", refuse)
    assert saved_comparisons.compute(_arguments(copy)) == first
    with pytest.raises(AssertionError, match="scored again"):  # other settings: another comparison
        saved_comparisons.compute(_arguments(copy, max_age=30))


def test_settings_that_change_the_values_change_the_key() -> None:
    keys = {saved_comparisons.content_key(_arguments(**change)) for change in
            ({}, {"k": 10}, {"max_age": 30}, {"half_life": 90}, {"missing": "drop"})}
    assert len(keys) == 5
    undated = _arguments(doc_dates=None, query_dates=None)
    assert saved_comparisons.content_key(undated) == saved_comparisons.content_key({**undated, "k": 99})


def test_the_saved_values_are_the_command_lines(tmp_path: Path, capsys) -> None:
    import pandas as pd

    from tests.support.cli import run_cli

    found = saved_comparisons.load(saved_comparisons.compute(_arguments(max_age=30, half_life=90))["key"])
    lines = tmp_path / "pq.csv"
    code, err = run_cli(["compare", *_arguments()["runs"], "--qrels", str(FIXTURE / "qrels.txt"), "--doc-dates",
                         str(FIXTURE / "doc-dates.tsv"), "--query-dates", str(FIXTURE / "query-dates.tsv"),
                         "--max-age", "30", "--half-life", "90", "--metric", "ndcg@7",
                         *[a for m in saved_comparisons.AS_OF for a in ("--metric", f"{m}@5")],
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
    found = saved_comparisons.load(job["result"]["key"])
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


def test_documents_hand_computed_flags_and_ages(tmp_path: Path) -> None:
    """A query asked on 2023-01-10 (max_age 30): a document from the day after is future (-1), one
    of 2022-12-01 is stale (40 days > 30), a year "2023" counts from its first day (9 days), a
    blank date and a document missing from the file are undated; a query without an as-of date
    gets dates but no age and no flag; ranks past dated_k have no date columns."""
    import math

    import pandas as pd

    from tempo_eval.compare.trec_scores import score_trec_files

    (tmp_path / "a.run").write_text("".join(f"q1 Q0 {d} {r} {10 - r} a\n" for r, d in
                                            enumerate(["fut", "old", "year", "blank", "absent", "late"], 1))
                                    + "q2 Q0 fut 1 1 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 old 1 1 b\n")
    (tmp_path / "qrels").write_text("q1 0 year 2\nq2 0 fut 1\n")
    (tmp_path / "docs.tsv").write_text("fut\t2023-01-11\nold\t2022-12-01\nyear\t2023\nblank\t \nlate\t2023-01-10\n")
    (tmp_path / "queries.tsv").write_text("q1\t2023-01-10\n")
    scores = score_trec_files([tmp_path / "a.run", tmp_path / "b.run"], tmp_path / "qrels",
                              metrics=["future_leak@5", "ndcg@10"], doc_dates=tmp_path / "docs.tsv",
                              query_dates=tmp_path / "queries.tsv", max_age=30)
    frame = scores.documents(10, dated_k=5, max_age=30)
    a = frame[(frame["run"] == "a") & (frame["query_id"] == "q1")].set_index("doc_id")
    assert a["rank"].tolist() == [1, 2, 3, 4, 5, 6] and a["grade"].tolist() == [0, 0, 2, 0, 0, 0]
    assert a["flag"].tolist()[:5] == ["future", "stale", "", "undated", "undated"]
    assert a.loc["fut", "age"] == -1 and a.loc["old", "age"] == 40 and a.loc["year", "age"] == 9
    assert a.loc["year", "date"] == "2023" and a.loc["fut", "as_of"] == "2023-01-10"
    assert math.isnan(a.loc["blank", "age"]) and a["date"].isna()["absent"]
    assert a["flag"].isna()["late"] and a["date"].isna()["late"]  # rank 6 > dated_k
    q2 = frame[frame["query_id"] == "q2"].iloc[0]
    assert q2["date"] == "2023-01-11" and q2["flag"] == "" and math.isnan(q2["age"]) and pd.isna(q2["as_of"])
    assert frame[frame["run"] == "b"]["flag"].tolist() == ["stale"]


def test_a_cancelled_comparison_saves_nothing() -> None:
    import threading

    cancel = threading.Event()
    seen: list[float] = []

    def progress(fraction: float) -> None:
        seen.append(fraction)
        if fraction > 0:
            cancel.set()  # as the worker's watch does when the page asks

    assert saved_comparisons.compute(_arguments(), progress, cancel) is None
    assert seen
    assert not saved_comparisons.cache_root().exists() or not any(saved_comparisons.cache_root().iterdir())
