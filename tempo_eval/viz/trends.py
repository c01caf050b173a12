"""Each metric's mean with its 95% CI across the runs of one dataset, in time order
(`tempo_eval.compare.leaderboard.metric_trends`)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text
from tempo_eval.metrics.catalog import DIRECTION_WORDS, direction, scale
from tempo_eval.viz.axes import UNIT_RANGE, axis_range

#: Okabe-Ito colours, one per metric
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def run_axis_label(run_id: int, name: object) -> str:
    """The x-axis label of a run: its name and id (names can repeat), escaped for plotly."""
    return f"{plotly_text(str(name))} #{int(run_id)}"


def trend_chart(trends: pd.DataFrame) -> go.Figure:
    """One line per metric over the runs (x in time order), the CI as error bars; each point's
    customdata is its run id (a click opens the run). Scores and shares are on a [0, 1] axis; a
    metric on another scale (median evidence age, in days: `tempo_eval.metrics.catalog.scale`) on
    an axis of its own values at the right, in its unit. A metric's direction, when not higher is
    better, is named in the legend."""
    fig = go.Figure()
    order = list(dict.fromkeys(run_axis_label(r, n) for r, n in zip(trends["run_id"], trends["name"], strict=True)))
    parts = list(trends.groupby("metric", sort=False))
    values = {metric: [*part["mean"], *part["ci_low"], *part["ci_high"]] for metric, part in parts}
    apart = {metric for metric in values if axis_range(scale(metric), values[metric]) != UNIT_RANGE}
    shared = len(apart) < len(values)  # some metric on [0, 1]: the others on a second axis
    for i, (metric, part) in enumerate(parts):
        way = direction(metric)
        fig.add_trace(go.Scatter(
            x=[run_axis_label(r, n) for r, n in zip(part["run_id"], part["name"], strict=True)],
            y=part["mean"], mode="lines+markers",
            name=plotly_text(metric) + ("" if way == "higher" else f" ({DIRECTION_WORDS[way]})"),
            line={"color": COLOURS[i % len(COLOURS)]}, marker={"size": 9},
            error_y={"type": "data", "symmetric": False, "array": part["ci_high"] - part["mean"],
                     "arrayminus": part["mean"] - part["ci_low"]},
            customdata=part["run_id"].astype(int).tolist(), text=part["created_at"].astype(str).tolist(),
            hovertemplate="%{x}<br>%{text}<br>mean %{y:.3f}<extra>%{fullData.name}</extra>",
            yaxis="y2" if shared and metric in apart else "y",
        ))
    other = [v for metric in apart for v in values[metric]]
    units = sorted({scale(metric).unit or "value" for metric in apart})
    other_axis = {"title": f"mean ({', '.join(units)})",
                  "range": axis_range(scale(next(iter(apart))) if apart else scale(""), other)}
    fig.update_layout(
        title="Each metric's mean with its 95% CI, runs in time order",
        xaxis={"title": "run (oldest first)", "categoryorder": "array", "categoryarray": order},
        yaxis={"title": "mean", "range": UNIT_RANGE} if shared else other_axis,
        legend={"orientation": "h", "y": -0.3}, margin={"t": 50, "l": 50, "r": 20, "b": 40},
    )
    if shared and apart:
        fig.update_layout(yaxis2={**other_axis, "overlaying": "y", "side": "right", "showgrid": False},
                          margin={"r": 60})
    return fig
