"""NDCG@1..k curves of several runs, with bootstrap confidence bands.

    bands = curve_bands({"bm25": matrix_a, "dense": matrix_b})   # matrices: queries x k
    fig = ndcg_curves_figure(bands)

The band at cutoff j is the percentile bootstrap interval of the mean NDCG@j over the queries,
exactly what `tempo_eval.compare.bootstrap_ci` gives for that column (same seeded draws, same
quantiles; a test pins the equality), computed for all cutoffs from one set of resampled query
indices instead of k separate calls. Queries with a NaN at some cutoff (no relevant document
judged) are left out of that run, as in the comparison table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tempo_eval.compare import BOOTSTRAP_CHUNK_ENTRIES, bootstrap_ci

#: one colour per run, in input order (colour-blind safe, Okabe-Ito)
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

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
        lows, highs = _bootstrap_columns(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
        for j in range(values.shape[1]):
            mean = float(values[:, j].mean()) if values.shape[0] else float("nan")
            records.append((run, j + 1, mean, lows[j], highs[j], int(values.shape[0])))
    return pd.DataFrame.from_records(records, columns=BAND_COLUMNS)


def _bootstrap_columns(
    values: np.ndarray, *, confidence: float, n_resamples: int, seed: int
) -> tuple[list[float], list[float]]:
    """`bootstrap_ci` of every column of `values` (queries x k) from one draw of indices.

    Falls back to `bootstrap_ci` itself when its draws would come in several chunks (very many
    queries), so the numbers are always the ones `bootstrap_ci` gives.
    """
    n, k = values.shape
    if n <= 1 or n_resamples * n > BOOTSTRAP_CHUNK_ENTRIES:  # bootstrap_ci would draw in several chunks
        pairs = [bootstrap_ci(values[:, j], confidence=confidence, n_resamples=n_resamples, seed=seed) for j in range(k)]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    bootstrap_ci(values[:, 0], confidence=confidence, n_resamples=1, seed=seed)  # same argument checks
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(n_resamples, n))
    tail = (1 - confidence) / 2
    lows, highs = [], []
    for j in range(k):
        means = values[:, j][index].mean(axis=1)
        low, high = np.quantile(means, [tail, 1 - tail])
        lows.append(float(low))
        highs.append(float(high))
    return lows, highs


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
            fill="toself", fillcolor=_rgba(colour, 0.18), line={"width": 0},
            hoverinfo="skip", showlegend=False, legendgroup=str(run), name=f"{_escape(run)} band",
        ))
        fig.add_trace(go.Scatter(
            x=ks, y=part["mean"], mode="lines+markers", name=_escape(run), legendgroup=str(run),
            line={"color": colour, "width": 2},
            customdata=np.stack([part["low"], part["high"], part["n_queries"]], axis=-1),
            hovertemplate=(
                f"<b>{_escape(run)}</b><br>NDCG@%{{x}} = %{{y:.3f}}<br>"
                f"{confidence:.0%} CI %{{customdata[0]:.3f}}–%{{customdata[1]:.3f}}"
                "<br>%{customdata[2]} queries<extra></extra>"
            ),
        ))
    fig.update_layout(
        title=_escape(title), xaxis_title="cutoff k", yaxis_title="mean NDCG@k",
        yaxis={"range": [0, 1.02]}, xaxis={"dtick": 1}, hovermode="x unified",
        legend={"orientation": "h", "y": -0.2}, margin={"t": 50, "l": 50, "r": 20, "b": 40},
    )
    return fig


def _rgba(hex_colour: str, alpha: float) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _escape(text: object) -> str:
    """Plotly renders hover text as HTML: escape run names coming from user files."""
    import html

    return html.escape(str(text)).replace("{", "&#123;").replace("}", "&#125;")
