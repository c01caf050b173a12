"""Gold-mode NDCG equals trec_eval's ndcg_cut.k (pytrec-eval-terrier, ir-measures) to 1e-9.

Randomised (seeded) runs with graded qrels (including negative grades), tied scores, scores
that only tie in float32, documents missing on either side, duplicate ids in list form and
queries with no relevant document (not judged for the run kernel, NaN for the row metric, 0.0
for trec_eval). The run kernel is the command line's (`tempo_eval.compare.trec_scores`).
"""

from __future__ import annotations

import math
import random

import ir_measures
import pytest
import pytrec_eval

from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tests.support.trec import ndcg_per_query

CUTOFFS = (1, 3, 5, 10, 20, 100)
TOLERANCE = 1e-9


def _random_query(rng: random.Random) -> tuple[dict[str, float], dict[str, int]]:
    """One query's run (doc -> score) and qrels (doc -> grade)."""
    pool = [f"d{rng.randrange(60)}" for _ in range(rng.randint(0, 40))]  # repeats collapse
    style = rng.choice(("coarse", "fine", "float32_ties", "mixed"))
    scores: dict[str, float] = {}
    for doc in pool:
        if style == "coarse":  # few distinct values: many ties, decided by doc id
            scores[doc] = rng.randrange(5) / 2
        elif style == "fine":
            scores[doc] = rng.uniform(-10, 10)
        elif style == "float32_ties":  # equal in float32, different in float64
            scores[doc] = 1.0 + rng.randrange(3) + rng.choice((0.0, 1e-12, 3e-9))
        else:
            scores[doc] = rng.choice((0, 1, 2.5, -1e-3, 1e-45, 7))
    judged = {f"d{rng.randrange(80)}" for _ in range(rng.randint(0, 25))}  # some never retrieved
    qrels = {doc: rng.choice((-1, 0, 0, 1, 1, 2, 3, 4)) for doc in judged}
    if rng.random() < 0.1:
        qrels = {doc: min(grade, 0) for doc, grade in qrels.items()}  # nothing relevant
    return scores, qrels


def _random_collection(seed: int, n_queries: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    run, qrels = {}, {}
    for i in range(n_queries):
        run[f"q{i}"], qrels[f"q{i}"] = _random_query(rng)
    return run, qrels


def _trec_eval(qrels: dict, run: dict, cutoffs=CUTOFFS) -> dict[str, dict[str, float]]:
    measures = {f"ndcg_cut.{','.join(map(str, cutoffs))}"}
    # pytrec_eval skips queries without judgements; an empty qrels dict is "no judgements"
    judged = {qid: docs for qid, docs in qrels.items() if docs}
    return pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(run)


def _has_relevant(qrels_q: dict[str, int]) -> bool:
    return any(grade > 0 for grade in qrels_q.values())


def _assert_matches(ours: float, theirs: float, qrels_q: dict[str, int], where: str) -> None:
    if _has_relevant(qrels_q):
        assert ours == pytest.approx(theirs, abs=TOLERANCE), where
    else:
        # trec_eval says 0.0 where there is nothing to find; we say "not measurable"
        assert math.isnan(ours) and theirs == 0.0, where


@pytest.fixture(scope="module")
def collection() -> tuple[dict, dict, dict]:
    run, qrels = _random_collection(seed=20240601, n_queries=400)
    return run, qrels, _trec_eval(qrels, run)


def test_the_random_collection_covers_the_edge_cases(collection):
    run, qrels, _ = collection
    assert any(not _has_relevant(q) for q in qrels.values())
    assert any(not docs for docs in run.values())
    assert any(len(set(docs.values())) < len(docs) for docs in run.values())  # ties
    assert any(grade < 0 for q in qrels.values() for grade in q.values())
    assert any(set(q) - set(run[qid]) for qid, q in qrels.items())  # judged, not retrieved


def test_batch_equals_trec_eval_ndcg_cut(collection):
    run, qrels, expected = collection
    for k in CUTOFFS:
        ours = ndcg_per_query(run, qrels, k)
        evaluated = [qid for qid in run if qrels[qid]]
        assert {qid for qid in evaluated if _has_relevant(qrels[qid])} == set(ours)
        for qid in evaluated:  # a query without a relevant document is not judged: not in `ours`
            _assert_matches(ours.get(qid, math.nan), expected[qid][f"ndcg_cut_{k}"], qrels[qid], f"{qid}@{k}")


def test_batch_curves_equal_trec_eval_at_every_cutoff(collection):
    run, qrels, expected = collection
    at = {k: ndcg_per_query(run, qrels, k) for k in CUTOFFS}
    for qid in run:
        if not qrels[qid]:
            continue
        for k in CUTOFFS:
            _assert_matches(at[k].get(qid, math.nan), expected[qid][f"ndcg_cut_{k}"], qrels[qid], f"{qid}@{k}")


def test_class_with_retrieved_scores_equals_trec_eval(collection):
    run, qrels, expected = collection
    metric = TemporalNDCG()
    for qid in list(run)[:200]:
        if not qrels[qid]:
            continue
        for k in (1, 5, 10):
            score = metric.compute(retrieved_scores=run[qid], gold_ids=qrels[qid], k=k)
            _assert_matches(score, expected[qid][f"ndcg_cut_{k}"], qrels[qid], f"{qid}@{k}")
        curve = metric.measure(retrieved_scores=run[qid], gold_ids=qrels[qid], k=20).details["curve"]
        for k in (1, 3, 5, 10, 20):
            _assert_matches(curve[k - 1], expected[qid][f"ndcg_cut_{k}"], qrels[qid], f"{qid} curve@{k}")


def test_class_with_ranked_lists_and_duplicates_equals_trec_eval():
    # trec_eval takes doc -> score, so a ranked list with repeats is modelled as its
    # first-occurrence order with strictly decreasing scores (what dedupe keeps).
    rng = random.Random(99)
    lists, qrels, run = {}, {}, {}
    for i in range(300):
        qid = f"q{i}"
        ranked = [f"d{rng.randrange(30)}" for _ in range(rng.randint(0, 30))]
        lists[qid] = ranked
        first_seen = list(dict.fromkeys(ranked))
        run[qid] = {doc: float(len(first_seen) - rank) for rank, doc in enumerate(first_seen)}
        qrels[qid] = {f"d{rng.randrange(40)}": rng.choice((0, 1, 2, 3)) for _ in range(rng.randint(1, 12))}
    assert any(len(set(ranked)) < len(ranked) for ranked in lists.values())
    expected = _trec_eval(qrels, run)
    metric = TemporalNDCG()
    for k in (1, 5, 10, 20):
        for qid, ranked in lists.items():
            score = metric.compute(retrieved_ids=ranked, gold_ids=qrels[qid], k=k)
            _assert_matches(score, expected[qid][f"ndcg_cut_{k}"], qrels[qid], f"{qid}@{k}")


def test_binary_gold_list_equals_trec_eval_with_grade_one():
    rng = random.Random(5)
    metric = TemporalNDCG()
    for i in range(200):
        scores = {f"d{rng.randrange(50)}": rng.randrange(10) / 3 for _ in range(rng.randint(1, 30))}
        gold = sorted({f"d{rng.randrange(50)}" for _ in range(rng.randint(1, 8))})
        expected = _trec_eval({"q": dict.fromkeys(gold, 1)}, {"q": scores}, (5, 10))["q"]
        for k in (5, 10):
            ours = metric.compute(retrieved_scores=scores, gold_ids=gold, k=k)
            assert ours == pytest.approx(expected[f"ndcg_cut_{k}"], abs=TOLERANCE), f"{i}@{k}"


def test_runs_of_very_different_depths_equal_trec_eval():
    # One deep ranking among many shallow ones (the batch sorts these without a padded matrix).
    rng = random.Random(11)
    run, qrels = _random_collection(seed=3, n_queries=150)
    run["deep"] = {f"d{i}": rng.randrange(200) / 7 for i in range(5000)}
    qrels["deep"] = {f"d{rng.randrange(6000)}": rng.choice((0, 1, 2, 3)) for _ in range(300)}
    expected = _trec_eval(qrels, run)
    at = {k: ndcg_per_query(run, qrels, k) for k in CUTOFFS}
    for qid in run:
        if not qrels[qid]:
            continue
        for k in CUTOFFS:
            _assert_matches(at[k].get(qid, math.nan), expected[qid][f"ndcg_cut_{k}"], qrels[qid], f"{qid}@{k}")


def test_scores_beyond_float32_range_tie_as_in_trec_eval():
    run = {"q": {"a": 5.1e38, "b": 4.08e38, "c": -1e39, "d": 1.0}}  # a, b overflow to +inf
    qrels = {"q": {"a": 2, "c": 1, "d": 3}}
    expected = _trec_eval(qrels, run, (1, 2, 4))["q"]
    for k in (1, 2, 4):
        assert ndcg_per_query(run, qrels, k)["q"] == pytest.approx(expected[f"ndcg_cut_{k}"], abs=TOLERANCE)
    assert TemporalNDCG(k=2).compute(retrieved_scores=run["q"], gold_ids=qrels["q"]) == pytest.approx(
        expected["ndcg_cut_2"], abs=TOLERANCE
    )


def test_ir_measures_ndcg_agrees(collection):
    run, qrels, _ = collection
    some = [qid for qid in list(run)[:60] if _has_relevant(qrels[qid])]
    sub_run = {qid: run[qid] for qid in some}
    sub_qrels = {qid: qrels[qid] for qid in some}
    measures = [ir_measures.nDCG @ 5, ir_measures.nDCG @ 10]
    theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, sub_qrels, sub_run)}
    for k in (5, 10):
        ours = ndcg_per_query(sub_run, sub_qrels, k)
        for qid in some:
            assert ours[qid] == pytest.approx(theirs[(qid, f"nDCG@{k}")], abs=TOLERANCE), f"{qid}@{k}"
