"""Issue 11, the workspace: every damaged or unusable database is one WorkspaceError line (CLI:
one `error:` line, exit 2), and damage is found when the workspace opens."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tempo_eval.cli import main
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store import WorkspaceError
from tempo_eval.store.db import DB_FILENAME, workspace_error
from tempo_eval.store.runs import RunStore

ROWS = [{"query_id": f"q{i}", "query": "x", "retrieved_ids": ["d1", "d2"], "gold_ids": ["d2"]} for i in range(400)]
MANY = "\n".join(json.dumps({**ROWS[0], "query_id": f"m{i}"}) for i in range(12_000))


def _dataset():
    return load_dataset("\n".join(json.dumps(r) for r in ROWS).encode(), name="d.jsonl")


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("intact") / DB_FILENAME
    store = RunStore(path)
    evaluate(_dataset(), [TemporalNDCG()], store=store)
    store.close()
    return path


def _damaged(intact: Path, tmp_path: Path, damage: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    path = home / DB_FILENAME
    shutil.copy(intact, path)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        if damage == "truncated":
            handle.truncate(size // 2)
        elif damage == "header":
            handle.write(b"this is not a database at all" * 4)
        elif damage == "middle":
            page = 4096
            handle.seek((size // page // 2) * page)
            handle.write(bytes(range(256)) * (page // 256))
    return path


@pytest.mark.parametrize(("damage", "says"), [
    ("truncated", "damaged"), ("header", "not a SQLite database"), ("middle", "damaged"),
])
def test_a_damaged_workspace_is_one_line_from_the_api_and_the_cli(
    damage: str, says: str, intact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _damaged(intact, tmp_path, damage)
    with pytest.raises(WorkspaceError) as caught:
        evaluate(_dataset(), [TemporalNDCG()], store=RunStore(path))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and says in message
    assert "restore it from a backup" in message and "new workspace" in message

    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS), encoding="utf-8")
    code = main(["evaluate", str(data), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"),
                 "--workspace", str(path.parent), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: workspace database ") and says in line
    assert not (tmp_path / "r.csv").exists()


def test_garbage_in_the_middle_is_found_before_any_result_is_reused(intact: Path, tmp_path: Path) -> None:
    path = _damaged(intact, tmp_path, "middle")
    with pytest.raises(WorkspaceError, match="damaged"):
        RunStore(path)


def test_a_full_disk_is_one_line_saying_to_free_space_and_finished_rows_stay(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    store = RunStore(path)
    (pages,) = store.connection.execute("PRAGMA page_count").fetchone()
    store.connection.execute(f"PRAGMA max_page_count = {pages + 40}")  # a disk that fills up
    with pytest.raises(WorkspaceError) as caught:
        evaluate(load_dataset(MANY.encode(), name="big.jsonl"),
                 [TemporalNDCG()], store=store)
    message = str(caught.value)
    assert "\n" not in message and "full" in message and "free disk space" in message
    store.close()
    assert RunStore(path).list_datasets().shape[0] <= 1  # the file still opens


def test_a_full_disk_in_the_cli_is_one_error_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import tempo_eval.store.runs as runs

    real_connect = runs.connect

    def small_disk(path=None):
        conn = real_connect(path)
        conn.execute("PRAGMA max_page_count = 12")
        return conn

    monkeypatch.setattr(runs, "connect", small_disk)
    data = tmp_path / "d.jsonl"
    data.write_text(MANY, encoding="utf-8")
    code = main(["evaluate", str(data), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"),
                 "--workspace", str(tmp_path / "ws"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: workspace database ") and "free disk space" in line


def test_a_read_only_workspace_says_to_make_it_writable(intact: Path, tmp_path: Path) -> None:
    message = str(workspace_error(tmp_path / "x.sqlite", sqlite3.OperationalError("attempt to write a readonly database")))
    assert "make the file and its directory writable" in message
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only files; the message mapping above is still checked")
    path = _damaged(intact, tmp_path, "none")
    path.chmod(0o444)
    path.parent.chmod(0o555)
    try:
        with pytest.raises(WorkspaceError, match="writable"):
            evaluate(_dataset(), [TemporalNDCG(k=3)], store=RunStore(path))
    finally:
        path.parent.chmod(0o755)


def test_a_newer_schema_is_one_line_too(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 999")
    with pytest.raises(WorkspaceError, match="schema version 999, newer"):
        RunStore(path)


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
    repo = Path(__file__).resolve().parents[1]
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


# ---- store size: compressed details and rows, lossless ---------------------------------------

def test_details_and_dataset_rows_are_stored_compressed_and_read_back_exactly(tmp_path: Path) -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    rows = [{"query_id": f"q{i}", "query": "When between 1900 and 1950?", "answer": f"Built in {1900 + i}, "
             f"renovated in {1930 + i}.", "contexts": [f"Work ended in {1900 + i}.", "During World War II."],
             "retrieved_ids": ["d1"], "gold_ids": ["d1"]} for i in range(50)]
    dataset = load_dataset("\n".join(json.dumps(r) for r in rows).encode(), name="d.jsonl")
    store = RunStore(tmp_path / DB_FILENAME)
    result = evaluate(dataset, [TemporalFaithfulness(), TemporalNDCG()], store=store)
    kinds = [t for (t,) in store.connection.execute("SELECT typeof(details) FROM results")]
    assert kinds == ["blob"] * 100  # every detail here is long enough to be compressed
    (stored_rows,) = store.connection.execute("SELECT typeof(rows) FROM datasets").fetchone()
    assert stored_rows == "blob"
    fresh = [TemporalFaithfulness().measure(answer=r["answer"], contexts=r["contexts"]) for r in rows[:5]]
    for i, expected in enumerate(fresh):
        assert result.result(i, "temporal_faithfulness").details == json.loads(json.dumps(expected.details))
    pd_frame = store.dataset_frame(result.dataset_id)
    assert pd_frame["contexts"].tolist() == dataset.frame["contexts"].tolist()
    again = evaluate(dataset, [TemporalFaithfulness(), TemporalNDCG()], store=store)
    assert again.computed == 0 and again.reused == 100


def test_results_written_as_text_by_older_versions_still_read(tmp_path: Path) -> None:
    from tempo_eval.metrics.base import MetricResult

    store = RunStore(tmp_path / DB_FILENAME)
    dataset_id = store.save_dataset(_dataset())
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": ["m"]})
    store.record_row(run_id, 0, "q0", [MetricResult("m", 0.5, "why", None, {"a": list(range(100))})])
    details = json.dumps({"old": "text", "years": list(range(1900, 1990))})
    store.connection.execute("UPDATE results SET details = ? WHERE run_id = ?", (details, run_id))
    store.connection.execute("UPDATE datasets SET rows = ? WHERE id = ?",
                             (json.dumps({"columns": ["query_id"], "rows": [["q0"]]}), dataset_id))
    store.connection.commit()
    assert store.get_result(run_id, 0, "m").details == json.loads(details)
    assert store.dataset_frame(dataset_id)["query_id"].tolist() == ["q0"]


def test_the_dashboard_shows_a_workspace_error_as_it_is(tmp_path: Path) -> None:
    from tempo_eval_app.errors import error_message

    error = WorkspaceError(tmp_path / "x.sqlite", "the database is damaged (malformed)", "restore it")
    assert error_message(error) == str(error)


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
