"""Turn faithfulness as a timeline: one bar per sliding window, coloured by its score."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go


def windows_frame(windows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per window of a TurnFaithfulness result (`details["windows"]`).

    Columns: window (1-based), interactions ("1–3"), turns, score, claims, yes, no, idk,
    reason_code.
    """
    rows = []
    for window in windows:
        first, last = window.get("interactions", [0, 0])
        counts = window.get("counts", {})
        rows.append({
            "window": int(window.get("index", len(rows))) + 1,
            "interactions": f"{first + 1}" if first == last else f"{first + 1}–{last + 1}",
            "turns": ", ".join(str(t + 1) for t in window.get("turns", [])),
            "score": float(window.get("score", math.nan)),
            "claims": int(counts.get("claims", 0)),
            "yes": int(counts.get("yes", 0)),
            "no": int(counts.get("no", 0)),
            "idk": int(counts.get("idk", 0)),
            "reason_code": window.get("reason_code") or "",
        })
    columns = ["window", "interactions", "turns", "score", "claims", "yes", "no", "idk", "reason_code"]
    return pd.DataFrame(rows, columns=columns)


def turn_timeline(frame: pd.DataFrame, *, threshold: float | None = None) -> go.Figure:
    """Bars of window scores in conversation order, red to green, with the threshold as a line."""
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=frame["window"], y=frame["score"],
        marker={"color": frame["score"], "colorscale": "RdYlGn", "cmin": 0, "cmax": 1},
        customdata=frame[["interactions", "claims", "yes", "no", "idk"]].map(
            lambda v: html.escape(str(v))
        ).to_numpy(),
        hovertemplate=(
            "window %{x} (interactions %{customdata[0]})<br>score %{y:.2f}<br>"
            "%{customdata[1]} claims: %{customdata[2]} yes, %{customdata[3]} no, "
            "%{customdata[4]} idk<extra></extra>"
        ),
        name="window score",
    ))
    if threshold is not None:
        fig.add_hline(y=threshold, line={"dash": "dash", "color": "#555"},
                      annotation_text=f"threshold {threshold:g}")
    fig.update_layout(
        title="Turn faithfulness per window", xaxis={"title": "window (ends at interaction)", "dtick": 1},
        yaxis={"title": "score", "range": [0, 1.05]}, margin={"t": 50, "l": 50, "r": 20, "b": 40},
        showlegend=False,
    )
    return fig
