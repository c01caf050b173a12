"""Temporal NDCG@K: the pure functions with hand-computed numbers, and TemporalNDCG's modes and edges.

Discounts used below: 1/log2(2) = 1, 1/log2(3) = 0.6309297535714575, 1/log2(4) = 0.5,
1/log2(5) = 0.43067655807339306.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest

from tempo_eval.core.focus import FocusTime
from tempo_eval.metrics.base import METRICS, MissingInput
from tempo_eval.metrics.ndcg import dedupe, gold_relevance, jaccard, rank_by_trec_eval
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tests.support.ndcg_curves import dcg_curve, focus_time_relevance, gain, gold_gains, ndcg_curve
from tests.support.paths import ROOT
from tests.support.trec import ndcg_per_query

D2, D3, D4, D5 = 1.0, 0.6309297535714575, 0.5, 0.43067655807339306


# ---- pure functions --------------------------------------------------------------------------

def test_rank_by_trec_eval_orders_by_score_then_id_descending():
    scores = {"d1": 0.5, "d3": 0.9, "d2": 0.9, "d10": 0.5, "d0": 0.1}
    # 0.9 tie: "d3" > "d2"; 0.5 tie: "d1" > "d10" as strings ("d1" is a prefix of "d10")
    assert rank_by_trec_eval(scores) == ["d3", "d2", "d10", "d1", "d0"]


def test_rank_by_trec_eval_ties_scores_equal_in_float32():
    # trec_eval keeps scores as C floats: 1.0 + 1e-12 == 1.0 there, so the id decides.
    assert rank_by_trec_eval({"a": 1.0 + 1e-12, "b": 1.0}) == ["b", "a"]
    # 1 + 2**-20 is representable in float32, so it is a real difference
    assert rank_by_trec_eval({"a": 1.0 + 2**-20, "b": 1.0}) == ["a", "b"]


def test_rank_by_trec_eval_refuses_nan_and_non_numbers():
    with pytest.raises(ValueError, match="NaN"):
        rank_by_trec_eval({"a": float("nan")})
    with pytest.raises(TypeError, match="numeric"):
        rank_by_trec_eval({"a": "0.5"})
    with pytest.raises(TypeError, match="strings"):
        rank_by_trec_eval({1: 0.5})


def test_dedupe_keeps_first_occurrence():
    assert dedupe(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_gain_linear_exponential_and_non_positive():
    assert gain(3) == 3.0
    assert gain(3, "exponential") == 7.0
    assert gain(1, "exponential") == 1.0
    assert gain(0) == 0.0
    assert gain(-1) == 0.0  # negative grades earn nothing, as in trec_eval
    assert gain(-1, "exponential") == 0.0
    with pytest.raises(ValueError, match="gain kind"):
        gain(1, "log")


def test_dcg_curve_hand_computed_and_flat_after_the_list():
    curve = dcg_curve([3, 2, 0, 1], 6)
    expected_4 = 3 + 2 * D3 + 0 + 1 * D5
    assert curve == pytest.approx([3.0, 3 + 2 * D3, 3 + 2 * D3, expected_4, expected_4, expected_4])
    assert curve[3] == pytest.approx(4.692536065208)


def test_ndcg_curve_hand_computed_binary_example():
    # retrieved [x, relevant, x]: DCG@3 = 1/log2(3); IDCG = 1
    assert ndcg_curve([0, 1, 0], [1], 3) == pytest.approx([0.0, D3, D3])


def test_ndcg_curve_sorts_the_ideal_gains_itself():
    assert ndcg_curve([1, 2], [1, 2], 2) == ndcg_curve([1, 2], [2, 1], 2)
    # DCG@2 = 1 + 2*D3 = 2.2618595; IDCG@2 = 2 + 1*D3 = 2.6309298
    assert ndcg_curve([1, 2], [1, 2], 2)[1] == pytest.approx(0.8597186998521972)


def test_ndcg_curve_is_nan_where_no_candidate_has_gain():
    assert all(math.isnan(v) for v in ndcg_curve([0, 0], [0, 0], 3))
    assert all(math.isnan(v) for v in ndcg_curve([], [], 2))


def _ndcg_at(gains: list[float], ideal: list[float], k: int) -> float:
    """Direct per-k formula, independent of the one-pass curve."""
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
    best = sorted(ideal, reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(best))
    return dcg / idcg


def test_one_pass_curve_equals_per_k_computation():
    rng = random.Random(7)
    for _ in range(200):
        gains = [rng.choice([0, 0, 1, 2, 3]) for _ in range(rng.randint(0, 15))]
        ideal = gains + [rng.choice([1, 2, 3]) for _ in range(rng.randint(1, 5))]
        k = rng.randint(1, 20)
        curve = ndcg_curve(gains, ideal, k)
        assert len(curve) == k
        for j in range(1, k + 1):
            assert curve[j - 1] == pytest.approx(_ndcg_at(gains, ideal, j), abs=1e-12)


def test_gold_relevance_binary_list_and_graded_dict():
    assert gold_relevance(["a", "b", "a"]) == {"a": 1, "b": 1}
    assert gold_relevance({"a": 2, "b": 0}) == {"a": 2, "b": 0}
    with pytest.raises(TypeError, match="gold_ids"):
        gold_relevance("a")
    with pytest.raises(TypeError, match="grade"):
        gold_relevance({"a": "2"})
    with pytest.raises(TypeError, match="grade"):
        gold_relevance({"a": True})


def test_gold_gains_binary_graded_and_exponential():
    assert gold_gains(["x", "a", "b"], ["a"]) == [0.0, 1.0, 0.0]
    assert gold_gains(["x", "a", "b"], {"a": 3, "b": -1}) == [0.0, 3.0, 0.0]
    assert gold_gains(["a", "b"], {"a": 3, "b": 2}, "exponential") == [7.0, 3.0]


def test_jaccard_and_focus_time_relevance():
    assert jaccard({1, 2}, {2, 3}) == pytest.approx(1 / 3)
    assert jaccard({1}, set()) == 0.0
    assert math.isnan(jaccard(set(), set()))  # undefined, not silently 0 or 1
    assert focus_time_relevance({2020, 2021}, {2020}) == 2.0  # 4 * 1/2
    assert focus_time_relevance(FocusTime.from_years({2020}), [2020]) == 4.0
    assert focus_time_relevance({2020}, {1999}) == 0.0


def test_run_kernel_hand_computed_with_the_command_lines_rule():
    run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"a": 1.0}, "q3": {}, "only_in_run": {"a": 1}}
    qrels = {"q1": {"b": 2, "c": 1, "z": 0}, "q2": {"a": 0}, "q3": {"a": 1}, "only_in_qrels": {"a": 1}}
    result = ndcg_per_query(run, qrels, 2)
    # judged = with a relevant document; q2 (nothing relevant) is not judged, as on the command line
    assert set(result) == {"q1", "q3", "only_in_qrels"}
    # q1: DCG@2 = 0 + 2*D3; IDCG@2 = 2 + 1*D3
    assert result["q1"] == pytest.approx(2 * D3 / (2 + D3))
    assert result["q3"] == 0.0 and result["only_in_qrels"] == 0.0  # nothing retrieved: 0, as trec_eval -c
    assert [ndcg_per_query(run, qrels, k)["q1"] for k in (1, 2)] == pytest.approx([0.0, result["q1"]])


def test_run_kernel_ties_and_bad_input():
    # tie at 0.5 between "a" and "b": "b" ranks first
    assert ndcg_per_query({"q": {"a": 0.5, "b": 0.5}}, {"q": {"a": 1}}, 1) == {"q": 0.0}
    with pytest.raises(ValueError, match="nan"):
        ndcg_per_query({"q": {"a": float("nan")}}, {"q": {"a": 1}}, 1)
    with pytest.raises(ValueError, match="document id 1"):
        ndcg_per_query({"q": {1: 0.5}}, {"q": {"a": 1}}, 1)
    with pytest.raises(ValueError, match="'high'"):
        ndcg_per_query({"q": {"a": "high"}}, {"q": {"a": 1}}, 1)
    with pytest.raises(ValueError, match="ndcg@k"):
        ndcg_per_query({"q": {"a": 0.5}}, {"q": {"a": 1}}, 0)


# ---- TemporalNDCG: the seed and focus-time mode ----------------------------------------------

def test_seed_focus_time_example_scores_one():
    # QFT {2020, 2021}: doc 1 has the same years (rel 4 x 1 = 4), doc 2 none (rel 0). The one
    # relevant document is already first, so DCG equals the ideal DCG: 1.0.
    metric = TemporalNDCG(use_focus_time=True)
    assert metric.compute(qft={2020, 2021}, dfts=[{2020, 2021}, {2019}], k=2) == 1.0


def test_metric_is_registered_by_name():
    assert METRICS["temporal_ndcg"] is TemporalNDCG


def test_focus_time_wrong_order_scores_below_one_and_details_explain_it():
    result = TemporalNDCG().measure(qft={2020, 2021}, dfts=[{2019}, {2020}, {2020, 2021}], k=3)
    # rel = [0, 2, 4]; DCG@3 = 2*D3 + 4*D4 = 3.2618595; IDCG@3 = 4 + 2*D3 = 5.2618595
    assert result.score == pytest.approx((2 * D3 + 4 * D4) / (4 + 2 * D3))
    details = result.details
    assert details["mode"] == "focus_time"
    assert details["k"] == 3
    assert [r["relevance"] for r in details["ranks"]] == [0.0, 2.0, 4.0]
    assert details["ranks"][1] == {
        "rank": 2, "doc": 1, "relevance": 2.0, "gain": 2.0,
        "discounted_gain": pytest.approx(2 * D3), "years": [2020], "overlap": [2020],
    }
    assert details["dcg"] == pytest.approx(2 * D3 + 4 * D4)
    assert details["idcg"] == pytest.approx(4 + 2 * D3)
    assert details["curve"][-1] == result.score
    assert "NDCG@3" in result.reason


def test_focus_time_accepts_focus_time_objects():
    qft = FocusTime.from_years({2008, 2009})
    dfts = [FocusTime.from_years({2009}), FocusTime.from_years({2008, 2009})]
    # rel = [2, 4]: DCG@2 = 2 + 4*D3; IDCG@2 = 4 + 2*D3
    expected = (2 + 4 * D3) / (4 + 2 * D3)
    assert TemporalNDCG().compute(qft=qft, dfts=dfts, k=2) == pytest.approx(expected)


def test_focus_time_exponential_gain_is_tempoeval_compatible():
    # rel = [2, 4] -> gains [3, 15]: DCG@2 = 3 + 15*D3 = 12.4639463; IDCG@2 = 15 + 3*D3 = 16.8927893
    metric = TemporalNDCG(use_focus_time=True, gain="exponential")
    score = metric.compute(qft={2020, 2021}, dfts=[{2020}, {2020, 2021}], k=2)
    assert score == pytest.approx(0.7378258181)


def test_focus_time_empty_query_time_is_nan():
    result = TemporalNDCG().measure(qft=set(), dfts=[{2020}], k=1)
    assert math.isnan(result.score)
    assert result.reason_code == "empty_query_time"


def test_focus_time_no_relevant_candidate_is_zero():
    result = TemporalNDCG().measure(qft={2020}, dfts=[{1999}, set()], k=2)
    assert result.score == 0.0
    assert result.reason_code is None
    assert result.details["curve"] == [0.0, 0.0]
    # nothing retrieved at all: no relevant candidate either
    assert TemporalNDCG().compute(qft={2020}, dfts=[], k=3) == 0.0


def test_focus_time_candidate_pool_sets_the_ideal():
    # retrieved rel [0, 4]; pool rel [0, 4, 4]: IDCG@2 = 4 + 4*D3
    score = TemporalNDCG().compute(
        qft={2020}, dfts=[{2019}, {2020}], candidate_pool=[{2019}, {2020}, {2020}], k=2
    )
    assert score == pytest.approx(4 * D3 / (4 + 4 * D3))
    # the same ranking without the pool is judged against its own documents only
    assert TemporalNDCG().compute(qft={2020}, dfts=[{2019}, {2020}], k=2) == pytest.approx(4 * D3 / 4)


def test_focus_time_candidate_pool_must_hold_the_retrieved_focus_times():
    with pytest.raises(ValueError, match=r"dfts\[1\]"):
        TemporalNDCG().compute(qft={2020}, dfts=[{2019}, {2020}], candidate_pool=[{2019}], k=2)


def test_focus_time_ideal_uses_every_document_so_curve_matches_per_k_scores():
    metric = TemporalNDCG()
    dfts = [{2019}, {2020}, {2021}, {2020, 2021}, {2020}]
    result = metric.measure(qft={2020, 2021}, dfts=dfts, k=5)
    for j in range(1, 6):
        assert result.details["curve"][j - 1] == pytest.approx(
            metric.compute(qft={2020, 2021}, dfts=dfts, k=j)
        )


def test_curve_continues_flat_beyond_the_list():
    result = TemporalNDCG().measure(qft={2020}, dfts=[{1999}, {2020}], k=5)
    curve = result.details["curve"]
    assert len(curve) == 5
    assert curve[1] == curve[2] == curve[3] == curve[4] == pytest.approx(D3)
    assert len(result.details["ranks"]) == 2


# ---- TemporalNDCG: gold mode -----------------------------------------------------------------

def test_gold_binary_list_hand_computed():
    # ranking [x, a, y, b]; relevant {a, b}: DCG@4 = D3 + D5; IDCG@4 = 1 + D3
    result = TemporalNDCG().measure(retrieved_ids=["x", "a", "y", "b"], gold_ids=["a", "b"], k=4)
    assert result.score == pytest.approx((D3 + D5) / (1 + D3))
    assert result.details["graded"] is False
    assert [r["doc"] for r in result.details["ranks"]] == ["x", "a", "y", "b"]


def test_gold_graded_dict_with_ideal_from_all_gold_cut_at_k():
    # ranking [a, b, c]; grades a=1, c=2, z=3 (z not retrieved): DCG@3 = 1 + 2*D4 = 2;
    # IDCG@3 = 3 + 2*D3 + 1*D4 = 4.7618595
    result = TemporalNDCG(k=3).measure(retrieved_ids=["a", "b", "c"], gold_ids={"c": 2, "a": 1, "z": 3})
    assert result.score == pytest.approx(2 / (3 + 2 * D3 + D4))
    assert result.details["relevant"] == 3


def test_gold_duplicates_count_once_at_first_rank():
    with_duplicates = TemporalNDCG().measure(retrieved_ids=["a", "b", "a", "c"], gold_ids=["c"], k=3)
    # deduped ranking [a, b, c]: c at rank 3 -> D4
    assert with_duplicates.score == pytest.approx(D4)
    assert with_duplicates.details["duplicates_removed"] == 1


def test_gold_exponential_gain():
    # grades [2, 1] in order: gains [3, 1]; ideal the same order -> 1.0; reversed ranking:
    # DCG@2 = 1 + 3*D3; IDCG@2 = 3 + 1*D3
    metric = TemporalNDCG(gain="exponential")
    assert metric.compute(retrieved_ids=["a", "b"], gold_ids={"a": 2, "b": 1}, k=2) == 1.0
    reversed_score = metric.compute(retrieved_ids=["b", "a"], gold_ids={"a": 2, "b": 1}, k=2)
    assert reversed_score == pytest.approx((1 + 3 * D3) / (3 + D3))


def test_gold_retrieved_scores_use_trec_eval_tie_rule():
    metric = TemporalNDCG(k=1)
    assert metric.compute(retrieved_scores={"a": 0.7, "b": 0.7}, gold_ids=["a"]) == 0.0
    assert metric.compute(retrieved_scores={"a": 0.7, "b": 0.7}, gold_ids=["b"]) == 1.0
    assert metric.compute(retrieved_scores={"a": 0.8, "b": 0.7}, gold_ids=["a"]) == 1.0
    ranks = metric.measure(retrieved_scores={"a": 0.7, "b": 0.7, "c": 0.9}, gold_ids=["a"], k=3).details["ranks"]
    assert [(r["doc"], r["score"]) for r in ranks] == [("c", 0.9), ("b", 0.7), ("a", 0.7)]


def test_gold_no_relevant_document_is_nan_not_zero():
    for gold in ([], {}, {"a": 0, "b": -1}):
        result = TemporalNDCG().measure(retrieved_ids=["a", "b"], gold_ids=gold, k=2)
        assert math.isnan(result.score)
        assert result.reason_code == "no_relevant_documents"
        assert "trec_eval" in result.reason


def test_gold_empty_retrieved_list_with_relevant_gold_is_zero():
    result = TemporalNDCG().measure(retrieved_ids=[], gold_ids=["a"], k=5)
    assert result.score == 0.0
    assert result.reason_code is None
    assert "nothing was retrieved" in result.reason


def test_k_in_compute_wins_over_constructor():
    metric = TemporalNDCG(k=1)
    assert metric.compute(retrieved_ids=["x", "a"], gold_ids=["a"]) == 0.0
    assert metric.compute(retrieved_ids=["x", "a"], gold_ids=["a"], k=2) == pytest.approx(D3)


# ---- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(ValueError, match="k must be a positive integer"):
        TemporalNDCG(k=k)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        TemporalNDCG().compute(retrieved_ids=["a"], gold_ids=["a"], k=k)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        dcg_curve([1.0], k)


def test_unknown_keyword_raises_type_error():
    with pytest.raises(TypeError, match="retrieved_id"):
        TemporalNDCG().compute(retrieved_id=["a"], gold_ids=["a"])


def test_sets_where_lists_are_expected_raise_type_error():
    with pytest.raises(TypeError, match="retrieved_ids"):
        TemporalNDCG().compute(retrieved_ids={"a", "b"}, gold_ids=["a"])
    with pytest.raises(TypeError, match="dfts must be a list"):
        TemporalNDCG().compute(qft={2020}, dfts={frozenset({2020}), frozenset({2019})})
    with pytest.raises(TypeError, match="candidate_pool must be a list"):
        TemporalNDCG().compute(qft={2020}, dfts=[{2020}], candidate_pool={frozenset({2020})})
    with pytest.raises(TypeError, match="dfts must be a list"):
        TemporalNDCG().compute(qft={2020}, dfts={2020, 2021})


def test_non_year_values_raise_type_error():
    with pytest.raises(TypeError, match=r"dfts\[0\]"):
        TemporalNDCG().compute(qft={2020}, dfts=[["2020"]])
    with pytest.raises(TypeError, match="qft"):
        TemporalNDCG().compute(qft="2020", dfts=[{2020}])


def test_inputs_of_two_modes_are_ambiguous():
    with pytest.raises(ValueError, match="ambiguous"):
        TemporalNDCG().compute(retrieved_ids=["a"], gold_ids=["a"], qft={2020}, dfts=[{2020}])
    with pytest.raises(ValueError, match="not both"):
        TemporalNDCG().compute(qft={2020}, query="in 2020?", dfts=[{2020}])
    with pytest.raises(ValueError, match="not both"):
        TemporalNDCG().compute(retrieved_ids=["a"], retrieved_scores={"a": 1.0}, gold_ids=["a"])


def test_insufficient_inputs_name_what_is_missing():
    with pytest.raises(ValueError, match="gold_ids"):
        TemporalNDCG().compute(retrieved_ids=["a"])
    with pytest.raises(ValueError, match="retrieved_ids"):
        TemporalNDCG().compute(gold_ids=["a"])
    with pytest.raises(ValueError, match="dfts"):
        TemporalNDCG().compute(qft={2020})
    with pytest.raises(ValueError, match="qft"):
        TemporalNDCG().compute(dfts=[{2020}])
    with pytest.raises(ValueError, match="no inputs"):
        TemporalNDCG().compute(k=3)


def test_explicit_mode_refuses_inputs_it_does_not_use():
    with pytest.raises(ValueError, match="gold mode does not use qft"):
        TemporalNDCG(mode="gold").compute(retrieved_ids=["a"], gold_ids=["a"], qft={2020})
    with pytest.raises(ValueError, match="focus_time mode does not use gold_ids"):
        TemporalNDCG(use_focus_time=True).compute(qft={2020}, dfts=[{2020}], gold_ids=["a"])


def test_llm_mode_without_a_judge_says_so():
    with pytest.raises(ValueError, match="needs a judge"):
        TemporalNDCG(use_llm=True).compute(query="When?", retrieved_docs=["In 2020."])


def test_constructor_rejects_contradictory_settings():
    with pytest.raises(ValueError, match="exclude each other"):
        TemporalNDCG(use_focus_time=True, use_llm=True)
    with pytest.raises(ValueError, match="contradicts"):
        TemporalNDCG(mode="gold", use_llm=True)
    with pytest.raises(ValueError, match="mode must be one of"):
        TemporalNDCG(mode="focus")
    with pytest.raises(ValueError, match="gain must be one of"):
        TemporalNDCG(gain="log")


def test_inputs_from_row_picks_gold_inputs_from_a_full_dataset_row():
    row = {
        "query_id": "q1",
        "query": "What happened in 2020?",
        "contexts": ["In 2020 ...", "In 1999 ..."],
        "answer": "...",
        "retrieved_ids": ["d1", "d2"],
        "gold_ids": {"d2": 1},
        "reference_date": "2024-01-01",
    }
    inputs = TemporalNDCG().inputs_from_row(row)
    assert inputs == {"retrieved_ids": ["d1", "d2"], "gold_ids": {"d2": 1}, "reference_date": "2024-01-01"}
    assert TemporalNDCG().compute(**inputs) == pytest.approx(D3)
    without_gold = {key: value for key, value in row.items() if key not in ("retrieved_ids", "gold_ids")}
    assert set(TemporalNDCG().inputs_from_row(without_gold)) == {"query", "contexts", "reference_date"}


def test_in_auto_mode_the_datasets_columns_decide_the_mode_not_a_rows_values():
    row = {
        "query_id": "q2",
        "query": "What happened in 2020?",
        "contexts": ["In 2020 ..."],
        "retrieved_ids": ["d1"],
        "gold_ids": None,  # an empty cell in a dataset with a gold_ids column
    }
    with pytest.raises(MissingInput, match="'gold_ids'") as caught:
        TemporalNDCG().inputs_from_row(row)
    assert caught.value.column == "gold_ids" and "gold mode" in str(caught.value)
    with pytest.raises(MissingInput, match="'retrieved_ids'"):
        TemporalNDCG().inputs_from_row({**row, "retrieved_ids": float("nan"), "gold_ids": ["d1"]})
    # the same row in focus-time mode needs only the texts
    assert set(TemporalNDCG(mode="focus_time").inputs_from_row(row)) == {"query", "contexts"}
    with pytest.raises(MissingInput, match="'contexts'"):
        TemporalNDCG(mode="focus_time").inputs_from_row({**row, "contexts": None})


def test_a_dataset_row_with_an_empty_gold_cell_is_nan_missing_input_through_the_runner():
    import pandas as pd

    from tempo_eval.engine.runner import evaluate

    frame = pd.DataFrame({
        "query": ["What happened in 2020?", "What happened in 2020?"],
        "contexts": [["In 2020 ..."], ["In 2020 ..."]],
        "retrieved_ids": [["d1"], ["d1"]],
        "gold_ids": [["d1"], None],
    })
    result = evaluate(frame, [TemporalNDCG(k=3)])
    assert result.frame["score"].tolist()[0] == 1.0
    assert math.isnan(result.frame["score"].tolist()[1])
    assert result.frame["reason_code"].tolist()[1] == "missing_input"
    assert "gold_ids" in result.frame["reason"].tolist()[1]


@pytest.mark.parametrize(
    ("settings", "columns", "required"),
    [
        ({}, ["query", "contexts", "retrieved_ids", "gold_ids"], ["gold_ids", "retrieved_ids"]),
        ({}, ["query", "contexts", "retrieved_ids"], ["query", "contexts"]),
        ({}, ["answer", "retrieved_ids"], ["gold_ids", "retrieved_ids"]),
        ({}, ["answer"], ["query", "contexts"]),
        ({"mode": "gold"}, ["query", "contexts"], ["gold_ids", "retrieved_ids"]),
        ({"mode": "focus_time"}, ["retrieved_ids", "gold_ids"], ["query", "contexts"]),
        ({"use_llm": True}, ["retrieved_ids", "gold_ids"], ["query", "contexts"]),
    ],
)
def test_required_columns_follow_the_mode(settings, columns, required):
    assert TemporalNDCG(**settings).required_columns(columns) == required


def test_an_unmapped_column_named_k_does_not_override_the_cutoff():
    row = {"query_id": "q1", "retrieved_ids": ["x", "d1"], "gold_ids": ["d1"], "k": 1}
    inputs = TemporalNDCG(k=2).inputs_from_row(row)
    assert "k" not in inputs
    assert TemporalNDCG(k=2).compute(**inputs) == pytest.approx(D3)


# ---- focus times extracted from texts --------------------------------------------------------

def test_query_and_texts_without_a_judge_use_extracted_focus_times():
    metric = TemporalNDCG(k=2, reference_date="2024-06-01")
    result = metric.measure(
        query="What happened to the economy in 2020?",
        contexts=["A report on the 1999 harvest.", "In 2020 the economy shrank."],
    )
    # extracted QFT {2020}; DFTs [{1999}, {2020}] -> rel [0, 4]: DCG@2 = 4*D3, IDCG@2 = 4
    assert result.details["mode"] == "focus_time"
    assert result.details["qft"] == [2020]
    assert result.details["dfts_source"] == "extracted from contexts"
    assert result.details["reference_date"] == "2024-06-01"
    assert result.score == pytest.approx(D3)


def test_relative_query_time_resolves_against_reference_date():
    score = TemporalNDCG(k=1).compute(
        query="What happened last year?",
        retrieved_docs=["Elections were held in 2023."],
        reference_date="2024-03-01",
    )
    assert score == 1.0


def test_query_without_time_expression_is_nan_empty_query_time():
    result = TemporalNDCG().measure(query="Who wrote Hamlet?", contexts=["Shakespeare, 1600."])
    assert result.reason_code == "empty_query_time"


def test_focus_time_mode_does_not_import_heavy_libraries():
    code = (
        "import sys\n"
        "from tempo_eval.metrics.temporal_ndcg import TemporalNDCG\n"
        "TemporalNDCG().compute(qft={2020}, dfts=[{2020}])\n"
        "TemporalNDCG().compute(query='in 2020?', contexts=['2020 was odd.'])\n"
        "TemporalNDCG().compute(retrieved_ids=['a'], gold_ids=['a'])\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'openai', 'streamlit')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
