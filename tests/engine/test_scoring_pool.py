"""Offline batches scored in worker processes (issue 27): the same results as one process; a run
killed with -9 resumes to the same scores; cancel, the deadline and a killed worker leave no
process behind; a worker's death fails the run with a message saying so; `--processes`."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tempo_eval.engine.pool as scoring_pool
from tempo_eval.engine.pool import ScoringPool, ScoringProcessError
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.stream import frame_stream
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore
from tests.engine.test_runner_stream import _csv, _results, _rows
from tests.support.cli import run_cli_streams
from tests.support.paths import ROOT

#: an answer that makes `_KillsItsWorker` kill the worker process scoring it
KILL = "This answer kills the process that scores it."
#: an answer that makes `_FailsOnARow` raise
FAIL = "This answer cannot be scored."


class _KillsItsWorker(TemporalFaithfulness):
    """Temporal Faithfulness whose worker process dies (SIGKILL) on a row answering `KILL`."""

    async def _ameasure(self, **inputs: Any) -> Any:
        if inputs.get("answer") == KILL and multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return await super()._ameasure(**inputs)


class _FailsOnARow(TemporalFaithfulness):
    """Temporal Faithfulness that raises on a row answering `FAIL` (a row error, isolated)."""

    async def _ameasure(self, **inputs: Any) -> Any:
        if inputs.get("answer") == FAIL:
            raise ValueError("no way to score this answer")
        return await super()._ameasure(**inputs)


class _Slow(TemporalFaithfulness):
    """Temporal Faithfulness taking 5 ms a row: a run that lasts long enough to be stopped."""

    async def _ameasure(self, **inputs: Any) -> Any:
        time.sleep(0.005)
        return await super()._ameasure(**inputs)


class _Pools(list):
    """The pools a run started (a spy on `tempo_eval.engine.pool.ScoringPool`)."""


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> _Pools:
    """Pools for any run of 100 rows or more; the list of the pools started."""
    started = _Pools()

    class Spied(ScoringPool):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(scoring_pool, "POOL_MIN_ROWS", 100)
    monkeypatch.setattr(scoring_pool, "ScoringPool", Spied)
    return started


def _dataset(n: int, *, answers: dict[int, str] | None = None) -> pd.DataFrame:
    rows = _rows(n)
    for i, answer in (answers or {}).items():
        rows[i]["answer"] = answer
    frame = pd.DataFrame(rows)
    return frame


def _stream(frame: pd.DataFrame, batch_rows: int = 40) -> Any:
    from tempo_eval.engine.scoring import as_dataset

    return frame_stream(as_dataset(frame), batch_rows)


def _stored_rows(store: RunStore, run_id: int) -> list[tuple]:
    """Every stored column of the run's results and claims (details packed as stored)."""
    conn = store.connection
    results = conn.execute("SELECT * FROM results WHERE run_id = ? ORDER BY row_idx, metric", (run_id,)).fetchall()
    claims = conn.execute("SELECT * FROM claims WHERE run_id = ? ORDER BY row_idx, metric, idx", (run_id,)).fetchall()
    return [tuple(r) for r in results] + [tuple(c) for c in claims]


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pids: list[int], within: float = 10.0) -> bool:
    give_up = time.monotonic() + within
    while any(_alive(pid) for pid in pids) and time.monotonic() < give_up:
        time.sleep(0.05)
    return not any(_alive(pid) for pid in pids)


def _metrics() -> list[Any]:
    return [TemporalFaithfulness(), TemporalNDCG(k=3)]


def test_rows_scored_in_two_processes_are_stored_as_in_one(tmp_path: Path, pools: _Pools) -> None:
    frame = _dataset(500)
    one = evaluate(_stream(frame), _metrics(), store=RunStore(tmp_path / "one.sqlite"))
    assert not pools
    two = evaluate(_stream(frame), _metrics(), store=RunStore(tmp_path / "two.sqlite"), processes=2)
    assert len(pools) == 1 and len(pools[0].pids) == 2  # the batches went to two workers
    assert (two.status, two.computed, two.n_rows) == ("finished", 1000, 500)
    pd.testing.assert_frame_equal(one.frame, two.frame)
    pd.testing.assert_frame_equal(one.store.scores_frame(one.run_id), two.store.scores_frame(two.run_id))
    assert _stored_rows(one.store, one.run_id) == _stored_rows(two.store, two.run_id)
    for row in (0, 11, 499):
        assert one.result(row, "temporal_ndcg").details == two.result(row, "temporal_ndcg").details
    assert two.store.dataset_frame(two.dataset_id).equals(one.store.dataset_frame(one.dataset_id))
    assert _gone(pools[0].pids) and not multiprocessing.active_children()


def test_a_row_failing_in_a_worker_is_isolated_and_logged_here(
    tmp_path: Path, pools: _Pools, caplog: pytest.LogCaptureFixture,
) -> None:
    frame = _dataset(200, answers={57: FAIL})
    with caplog.at_level(logging.WARNING, logger="tempo_eval"):
        result = evaluate(_stream(frame), [_FailsOnARow()], store=RunStore(tmp_path / "ws.sqlite"), processes=2)
    assert pools and result.status == "finished"
    failed = result.frame[result.frame["reason_code"] == "row_error"]
    assert failed["row"].tolist() == [57]
    assert "no way to score this answer" in failed["reason"].iloc[0]
    assert any("row 57" in r.getMessage() and "no way to score" in r.getMessage() for r in caplog.records)


def test_a_worker_killed_fails_the_run_with_a_message_and_leaves_no_process(tmp_path: Path, pools: _Pools) -> None:
    frame = _dataset(400, answers={300: KILL})
    store = RunStore(tmp_path / "ws.sqlite")
    with pytest.raises(ScoringProcessError, match=r"killed by signal SIGKILL.*evaluate again to resume"):
        evaluate(_stream(frame), [_KillsItsWorker()], store=store, processes=2)
    run_id = int(store.list_runs()["id"].iloc[0])
    assert store.run_info(run_id)["status"] == "failed"
    assert _gone(pools[0].pids) and not multiprocessing.active_children()


def test_cancel_stops_the_workers_and_the_run_resumes_to_the_same_scores(tmp_path: Path, pools: _Pools) -> None:
    frame = _dataset(400)
    store = RunStore(tmp_path / "ws.sqlite")
    cancel = threading.Event()

    def progress(done: int, total: int) -> None:
        if done >= 80:  # a few batches stored: stop
            cancel.set()

    started = time.monotonic()
    first = evaluate(_stream(frame, 20), [_Slow()], store=store, processes=2, cancel=cancel, progress=progress)
    assert first.status == "cancelled" and 0 < first.computed < 400
    assert time.monotonic() - started < 30
    assert _gone(pools[0].pids) and not multiprocessing.active_children()

    resumed = evaluate(_stream(frame, 20), [_Slow()], store=store, processes=2)
    assert resumed.status == "finished" and resumed.reused == first.computed
    whole = evaluate(_stream(frame), [TemporalFaithfulness()], store=RunStore(tmp_path / "whole.sqlite"))
    columns = ["row", "query_id", "metric", "score", "reason_code", "reason"]
    pd.testing.assert_frame_equal(resumed.frame[columns], whole.frame[columns])


def test_past_the_deadline_the_rows_in_flight_are_stored_for_later_and_no_worker_is_left(
    tmp_path: Path, pools: _Pools,
) -> None:
    frame = _dataset(1500)  # 7.5 s of work, 3.75 s in two processes
    store = RunStore(tmp_path / "ws.sqlite")
    result = evaluate(_stream(frame, 20), [_Slow()], store=store, processes=2, deadline=1.5)
    assert result.status == "finished" and result.deadline_rows > 0
    assert _gone(pools[0].pids) and not multiprocessing.active_children()
    stored = result.frame
    assert len(stored) == 1500  # every row stored: scored, or NaN judge_error to compute again
    late = stored[stored["reason_code"] == "judge_error"]
    assert len(late) == result.deadline_rows and late["reason"].str.contains("deadline").all()

    # the same metric (its class is part of the run's identity), so the run is resumed
    resumed = evaluate(_stream(frame, 200), [_Slow()], store=store, processes=2)
    assert resumed.run_id == result.run_id and resumed.computed == result.deadline_rows
    whole = evaluate(_stream(frame, 200), [TemporalFaithfulness()], store=RunStore(tmp_path / "whole.sqlite"))
    columns = ["row", "query_id", "metric", "score", "reason_code", "reason"]
    pd.testing.assert_frame_equal(resumed.frame[columns], whole.frame[columns])


_KILLED_RUN = textwrap.dedent("""
    import sys
    import tempo_eval.engine.pool as scoring_pool
    from tempo_eval.io.stream import open_stream
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.store.runs import RunStore

    scoring_pool.POOL_MIN_ROWS = 100
    result = evaluate(open_stream(sys.argv[1], batch_rows=50), [TemporalFaithfulness(), TemporalNDCG(k=3)],
                      store=RunStore(sys.argv[2]), processes=2)
    print(result.computed, result.reused, result.n_rows)
""")


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in os.listdir(f"/proc/{current}/task") if os.path.exists(f"/proc/{current}/task") else []:
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split())
    return found[1:]


def test_a_run_in_processes_killed_part_way_resumes_to_identical_scores_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    n = 2000
    path = _csv(tmp_path / "d.csv", _rows(n))
    db = tmp_path / "killed.sqlite"
    command = [sys.executable, "-c", _KILLED_RUN, str(path), str(db)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    give_up = time.monotonic() + 120
    while _results(db) < 300 and process.poll() is None and time.monotonic() < give_up:
        time.sleep(0.02)
    below = _descendants(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    stored_before = _results(db)
    assert 0 < stored_before < 2 * n, "the run was not killed part way"
    assert len(below) >= 2, "no worker process was running"
    assert _gone(below), "a process the run started outlived it"

    resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    computed, reused, n_rows = map(int, resumed.stdout.split())
    assert n_rows == n and reused == stored_before and computed == 2 * n - stored_before

    whole = evaluate(path, _metrics(), store=RunStore(tmp_path / "whole.sqlite"))
    killed = RunStore(db)
    run_id = int(killed.list_runs()["id"].iloc[0])
    assert killed.run_info(run_id)["status"] == "finished"
    columns = ["row", "query_id", "metric", "score", "reason_code", "reason"]
    pd.testing.assert_frame_equal(killed.results_frame(run_id)[columns], whole.frame[columns])
    with sqlite3.connect(db) as conn, sqlite3.connect(tmp_path / "whole.sqlite") as other:
        query = "SELECT row_idx, metric, details FROM results ORDER BY row_idx, metric"
        assert conn.execute(query).fetchall() == other.execute(query).fetchall()


# ---- the command line ------------------------------------------------------------------------

def test_ctrl_c_in_the_terminal_stops_the_command_and_its_workers_quietly(tmp_path: Path) -> None:
    """Ctrl-C reaches the whole foreground process group: the workers ignore it, the command
    stops them and exits 130 with its one-line message, the run resumable."""
    path = _csv(tmp_path / "d.csv", _rows(20_000))
    home = tmp_path / "home"
    process = subprocess.Popen(
        [sys.executable, "-m", "tempo_eval", "evaluate", str(path), "--metric", "temporal_faithfulness",
         "--metric", "temporal_ndcg", "--out", str(tmp_path / "r.csv"), "--workspace", str(home),
         "--processes", "2"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    assert process.stderr is not None
    seen = ""
    while seen.count("rows/s") < 2:  # the bar was redrawn: batches are being scored and stored
        char = process.stderr.read(1)
        assert char, seen
        seen += char
    below = _descendants(process.pid)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, seen + err
    assert "interrupted" in err and "Traceback" not in err and "KeyboardInterrupt" not in err
    assert len(below) >= 2 and _gone(below)
    with sqlite3.connect(home / DB_FILENAME) as conn:
        (status,) = conn.execute("SELECT status FROM runs").fetchone()
    assert status == "cancelled"

@pytest.fixture
def evaluate_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of every `tempo_eval.engine.runner.evaluate` call (which still runs)."""
    import tempo_eval.engine.runner as runner

    calls: list[dict[str, Any]] = []
    real = runner.evaluate

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "evaluate", spy)
    return calls


def _data(tmp_path: Path, n: int = 30) -> Path:
    return _csv(tmp_path / "d.csv", _rows(n))


def test_processes_defaults_to_the_usable_cpus_at_most_four(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    evaluate_calls: list[dict[str, Any]],
) -> None:
    monkeypatch.setattr(scoring_pool, "usable_cpus", lambda: 16)
    code, _, err = run_cli_streams(["evaluate", str(_data(tmp_path)), "--metric", "temporal_faithfulness",
                                    "--out", str(tmp_path / "r.csv"), "--no-progress"], capsys)
    assert code == 0, err
    assert evaluate_calls[-1]["processes"] == 4


def test_processes_1_scores_in_this_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pools: _Pools, evaluate_calls: list[dict[str, Any]],
) -> None:
    data = _data(tmp_path, 300)
    out = tmp_path / "r.csv"
    code, _, err = run_cli_streams(["evaluate", str(data), "--metric", "temporal_faithfulness", "--out", str(out),
                                    "--no-progress", "--processes", "1"], capsys)
    assert code == 0, err
    assert evaluate_calls[-1]["processes"] == 1 and not pools
    code, _, err = run_cli_streams(["evaluate", str(data), "--metric", "temporal_faithfulness", "--out",
                                    str(tmp_path / "r2.csv"), "--no-progress", "--processes", "2",
                                    "--workspace", str(tmp_path / "ws2")], capsys)
    assert code == 0, err
    assert evaluate_calls[-1]["processes"] == 2 and len(pools) == 1
    assert pd.read_csv(out).equals(pd.read_csv(tmp_path / "r2.csv"))


@pytest.mark.parametrize(("extra", "message"), [
    (["--processes", "0"], "--processes must be a positive integer, got 0"),
    (["--processes", "2", "--engine", "ray"], "--processes applies to the local engine"),
])
def test_a_wrong_processes_option_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str,
) -> None:
    out = tmp_path / ("r.csv" if "ray" not in extra else "out")
    code, _, err = run_cli_streams(["evaluate", str(_data(tmp_path)), "--metric", "temporal_faithfulness",
                                    "--out", str(out), "--no-progress", *extra], capsys)
    assert code == 2 and message in err


def test_evaluate_help_explains_processes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_streams(["evaluate", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "--processes N" in text and "1 scores in this process" in text


def test_a_worker_killed_under_the_command_line_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pools: _Pools, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tempo_eval.cli.evaluate as cli_evaluate

    rows = _rows(300)
    rows[250]["answer"] = KILL
    data = _csv(tmp_path / "d.csv", rows)
    real = cli_evaluate.build_metrics
    monkeypatch.setattr(cli_evaluate, "build_metrics", lambda *a, **k: [_KillsItsWorker(), *real(*a, **k)[1:]])
    code, _, err = run_cli_streams(["evaluate", str(data), "--metric", "temporal_faithfulness", "--out",
                                    str(tmp_path / "r.csv"), "--no-progress", "--processes", "2"], capsys)
    assert code == 1
    assert "error: scoring process" in err and "SIGKILL" in err and "Traceback" not in err
    assert _gone(pools[0].pids)


def test_library_evaluate_keeps_one_process_by_default(tmp_path: Path, pools: _Pools) -> None:
    result = evaluate(_stream(_dataset(300)), _metrics(), store=RunStore(tmp_path / "ws.sqlite"))
    assert result.status == "finished" and not pools
    with pytest.raises(ValueError, match="processes must be a positive integer"):
        evaluate(_stream(_dataset(3)), _metrics(), store=RunStore(tmp_path / "ws.sqlite"), processes=0)
