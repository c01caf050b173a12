"""The command line's input limit (issue 11, issue 21): `--max-input-mb` is used; TREC run files are
streamed without a size limit while a JSON run keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_eval.cli import main


def test_the_cli_limit_option_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEMPO_EVAL_MAX_INPUT_MB", raising=False)
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps({"query": f"q{i}", "retrieved_ids": ["d1"], "gold_ids": ["d1"]})
                              for i in range(20_000)), encoding="utf-8")
    args = ["evaluate", str(path), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "r.csv"), "--no-progress"]
    assert main([*args, "--max-input-mb", "0.2"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: d.jsonl: the file holds") and "--max-input-mb" in line


def test_compare_streams_trec_lines_without_a_size_limit_and_limits_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 21: TREC run files are streamed (memory grows with queries x depth), so no size refusal;
    # a JSON run is read whole and keeps the input limit
    run = tmp_path / "a.run"
    run.write_text("".join(f"q{i} Q0 d{j} {j + 1} {10 - j} {tag}\n" for tag in ("bm25", "dense")
                           for i in range(2000) for j in range(5)), encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d1 1\n" for i in range(2000)), encoding="utf-8")
    args = ["compare", str(run), "--qrels", str(qrels), "--permutations", "10"]
    assert main([*args, "--max-input-mb", "0.1"]) == 0
    capsys.readouterr()
    big = tmp_path / "big.json"
    big.write_text("{" + ", ".join(f'"q{i}": {{"d1": 1.0, "d2": 0.5}}' for i in range(5000)) + "}")
    assert main(["compare", str(run), str(big), "--qrels", str(qrels), "--max-input-mb", "0.1"]) == 2
    assert "big.json: the file holds" in capsys.readouterr().err

