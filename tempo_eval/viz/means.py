"""Each run's mean per metric as grouped bars (a comparison's overview chart)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text

#: one colour per run, in input order (colour-blind safe, Okabe-Ito)
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def rgba(colour: str, alpha: float) -> str:
    """A "#rrggbb" colour made see-through (`alpha` 0..1): the shade of a band under its line."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def means_figure(means: Mapping[str, Mapping[str, float]], metrics: Sequence[str]) -> go.Figure:
    """`means[run][metric]` as bars: metrics on x, one bar per run (names escaped for plotly)."""
    fig = go.Figure()
    labels = [plotly_text(str(m)) for m in metrics]
    for i, (run, by_metric) in enumerate(means.items()):
        fig.add_trace(go.Bar(
            x=labels, y=[by_metric.get(m) for m in metrics], name=plotly_text(str(run)),
            marker={"color": PALETTE[i % len(PALETTE)]},
            hovertemplate="%{x}: %{y:.3f}<extra>%{fullData.name}</extra>",
        ))
    fig.update_layout(barmode="group", title="Mean per run", yaxis={"title": "mean", "range": [0, 1.03]},
                      margin={"t": 50, "l": 50, "r": 20, "b": 40})
    return fig
