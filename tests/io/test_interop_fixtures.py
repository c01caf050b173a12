"""Files written by RAGAS 0.4.3, DeepEval 4.3.1 and ranx 0.3.21 themselves load with the right
mapping and give the right numbers (the files: tests/support/record_interop_fixtures.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tempo_eval.compare.trec_scores import compare_trec
from tempo_eval.engine.runner import evaluate
from tempo_eval.io import load_conversations, load_dataset
from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.store.runs import RunStore
from tests.support.paths import TESTS
from tests.support.trec import load_qrels, load_run

DATA = TESTS / "data" / "interop"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
ROWS = MANIFEST["_rows"]
#: NDCG@10 of ROWS' retrieved ids against their gold ids, by hand: q2 finds its one relevant
#: document at rank 2 (1 / log2(3))
EXPECTED_NDCG = [1.0, 1 / math.log2(3), 1.0]

SINGLE_TURN = ["ragas_single.jsonl", "ragas_single.csv", "ragas_single_hf.csv", "ragas_single_hf.json"]
DEEPEVAL_RUNS = ["deepeval_test_run.json", "deepeval_latest_test_run.json"]
DEEPEVAL_CASES = ["deepeval_test_cases.json", "deepeval_test_cases.csv", *DEEPEVAL_RUNS]
CONVERSATION_FILES = sorted(name for name, info in MANIFEST.items()
                            if isinstance(info, dict) and info.get("kind") == "conversations")


def test_the_fixtures_were_written_by_the_pinned_libraries() -> None:
    assert MANIFEST["_versions"]["ragas"] == "0.4.3"
    assert MANIFEST["_versions"]["deepeval"] == "4.3.1"
    required = {f"deepeval_conversational_{kind}.{fmt}" for kind in ("goldens", "test_cases")
                for fmt in ("json", "jsonl", "csv")} | {"ragas_multi.jsonl", "ragas_multi.csv"}
    assert required <= set(CONVERSATION_FILES)  # the 8 cases, and Hugging Face exports


@pytest.mark.parametrize("name", SINGLE_TURN)
def test_ragas_single_turn_files_load_with_every_column_mapped(name: str) -> None:
    dataset = load_dataset(DATA / name)
    assert dataset.mapping == {
        "query": "user_input", "contexts": "retrieved_contexts", "answer": "response", "reference": "reference",
        "retrieved_ids": "retrieved_context_ids", "gold_ids": "reference_context_ids",
    }
    frame = dataset.frame
    assert frame["query"].tolist() == [r["query"] for r in ROWS]
    assert frame["contexts"].tolist() == [r["contexts"] for r in ROWS]
    assert frame["retrieved_ids"].tolist() == [r["retrieved_ids"] for r in ROWS]
    assert frame["gold_ids"].tolist() == [r["gold_ids"] for r in ROWS]
    assert frame["answer"].tolist() == [r["answer"] for r in ROWS]


@pytest.mark.parametrize("name", SINGLE_TURN)
def test_ragas_single_turn_files_give_the_right_ndcg(name: str) -> None:
    # to_hf_dataset().to_csv() writes ['d1' 'd2' 'd3']; read glued, q1 scored 0.17 instead of 1.0
    result = evaluate(load_dataset(DATA / name), [TemporalNDCG(k=10)])
    assert result.frame["score"].tolist() == pytest.approx(EXPECTED_NDCG)


@pytest.mark.parametrize("name", DEEPEVAL_CASES)
def test_deepeval_test_cases_load_with_their_retrieval_context(name: str) -> None:
    dataset = load_dataset(DATA / name)
    assert {"query": "input", "answer": "actual_output", "reference": "expected_output",
            "contexts": "retrieval_context"}.items() <= dataset.mapping.items()
    assert dataset.frame["contexts"].tolist() == [r["contexts"] for r in ROWS]
    assert dataset.frame["answer"].tolist() == [r["answer"] for r in ROWS]


def test_deepeval_csv_contexts_starting_with_a_bracket_are_text_split_at_bars_with_a_note() -> None:
    dataset = load_dataset(DATA / "deepeval_test_cases.csv")
    (note,) = [w for w in dataset.warnings if "starts with '['" in w]
    assert "column 'retrieval_context'" in note and "row 1" in note


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_deepeval_goldens_load_and_warn_that_outputs_and_contexts_are_empty(fmt: str) -> None:
    dataset = load_dataset(DATA / f"deepeval_goldens.{fmt}")
    assert dataset.frame["query"].tolist() == [r["query"] for r in ROWS]
    assert dataset.frame["reference"].tolist() == [r["reference"] for r in ROWS]
    warnings = "\n".join(dataset.warnings)
    assert "column 'actual_output' (answer) is empty in every row" in warnings
    assert "column 'retrieval_context' (contexts) is empty in every row" in warnings


@pytest.mark.parametrize("name", CONVERSATION_FILES)
def test_conversation_files_load_one_row_per_conversation(name: str) -> None:
    dataset = load_conversations(DATA / name)
    assert list(dataset.frame.columns) == ["conversation_id", "turns"]
    assert dataset.frame["conversation_id"].tolist() == ["c1", "c2"]
    expected = []
    for conversation in MANIFEST["_conversations"]:
        turns = []
        for question, documents, answer in conversation["exchanges"]:
            turns.append({"role": "user", "content": question, "retrieval_context": []})
            turns.append({"role": "assistant", "content": answer, "retrieval_context": documents})
        expected.append(turns)
    assert dataset.frame["turns"].tolist() == expected


def test_a_ragas_result_is_imported_with_its_scores_as_an_external_run(tmp_path: Path) -> None:
    foreign = load_foreign_results(DATA / "ragas_result.csv")
    assert foreign.tool == "ragas"
    assert foreign.metrics == ["ragas:faithfulness", "ragas:answer_relevancy"]
    store = RunStore(tmp_path / "ws.sqlite")
    run_id = import_foreign_results(foreign, store)
    frame = store.results_frame(run_id)
    for metric in ("faithfulness", "answer_relevancy"):
        got = frame[frame["metric"] == f"ragas:{metric}"]["score"].tolist()
        assert got == [row[metric] for row in MANIFEST["ragas_result.csv"]["scores"]]
    # the same file evaluated with our metrics lands on the same stored dataset
    ours = evaluate(load_dataset(DATA / "ragas_result.csv"), [TemporalNDCG(k=10)], store=store)
    assert store.run_info(ours.run_id)["dataset_id"] == store.run_info(run_id)["dataset_id"]


@pytest.mark.parametrize("name", DEEPEVAL_RUNS)
def test_a_deepeval_test_run_is_imported_with_score_threshold_success_and_reason(name: str, tmp_path: Path) -> None:
    foreign = load_foreign_results(DATA / name)
    assert foreign.tool == "deepeval" and foreign.metrics == ["deepeval:Faithfulness"]
    expected = MANIFEST[name]["faithfulness"]
    assert [s.score for s in foreign.scores] == [expected[r["id"]] for r in ROWS]
    assert [s.success for s in foreign.scores] == [s.score >= 0.7 for s in foreign.scores]
    assert all(s.threshold == 0.7 and s.reason for s in foreign.scores)
    store = RunStore(tmp_path / "ws.sqlite")
    run_id = import_foreign_results(foreign, store)
    result = store.get_result(run_id, 1, "deepeval:Faithfulness")
    assert result.score == 0.5 and result.success is False and result.details["threshold"] == 0.7
    assert store.list_runs()["name"].tolist() == [f"deepeval: {name}"]


def test_ranx_json_and_trec_runs_and_qrels_read_the_same() -> None:
    ranx = MANIFEST["ranx"]
    (json_run,) = load_run(DATA / "ranx_bm25.json").values()
    (trec_run,) = load_run(DATA / "ranx_bm25.trec").values()
    assert json_run.scores == trec_run.scores == ranx["scores"]
    assert json_run.name == "ranx_bm25" and trec_run.name == "bm25"
    assert load_qrels(DATA / "ranx_qrels.json").judgments == load_qrels(DATA / "ranx_qrels.trec").judgments
    assert load_qrels(DATA / "ranx_qrels.json").judgments == ranx["qrels"]


def test_a_ranx_run_saved_without_a_name_is_named_from_its_file() -> None:
    (run,) = load_run(DATA / "ranx_unnamed.trec").values()
    assert run.name == "ranx_unnamed"
    assert any("tag None" in note for note in run.notes)


def test_runs_sharing_a_tag_are_named_from_their_files() -> None:
    runs = load_run([DATA / "ranx_bm25.trec", DATA / "ranx_bm25_reversed.trec"])
    assert list(runs) == ["ranx_bm25", "ranx_bm25_reversed"]
    assert runs["ranx_bm25_reversed"].scores == MANIFEST["ranx"]["reversed_scores"]


def test_results_trunc_fields_after_the_sixth_are_ignored_with_a_note() -> None:
    (run,) = load_run(DATA / "results.trunc").values()
    assert run.name == "trunc-run" and run.scores == MANIFEST["ranx"]["scores"]
    (note,) = run.notes
    assert "more than 6 fields" in note and "trec_eval" in note


def test_ranx_files_compare_like_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs = load_run([DATA / "ranx_bm25.json", DATA / "ranx_unnamed.trec"])
    qrels = load_qrels(DATA / "ranx_qrels.json")
    report = compare_trec({name: run.scores for name, run in runs.items()}, qrels.judgments, metrics=["ndcg@10"],
                          test="student")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.judgments, {"ndcg_cut.10"})
    for name, run in runs.items():
        measured = evaluator.evaluate(run.scores)
        reference = sum(m["ndcg_cut_10"] for m in measured.values()) / len(measured)
        assert report.means[name]["ndcg@10"] == pytest.approx(reference, abs=1e-9)
