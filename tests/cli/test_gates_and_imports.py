"""The CLI as a pipeline gate (--fail-under), foreign imports, conversation files, TREC options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli
from tests.support.paths import TESTS

DATA = TESTS / "data" / "interop"

ROWS = [
    {"query_id": "q1", "query": "When did it open?", "answer": "It opened in 1936.",
     "contexts": ["It opened in 1936."], "retrieved_ids": ["d1", "d2"], "gold_ids": ["d1"]},
    {"query_id": "q2", "query": "And then?", "answer": "It closed in 1950.",
     "contexts": ["It closed in 1990."], "retrieved_ids": ["d2", "d1"], "gold_ids": ["d1"]},
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n", encoding="utf-8")
    return path




def _evaluate(data: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["evaluate", str(data), "--out", str(tmp_path / "r.csv"), "--workspace", str(tmp_path / "ws"),
            "--no-progress", *extra]


def test_fail_under_exits_1_with_one_line_per_metric_below(data_file: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # temporal_faithfulness: 1.0 and 0.0 (mean 0.5); temporal_ndcg: 1.0 and 1/log2(3) (mean 0.82)
    code, err = run_cli(_evaluate(data_file, tmp_path, "--metrics", "temporal_faithfulness,temporal_ndcg",
                                "--fail-under", "temporal_faithfulness=0.8,temporal_ndcg=0.9"), capsys)
    assert code == 1
    fails = [line for line in err.splitlines() if line.startswith("fail:")]
    assert fails == ["fail: temporal_faithfulness 0.5000 < 0.8", "fail: temporal_ndcg 0.8155 < 0.9"]
    assert (tmp_path / "r.csv").exists()  # the results are still written


def test_fail_under_passes_at_or_above_the_threshold(data_file: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(_evaluate(data_file, tmp_path, "--metrics", "temporal_faithfulness",
                                "--fail-under", "temporal_faithfulness=0.5"), capsys)
    assert code == 0 and "fail:" not in err


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [("temporal_faithfulness", "expected METRIC=THRESHOLD"), ("temporal_faithfulness=high", "expected METRIC=THRESHOLD"),
     ("factual_correctness=0.7", "which --metrics does not compute")],
)
def test_a_bad_fail_under_is_a_usage_error(spec: str, fragment: str, data_file: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(_evaluate(data_file, tmp_path, "--metrics", "temporal_faithfulness", "--fail-under", spec),
                      capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_deepeval_goldens_warn_on_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(_evaluate(DATA / "deepeval_goldens.json", tmp_path, "--metrics", "temporal_faithfulness",
                                "--fail-under", "temporal_faithfulness=0.5"), capsys)
    assert "warning: deepeval_goldens.json: column 'actual_output' (answer) is empty in every row" in err
    assert code == 1 and "fail: temporal_faithfulness has no measurable row" in err


def test_import_stores_foreign_scores_as_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = tmp_path / "ws"
    code, err = run_cli(["import", str(DATA / "deepeval_test_run.json"), "--workspace", str(workspace)], capsys)
    assert code == 0, err
    assert "deepeval:Faithfulness: 0.8333; scored 3/3" in err
    store = RunStore(workspace / "tempo_eval.sqlite")
    (run_id,) = store.list_runs()["id"].tolist()
    assert store.results_frame(run_id)["metric"].unique().tolist() == ["deepeval:Faithfulness"]
    code, err = run_cli(["import", str(DATA / "deepeval_goldens.csv"), "--workspace", str(workspace)], capsys)
    assert code == 2 and "found no score column" in err


def test_turn_faithfulness_with_other_metrics_is_a_usage_error(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(_evaluate(DATA / "ragas_multi.jsonl", tmp_path, "--metrics",
                                "turn_faithfulness,temporal_faithfulness"), capsys)
    assert code == 2 and "separate commands" in err




@pytest.mark.parametrize("name", ["ragas_multi.jsonl", "deepeval_conversational_test_cases.csv"])
def test_turn_faithfulness_evaluates_each_conversation_of_a_file(name: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(_evaluate(DATA / name, tmp_path, "--metrics", "turn_faithfulness"), capsys)
    assert code == 0, err
    import pandas as pd

    results = pd.read_csv(tmp_path / "r.csv")
    assert len(results) == 2  # one result per conversation, one run
    store = RunStore(tmp_path / "ws" / "tempo_eval.sqlite")
    assert len(store.list_runs()) == 1


def test_compare_prints_notes_and_takes_depth_and_precision(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "table.csv"
    code, err = run_cli(["compare", str(DATA / "ranx_bm25.trec"), str(DATA / "ranx_bm25_reversed.trec"),
                       "--qrels", str(DATA / "ranx_qrels.json"), "--metric", "ndcg@3", "--depth", "1",
                       "--score-precision", "double", "--format", "csv", "--out", str(out), "--test", "student"],
                      capsys)
    assert code == 0, err
    assert "note: ranx_bm25.trec: has the tag 'bm25', which ranx_bm25_reversed.trec also uses" in err
    table = out.read_text()
    assert "ranx_bm25" in table and "ranx_bm25_reversed" in table
    code, err = run_cli(["compare", str(DATA / "ranx_bm25.trec"), str(DATA / "ranx_unnamed.trec"),
                       "--qrels", str(DATA / "ranx_qrels.trec"), "--depth", "0"], capsys)
    assert code == 2 and "--depth must be a positive integer" in err


def test_a_test_run_with_only_conversational_cases_says_what_is_not_imported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"testCases": [], "conversationalTestCases": [{"name": "c"}]}))
    code, err = run_cli(["import", str(path), "--workspace", str(tmp_path / "ws")], capsys)
    assert code == 2 and "1 conversational test case(s) are not imported" in err


def test_a_conversation_file_given_dataset_metrics_points_to_turn_faithfulness(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(_evaluate(DATA / "deepeval_conversational_goldens.json", tmp_path, "--metrics",
                                "temporal_faithfulness"), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no column for 'query'" in err and "holds 2 conversation(s): evaluate it with --metrics turn_faithfulness" in err
