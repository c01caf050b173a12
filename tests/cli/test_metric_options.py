"""`evaluate --metric NAME` repeatable, no abbreviated options anywhere, and `--ndcg-mode`
(issue 27.7)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.cli.parser import build_parser
from tests.support.cli import run_cli

ROWS = [
    {"query_id": "q1", "query": "What happened in 2001?", "answer": "It was built in 2001.",
     "contexts": ["Built in 2001.", "Opened in 2005."], "retrieved_ids": ["d1", "d2"], "gold_ids": ["d2"]},
    {"query_id": "q2", "query": "And in 2005?", "answer": "It opened in 2005.",
     "contexts": ["Built in 2001.", "Opened in 2005."], "retrieved_ids": ["d1", "d2"], "gold_ids": ["d1"]},
]


@pytest.fixture
def data_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path / "ws"))
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_metric_repeated_scores_every_named_metric(data_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.csv"
    code, err = run_cli(["evaluate", str(data_file), "--metric", "temporal_faithfulness", "--metric",
                         "temporal_ndcg", "--out", str(out), "--no-progress"], capsys)
    assert code == 0, err
    assert sorted(set(pd.read_csv(out)["metric"])) == ["temporal_faithfulness", "temporal_ndcg"]


def test_metrics_list_still_works_and_mixes_with_metric(data_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.csv"
    code, err = run_cli(["evaluate", str(data_file), "--metrics", "temporal_faithfulness,temporal_ndcg",
                         "--out", str(out), "--no-progress"], capsys)
    assert code == 0, err
    assert sorted(set(pd.read_csv(out)["metric"])) == ["temporal_faithfulness", "temporal_ndcg"]
    out2 = tmp_path / "r2.csv"
    code, err = run_cli(["evaluate", str(data_file), "--metric", "temporal_ndcg", "--metrics",
                         "temporal_faithfulness", "--out", str(out2), "--no-progress"], capsys)
    assert code == 0, err
    assert sorted(set(pd.read_csv(out2)["metric"])) == ["temporal_faithfulness", "temporal_ndcg"]


def test_no_metric_is_a_clear_usage_error(data_file: Path, tmp_path: Path, capsys) -> None:
    code, err = run_cli(["evaluate", str(data_file), "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 2 and "--metric NAME" in err


@pytest.mark.parametrize("argv", [
    ["evaluate", "d.csv", "--metr", "temporal_ndcg", "--out", "r.csv"],
    ["evaluate", "d.csv", "--metric", "temporal_ndcg", "--ou", "r.csv"],
    ["compare", "a.run", "b.run", "--qrel", "q.txt"],
])
def test_abbreviated_options_are_refused_in_every_command(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments" in err or "required: --out" in err or "required: --qrels" in err


def test_every_parser_refuses_abbreviations() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert parser.allow_abbrev is False
    assert subparsers.choices and all(p.allow_abbrev is False for p in subparsers.choices.values())


def test_ndcg_mode_focus_overrides_the_gold_choice(data_file: Path, tmp_path: Path, capsys) -> None:
    auto, focus = tmp_path / "auto.jsonl", tmp_path / "focus.jsonl"
    code, err = run_cli(["evaluate", str(data_file), "--metric", "temporal_ndcg", "--out", str(auto),
                         "--no-progress"], capsys)
    assert code == 0, err
    code, err = run_cli(["evaluate", str(data_file), "--metric", "temporal_ndcg", "--ndcg-mode", "focus",
                         "--out", str(focus), "--no-progress"], capsys)
    assert code == 0, err
    gold_scores = pd.read_json(auto, lines=True)["score"].tolist()
    focus_scores = pd.read_json(focus, lines=True)["score"].tolist()
    # gold mode: d2 relevant for q1 (rank 2), d1 for q2 (rank 1); focus mode: the context naming
    # the query's year is at rank 1 for q1 and rank 2 for q2
    assert gold_scores[1] == pytest.approx(1.0) and gold_scores[0] < 1.0
    assert focus_scores[0] == pytest.approx(1.0) and focus_scores[1] < 1.0


def test_ndcg_mode_judge_needs_the_judge(data_file: Path, tmp_path: Path, capsys) -> None:
    code, err = run_cli(["evaluate", str(data_file), "--metric", "temporal_ndcg", "--ndcg-mode", "judge",
                         "--out", str(tmp_path / "r.csv"), "--no-progress"], capsys)
    assert code == 2 and "--verifier llm" in err


def test_ndcg_mode_without_temporal_ndcg_is_refused(data_file: Path, tmp_path: Path, capsys) -> None:
    code, err = run_cli(["evaluate", str(data_file), "--metric", "temporal_faithfulness", "--ndcg-mode", "gold",
                         "--out", str(tmp_path / "r.csv"), "--no-progress"], capsys)
    assert code == 2 and "--ndcg-mode" in err
