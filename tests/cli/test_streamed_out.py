"""--out written while the rows are scored (issue 27): `evaluate(on_results=...)` hands over each
batch's stored results in row order, resumed rows included, so the file holds every row once and
equals what an uninterrupted run writes, after a cancel, a deadline or a kill -9."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.export import read_csv_export
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.store.runs import RunStore
from tests.engine import test_scoring_pool
from tests.engine.test_runner_stream import _csv, _results, _rows
from tests.engine.test_scoring_pool import _dataset, _metrics, _Pools, _Slow, _stream
from tests.support.cli import run_cli_streams
from tests.support.paths import ROOT

#: pools started by a run of 100 rows or more (the fixture of tests/engine/test_scoring_pool.py)
pools = test_scoring_pool.pools

COLUMNS = ["row", "query_id", "run", "metric", "score", "reason_code", "reason"]


class _Parts(list):
    """The frames `on_results` received."""

    def __call__(self, part: pd.DataFrame) -> None:
        self.append(part)

    def frame(self) -> pd.DataFrame:
        return pd.concat(self, ignore_index=True) if self else pd.DataFrame(columns=COLUMNS)


@pytest.mark.parametrize("processes", [1, 2])
def test_every_rows_results_are_handed_over_once_in_order(tmp_path: Path, pools: _Pools, processes: int) -> None:
    parts = _Parts()
    result = evaluate(_stream(_dataset(300), 20), _metrics(), store=RunStore(tmp_path / "ws.sqlite"),
                      processes=processes, on_results=parts)
    assert bool(pools) == (processes == 2)
    assert result.results_streamed and len(parts) == 15
    pd.testing.assert_frame_equal(parts.frame(), result.frame)


def test_a_cancelled_run_resumed_hands_over_the_reused_rows_too(tmp_path: Path, pools: _Pools) -> None:
    frame = _dataset(400)
    store = RunStore(tmp_path / "ws.sqlite")
    cancel = threading.Event()
    first_parts = _Parts()
    first = evaluate(_stream(frame, 20), [_Slow()], store=store, processes=2, cancel=cancel,
                     progress=lambda done, total: done >= 80 and cancel.set(), on_results=first_parts)
    assert first.status == "cancelled" and 0 < first.computed < 400 and not first.results_streamed
    assert first_parts.frame()["row"].tolist() == list(range(len(first_parts.frame())))  # a prefix, in order

    parts = _Parts()
    resumed = evaluate(_stream(frame, 20), [_Slow()], store=store, processes=2, on_results=parts)
    assert resumed.reused == first.computed and resumed.results_streamed
    whole = evaluate(_stream(frame), [TemporalFaithfulness()], store=RunStore(tmp_path / "whole.sqlite"))
    pd.testing.assert_frame_equal(parts.frame(), resumed.frame)
    assert parts.frame()["row"].tolist() == list(range(400))  # each row once
    columns = ["row", "query_id", "metric", "score", "reason_code", "reason"]
    pd.testing.assert_frame_equal(parts.frame()[columns], whole.frame[columns])


def test_rows_past_the_deadline_are_handed_over_as_stored(tmp_path: Path, pools: _Pools) -> None:
    parts = _Parts()
    result = evaluate(_stream(_dataset(1500), 20), [_Slow()], store=RunStore(tmp_path / "ws.sqlite"),
                      processes=2, deadline=1.5, on_results=parts)
    assert result.deadline_rows > 0 and result.results_streamed
    pd.testing.assert_frame_equal(parts.frame(), result.frame)
    assert (parts.frame()["reason_code"] == "judge_error").sum() == result.deadline_rows


def _command(data: Path, out: Path, workspace: Path) -> list[str]:
    return [sys.executable, "-m", "tempo_eval", "evaluate", str(data), "--metric", "temporal_faithfulness",
            "--metric", "temporal_ndcg", "--out", str(out), "--no-progress", "--workspace", str(workspace)]


def test_the_command_killed_part_way_then_resumed_writes_the_file_of_an_uninterrupted_run(tmp_path: Path) -> None:
    n = 6000  # over POOL_MIN_ROWS: scored in worker processes, as the command does by default
    data = _csv(tmp_path / "d.csv", _rows(n))
    out = tmp_path / "out.parquet"
    killed = tmp_path / "killed"
    process = subprocess.Popen(_command(data, out, killed), cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    give_up = time.monotonic() + 120
    while _results(killed / "tempo_eval.sqlite") < 2000 and process.poll() is None and time.monotonic() < give_up:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 0 < _results(killed / "tempo_eval.sqlite") < 2 * n, "the command was not killed part way"
    assert not out.exists()  # only a complete file is put at --out

    resumed = subprocess.run(_command(data, out, killed), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "reused" in resumed.stdout and " 0 reused" not in resumed.stdout
    whole_out = tmp_path / "whole.parquet"
    whole = subprocess.run(_command(data, whole_out, tmp_path / "whole"), cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    written = pd.read_parquet(out)
    pd.testing.assert_frame_equal(written, pd.read_parquet(whole_out))
    assert written["row"].tolist() == [row for row in range(n) for _ in range(2)]
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
    store = RunStore(killed / "tempo_eval.sqlite")
    stored = store.results_frame(int(store.list_runs()["id"].iloc[0]))
    columns = ["row", "query_id", "metric", "score", "reason_code", "reason"]
    pd.testing.assert_frame_equal(written[columns], stored[columns], check_dtype=False)
    assert written["run"].isna().all() and stored["run"].isna().all()
    # the summary is computed from the scores gathered on the way: the same numbers
    assert resumed.stdout.splitlines()[1:] == whole.stdout.splitlines()[1:]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_the_command_writes_csv_and_jsonl_while_scoring_as_the_store_has_them(
    tmp_path: Path, pools: _Pools, capsys: pytest.CaptureFixture[str], suffix: str,
) -> None:
    data = _csv(tmp_path / "d.csv", _rows(250))
    out = tmp_path / f"out{suffix}"
    code, stdout, stderr = run_cli_streams(["evaluate", str(data), "--metric", "temporal_faithfulness", "--metric",
                                            "temporal_ndcg", "--out", str(out), "--processes", "2",
                                            "--workspace", str(tmp_path / "ws")], capsys)
    assert code == 0, stderr
    assert pools  # scored in worker processes
    store = RunStore(tmp_path / "ws" / "tempo_eval.sqlite")
    expected = store.results_frame(int(store.list_runs()["id"].iloc[0]))
    written = read_csv_export(out) if suffix == ".csv" else pd.read_json(out, lines=True)
    assert len(written) == 500
    assert written["row"].tolist() == expected["row"].tolist()
    # JSON Lines keeps 10 significant digits (pandas' to_json), as a run written at the end did
    np.testing.assert_allclose(written["score"], expected["score"], rtol=1e-9)
    assert written["metric"].tolist() == expected["metric"].tolist()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
