"""Scores over time (`tempo_eval.slices.SliceReport`) as one plotly figure: each run's mean per
bin with its 95% band, its change point as a dashed line with the levels before and after, and
below, each run's paired difference against the first run with its band.

Every point's customdata is [run id, bin start] (difference points: [b, bin start]), so a click
opens the bin's rows."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempo_eval.common.safe_text import plotly_text
from tempo_eval.viz.means import rgba
from tempo_eval.viz.trends import COLOURS

_BY = {"as_of": "as-of date", "focus_year": "focus year", "evidence_year": "evidence year"}


def _band(fig: go.Figure, x: list, low: list, high: list, colour: str, name: str, row: int) -> None:
    fig.add_trace(go.Scatter(x=x + x[::-1], y=high + low[::-1], mode="lines", fill="toself",
                             fillcolor=rgba(colour, 0.18),
                             line={"width": 0}, hoverinfo="skip", showlegend=False, name=f"{name} 95%"),
                  row=row, col=1)


def slices_figure(report: Any, *, labels: dict[int, str] | None = None, metric_label: str | None = None) -> go.Figure:
    """The curves (top) and, with two or more runs of one dataset, the differences (bottom)."""
    rows = 2 if report.differences else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        row_heights=[0.68, 0.32] if rows == 2 else [1.0])
    colour_of = {}
    for i, run in enumerate(report.runs):
        colour = colour_of[run.run] = COLOURS[i % len(COLOURS)]
        name = plotly_text((labels or {}).get(run.run) or f"{run.name} #{run.run}")
        kept = [b for b in run.bins if b.n > 0]
        x = [b.start for b in kept]
        _band(fig, x, [b.low for b in kept], [b.high for b in kept], colour, name, 1)
        fig.add_trace(go.Scatter(
            x=x, y=[b.mean for b in kept], mode="lines+markers", name=name, line={"color": colour},
            marker={"size": 8}, customdata=[[run.run, b.start] for b in kept],
            text=[f"n {b.n}, not measured {b.not_measured}<br>95% {b.low:.3f}–{b.high:.3f}" for b in kept],
            hovertemplate="%{x}<br>mean %{y:.3f}<br>%{text}<extra>%{fullData.name}</extra>",
        ), row=1, col=1)
        for change in run.changepoints:
            fig.add_vline(x=change["start"], line={"color": colour, "dash": "dash"}, row=1, col=1)
            fig.add_annotation(
                x=change["start"], y=1.02, yref="y", showarrow=False, xanchor="left", font={"color": colour},
                text=plotly_text(f"change {change['before']['mean']:.2f} → {change['after']['mean']:.2f} "
                                 f"(p {change['p_value']:.3g})"), row=1, col=1)
    for diff in report.differences:
        colour = colour_of.get(diff.b, COLOURS[0])
        kept = [b for b in diff.bins if b["n"] > 0 and b["diff"] is not None]
        x = [b["start"] for b in kept]
        if any(b["low"] is not None for b in kept):
            _band(fig, x, [b["low"] for b in kept], [b["high"] for b in kept], colour, "difference", 2)
        fig.add_trace(go.Scatter(
            x=x, y=[b["diff"] for b in kept], mode="lines+markers", line={"color": colour, "dash": "dot"},
            name=plotly_text(f"#{diff.b} − #{diff.a}"), customdata=[[diff.b, b["start"]] for b in kept],
            text=[f"n {b['n']} measured in both" for b in kept],
            hovertemplate="%{x}<br>difference %{y:+.3f}<br>%{text}<extra>%{fullData.name}</extra>",
        ), row=2, col=1)
        fig.add_hline(y=0, line={"color": "#888", "width": 1}, row=2, col=1)
    fig.update_yaxes(title_text=plotly_text(metric_label or report.metric), row=1, col=1)
    if rows == 2:
        fig.update_yaxes(title_text="minus the first run", row=2, col=1)
    fig.update_xaxes(title_text=f"{_BY.get(report.by, report.by)} ({report.bin}, bins by first day)", row=rows, col=1)
    fig.update_layout(
        title=plotly_text(f"{metric_label or report.metric} by {_BY.get(report.by, report.by)}, 95% intervals"),
        legend={"orientation": "h", "y": -0.18}, margin={"t": 60, "l": 60, "r": 20, "b": 40},
        height=560 if rows == 2 else 440, hovermode="closest",
    )
    return fig
