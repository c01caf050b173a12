"""CLI options that met in the merge of issues 8-14: each combination either works or is refused
with one line saying why (never silently ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.paths import ROOT, TESTS

DATA = TESTS / "data" / "interop"
SAMPLE = ROOT / "data" / "sample" / "temporal_qa.csv"




def test_max_input_mb_applies_to_conversation_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversations = DATA / "ragas_multi.jsonl"
    limit_mb = conversations.stat().st_size / 2 / 10**6  # half the file
    code, err = run_cli(["evaluate", str(conversations), "--metrics", "turn_faithfulness", "--out",
                       str(tmp_path / "r.csv"), "--workspace", str(tmp_path / "ws"), "--no-progress",
                       "--max-input-mb", f"{limit_mb:.7f}"], capsys)
    assert code == 2 and "the limit is" in err and "--max-input-mb" in err, err
    assert not (tmp_path / "r.csv").exists()


def test_out_naming_a_conversation_file_is_refused_and_the_file_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversations = tmp_path / "conversations.jsonl"
    conversations.write_bytes((DATA / "ragas_multi.jsonl").read_bytes())
    before = conversations.read_bytes()
    code, err = run_cli(["evaluate", str(conversations), "--metrics", "turn_faithfulness", "--out",
                       str(conversations), "--workspace", str(tmp_path / "ws"), "--no-progress"], capsys)
    assert code == 2 and "would overwrite it" in err
    assert conversations.read_bytes() == before


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--deadline", "30", "--deadline applies to the local engine"),
    ("--max-input-mb", "1", "--max-input-mb applies to the local engine"),
])
def test_local_engine_options_are_refused_with_the_ray_engine(
    option: str, value: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(["evaluate", str(SAMPLE), "--metrics", "temporal_ndcg", "--engine", "ray", "--out",
                       str(tmp_path / "out"), "--no-progress", option, value], capsys)
    assert code == 2 and says in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()  # refused before Ray was started or anything written


def test_compare_out_naming_an_input_is_refused_and_the_input_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes((DATA / "ranx_qrels.trec").read_bytes())
    runs = [str(DATA / "ranx_bm25.trec"), str(DATA / "ranx_bm25_reversed.trec")]
    before = qrels.read_bytes()
    code, err = run_cli(["compare", *runs, "--qrels", str(qrels), "--out", str(qrels)], capsys)
    assert code == 2 and "would overwrite it" in err, err
    assert qrels.read_bytes() == before


def test_importing_the_same_file_again_with_a_run_name_renames_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # as evaluate --run-name names the run it resumes
    from tempo_eval.store.runs import RunStore

    args = ["import", str(DATA / "deepeval_test_run.json"), "--workspace", str(tmp_path / "ws")]
    assert run_cli(args, capsys)[0] == 0
    assert run_cli([*args, "--run-name", "faithfulness, DeepEval"], capsys)[0] == 0
    runs = RunStore(tmp_path / "ws" / "tempo_eval.sqlite").list_runs()
    assert runs["name"].tolist() == ["faithfulness, DeepEval"]


def test_every_command_that_makes_a_run_takes_run_name() -> None:
    from tempo_eval.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["import-results", "out", "--run-name", "from ray"]).name == "from ray"
    assert parser.parse_args(["import-results", "out", "--name", "from ray"]).name == "from ray"
    assert parser.parse_args(["import", "r.csv", "--run-name", "ragas"]).run_name == "ragas"
    assert parser.parse_args(["evaluate", "d.csv", "--metrics", "m", "--out", "r.csv", "--run-name", "x"]).run_name == "x"
