"""The runs leaderboard: per-run aggregates, what a run used, and the diff of two runs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tempo_eval.compare.leaderboard import (
    config_diff,
    flatten_config,
    leaderboard,
    mean_changes,
    run_setup,
)
from tempo_eval.engine.runner import run_config
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval.verify.lexical import LexicalVerifier


def _scores() -> pd.DataFrame:
    return pd.DataFrame({
        "run_id": [1, 1, 1, 2, 2],
        "metric": ["faith", "faith", "faith", "faith", "ndcg"],
        "score": [1.0, 0.0, math.nan, 0.5, 0.8],
        "reason_code": [None, None, "no_temporal_claims", None, None],
    })


def test_leaderboard_gives_mean_ci_counts_and_nan_reasons_per_run_and_metric() -> None:
    board = leaderboard(_scores()).set_index(["run_id", "metric"])
    faith = board.loc[(1, "faith")]
    assert faith["mean"] == pytest.approx(0.5) and faith["ci_low"] <= 0.5 <= faith["ci_high"]
    assert (faith["n_measurable"], faith["n_total"], faith["n_nan"]) == (2, 3, 1)
    assert faith["nan_reasons"] == {"no_temporal_claims": 1}
    assert board.loc[(2, "ndcg"), "mean"] == pytest.approx(0.8)
    assert leaderboard(_scores().iloc[:0]).empty


def test_run_setup_names_the_verifier_and_model_of_a_stored_configuration() -> None:
    verifier = LexicalVerifier()
    config = run_config([TemporalFaithfulness(mode="nli", verifier=verifier), TemporalNDCG(k=5)])
    assert verifier.model_id.startswith("minilm-l6-v2")
    assert run_setup(config) == {"verifier": "lexical", "judge": "", "model": verifier.model_id}
    judged = {"metrics": [{"name": "t", "settings": {"llm": {"class": "x.OpenAIProvider", "model_id": "openai:gpt-4o-mini"}}}]}
    assert run_setup(judged)["judge"] == "openai:gpt-4o-mini"


def test_config_diff_lists_only_the_settings_that_differ() -> None:
    a = run_config([TemporalNDCG(k=5), TemporalFaithfulness()])
    b = run_config([TemporalFaithfulness(), TemporalNDCG(k=10)])
    diff = config_diff(a, b)
    assert diff.to_dict(orient="records") == [{"setting": "metrics.temporal_ndcg.settings.k", "a": 5, "b": 10}]
    assert "metrics.temporal_ndcg.settings.k" in flatten_config(a)
    assert config_diff(a, a).empty


def test_mean_changes_covers_metrics_of_either_run() -> None:
    board = leaderboard(_scores())
    changes = mean_changes(board[board["run_id"] == 1], board[board["run_id"] == 2]).set_index("metric")
    assert changes.loc["faith", "change"] == pytest.approx(0.0)
    assert math.isnan(changes.loc["ndcg", "mean_a"]) and math.isnan(changes.loc["ndcg", "change"])
    assert changes.loc["ndcg", "n_measurable_b"] == 1


def test_leaderboard_agrees_with_the_runners_aggregate_for_each_run() -> None:
    from tempo_eval.engine.runner import aggregate_frame

    scores = _scores()
    board = leaderboard(scores).set_index(["run_id", "metric"])
    for run_id, frame in scores.groupby("run_id"):
        expected = aggregate_frame(frame)
        for metric, row in expected.iterrows():
            got = board.loc[(run_id, metric)]
            for column in ("mean", "ci_low", "ci_high", "n_measurable", "n_total", "n_nan", "nan_reasons"):
                assert got[column] == pytest.approx(row[column]) if isinstance(row[column], float) else got[column] == row[column]


def test_metric_trends_put_runs_in_time_order_and_baseline_deltas_subtract_the_pinned_run() -> None:
    from tempo_eval.compare.leaderboard import baseline_deltas, metric_trends
    from tempo_eval.viz.trends import trend_chart

    board = leaderboard(_scores())
    runs = pd.DataFrame({"id": [2, 1], "name": ["new", "old"],
                         "created_at": ["2026-01-02 10:00:00", "2026-01-01 10:00:00"]})
    trends = metric_trends(runs, board)
    assert trends[["run_id", "metric"]].values.tolist() == [[1, "faith"], [2, "faith"], [2, "ndcg"]]
    fig = trend_chart(trends)
    assert [t.name for t in fig.data] == ["faith", "ndcg"] and list(fig.data[0].customdata) == [1, 2]
    deltas = baseline_deltas(board, 1).set_index(["run_id", "metric"])["delta"]
    assert deltas[(1, "faith")] == 0 and deltas[(2, "faith")] == pytest.approx(0.0)
    assert math.isnan(deltas[(2, "ndcg")])  # the baseline has no ndcg
