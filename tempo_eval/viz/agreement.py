"""A foreign metric against ours, one point per dataset row, coloured by how far their ranks differ."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text


def agreement_scatter(pairs: pd.DataFrame, *, ours: str, theirs: str) -> go.Figure:
    """Scatter of `tempo_eval.compare.agreement.agreement_pairs` output: x = the foreign score, y = ours,
    colour = rank gap. Query ids and metric names are HTML-escaped (plotly renders them as HTML)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=pairs["theirs"], y=pairs["ours"], mode="markers",
        marker={"size": 9, "opacity": 0.75, "color": pairs["rank_gap"], "colorscale": "Cividis",
                "colorbar": {"title": "rank gap"}},
        text=pairs["query_id"].map(lambda q: plotly_text(str(q))).tolist(),
        hovertemplate="query %{text}<br>foreign %{x:.3f}<br>ours %{y:.3f}<extra></extra>",
    ))
    fig.update_layout(
        xaxis={"title": plotly_text(theirs)}, yaxis={"title": plotly_text(ours)},
        margin={"t": 30, "l": 50, "r": 20, "b": 40}, height=420,
    )
    return fig
