"""Per-query scores of run A against run B: one point per query, the diagonal is a tie."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text
from tempo_eval.metrics.catalog import direction, scale
from tempo_eval.viz.axes import axis_range

WIN_COLOURS = {"A better": "#0072B2", "B better": "#E69F00", "tie": "#8c8c8c",
               "A higher": "#CC79A7", "B higher": "#009E73"}
#: the outcomes of a metric's queries by its direction: "A higher" / "B higher" where neither way
#: is better (median evidence age)
_OUTCOMES = {"higher": ("A better", "B better", "tie"), "lower": ("A better", "B better", "tie"),
             "none": ("A higher", "B higher", "tie")}


def paired_scores(a: pd.Series, b: pd.Series, *, metric: str | None = None) -> pd.DataFrame:
    """Align two per-query score series (index = query id) on the queries scored in both.

    Returns columns query_id, a, b, delta (a - b) and outcome ("A better", "B better", "tie"),
    sorted by delta; queries with a NaN on either side are left out. Which run is better follows
    `metric`'s declared direction (`tempo_eval.metrics.catalog.direction`; higher without a
    metric): the lower score wins for future_leak; with no direction (median evidence age) the
    outcomes are "A higher" / "B higher".
    """
    way = "higher" if metric is None else direction(metric)
    frame = pd.concat({"a": a.astype(float), "b": b.astype(float)}, axis=1, join="inner").dropna()
    frame.index.name = "query_id"
    frame = frame.reset_index()
    frame["query_id"] = frame["query_id"].astype(str)
    frame["delta"] = frame["a"] - frame["b"]
    above, below, _ = _OUTCOMES[way]
    if way == "lower":
        above, below = below, above
    frame["outcome"] = np.select([frame["delta"] > 0, frame["delta"] < 0], [above, below], default="tie")
    return frame.sort_values("delta", kind="stable").reset_index(drop=True)


def paired_scatter(pairs: pd.DataFrame, *, name_a: str, name_b: str, metric: str) -> go.Figure:
    """Scatter of `paired_scores` output: x = run A, y = run B, coloured by which run is better.

    Queries with the same pair of scores share one point, whose size grows with their number (so
    identical points never hide each other); it carries its first query id as customdata (for
    selection and drill-down) and the HTML-escaped ids as its hover text (plotly renders hover
    text as HTML).
    """
    axis = axis_range(scale(metric), [*pairs["a"], *pairs["b"]])
    fig = go.Figure()
    fig.add_shape(type="line", x0=axis[0], y0=axis[0], x1=axis[1], y1=axis[1], line={"dash": "dot", "color": "#999"})
    for outcome in _OUTCOMES[direction(metric)]:
        colour = WIN_COLOURS[outcome]
        part = pairs[pairs["outcome"] == outcome]
        points = part.groupby(["a", "b"], sort=False)["query_id"].agg(list).reset_index()
        counts = points["query_id"].map(len)
        fig.add_trace(go.Scatter(
            x=points["a"], y=points["b"], mode="markers", name=f"{outcome} ({len(part)})",
            marker={"color": colour, "size": [point_size(n) for n in counts], "opacity": 0.75,
                    "line": {"width": 1, "color": "#fff"}},
            customdata=[ids[0] for ids in points["query_id"]],
            text=[_ids_text(ids) for ids in points["query_id"]],
            hovertemplate="%{text}<br>A %{x:.3f}<br>B %{y:.3f}<extra></extra>",
        ))
    label_a, label_b = plotly_text(name_a), plotly_text(name_b)
    unit = f" ({scale(metric).unit})" if scale(metric).unit else ""
    fig.update_layout(
        title=f"{plotly_text(metric)} per query",
        xaxis={"title": f"A: {label_a}{unit}", "range": axis},
        yaxis={"title": f"B: {label_b}{unit}", "range": axis},
        legend={"orientation": "h", "y": -0.2}, margin={"t": 50, "l": 50, "r": 20, "b": 40},
    )
    return fig


def point_size(count: int) -> float:
    """The marker size of a point standing for `count` queries: 8 px for one, growing with the
    square root of the count (the area grows with it)."""
    return 8 * max(1, count) ** 0.5


def _ids_text(ids: list[str]) -> str:
    if len(ids) == 1:
        return f"query {plotly_text(ids[0])}"
    shown = ", ".join(plotly_text(i) for i in ids[:5]) + (", …" if len(ids) > 5 else "")
    return f"{len(ids)} queries with these scores: {shown}"

