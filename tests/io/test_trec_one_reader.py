"""TREC runs and qrels have one reader and one NDCG kernel: runs in memory (`compare_trec`) score
as the same runs in files (`score_trec_files`, the command line), and the streaming reader keeps
the rules the dict reader had (ASCII integers, both lines of a duplicate, JSON, empty files)."""

from __future__ import annotations

import json

import pytest

from tempo_eval.compare.trec_scores import compare_scores, compare_trec, score_trec_files
from tempo_eval.io.errors import InputError
from tempo_eval.io.trec_stream import QueryCodes, read_qrels, read_runs

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 2, "d3": 1}, "q3": {"d4": 1}, "q4": {"d5": 0}}
RUNS = {
    "full": {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d3": 2.0, "d2": 1.0}, "q3": {"x": 2.0, "d4": 1.0}, "q4": {"d5": 1.0}},
    "partial": {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 2.0}},
}


def _run_lines(name: str, run: dict) -> bytes:
    return "".join(f"{q} Q0 {d} {i} {s} {name}\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())).encode()


@pytest.mark.parametrize("missing", ["zero", "drop"])
def test_runs_in_memory_score_as_the_same_runs_in_files(missing: str) -> None:
    files = [_run_lines(name, run) for name, run in RUNS.items()]
    qrels = "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()).encode()
    cli = compare_scores(score_trec_files(files, qrels, metrics=["ndcg@5"], missing=missing), test="student")
    ours = compare_trec(RUNS, QRELS, metrics=["ndcg@5"], missing=missing, test="student")
    assert {r: ours.means[r]["ndcg@5"] for r in RUNS} == pytest.approx({r: cli.means[r]["ndcg@5"] for r in RUNS})
    # q4 has no relevant document: no surface counts it, as a query or as dropped (q3, which
    # "partial" lacks, is the one query dropped with missing="drop")
    assert ours.n_queries == cli.n_queries == {"ndcg@5": 3 if missing == "zero" else 2}
    assert ours.n_dropped == cli.n_dropped == {"ndcg@5": 0 if missing == "zero" else 1}
    assert ours.n_filled == cli.n_filled and ours.missing_note == cli.missing_note


@pytest.mark.parametrize("grade", ["0x1", "0X1f"])
def test_a_hexadecimal_grade_or_rank_is_refused_by_the_streaming_reader(grade: str) -> None:
    with pytest.raises(InputError) as caught:
        read_qrels(f"q1 0 d1 1\nq1 0 d2 {grade}\n".encode(), QueryCodes())
    assert caught.value.line == 2 and caught.value.column == "rel"
    with pytest.raises(InputError) as caught:
        read_runs([f"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 {grade} 1.0 r\n".encode()], QueryCodes(), keep=10)
    assert caught.value.line == 2 and caught.value.column == "rank"


def test_a_document_twice_in_a_run_names_both_lines() -> None:
    with pytest.raises(InputError) as caught:
        read_runs([b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n# note\nq1 Q0 d1 3 0.5 r\n"], QueryCodes(), keep=10)
    assert caught.value.line == 4 and "at line 1 and at line 4" in str(caught.value)
    with pytest.raises(InputError) as caught:
        read_qrels(b"q1 0 d1 1\nq1 0 d1 2\n", QueryCodes())
    assert caught.value.line == 2 and "at line 1 and at line 2" in str(caught.value)


def test_an_empty_qrels_file_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no judgements found"):
        read_qrels(b"", QueryCodes())


def test_a_json_run_and_bad_values_in_memory_name_query_and_document() -> None:
    codes = QueryCodes()
    (run,) = read_runs([json.dumps({"q1": {"a": 1.0, "b": 2.0}}).encode()], codes, keep=5).values()
    assert run.docids.to_pylist() == ["b", "a"] and run.scores.tolist() == [2.0, 1.0]
    with pytest.raises(InputError, match="document 'a' has 'high'") as caught:
        compare_trec({"r": {"q1": {"a": "high"}}}, QRELS)
    assert caught.value.column == "q1"
    with pytest.raises(InputError, match="document 'd1' has 1.5"):
        compare_trec(RUNS, {"q1": {"d1": 1.5}})
