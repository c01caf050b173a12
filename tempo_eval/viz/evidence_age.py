"""Evidence age: how old the retrieved documents were when each question was asked, per run.

`age_histogram` overlays one histogram of ages (in days) per run; documents from the future have
negative ages and sit left of the dashed line at 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text


def age_histogram(ages: Mapping[str, Sequence[float]], *, title: str = "Evidence age") -> go.Figure:
    """One overlaid histogram per run of the ages (days; NaN left out) of its documents."""
    fig = go.Figure()
    shown = {name: np.asarray(values, dtype=float) for name, values in ages.items()}
    shown = {name: values[~np.isnan(values)] for name, values in shown.items()}
    if not any(values.size for values in shown.values()):
        fig.add_annotation(text="No document has both a publication date and an as-of date", showarrow=False,
                           x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_layout(title=plotly_text(title), xaxis={"visible": False}, yaxis={"visible": False})
        return fig
    for name, values in shown.items():
        fig.add_trace(go.Histogram(x=values, name=plotly_text(str(name)), opacity=0.6, nbinsx=40,
                                   hovertemplate="age %{x} days<br>%{y} document(s)<extra>%{fullData.name}</extra>"))
    fig.add_vline(x=0, line_dash="dash", line_color="#888", annotation_text="as-of date",
                  annotation_position="top")
    fig.update_layout(
        title=plotly_text(title), barmode="overlay",
        xaxis={"title": "age at the as-of date (days; negative: published after it)"},
        yaxis={"title": "documents"}, margin={"t": 50, "l": 60, "r": 20, "b": 60},
    )
    return fig
