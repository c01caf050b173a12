"""TREC like trec_eval: extra fields, shared tags, JSON runs, -M depth, score precision."""

from __future__ import annotations

import io
import json
import math
import random

import pytest

from tempo_eval.compare.trec_scores import compare_trec
from tempo_eval.io.errors import InputError
from tempo_eval.metrics.ndcg import rank_by_trec_eval
from tests.support.trec import load_qrels, load_run, ndcg_per_query


def _named(data: bytes, name: str) -> io.BytesIO:
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


def test_fields_after_the_sixth_are_ignored_with_a_note() -> None:
    runs = load_run(_named(b"q1 Q0 d1 1 2.0 tag extra words\nq1 Q0 d2 2 1.0 tag\n", "results.trunc"))
    assert runs["tag"].scores == {"q1": {"d1": 2.0, "d2": 1.0}}
    (note,) = runs["tag"].notes
    assert "1 line(s) have more than 6 fields (first at line 1)" in note


def test_five_fields_are_still_an_error() -> None:
    with pytest.raises(InputError, match="found 5 fields"):
        load_run(_named(b"q1 Q0 d1 1 2.0\n", "r.txt"))


def test_two_files_with_one_tag_are_named_from_the_files_and_a_multi_run_file_keeps_its_tags() -> None:
    a = _named(b"q1 Q0 d1 1 2.0 base\nq1 Q0 d1 1 2.0 other\n", "a.run")
    b = _named(b"q1 Q0 d2 1 2.0 base\n", "b.run.gz")
    runs = load_run([a, b])
    assert list(runs) == ["a:base", "other", "b"]
    assert any("b.run.gz also uses" in note for note in runs["a:base"].notes)


def test_json_runs_and_qrels_as_pytrec_eval_takes_them() -> None:
    run = {"q1": {"d1": 1.5, "d2": 0.5}, "q2": {"d3": 2}}
    qrels = {"q1": {"d2": 1}, "q2": {"d3": 2, "d4": 0}}
    (loaded,) = load_run(_named(json.dumps(run).encode(), "dense.json")).values()
    assert loaded.name == "dense" and loaded.scores == {"q1": {"d1": 1.5, "d2": 0.5}, "q2": {"d3": 2.0}}
    assert load_qrels(_named(json.dumps(qrels).encode(), "qrels.json")).judgments == qrels


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b'{"q1": [1, 2]}', "query 'q1' holds list"),
        (b'{"q1": {"d1": "high"}}', "document 'd1' has 'high'"),
        (b'{"q1": {"d1": 1.5}}', "integer grades"),
        (b"{}", "found no queries"),
        (b'{"q1": {"d1": 1}', "not valid JSON"),
    ],
)
def test_bad_json_qrels_name_the_query_and_what_was_expected(data: bytes, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        load_qrels(_named(data, "qrels.json"))


def test_depth_keeps_the_top_m_documents_as_trec_eval_m() -> None:
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 1.0}}
    qrels = {"q1": {"d3": 1, "d4": 1}}
    assert rank_by_trec_eval(run["q1"])[:3] == ["d1", "d2", "d4"]  # tie: larger id first
    full = ndcg_per_query(run, qrels, 10)["q1"]
    cut = ndcg_per_query(run, qrels, 10, depth=3)["q1"]
    ideal = 1 + 1 / math.log2(3)
    assert full == pytest.approx((1 / math.log2(4) + 1 / math.log2(5)) / ideal)
    assert cut == pytest.approx((1 / math.log2(4)) / ideal)  # d3 fell below the cut
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        ndcg_per_query(run, qrels, 10, depth=0)


def test_depth_equals_scoring_the_truncated_run_on_random_runs() -> None:
    rng = random.Random(7)
    run = {f"q{q}": {f"d{d}": float(rng.randrange(5)) for d in range(30)} for q in range(20)}
    qrels = {q: {f"d{d}": rng.randrange(3) for d in range(0, 30, 3)} for q in run}
    for depth in (1, 5, 12):
        truncated = {q: dict(zip(rank_by_trec_eval(s)[:depth], [s[d] for d in rank_by_trec_eval(s)[:depth]], strict=True))
                     for q, s in run.items()}
        assert ndcg_per_query(run, qrels, 10, depth=depth) == pytest.approx(ndcg_per_query(truncated, qrels, 10))


# Scores equal in float32 but not in double: trec_eval <= 9 / pytrec_eval-terrier tie them (the
# larger id first), trec_eval 10.0 ranks the larger double first.
NEAR = {"q1": {"a": 1.0 + 1e-12, "b": 1.0}}
NEAR_QRELS = {"q1": {"a": 1}}


def test_float32_precision_ties_near_equal_scores_as_pytrec_eval_terrier() -> None:
    assert rank_by_trec_eval(NEAR["q1"]) == ["b", "a"]  # the default
    assert rank_by_trec_eval(NEAR["q1"], precision="float32") == ["b", "a"]
    ours = ndcg_per_query(NEAR, NEAR_QRELS, 10, precision="float32")["q1"]
    assert ours == pytest.approx(1 / math.log2(3))
    pytrec_eval = pytest.importorskip("pytrec_eval")
    reference = pytrec_eval.RelevanceEvaluator(NEAR_QRELS, {"ndcg_cut.10"}).evaluate(NEAR)["q1"]["ndcg_cut_10"]
    assert ours == pytest.approx(reference, abs=1e-12)


def test_double_precision_orders_near_equal_scores_as_trec_eval_10() -> None:
    assert rank_by_trec_eval(NEAR["q1"], precision="double") == ["a", "b"]
    assert ndcg_per_query(NEAR, NEAR_QRELS, 10, precision="double")["q1"] == 1.0
    report = compare_trec({"x": NEAR, "y": {"q1": {"b": 2.0, "a": 1.0}}}, NEAR_QRELS, metrics=["ndcg@10"],
                          precision="double", test="student")
    assert report.means["x"]["ndcg@10"] == 1.0
    with pytest.raises(ValueError, match="score precision must be one of float32, double"):
        rank_by_trec_eval(NEAR["q1"], precision="half")


def test_broken_json_run_says_where_without_a_doubled_at() -> None:
    with pytest.raises(InputError) as raised:
        load_run(_named(b'{"q1": {"d1": 1.0, "d2', "bm25.json"))
    message = str(raised.value)
    assert "Unterminated string starting at character" in message and " at at " not in message
