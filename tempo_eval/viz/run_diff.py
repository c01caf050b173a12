"""Figures of a run diff (`tempo_eval.compare.run_diff.RunDiff`): baseline against candidate per row, and
each metric's mean change with its 95% CI."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text
from tempo_eval.metrics.catalog import DIRECTION_WORDS, direction, scale
from tempo_eval.viz.axes import axis_range

#: a point's colour by its outcome; "increased" / "decreased" are the changes of a metric with no
#: better direction (`tempo_eval.compare.run_diff`), in neutral colours
OUTCOME_COLOURS = {"regressed": "#D55E00", "improved": "#0072B2", "unchanged": "#8c8c8c",
                   "increased": "#CC79A7", "decreased": "#009E73"}
#: the outcomes a metric's points can have, by its direction
_SHOWN = {"higher": ("regressed", "improved", "unchanged"), "lower": ("regressed", "improved", "unchanged"),
          "none": ("increased", "decreased", "unchanged")}
#: queries named in one point's hover text before "and N more"
HOVER_QUERIES = 5
#: above this many markers the scatter is drawn with WebGL
WEBGL_POINTS = 5000



def point_groups(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows measured in both runs, grouped by identical (baseline, candidate) scores: baseline,
    candidate, outcome, count, first (the position in `rows` of the group's first row, for a
    click) and queries (hover text: the first `HOVER_QUERIES` queries, escaped)."""
    measured = rows[rows["outcome"].isin(list(OUTCOME_COLOURS))]
    if measured.empty:
        return pd.DataFrame(columns=["baseline", "candidate", "outcome", "count", "first", "queries"])
    keyed = measured.assign(
        _b=measured["baseline"].round(6), _c=measured["candidate"].round(6), _pos=measured.index,
        _label=[plotly_text(q if isinstance(q, str) and q else k) for q, k in zip(measured["query"], measured["key"],
                                                                                strict=True)],
    )
    keys = ["_b", "_c", "outcome"]
    grouped = keyed.groupby(keys, sort=False)
    groups = pd.DataFrame({"count": grouped["_pos"].size(), "first": grouped["_pos"].first()})
    shown = keyed[grouped.cumcount().to_numpy() < HOVER_QUERIES]
    groups["queries"] = shown.groupby(keys, sort=False)["_label"].agg("<br>".join)
    several = groups["count"] > 1
    groups.loc[several, "queries"] = groups["count"][several].astype(str) + " rows:<br>" + groups["queries"][several]
    more = groups["count"] > HOVER_QUERIES
    groups.loc[more, "queries"] += "<br>and " + (groups["count"][more] - HOVER_QUERIES).astype(str) + " more"
    groups = groups.reset_index().rename(columns={"_b": "baseline", "_c": "candidate"})
    groups["first"] = groups["first"].astype(int)
    return groups[["baseline", "candidate", "outcome", "count", "first", "queries"]]


def diff_scatter(rows: pd.DataFrame, *, metric: str, baseline: str, candidate: str,
                 label: str | None = None) -> go.Figure:
    """Baseline score (x) against candidate score (y) of one metric's rows, with the diagonal
    (no change); coloured by outcome; identical points are one marker sized by their count
    (hover names the queries). Each marker's customdata is the position of its first row."""
    groups = point_groups(rows)
    trace = go.Scattergl if len(groups) > WEBGL_POINTS else go.Scatter  # WebGL draws 100,000s of points
    way, axis = direction(metric), axis_range(scale(metric), [*groups["baseline"], *groups["candidate"]])
    fig = go.Figure()
    fig.add_shape(type="line", x0=axis[0], y0=axis[0], x1=axis[1], y1=axis[1], line={"dash": "dot", "color": "#999"})
    for outcome in _SHOWN[way]:
        colour = OUTCOME_COLOURS[outcome]
        part = groups[groups["outcome"] == outcome] if not groups.empty else groups
        n = int(part["count"].sum()) if not part.empty else 0
        fig.add_trace(trace(
            x=part["baseline"], y=part["candidate"], mode="markers", name=f"{outcome} ({n})",
            marker={"color": colour, "size": [8 + 4 * (c - 1) ** 0.5 for c in part["count"]], "opacity": 0.75,
                    "line": {"width": 1, "color": "white"}},
            customdata=part["first"].tolist(), text=part["queries"].tolist(),
            hovertemplate="%{text}<br>baseline %{x:.3f}<br>candidate %{y:.3f}<extra></extra>",
        ))
    unit = scale(metric).unit
    fig.update_layout(
        title=f"{plotly_text(label or metric)} per row" + ("" if way == "higher" else f" ({DIRECTION_WORDS[way]})"),
        xaxis={"title": f"baseline: {plotly_text(baseline)}" + (f" ({unit})" if unit else ""), "range": axis},
        yaxis={"title": f"candidate: {plotly_text(candidate)}" + (f" ({unit})" if unit else ""), "range": axis,
               "scaleanchor": "x"},
        legend={"orientation": "h", "y": -0.2, "title": {"text": "bigger marker: more rows at that point"}},
        margin={"t": 50, "l": 50, "r": 20, "b": 40}, clickmode="event+select",
    )
    return fig


def change_chart(summary: pd.DataFrame) -> go.Figure:
    """Each metric's mean change (candidate - baseline) with its 95% CI as error bars; 0 marked."""
    fig = go.Figure(go.Scatter(
        x=summary["delta"], y=[plotly_text(m) for m in summary["metric"]], mode="markers",
        marker={"size": 10, "color": "#333"},
        error_x={"type": "data", "symmetric": False, "array": summary["ci_high"] - summary["delta"],
                 "arrayminus": summary["delta"] - summary["ci_low"]},
        hovertemplate="%{y}: change %{x:+.3f}<extra></extra>",
    ))
    fig.add_vline(x=0, line={"dash": "dot", "color": "#999"})
    fig.update_layout(title="Mean change with its 95% CI", xaxis={"title": "candidate − baseline"},
                      margin={"t": 50, "l": 50, "r": 20, "b": 40}, height=120 + 40 * len(summary))
    return fig
