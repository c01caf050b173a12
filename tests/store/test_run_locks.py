"""Runs shared between processes (issue 11): two processes evaluating the same dataset share one run and
compute each row once; a lock left by a killed process is taken over; a run being evaluated is not
deleted; a deadline passing while another process holds the run writes nothing."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT

ROWS = [{"query_id": f"q{i}", "query": "x", "retrieved_ids": ["d1", "d2"], "gold_ids": ["d2"]} for i in range(400)]


def _dataset():
    return load_dataset("\n".join(json.dumps(r) for r in ROWS).encode(), name="d.jsonl")


# ---- two processes, one run ------------------------------------------------------------------

def _judge_rows(n: int) -> str:
    return "\n".join(json.dumps({
        "query_id": f"q{i}", "query": "When was it built?", "answer": f"It was built in {1900 + i}.",
        "contexts": [f"Built in {1900 + i}."],
    }) for i in range(n))


@pytest.mark.slow
@pytest.mark.parametrize("stagger", [0.0, 1.5])
def test_two_processes_evaluating_the_same_dataset_share_one_run_and_compute_each_row_once(
    tmp_path: Path, stagger: float
) -> None:
    import subprocess
    import sys
    import time

    from tests.support.openai_server import Reply, ScriptedOpenAIServer

    n = 40
    data = tmp_path / "d.jsonl"
    data.write_text(_judge_rows(n), encoding="utf-8")
    reply = Reply(content=json.dumps({"verdict": "SUPPORTED", "evidence": "Built.", "reason": "stated"}), delay=0.1)
    home = tmp_path / "ws"
    repo = ROOT
    with ScriptedOpenAIServer(lambda request: reply) as server:
        processes = []
        for name in ("a", "b"):
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "tempo_eval", "evaluate", str(data), "--metrics", "temporal_faithfulness",
                 "--verifier", "llm", "--model", "judge", "--base-url", server.base_url, "--concurrency", "2",
                 "--workspace", str(home), "--out", str(tmp_path / f"{name}.csv"), "--no-progress"],
                cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            ))
            time.sleep(stagger)
        outputs = [p.communicate(timeout=240) for p in processes]
        errors = [err for _, err in outputs]
        summaries = [out for out, _ in outputs]  # evaluate prints its summary on stdout (issue 24.13)
        assert [p.returncode for p in processes] == [0, 0], errors
        assert len(server.requests) == n  # one claim per row, each judged once
    with sqlite3.connect(home / DB_FILENAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == n
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert sum(f"0 results computed, {n} reused" in out for out in summaries) == 1, summaries


def test_a_run_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / DB_FILENAME
    store = RunStore(path)
    dataset_id = store.save_dataset(_dataset())
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": ["x"]})
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import socket
    import time

    with store.connection:
        store.connection.execute(
            "INSERT INTO run_locks (run_id, token, pid, host, heartbeat) VALUES (?, 'gone', ?, ?, ?)",
            (run_id, int(dead.stdout), socket.gethostname(), time.time()),
        )
    assert store.acquire_run(run_id) is None  # the holder's process is gone: taken over
    other = RunStore(path)
    holder = other.acquire_run(run_id)  # now held by a live process (this one, another store)
    assert holder is not None and holder["pid"] == os.getpid()
    store.release_run(run_id)
    assert other.acquire_run(run_id) is None


def test_a_run_being_evaluated_is_not_deleted_under_its_evaluation(tmp_path: Path) -> None:
    # deleting it would make the evaluating process fail with a FOREIGN KEY error that reads as
    # a damaged workspace; the run (and its dataset) stays until the evaluation has stopped
    from tempo_eval.store.runs import RunInUse

    path = tmp_path / DB_FILENAME
    evaluating = RunStore(path)
    dataset_id = evaluating.save_dataset(_dataset())
    run_id, _ = evaluating.create_or_resume_run(dataset_id, {"metrics": ["x"]})
    assert evaluating.acquire_run(run_id) is None
    dashboard = RunStore(path)
    with pytest.raises(RunInUse, match=f"run {run_id} is being evaluated by process {os.getpid()}"):
        dashboard.delete_run(run_id)
    with pytest.raises(RunInUse, match=f"run {run_id} is being evaluated"):
        dashboard.delete_dataset(dataset_id)
    assert dashboard.run_info(run_id)["dataset_id"] == dataset_id  # nothing was deleted
    evaluating.release_run(run_id)
    dashboard.delete_dataset(dataset_id)
    assert dashboard.list_runs().empty and dashboard.list_datasets().empty


def test_a_deadline_passing_while_another_process_holds_the_run_writes_nothing(tmp_path: Path) -> None:
    # the other process is still evaluating: a row it finishes after this call gave up waiting
    # must not be overwritten with this call's "deadline passed" judge_error
    path = tmp_path / DB_FILENAME
    dataset = _dataset()
    metrics = [TemporalNDCG()]
    holder = RunStore(path)
    from tempo_eval.engine.runner import run_config

    run_id, _ = holder.create_or_resume_run(holder.save_dataset(dataset), run_config(metrics))
    assert holder.acquire_run(run_id) is None
    from tempo_eval.metrics.base import MetricResult

    holder.record_row(run_id, 0, str(dataset.frame["query_id"][0]), [MetricResult("temporal_ndcg", 0.5, "ok")])

    waiting = RunStore(path)
    result = evaluate(dataset, metrics, store=waiting, deadline=0.6)
    assert result.status == "cancelled" and result.computed == 0 and result.reused == 1
    assert result.deadline_rows == len(dataset.frame) - 1
    frame = result.frame
    assert frame["score"].iloc[0] == 0.5 and list(frame["row"]) == list(range(len(dataset.frame)))
    assert set(frame["reason_code"].iloc[1:]) == {"judge_error"}
    stored = holder.results_frame(run_id)
    assert list(stored["row"]) == [0]  # nothing written by the waiting call
    assert holder.run_info(run_id)["status"] == "running"  # nor its status touched
    holder.record_row(run_id, 1, str(dataset.frame["query_id"][1]), [MetricResult("temporal_ndcg", 1.0, "ok")])
    assert holder.results_frame(run_id)["score"].tolist() == [0.5, 1.0]
    holder.release_run(run_id)

