"""Run comparison: p-values against scipy, Holm by hand, W/T/L, markers and means against ranx."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tempo_eval.compare.statistics import (
    compare,
    holm,
    paired_t_test,
    randomization_test,
)
from tempo_eval.compare.trec_scores import compare_trec
from tests.support.compare_input import per_query_from_frame


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _scipy_permutation_p(a: np.ndarray, b: np.ndarray) -> float:
    result = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True, n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(result.pvalue)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_paired_t_test_p_equals_scipy_ttest_rel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random(25)
    b = a + rng.normal(0.05 * seed, 0.1, 25)
    assert paired_t_test(a, b) == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)


def test_paired_t_test_edge_cases() -> None:
    assert paired_t_test([0.1, 0.5, 0.9], [0.1, 0.5, 0.9]) == 1.0  # scipy: NaN
    assert paired_t_test([0.75, 0.5], [0.25, 0.0]) == 0.0  # every difference the same, non-zero
    assert math.isnan(paired_t_test([0.2], [0.1]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_randomisation_p_equals_scipy_permutation_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random(11)
    b = a + rng.normal(0.1, 0.15, 11)
    assert randomization_test(a, b, n_permutations=2**11) == pytest.approx(_scipy_permutation_p(a, b), rel=1e-12)


def test_exact_randomisation_counts_tied_statistics_like_scipy() -> None:
    # graded scores with repeated differences and zero differences: many exact ties
    a = np.array([1.0, 0.5, 0.5, 0.0, 1.0, 0.25, 0.75, 0.5])
    b = np.array([0.5, 0.5, 0.0, 0.0, 0.5, 0.75, 0.25, 0.0])
    assert randomization_test(a, b, n_permutations=256) == pytest.approx(_scipy_permutation_p(a, b), rel=1e-12)
    assert randomization_test(a, a, n_permutations=256) == 1.0


def test_sampled_randomisation_is_seeded_and_close_to_the_exact_p() -> None:
    rng = np.random.default_rng(5)
    a = rng.random(16)
    b = a + rng.normal(0.08, 0.2, 16)
    exact = randomization_test(a, b, n_permutations=2**16)
    sampled = randomization_test(a, b, n_permutations=20_000, seed=1)
    assert sampled == randomization_test(a, b, n_permutations=20_000, seed=1)
    assert sampled != randomization_test(a, b, n_permutations=20_000, seed=2)
    assert sampled == pytest.approx(exact, abs=0.015)


def test_holm_matches_a_hand_computation() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max so far 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = holm([0.2, float("nan"), 0.01])
    assert adjusted[0] == pytest.approx(0.2) and adjusted[2] == pytest.approx(0.02) and math.isnan(adjusted[1])
    assert holm([0.6, 0.7]) == [1.0, 1.0]


def _three_runs() -> dict[str, dict[str, dict[str, float]]]:
    rng = np.random.default_rng(11)
    base = rng.random(30)
    queries = [f"q{i}" for i in range(30)]
    return {
        "weak": {"m": dict(zip(queries, base, strict=True))},
        "strong": {"m": dict(zip(queries, np.clip(base + 0.3 + rng.normal(0, 0.05, 30), 0, 1), strict=True))},
        "same": {"m": dict(zip(queries, np.clip(base + rng.normal(0, 0.01, 30), 0, 1), strict=True))},
    }


def test_compare_reports_means_pairs_and_holm_adjusted_significance() -> None:
    runs = _three_runs()
    report = compare(runs, test="student")
    assert report.runs == ["weak", "strong", "same"] and report.metrics == ["m"]
    assert report.means["strong"]["m"] == pytest.approx(np.mean(list(runs["strong"]["m"].values())))
    raw = [p.p_value for p in report.pairs]
    assert [p.p_adjusted for p in report.pairs] == pytest.approx(holm(raw))
    weak, strong = (np.array(list(runs[r]["m"].values())) for r in ("weak", "strong"))
    assert report.pair("m", "weak", "strong").p_value == pytest.approx(stats.ttest_rel(weak, strong).pvalue)
    assert report.beats("strong", "m") == ["weak", "same"]
    assert report.beats("weak", "m") == []
    assert report.best("m") == ["strong"]


def test_win_tie_loss_counts_are_oriented_per_pair() -> None:
    report = compare({
        "a": {"m": {"q1": 0.5, "q2": 0.2, "q3": 0.9, "q4": 0.1}},
        "b": {"m": {"q1": 0.4, "q2": 0.2, "q3": 1.0, "q4": 0.0}},
    })
    ab = report.pair("m", "a", "b")
    assert (ab.wins, ab.ties, ab.losses) == (2, 1, 1)
    ba = report.pair("m", "b", "a")
    assert (ba.wins, ba.ties, ba.losses) == (1, 1, 2) and ba.mean_a == ab.mean_b


def test_only_queries_scored_in_every_run_are_compared_and_the_rest_counted() -> None:
    report = compare({
        "a": {"m": {"q1": 0.5, "q2": 0.2, "q3": float("nan"), "q4": 0.3}},
        "b": {"m": {"q1": 0.4, "q2": 0.1, "q3": 0.9}},
    })
    assert report.n_queries == {"m": 2} and report.n_dropped == {"m": 2}
    assert report.means["a"]["m"] == pytest.approx(0.35) and report.means["b"]["m"] == pytest.approx(0.25)
    assert "2 dropped" in report.to_markdown()


def test_the_fisher_test_is_exact_for_few_queries_and_matches_scipy_inside_compare() -> None:
    a = {"q1": 0.9, "q2": 0.8, "q3": 0.7, "q4": 0.95, "q5": 0.6}
    b = {"q1": 0.1, "q2": 0.2, "q3": 0.3, "q4": 0.25, "q5": 0.4}
    report = compare({"a": {"m": a}, "b": {"m": b}}, test="fisher", correction="none")
    expected = _scipy_permutation_p(np.array(list(a.values())), np.array(list(b.values())))
    assert report.pair("m", "a", "b").p_value == pytest.approx(expected) == 2 / 32


def test_the_report_renders_as_dataframe_markdown_and_latex() -> None:
    report = compare(_three_runs(), test="student")
    frame = report.to_dataframe()
    assert frame.columns.tolist() == ["label", "run", "m", "m beats"]
    assert frame["m beats"].tolist() == ["", "ac", ""]
    markdown = report.to_markdown()
    assert "| b | strong | **" in markdown and "ᵃᶜ" in markdown
    assert "Holm-corrected over 3 pairs of runs" in markdown and "paired Student's t-test" in markdown
    latex = report.to_latex()
    assert "\\textbf{" in latex and "$^{ac}$" in latex and "\\toprule" in latex
    assert str(report) == markdown
    assert len(report.pairs_frame()) == 3


def test_latex_escapes_run_names() -> None:
    report = compare({"bm25_k1": {"m": {"q1": 0.1, "q2": 0.3}}, "a&b": {"m": {"q1": 0.2, "q2": 0.2}}})
    assert "bm25\\_k1" in report.to_latex() and "a\\&b" in report.to_latex()


def test_compare_refuses_what_it_cannot_compare() -> None:
    one = {"m": {"q1": 0.1}}
    with pytest.raises(ValueError, match="at least two runs"):
        compare({"a": one})
    with pytest.raises(ValueError, match="no scores for metric"):
        compare({"a": one, "b": {"x": {"q1": 0.2}}})
    with pytest.raises(ValueError, match="no query has"):
        compare({"a": one, "b": {"m": {"q2": 0.2}}})
    with pytest.raises(ValueError, match="test must be one of"):
        compare({"a": one, "b": one}, test="wilcoxon")


def test_per_query_from_frame_builds_the_nested_mapping() -> None:
    import pandas as pd

    frame = pd.DataFrame({"run": ["a", "a", "b"], "metric": ["m"] * 3, "query_id": ["q1", "q2", "q1"],
                          "score": [0.1, 0.2, 0.3]})
    assert per_query_from_frame(frame) == {"a": {"m": {"q1": 0.1, "q2": 0.2}}, "b": {"m": {"q1": 0.3}}}
    with pytest.raises(ValueError, match="more than once"):
        per_query_from_frame(pd.concat([frame, frame]))


# ---- against ranx ---------------------------------------------------------------------------

def _trec_fixture(n_queries: int = 25, n_docs: int = 30) -> tuple[dict, dict]:
    """Three runs (distinct scores: no ties, where ranx and trec_eval agree) and graded qrels."""
    rng = np.random.default_rng(2024)
    qrels = {}
    runs: dict[str, dict] = {"bm25": {}, "dense": {}, "hybrid": {}}
    for q in range(n_queries):
        qid = f"q{q}"
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=n_docs)
        qrels[qid] = {f"d{d}": int(g) for d, g in enumerate(grades) if g > 0 or d % 3 == 0}
        if not any(qrels[qid].values()):
            qrels[qid]["d0"] = 1
        signal_ = np.array([qrels[qid].get(f"d{d}", 0) for d in range(n_docs)], dtype=float)
        for name, strength in (("bm25", 0.3), ("dense", 1.0), ("hybrid", 1.2)):
            scores = strength * signal_ + rng.random(n_docs) * 2 + rng.random(n_docs) * 1e-3
            runs[name][qid] = {f"d{d}": float(s) for d, s in enumerate(scores)}
    return runs, qrels


@pytest.mark.slow  # ranx compiles its numba kernels on first use (over a minute on a cold cache)
def test_means_p_values_and_markers_agree_with_ranx_student() -> None:
    ranx = pytest.importorskip("ranx")
    runs, qrels = _trec_fixture()
    ours = compare_trec(runs, qrels, metrics=["ndcg@10"], test="student", correction="none", alpha=0.05)
    theirs = ranx.compare(
        ranx.Qrels(qrels), [ranx.Run(runs[name], name=name) for name in runs],
        metrics=["ndcg@10"], stat_test="student", max_p=0.05,
    )
    for name in runs:
        assert ours.means[name]["ndcg@10"] == pytest.approx(theirs.results[name]["ndcg@10"], abs=1e-9)
    for pair in ours.pairs:
        ranx_p = theirs.comparisons[pair.run_a, pair.run_b]["ndcg@10"]["p_value"]
        assert pair.p_value == pytest.approx(ranx_p, rel=1e-9)
    for name in runs:
        ranx_marks = theirs.get_superscript_for_latex(name, "ndcg@10")
        assert "".join(ours.label(o) for o in ours.beats(name, "ndcg@10")) == ranx_marks
    assert any(ours.beats(name, "ndcg@10") for name in runs)  # the fixture has significant wins


@pytest.mark.slow
def test_holm_correction_can_only_remove_markers_relative_to_ranx() -> None:
    ranx = pytest.importorskip("ranx")
    runs, qrels = _trec_fixture(n_queries=12)
    corrected = compare_trec(runs, qrels, metrics=["ndcg@10"], test="student", alpha=0.05)
    theirs = ranx.compare(
        ranx.Qrels(qrels), [ranx.Run(runs[name], name=name) for name in runs],
        metrics=["ndcg@10"], stat_test="student", max_p=0.05,
    )
    for name in runs:
        ours = {corrected.label(o) for o in corrected.beats(name, "ndcg@10")}
        assert ours <= set(theirs.get_superscript_for_latex(name, "ndcg@10"))


def test_compare_trec_accepts_several_cutoffs_and_refuses_unknown_metrics() -> None:
    runs, qrels = _trec_fixture(n_queries=6)
    report = compare_trec(runs, qrels, metrics=["ndcg@5", "ndcg@10"], test="student")
    assert report.metrics == ["ndcg@5", "ndcg@10"] and report.n_queries == {"ndcg@5": 6, "ndcg@10": 6}
    with pytest.raises(ValueError, match="ndcg@k"):
        compare_trec(runs, qrels, metrics=["map@10"])


def test_compare_trec_scores_a_judged_query_a_run_lacks_as_zero_like_trec_eval_c() -> None:
    from tests.support.trec import ndcg_per_query as ndcg_gold_batch

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 2, "d3": 1}, "q3": {"d4": 1}, "q4": {"d5": 0}}
    full = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d3": 2.0, "d2": 1.0}, "q3": {"x": 2.0, "d4": 1.0},
            "q4": {"d5": 1.0}}
    partial = {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 2.0}}  # retrieved nothing for q3 (or q4)
    report = compare_trec({"full": full, "partial": partial}, qrels, metrics=["ndcg@5"], test="student")
    expected = ndcg_gold_batch(partial, qrels, 5)
    assert report.means["partial"]["ndcg@5"] == pytest.approx((expected["q1"] + expected["q2"] + 0.0) / 3)
    assert report.means["full"]["ndcg@5"] == pytest.approx(np.mean([ndcg_gold_batch(full, qrels, 5)[q] for q in ("q1", "q2", "q3")]))
    assert report.n_queries == {"ndcg@5": 3}
    # q4 has no relevant document: it is not a judged query, so no run is scored on it and nothing
    # is dropped, as on the command line (`score_trec_files`, trec_eval -c; the two used to differ:
    # this path counted q4 as one query dropped)
    assert report.n_dropped == {"ndcg@5": 0}
    assert report.n_filled == {"ndcg@5": {"full": 0, "partial": 1}}
    assert "partial 1; scored 0, as trec_eval -c does" in report.caption()


def test_compare_trec_can_drop_a_query_a_run_lacks_from_every_run() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    a = {"q1": {"d1": 1.0}, "q2": {"x": 2.0, "d2": 1.0}, "q3": {"d3": 1.0}}
    b = {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}}
    report = compare_trec({"a": a, "b": b}, qrels, metrics=["ndcg@5"], missing="drop", test="student")
    assert report.n_queries == {"ndcg@5": 2} and report.n_dropped == {"ndcg@5": 1}
    assert report.n_filled == {} and "scored 0" not in report.caption()
    with pytest.raises(ValueError, match="missing must be one of"):
        compare_trec({"a": a, "b": b}, qrels, missing="skip")


def test_the_screen_caption_describes_beats_columns_and_the_export_caption_superscripts() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    a = {"q1": {"d1": 1.0}, "q2": {"x": 2.0, "d2": 1.0}, "q3": {"d3": 1.0}}
    b = {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"x": 1.0}}
    report = compare_trec({"a": a, "b": b}, qrels, metrics=["ndcg@5"], test="student")
    screen = report.caption(screen=True)
    assert "“beats” columns" in screen and "Superscripts" not in screen
    assert "ndcg@5 beats" in report.to_dataframe().columns
    assert report.caption().startswith("Superscripts") and report.caption() in report.to_markdown()


def test_a_lower_is_better_metric_marks_the_lower_run_as_the_winner() -> None:
    from tempo_eval.compare.statistics import compare

    per_query = {
        "live": {"future_leak@10": {f"q{i}": 0.4 for i in range(12)}, "median_age@10": {f"q{i}": 5.0 for i in range(12)}},
        "snap": {"future_leak@10": {f"q{i}": 0.0 for i in range(12)}, "median_age@10": {f"q{i}": 200.0 for i in range(12)}},
    }
    report = compare(per_query, test="student")
    assert report.best("future_leak@10") == ["snap"] and report.beats("snap", "future_leak@10") == ["live"]
    assert report.beats("live", "future_leak@10") == []
    pair = report.pair("future_leak@10", "snap", "live")
    assert (pair.wins, pair.losses) == (12, 0)
    assert report.best("median_age@10") == [] and report.beats("live", "median_age@10") == []
    caption = report.caption()
    assert "Lower is better for future_leak@10" in caption and "median_age@10: no better direction" in caption
