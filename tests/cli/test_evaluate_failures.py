"""Issue 11, command line: --out never overwrites an input, every failure code counts for exit 1,
judge timeout / retries / overall deadline, Ctrl-C with one metric, --no-progress."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.store.db import DB_FILENAME
from tests.support.cli import run_cli, run_cli_streams
from tests.support.openai_server import Reply, ScriptedOpenAIServer, json_reply
from tests.support.paths import ROOT
from tests.support.tiny_nli import tiny_nli_dir  # noqa: F401 - a fixture

ROWS = [
    {"query_id": f"q{i}", "query": "When was the bridge built?",
     "answer": f"It was built in {2000 + i}.", "contexts": [f"Construction finished in {2000 + i}."],
     "retrieved_ids": ["d1"], "gold_ids": ["d1"]}
    for i in range(4)
]
SUPPORTED = json_reply({"verdict": "SUPPORTED", "evidence": "Construction finished.", "reason": "stated"})




@pytest.fixture
def data_csv(tmp_path: Path) -> Path:
    path = tmp_path / "data.csv"
    pd.DataFrame(ROWS).assign(
        contexts=lambda f: f["contexts"].map(json.dumps),
        retrieved_ids=lambda f: f["retrieved_ids"].map(json.dumps),
        gold_ids=lambda f: f["gold_ids"].map(json.dumps),
    ).to_csv(path, index=False)
    return path


def _judge_args(data: Path, out: Path, server: ScriptedOpenAIServer, *extra: str) -> list[str]:
    return ["evaluate", str(data), "--metrics", "temporal_faithfulness", "--verifier", "llm", "--model",
            "judge", "--base-url", server.base_url, "--out", str(out), "--no-progress", *extra]


def test_out_naming_the_input_dataset_is_refused_and_the_input_kept(
    data_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = data_csv.read_bytes()
    for out in (str(data_csv), str(data_csv.parent / "." / data_csv.name)):
        code, err = run_cli(["evaluate", str(data_csv), "--metrics", "temporal_ndcg", "--out", out,
                           "--no-progress"], capsys)
        assert code == 2
        (line,) = err.strip().splitlines()
        assert line.startswith("error: --out") and "overwrite" in line
    assert data_csv.read_bytes() == before


def test_out_naming_the_input_through_a_symlink_is_refused(data_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = data_csv.parent / "link.csv"
    link.symlink_to(data_csv)
    code, err = run_cli(["evaluate", str(data_csv), "--metrics", "temporal_ndcg", "--out", str(link)], capsys)
    assert code == 2 and "overwrite" in err


def test_every_row_failing_with_judge_error_exits_1(
    data_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.csv"
    with ScriptedOpenAIServer(lambda request: Reply(status=500, raw_body='{"error": "down"}')) as server:
        code, err = run_cli(_judge_args(data_csv, out, server, "--max-retries", "0"), capsys)
        assert len(server.requests) == len(ROWS)  # --max-retries 0: one request per claim
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: all 4 rows failed: temporal_faithfulness:") and "HTTP 500" in last
    frame = pd.read_csv(out)
    assert (frame["reason_code"] == "judge_error").all()


def test_timeout_and_max_retries_bound_a_hung_judge(
    data_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.csv"
    with ScriptedOpenAIServer(lambda request: Reply(content="{}", delay=3.0)) as server:
        started = time.monotonic()
        code, err = run_cli(_judge_args(data_csv, out, server, "--timeout", "0.3", "--max-retries", "1"), capsys)
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2 * len(ROWS)  # first try + 1 retry per claim
    assert code == 1
    assert elapsed < 3.0  # 4 rows at once, 2 x 0.3 s each + backoff; the default was 5 x 60 s
    reasons = pd.read_csv(out)["reason"].tolist()
    assert all("timeout (0.3s) after 1 retry" in reason for reason in reasons), reasons


def test_deadline_stores_the_rest_as_judge_error_and_the_run_resumes(
    data_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.csv"
    slow = Reply(content=SUPPORTED.content, delay=2.0)
    with ScriptedOpenAIServer(lambda request: slow) as server:
        started = time.monotonic()
        code, err = run_cli(_judge_args(data_csv, out, server, "--deadline", "0.5", "--concurrency", "1"), capsys)
        assert time.monotonic() - started < 2.0  # not 4 x 2 s
    assert code == 1
    assert "error: the deadline of 0.5 s passed before 4 of 4 rows were evaluated" in err
    frame = pd.read_csv(out)
    assert frame["score"].isna().all() and (frame["reason_code"] == "judge_error").all()
    assert "deadline" in frame["reason"].iloc[0]

    with ScriptedOpenAIServer(lambda request: SUPPORTED) as server:  # the judge is quick again
        code, stdout, err = run_cli_streams(_judge_args(data_csv, out, server, "--deadline", "60"), capsys)
    assert code == 0, err
    assert "4 results computed, 0 reused" in stdout
    assert pd.read_csv(out)["score"].tolist() == [1.0] * 4


def test_bad_timeout_retries_and_deadline_values_exit_2(data_csv: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    base = ["evaluate", str(data_csv), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv")]
    for extra, message in ((["--deadline", "0"], "--deadline"), (["--timeout", "5"], "--verifier llm"),
                           (["--max-retries", "-1"], "--max-retries")):
        code, err = run_cli([*base, *extra], capsys)
        assert code == 2 and message in err, err


@pytest.mark.slow
def test_ctrl_c_stops_a_run_of_one_metric_and_keeps_it_resumable(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    n = 40_000
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({"query_id": f"q{i}", "query": "q", "retrieved_ids": ["d1", "d2"],
                                     "gold_ids": ["d2"]}) + "\n")
    home = tmp_path / "home"
    out = tmp_path / "r.csv"
    process = subprocess.Popen(
        [sys.executable, "-m", "tempo_eval", "evaluate", str(path), "--metrics", "temporal_ndcg",
         "--out", str(out), "--workspace", str(home), "--concurrency", "1"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )
    assert process.stderr is not None
    seen = ""
    while seen.count("rows/s") < 2:  # the bar was redrawn: rows are being evaluated and stored
        char = process.stderr.read(1)
        assert char, seen
        seen += char
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert time.monotonic() - started < 5.0
    assert process.returncode == 130, seen + err
    assert "interrupted" in err and not out.exists()
    with sqlite3.connect(home / DB_FILENAME) as conn:
        (status,) = conn.execute("SELECT status FROM runs").fetchone()
        (stored,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
    assert status == "cancelled" and 0 < stored < n


@pytest.mark.slow
@pytest.mark.parametrize("verifier", ["nli", "lexical", "turn"])
def test_the_transformers_loading_bar_shows_only_with_verbose(tmp_path: Path, tiny_nli_dir: Path,  # noqa: F811
                                                              verifier: str) -> None:
    """Issue 24.15: transformers' "Loading weights" bar is hidden unless --verbose; ours stays."""
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    model = ["--model", str(tiny_nli_dir)] if verifier == "nli" else []  # lexical: the shipped MiniLM
    if verifier == "turn":  # turn faithfulness on a conversation, with its default verifier
        chosen = [str(ROOT / "data" / "sample" / "conversation_museum.json"), "--metrics", "turn_faithfulness"]
    else:
        chosen = [str(data), "--metrics", "temporal_faithfulness", "--verifier", verifier, *model]
    base = [sys.executable, "-m", "tempo_eval", "evaluate", *chosen, "--workspace", str(tmp_path / "home")]
    loud = subprocess.run([*base, "--out", str(tmp_path / "a.csv"), "--verbose"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    quiet = subprocess.run([*base, "--out", str(tmp_path / "b.csv")], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert loud.returncode == 0 and quiet.returncode == 0, loud.stderr + quiet.stderr
    assert "Loading weights" in loud.stderr  # the bar this option must silence exists
    assert "Loading weights" not in quiet.stderr and "rows/s" in quiet.stderr
    assert quiet.stdout.strip()  # the summary, on stdout (issue 24.13)
