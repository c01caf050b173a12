"""Turn faithfulness as a timeline: one bar per sliding window, coloured by its score."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text


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
            "window": int(window.get("index", len(rows) + 1)),  # numbered from 1 by the metric
            "interactions": f"{first + 1}" if first == last else f"{first + 1}–{last + 1}",
            "turns": ", ".join(str(t + 1) for t in window.get("turns", [])),
            "score": float(window.get("score", math.nan)),
            **{count: int(counts.get(count, 0)) for count in ("claims", "yes", "no", "idk")},
            "reason_code": window.get("reason_code") or "",
        })
    columns = ["window", "interactions", "turns", "score", "claims", "yes", "no", "idk", "reason_code"]
    return pd.DataFrame(rows, columns=columns)


#: the height drawn for a window that scores 0, so it shows as a (red) bar, not as missing data
ZERO_BAR = 0.02


def turn_timeline(frame: pd.DataFrame, *, threshold: float | None = None) -> go.Figure:
    """Bars of window scores in conversation order, red to green, with the threshold as a line.

    Every window draws a bar labelled with its score: a window that scores 0 gets a short red
    stub (`ZERO_BAR`) and a window without a score (a verifier error) a grey one labelled "n/a",
    so neither looks like a window that is not there."""
    scores = frame["score"].astype(float)
    shown = [ZERO_BAR if (math.isnan(s) or s == 0) else s for s in scores]
    labels = ["n/a" if math.isnan(s) else f"{s:.2f}" for s in scores]
    colours = [0.0 if math.isnan(s) else s for s in scores]
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=frame["window"], y=shown, text=labels, textposition="outside",
        marker={"color": colours, "colorscale": "RdYlGn", "cmin": 0, "cmax": 1,
                "pattern": {"shape": ["x" if math.isnan(s) else "" for s in scores]}},
        customdata=pd.concat([frame[["interactions", "claims", "yes", "no", "idk"]], pd.Series(labels, name="score")],
                             axis=1).map(lambda v: plotly_text(str(v))).to_numpy(),
        hovertemplate=(
            "window %{x} (interactions %{customdata[0]})<br>score %{customdata[5]}<br>"
            "%{customdata[1]} claims: %{customdata[2]} supported, %{customdata[3]} contradicted, "
            "%{customdata[4]} neutral (not stated)<extra></extra>"
        ),
        name="window score",
    ))
    if threshold is not None:
        fig.add_hline(y=threshold, line={"dash": "dash", "color": "#555"},
                      annotation_text=f"threshold {threshold:g}", annotation_position="top right",
                      annotation_font={"size": 13, "color": "#222"}, annotation_bgcolor="rgba(255,255,255,0.85)")
    fig.update_layout(
        title="Turn faithfulness per window", xaxis={"title": "window (ends at interaction)", "dtick": 1},
        yaxis={"title": "score", "range": [0, 1.12]}, margin={"t": 50, "l": 50, "r": 20, "b": 40},
        showlegend=False,
    )
    return fig
