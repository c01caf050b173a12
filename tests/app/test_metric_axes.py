"""Charts take a metric's axes from its declared scale (issue 38.16): median evidence age, in
days, is not drawn on an axis fixed at [0, 1] in the trends, the Run diff scatter or Compare's
scatter; scores and shares keep [0, 1]."""

from __future__ import annotations

import pandas as pd

from tempo_eval.viz.axes import UNIT_RANGE
from tempo_eval.viz.run_diff import diff_scatter
from tempo_eval.viz.scatter import paired_scatter, paired_scores
from tempo_eval.viz.trends import trend_chart


def _trends(metrics: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for metric, means in metrics.items():
        for run_id, mean in enumerate(means, start=1):
            rows.append({"run_id": run_id, "name": f"r{run_id}", "created_at": f"2024-0{run_id}-01", "metric": metric,
                         "mean": mean, "ci_low": mean * 0.9, "ci_high": mean * 1.1})
    return pd.DataFrame(rows)


def _holds(axis_range, values) -> bool:
    return axis_range[0] <= min(values) and max(values) <= axis_range[1]


def test_trends_draw_days_on_an_axis_of_their_own() -> None:
    figure = trend_chart(_trends({"future_leak": [0.1, 0.2], "median_evidence_age": [420.0, 510.0]}))
    by_name = {trace.name.split(" (")[0]: trace for trace in figure.data}
    assert by_name["future_leak"].yaxis == "y" and list(figure.layout.yaxis.range) == UNIT_RANGE
    assert by_name["median_evidence_age"].yaxis == "y2"
    assert _holds(figure.layout.yaxis2.range, [420 * 0.9, 510 * 1.1]) and "days" in figure.layout.yaxis2.title.text
    alone = trend_chart(_trends({"median_evidence_age": [420.0, 510.0]}))
    assert _holds(alone.layout.yaxis.range, [378.0, 561.0]) and "days" in alone.layout.yaxis.title.text
    shares = trend_chart(_trends({"temporal_faithfulness": [0.5, 0.7]}))
    assert list(shares.layout.yaxis.range) == UNIT_RANGE and "yaxis2" not in shares.layout.to_plotly_json()


def test_the_run_diff_and_compare_scatters_take_the_metrics_scale() -> None:
    rows = pd.DataFrame({"metric": "median_evidence_age", "key": ["a", "b"], "query": ["a", "b"],
                         "baseline": [120.0, 900.0], "candidate": [300.0, 40.0], "delta": [180.0, -860.0],
                         "outcome": ["increased", "decreased"]})
    figure = diff_scatter(rows, metric="median_evidence_age", baseline="b", candidate="c")
    assert _holds(figure.layout.xaxis.range, [40, 900]) and _holds(figure.layout.yaxis.range, [40, 900])
    assert "days" in figure.layout.xaxis.title.text
    assert sum(len(trace.x) for trace in figure.data) == 2  # both points drawn
    shares = diff_scatter(rows.assign(metric="future_leak", baseline=[0.1, 0.2], candidate=[0.3, 0.0],
                                      outcome=["regressed", "improved"]),
                          metric="future_leak", baseline="b", candidate="c")
    assert list(shares.layout.xaxis.range) == UNIT_RANGE

    pairs = paired_scores(pd.Series({"q1": 10.0, "q2": 700.0}), pd.Series({"q1": 30.0, "q2": 500.0}),
                          metric="median_age@10")
    figure = paired_scatter(pairs, name_a="a", name_b="b", metric="median_age@10")
    assert _holds(figure.layout.xaxis.range, [10, 700]) and _holds(figure.layout.yaxis.range, [10, 700])
