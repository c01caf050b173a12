"""NDCG@1..k curves of several runs, with bootstrap confidence bands.

    bands = curve_bands({"bm25": matrix_a, "dense": matrix_b})   # matrices: queries x k
    fig = ndcg_curves_figure(bands)

The band at cutoff j is the percentile bootstrap interval of the mean NDCG@j over the queries,
exactly what `tempo_eval.compare.statistics.bootstrap_ci` gives for that column (same seeded draws, same
quantiles; a test pins the equality), computed for all cutoffs from one set of resampled query
indices instead of k separate calls. Queries with a NaN at some cutoff (no relevant document
judged) are left out of that run, as in the comparison table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tempo_eval.common.safe_text import plotly_text
from tempo_eval.compare.statistics import bootstrap_ci_columns
from tempo_eval.viz.means import PALETTE, rgba  # one colour per run, the bar chart's

BAND_COLUMNS = ["run", "k", "mean", "low", "high", "n_queries"]


def curve_bands(
    curves: Mapping[str, np.ndarray],
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 42,
) -> pd.DataFrame:
    """Mean NDCG@j and its bootstrap interval for every run and cutoff j = 1..k.

    `curves[run]` is an array of shape (n_queries, k). Rows holding a NaN are dropped for that
    run. Returns one row per (run, k) with columns run, k, mean, low, high, n_queries; a run
    with no measurable query has NaN mean and bounds.
    """
    records = []
    for run, matrix in curves.items():
        values = np.asarray(matrix, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"curves[{run!r}] must be a 2-d array (queries x k), got shape {values.shape}")
        values = values[~np.isnan(values).any(axis=1)]
        intervals = bootstrap_ci_columns(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
        for j, (low, high) in enumerate(intervals):
            mean = float(values[:, j].mean()) if values.shape[0] else float("nan")
            records.append((run, j + 1, mean, low, high, int(values.shape[0])))
    return pd.DataFrame.from_records(records, columns=BAND_COLUMNS)


def ndcg_curves_figure(bands: pd.DataFrame, *, title: str = "NDCG@k", confidence: float = 0.95) -> go.Figure:
    """Lines of mean NDCG@k per run with shaded confidence bands (from `curve_bands`).

    Plotly renders trace names (the legend), titles and hover text as HTML: run names and the
    title are escaped, so a run called ``<a href=...>`` shows as typed."""
    fig = go.Figure()
    for index, (run, part) in enumerate(bands.groupby("run", sort=False)):
        colour = PALETTE[index % len(PALETTE)]
        part = part.sort_values("k")
        ks = part["k"].tolist()
        fig.add_trace(go.Scatter(
            x=ks + ks[::-1],
            y=part["high"].tolist() + part["low"].tolist()[::-1],
            fill="toself", fillcolor=rgba(colour, 0.18), line={"width": 0},
            hoverinfo="skip", showlegend=False, legendgroup=str(run), name=f"{plotly_text(run)} band",
        ))
        fig.add_trace(go.Scatter(
            x=ks, y=part["mean"], mode="lines+markers", name=plotly_text(run), legendgroup=str(run),
            line={"color": colour, "width": 2},
            customdata=np.stack([part["low"], part["high"], part["n_queries"]], axis=-1),
            hovertemplate=(
                f"<b>{plotly_text(run)}</b><br>NDCG@%{{x}} = %{{y:.3f}}<br>"
                f"{confidence:.0%} CI %{{customdata[0]:.3f}}–%{{customdata[1]:.3f}}"
                "<br>%{customdata[2]} queries<extra></extra>"
            ),
        ))
    fig.update_layout(
        title=plotly_text(title), xaxis_title="cutoff k", yaxis_title="mean NDCG@k",
        yaxis={"range": [0, 1.02]}, xaxis={"dtick": 1}, hovermode="x unified",
        legend={"orientation": "h", "y": -0.2}, margin={"t": 50, "l": 50, "r": 20, "b": 40},
    )
    return fig
