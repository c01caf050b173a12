"""Evaluating at size (issue 27.1, 27.2): rows streamed from a file and scored a batch at a time
give the results each row gets alone; a streamed run killed with SIGKILL resumes to the same
scores; the disk is checked before anything is stored."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.engine.runner import evaluate, measure_row, row_dict
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.stream import open_stream
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.db import WorkspaceError
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT

CONTEXTS = ["The bridge opened in 1998 and was widened in 2004.", "Nothing dated here.",
            "In the 1990s the city grew; by 2001 it had doubled.", "Last year the plan was dropped."]


def _rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        year = 1995 + i % 12
        rows.append({
            "query_id": f"q{i}",
            "query": f"What happened to the bridge in {year}?" if i % 7 else "Who built it?",
            "answer": (f"In {year} it was widened. It opened in {year - 3}." if i % 9 else "I do not know."),
            "contexts": [CONTEXTS[i % 4], CONTEXTS[(i + 1) % 4], f"In {year} the bridge was widened."]
            if i % 11 else [],
            "reference_date": "2010-06-30" if i % 5 == 0 else None,
        })
    return rows


def _csv(path: Path, rows: list[dict]) -> Path:
    frame = pd.DataFrame(rows)
    frame["contexts"] = frame["contexts"].map(json.dumps)
    frame.to_csv(path, index=False)
    return path


def _stored(store: RunStore, run_id: int, rows: range) -> list[tuple]:
    out = []
    for row in rows:
        for metric in ("temporal_faithfulness", "temporal_ndcg"):
            result = store.get_result(run_id, row, metric)
            out.append((row, metric, None if result.score != result.score else result.score,
                        result.reason_code, result.reason, json.dumps(result.details, sort_keys=True, default=str)))
    return out


def _metrics() -> list:
    return [TemporalFaithfulness(), TemporalNDCG(k=3)]


def test_rows_scored_in_batches_equal_the_same_rows_scored_one_at_a_time(tmp_path: Path) -> None:
    path = _csv(tmp_path / "d.csv", _rows(60))
    store = RunStore(tmp_path / "ws.sqlite")
    result = evaluate(open_stream(path, batch_rows=16), _metrics(), store=store)
    assert result.n_rows == 60 and result.computed == 120

    frame = load_dataset(path).frame
    columns = [str(c) for c in frame.columns]
    metrics = _metrics()
    for i, values in enumerate(frame.to_numpy(dtype=object)):
        alone = asyncio.run(measure_row(metrics, row_dict(columns, values, None), i))
        for expected in alone:
            stored = store.get_result(result.run_id, i, expected.metric)
            assert (stored.score == expected.score) or (stored.score != stored.score and expected.score != expected.score)
            assert (stored.reason_code, stored.reason) == (expected.reason_code, expected.reason)
            assert json.dumps(stored.details, sort_keys=True, default=str) == json.dumps(
                json.loads(json.dumps(expected.details, default=str)), sort_keys=True, default=str)


def test_the_first_rows_alone_score_as_inside_the_full_dataset(tmp_path: Path) -> None:
    rows = _rows(45)
    full = evaluate(_csv(tmp_path / "full.csv", rows), _metrics(), store=RunStore(tmp_path / "a.sqlite"))
    head = evaluate(_csv(tmp_path / "head.csv", rows[:13]), _metrics(), store=RunStore(tmp_path / "b.sqlite"))
    assert _stored(full.store, full.run_id, range(13)) == _stored(head.store, head.run_id, range(13))


_KILLED_RUN = textwrap.dedent("""
    import sys
    from tempo_eval.io.stream import open_stream
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.store.runs import RunStore

    result = evaluate(open_stream(sys.argv[1], batch_rows=200), [TemporalFaithfulness(), TemporalNDCG(k=3)],
                      store=RunStore(sys.argv[2]))
    print(result.computed, result.reused, result.n_rows)
""")


def _results(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_a_streamed_run_killed_part_way_resumes_and_ends_with_identical_scores(tmp_path: Path) -> None:
    n = 6000
    path = _csv(tmp_path / "d.csv", _rows(n))
    db = tmp_path / "killed.sqlite"
    command = [sys.executable, "-c", _KILLED_RUN, str(path), str(db)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _results(db) < 400 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    stored_before = _results(db)
    assert 0 < stored_before < 2 * n, "the run was not killed part way"

    resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    computed, reused, n_rows = map(int, resumed.stdout.split())
    assert n_rows == n and reused == stored_before and computed == 2 * n - stored_before

    whole = evaluate(path, _metrics(), store=RunStore(tmp_path / "whole.sqlite"))
    killed = RunStore(db)
    run_id = int(killed.list_runs()["id"].iloc[0])
    assert killed.dataset_info(killed.run_info(run_id)["dataset_id"])["n_rows"] == n
    columns = ["row", "query_id", "metric", "score", "reason_code", "reason"]
    pd.testing.assert_frame_equal(killed.results_frame(run_id)[columns], whole.frame[columns])
    assert killed.dataset_frame(killed.run_info(run_id)["dataset_id"]).equals(
        whole.store.dataset_frame(whole.dataset_id))


def test_a_disk_too_small_for_the_store_is_refused_before_anything_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    path = _csv(tmp_path / "d.csv", _rows(30))
    store = RunStore(tmp_path / "ws.sqlite")
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage._replace(free=1000))
    with pytest.raises(WorkspaceError, match="the disk has 0 MB free; storing d.csv"):
        evaluate(path, _metrics(), store=store)
    assert store.list_runs().empty


def test_progress_may_take_the_rate_in_rows_per_second(tmp_path: Path) -> None:
    calls: list[tuple] = []
    path = _csv(tmp_path / "d.csv", _rows(30))
    evaluate(open_stream(path, batch_rows=10), _metrics(), store=RunStore(tmp_path / "ws.sqlite"),
             progress=lambda done, total, rate: calls.append((done, total, rate)))
    assert [c[:2] for c in calls] == [(0, 30), (10, 30), (20, 30), (30, 30)]
    assert all(rate >= 0 for *_, rate in calls) and calls[-1][2] > 0


def test_a_path_is_streamed_without_the_whole_file_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "0.001")
    path = _csv(tmp_path / "d.csv", _rows(40))
    assert os.path.getsize(path) > 1000
    result = evaluate(path, _metrics(), store=RunStore(tmp_path / "ws.sqlite"))
    assert result.n_rows == 40 and result.status == "finished"


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_results_written_a_part_at_a_time_equal_the_whole_frame(tmp_path: Path, suffix: str) -> None:
    from tempo_eval.engine.scoring import aggregate_frame
    from tempo_eval.io.export import write_frame, write_frames

    rows = _rows(25)
    for i, row in enumerate(rows):
        row["run"] = "sys-a" if i >= 10 else None  # the first part has no system at all
    result = evaluate(_csv(tmp_path / "d.csv", rows), _metrics(), store=RunStore(tmp_path / "ws.sqlite"))
    write_frame(result.frame, tmp_path / f"whole{suffix}")
    write_frames(result.store.results_frames(result.run_id, rows_per_frame=10), tmp_path / f"parts{suffix}")
    if suffix == ".parquet":
        assert pd.read_parquet(tmp_path / "parts.parquet").equals(pd.read_parquet(tmp_path / "whole.parquet"))
    else:
        assert (tmp_path / f"parts{suffix}").read_bytes() == (tmp_path / f"whole{suffix}").read_bytes()
    slim = result.store.scores_frame(result.run_id)
    pd.testing.assert_frame_equal(aggregate_frame(slim, metrics=result.metrics), result.aggregate())
