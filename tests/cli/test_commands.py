"""`python -m tempo_eval`: evaluate with resume and exports, compare with significance, errors, secrets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.cli import main
from tempo_eval.io.export import neutralize_formulas
from tempo_eval.store.db import DB_FILENAME
from tests.support.cli import run_cli, run_cli_streams
from tests.support.openai_server import ScriptedOpenAIServer, json_reply
from tests.support.paths import ROOT

DATA = [
    {"query_id": "q1", "query": "When was the bridge built?", "answer": "It was built in 2001 and opened in 2005.",
     "contexts": ["Construction finished in 2001."], "retrieved_ids": ["d1", "d2"], "gold_ids": ["d2"]},
    {"query_id": "=cmd|' /C calc'!A0", "query": "Who designed it?", "answer": "An engineer.",
     "contexts": ["No dates here."], "retrieved_ids": ["d3"], "gold_ids": ["d3"]},
    {"query_id": "q3", "query": "What happened in the 1990s?", "answer": "In 1995 the plan was drafted.",
     "contexts": ["The plan was drafted in 1995."], "retrieved_ids": ["d5", "d4"], "gold_ids": {"d4": 2, "d5": 1}},
]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tempo_eval", *args], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=300,
    )


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in DATA) + "\n", encoding="utf-8")
    return path


def test_help_lists_the_commands_and_their_options() -> None:
    top = _run("--help")
    assert top.returncode == 0 and "evaluate" in top.stdout and "compare" in top.stdout
    evaluate_help = _run("evaluate", "--help")
    assert evaluate_help.returncode == 0
    assert "--out" in evaluate_help.stdout and "resumes" in evaluate_help.stdout
    compare_help = _run("compare", "--help")
    assert compare_help.returncode == 0 and "--qrels" in compare_help.stdout and "Holm" in compare_help.stdout


def test_evaluate_writes_one_result_per_row_and_metric_with_a_progress_bar(data_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    done = _run("evaluate", str(data_file), "--metrics", "temporal_faithfulness,temporal_ndcg", "--k", "5",
                "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "3/3 rows" in done.stderr and "6 results computed, 0 reused" in done.stdout  # issue 24.13
    assert "temporal_faithfulness: 0.7500" in done.stdout  # mean of 0.5 and 1.0; q2 has no year
    assert "3/3 rows" not in done.stdout and "0.7500" not in done.stderr
    frame = pd.read_csv(out)
    assert len(frame) == 6
    faith = frame[frame["metric"] == "temporal_faithfulness"]
    assert faith["score"].tolist()[0] == 0.5 and faith["reason_code"].tolist()[1] == "no_temporal_claims"


def test_running_the_same_evaluation_again_resumes_and_recomputes_nothing(data_file: Path, tmp_path: Path) -> None:
    args = ["evaluate", str(data_file), "--metrics", "temporal_faithfulness", "--no-progress"]
    first = _run(*args, "--out", str(tmp_path / "a.csv"))
    second = _run(*args, "--out", str(tmp_path / "b.csv"))
    assert first.returncode == second.returncode == 0
    assert "3 results computed, 0 reused" in first.stdout
    assert "0 results computed, 3 reused" in second.stdout
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    assert "rows/s" not in first.stderr  # --no-progress


def test_jsonl_and_parquet_exports_hold_the_same_results(data_file: Path, tmp_path: Path) -> None:
    args = ["evaluate", str(data_file), "--metrics", "temporal_ndcg", "--no-progress"]
    assert _run(*args, "--out", str(tmp_path / "r.jsonl")).returncode == 0
    assert _run(*args, "--out", str(tmp_path / "r.parquet")).returncode == 0
    from_jsonl = pd.read_json(tmp_path / "r.jsonl", lines=True, dtype={"query_id": str})
    from_parquet = pd.read_parquet(tmp_path / "r.parquet")
    assert from_jsonl["score"].tolist() == pytest.approx(from_parquet["score"].tolist())
    assert from_parquet["query_id"].tolist()[1] == DATA[1]["query_id"]  # not neutralised outside CSV


def test_csv_export_neutralises_spreadsheet_formulas(data_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    assert _run("evaluate", str(data_file), "--metrics", "temporal_ndcg", "--out", str(out),
                "--no-progress").returncode == 0
    frame = pd.read_csv(out, dtype={"query_id": str})
    assert frame["query_id"].tolist()[1] == "'" + DATA[1]["query_id"]


def test_neutralize_formulas_prefixes_dangerous_text_cells_only() -> None:
    frame = pd.DataFrame({
        "text": ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", "safe", None],
        "score": [-0.5, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
    })
    out = neutralize_formulas(frame)
    assert out["text"].tolist()[:7] == ["'=1+1", "'+SUM(A1)", "'-2+3", "'@cmd", "'\tx", "'\rx", "safe"]
    assert out["score"].tolist() == frame["score"].tolist()
    assert frame["text"][0] == "=1+1"  # the input is not modified


def test_the_workspace_option_places_the_run_store(data_file: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    done = _run("evaluate", str(data_file), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"),
                "--workspace", str(workspace), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert (workspace / DB_FILENAME).exists()




@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evaluate", "missing.csv", "--metrics", "temporal_ndcg", "--out", "r.csv"], "missing.csv"),
        (["evaluate", "{data}", "--metrics", "nope", "--out", "r.csv"], "unknown metric 'nope'"),
        (["evaluate", "{data}", "--metrics", "temporal_ndcg", "--out", "r.xlsx"], "extension"),
        (["evaluate", "{data}", "--metrics", "temporal_ndcg", "--out", "r.csv", "--mapping", "query"], "CANONICAL=SOURCE"),
        (["evaluate", "{data}", "--metrics", "temporal_ndcg", "--out", "r.csv", "--k", "0"], "--k"),
        (["evaluate", "{data}", "--metrics", "temporal_faithfulness", "--out", "r.csv", "--k", "5"], "cutoff"),
        (["evaluate", "{data}", "--metrics", "temporal_faithfulness", "--out", "r.csv", "--verifier", "llm",
          "--model", "judge", "--api-key-env", "NO_SUCH_VARIABLE"], "NO_SUCH_VARIABLE"),
        (["evaluate", "{data}", "--metrics", "temporal_faithfulness", "--out", "r.csv", "--verifier", "nli",
          "--model", "/no/such/checkpoint"], "could not be loaded"),
        (["evaluate", "{data}", "--metrics", "temporal_ndcg", "--out", "r.csv", "--model", "x"], "--verifier"),
        (["evaluate", "{data}", "--out", "r.csv"], "--metrics"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_a_one_line_error(
    args: list[str], message: str, data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(data_file) if a == "{data}" else str(tmp_path / a) if a.startswith("r.") else a for a in args]
    code, err = run_cli(args, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err


def test_a_metric_needing_a_column_the_dataset_lacks_exits_2_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"query_id": "q1", "answer": "In 2001."}) + "\n", encoding="utf-8")
    code, err = run_cli(["evaluate", str(path), "--metrics", "temporal_faithfulness", "--out",
                       str(tmp_path / "r.csv"), "--no-progress"], capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: temporal_faithfulness needs the column(s) contexts")
    assert "query_id, answer" in line  # the columns found
    assert not (tmp_path / "r.csv").exists()


def test_turn_faithfulness_on_a_dataset_file_says_it_runs_on_conversations(
        data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["evaluate", str(data_file), "--metrics", "turn_faithfulness", "--out",
                       str(tmp_path / "r.csv")], capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "runs on conversations" in line and "Conversation page" in line
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "turn_faithfulness alone, on a conversation file" in " ".join(capsys.readouterr().out.split())


def test_a_bad_reference_date_exits_2_before_any_row(data_file: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["evaluate", str(data_file), "--metrics", "temporal_faithfulness", "--out",
                       str(tmp_path / "r.csv"), "--reference-date", "June 2024", "--no-progress"], capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: reference_date must be an ISO date") and "June 2024" in line


def test_a_metric_failing_on_every_row_exits_1_and_a_later_run_retries_the_rows(
    data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    async def broken(self, **inputs):
        raise ConnectionError("the judge is down")

    args = ["evaluate", str(data_file), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"),
            "--no-progress"]
    with monkeypatch.context() as patched:
        patched.setattr(TemporalNDCG, "_ameasure", broken)
        code, err = run_cli(args, capsys)
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        "error: all 3 rows failed: temporal_ndcg: Evaluating this row failed: ConnectionError: the judge is down"
    )
    assert len(pd.read_csv(tmp_path / "r.csv")) == 3  # the failures are still written

    code, out, err = run_cli_streams([*args, "--no-retry-failed"], capsys)  # the judge is back, but failures are kept
    assert code == 1 and "0 results computed, 3 reused" in out

    code, out, err = run_cli_streams(args, capsys)
    assert code == 0, err
    assert "3 results computed, 0 reused" in out
    assert pd.read_csv(tmp_path / "r.csv")["score"].notna().all()


def test_the_process_exits_2_without_a_traceback_on_bad_input(tmp_path: Path) -> None:
    done = _run("evaluate", str(tmp_path / "missing.csv"), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_an_unreadable_dataset_is_reported_with_its_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("foo,bar\n1,2\n", encoding="utf-8")
    code, err = run_cli(["evaluate", str(path), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 2
    assert err.startswith("error: bad.csv") and len(err.strip().splitlines()) == 1


def test_the_api_key_comes_from_the_environment_and_is_never_stored_or_printed(data_file: Path, tmp_path: Path) -> None:
    secret = "sk-cli-test-secret-0123456789"
    reply = json_reply({"verdict": "SUPPORTED", "evidence": "Construction finished in 2001.", "reason": "stated"})
    out = tmp_path / "r.csv"
    with ScriptedOpenAIServer(lambda request: reply) as server:
        done = _run("evaluate", str(data_file), "--metrics", "temporal_faithfulness", "--verifier", "llm",
                    "--model", "judge", "--base-url", server.base_url, "--api-key-env", "MY_JUDGE_KEY",
                    "--out", str(out), "--no-progress", env={"MY_JUDGE_KEY": secret})
        assert server.requests  # the judge was asked
    assert done.returncode == 0, done.stderr
    assert secret not in done.stdout + done.stderr + out.read_text()
    home = Path(os.environ["TEMPO_EVAL_HOME"])
    for path in home.iterdir():  # the database and its WAL
        assert secret.encode() not in path.read_bytes()
    scores = pd.read_csv(out)["score"].tolist()
    assert scores[0] == 1.0  # the judge's verdicts were used


# ---- compare --------------------------------------------------------------------------------

def _write_trec(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels, good, bad = [], [], []
    for q in range(12):
        qrels += [f"q{q} 0 rel{q} 2", f"q{q} 0 half{q} 1", f"q{q} 0 junk{q} 0"]
        good += [f"q{q} Q0 rel{q} 1 3.0 good", f"q{q} Q0 half{q} 2 2.0 good", f"q{q} Q0 junk{q} 3 1.0 good"]
        bad += [f"q{q} Q0 junk{q} 1 3.0 bad", f"q{q} Q0 half{q} 2 2.0 bad", f"q{q} Q0 rel{q} 3 1.0 bad"]
    paths = tmp_path / "qrels.txt", tmp_path / "good.run", tmp_path / "bad.run"
    for path, lines in zip(paths, (qrels, good, bad), strict=True):
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def test_compare_prints_the_significance_table(tmp_path: Path) -> None:
    qrels, good, bad = _write_trec(tmp_path)
    done = _run("compare", str(good), str(bad), "--qrels", str(qrels), "--metric", "ndcg@3", "--test", "student")
    assert done.returncode == 0, done.stderr
    assert "| # | Run | ndcg@3 |" in done.stdout
    assert "| a | good | **1.000**ᵇ |" in done.stdout
    assert "paired Student's t-test" in done.stdout


def test_compare_exports_latex_and_csv(tmp_path: Path) -> None:
    qrels, good, bad = _write_trec(tmp_path)
    latex = _run("compare", str(good), str(bad), "--qrels", str(qrels), "--metric", "ndcg@3", "--format", "latex")
    assert latex.returncode == 0 and "\\begin{tabular}" in latex.stdout and "$^{b}$" in latex.stdout
    out = tmp_path / "table.csv"
    csv_done = _run("compare", str(good), str(bad), "--qrels", str(qrels), "--metric", "ndcg@3", "--metric", "ndcg@1",
                    "--format", "csv", "--out", str(out))
    assert csv_done.returncode == 0
    table = pd.read_csv(out, keep_default_na=False)
    assert table.columns.tolist() == ["label", "run", "ndcg@3", "ndcg@3 beats", "ndcg@1", "ndcg@1 beats"]
    assert table["ndcg@3 beats"].tolist() == ["b", ""]


def test_compare_scores_queries_a_run_lacks_as_zero_unless_told_to_drop_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, good, bad = _write_trec(tmp_path)
    bad.write_text("".join(line + "\n" for line in bad.read_text().splitlines() if not line.startswith("q0 ")))
    common = ["compare", str(good), str(bad), "--qrels", str(qrels), "--metric", "ndcg@3", "--test", "student"]
    assert main(common) == 0
    captured = capsys.readouterr()
    assert "ndcg@3: 12 queries" in captured.out and "bad 1; scored 0, as trec_eval -c does" in captured.out
    assert "good 0, bad 1; scored 0" in captured.err  # said for every format
    assert main([*common, "--missing", "drop"]) == 0
    captured = capsys.readouterr()
    assert "ndcg@3: 11 queries (1 dropped: not scored in every run)" in captured.out
    assert "bad 1; left out of every run's comparison" in captured.err


def test_compare_writes_per_query_values_like_trec_eval_q(tmp_path: Path) -> None:
    qrels, good, bad = _write_trec(tmp_path)
    out = tmp_path / "per_query.csv"
    assert main(["compare", str(good), str(bad), "--qrels", str(qrels), "--metric", "ndcg@3",
                 "--metric", "ndcg@1", "--test", "student", "--per-query", str(out)]) == 0
    table = pd.read_csv(out, dtype={"query_id": str})
    assert table.columns.tolist() == ["run", "query_id", "metric", "value"]
    assert len(table) == 2 * 2 * 12 and set(table["run"]) == {"good", "bad"}
    assert (table[table["run"] == "good"]["value"] == 1.0).all()
    assert main(["compare", str(good), str(bad), "--qrels", str(qrels), "--per-query", str(qrels)]) != 0


def test_compare_refuses_a_single_run_and_unknown_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, good, _ = _write_trec(tmp_path)
    code, err = run_cli(["compare", str(good), "--qrels", str(qrels)], capsys)
    assert code == 2 and err.startswith("error: ") and "at least two runs" in err
    code, err = run_cli(["compare", str(good), str(good), "--qrels", str(qrels), "--metric", "map@10"], capsys)
    assert code == 2 and "ndcg@k" in err
