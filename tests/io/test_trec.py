"""TREC runs and qrels: the format, gzip, several runs, and trec_eval's tie rule."""

from __future__ import annotations

import gzip
import io
import math
from pathlib import Path

import pytest

from tempo_eval.io.errors import InputError
from tempo_eval.metrics.ndcg import rank_by_trec_eval
from tests.support.trec import load_qrels, load_run

RUN = b"""# produced by bm25, k1=0.9
q1 Q0 d1 1 12.5 bm25
q1\tQ0\td2\t2\t11.0\tbm25

q2 Q0 d9 1 3 bm25
q1   Q0   d3   3   -1e2   bm25
"""


def _named(data: bytes, name: str) -> io.BytesIO:
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


def test_a_run_file_is_read_with_comments_blank_lines_and_any_whitespace(tmp_path: Path) -> None:
    path = tmp_path / "bm25.run"
    path.write_bytes(RUN)
    runs = load_run(path)
    assert list(runs) == ["bm25"]
    run = runs["bm25"]
    assert run.name == "bm25"
    assert run.scores == {"q1": {"d1": 12.5, "d2": 11.0, "d3": -100.0}, "q2": {"d9": 3.0}}
    assert run.query_ids() == ["q1", "q2"]
    assert run.ranking("q1") == ["d1", "d2", "d3"]


def test_the_ranking_comes_from_scores_not_from_the_rank_column() -> None:
    run = load_run(b"q1 Q0 low 1 0.1 r\nq1 Q0 high 2 0.9 r\n")["r"]
    assert run.ranking("q1") == ["high", "low"]


def test_tied_scores_are_broken_by_document_id_descending_as_trec_eval_does() -> None:
    run = load_run(b"q1 Q0 d10 1 1.0 r\nq1 Q0 d2 2 1.0 r\nq1 Q0 d3 3 2.0 r\nq1 Q0 d1 4 1.0 r\n")["r"]
    assert run.ranking("q1") == ["d3", "d2", "d10", "d1"]
    assert run.ranking("q1") == rank_by_trec_eval(run.scores["q1"])


def test_a_query_missing_from_the_run_has_an_empty_ranking() -> None:
    assert load_run(b"q1 Q0 d1 1 1 r\n")["r"].ranking("q404") == []


def test_several_tags_in_one_file_are_several_runs() -> None:
    runs = load_run(b"q1 Q0 d1 1 1 bm25\nq1 Q0 d1 1 5 dense\nq1 Q0 d2 2 4 dense\n")
    assert sorted(runs) == ["bm25", "dense"]
    assert runs["dense"].ranking("q1") == ["d1", "d2"]
    assert runs["bm25"].scores == {"q1": {"d1": 1.0}}


def test_several_files_are_merged_into_one_dict(tmp_path: Path) -> None:
    (tmp_path / "a.run").write_bytes(b"q1 Q0 d1 1 1 bm25\n")
    runs = load_run([tmp_path / "a.run", _named(b"q1 Q0 d2 1 1 dense\n", "b.run")])
    assert sorted(runs) == ["bm25", "dense"]


def test_gzip_runs_are_read_by_content_with_or_without_the_gz_name(tmp_path: Path) -> None:
    path = tmp_path / "bm25.run.gz"
    path.write_bytes(gzip.compress(RUN))
    assert load_run(path)["bm25"].scores["q2"] == {"d9": 3.0}
    assert load_run(_named(gzip.compress(RUN), "upload.txt"))["bm25"].query_ids() == ["q1", "q2"]


def test_the_same_document_in_two_runs_of_one_file_is_fine() -> None:
    runs = load_run(b"q1 Q0 d1 1 1 a\nq1 Q0 d1 1 1 b\n")
    assert runs["a"].scores == runs["b"].scores


def test_infinite_scores_are_accepted_like_trec_eval() -> None:
    assert load_run(b"q1 Q0 d1 1 inf r\nq1 Q0 d2 2 -inf r\n")["r"].ranking("q1") == ["d1", "d2"]


def test_qrels_are_read_with_integer_grades(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"# judged by us\nq1 0 d1 2\nq1 0 d2 0\nq2\t0\td9\t1\nq2 0 d8 -1\n")
    qrels = load_qrels(path)
    assert qrels.name == "qrels.txt"
    assert qrels.judgments == {"q1": {"d1": 2, "d2": 0}, "q2": {"d9": 1, "d8": -1}}
    assert list(qrels.judgments) == ["q1", "q2"]


def test_gzip_qrels_are_read(tmp_path: Path) -> None:
    path = tmp_path / "qrels.gz"
    path.write_bytes(gzip.compress(b"q1 0 d1 1\n"))
    assert load_qrels(path).judgments == {"q1": {"d1": 1}}


def test_run_and_qrels_feed_trec_eval_unchanged() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs = load_run(b"q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 1.0 r\nq1 Q0 d3 3 0.5 r\n")
    qrels = load_qrels(b"q1 0 d1 1\nq1 0 d3 2\n")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.judgments, {"ndcg_cut.2"})
    result = evaluator.evaluate(runs["r"].scores)
    # trec_eval ranks d2 (tie, larger id) before d1: the top 2 hold only grade 1
    ideal = 2 + 1 / math.log2(3)
    assert result["q1"]["ndcg_cut_2"] == pytest.approx((0 + 1 / math.log2(3)) / ideal)
    assert runs["r"].ranking("q1")[:2] == ["d2", "d1"]


def test_an_empty_list_of_run_files_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no run files given"):
        load_run([])
