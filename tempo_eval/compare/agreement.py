"""How far a foreign metric (RAGAS, DeepEval) agrees with one of ours, row by row.

    pairs = agreement_pairs(ours_frame, theirs_frame, ours="temporal_faithfulness",
                            theirs="ragas:faithfulness")
    stats = rank_correlations(pairs["ours"], pairs["theirs"])   # n, spearman, kendall, p-values
    worst = pairs.head(10)                                       # sorted by disagreement

The frames are results frames (`RunStore.results_frame`: row, query_id, run, metric, score) of
two runs of the same dataset; rows are paired by their position in the dataset, and a row with
NaN on either side is left out. Two scores disagree by how far apart their ranks are: each side's
scores become percentile ranks in [0, 1] (ties share their mean rank), and `rank_gap` is the
absolute difference. Ranks, not raw scores, because the tools' scales differ (a 0.7 from one
judge is not a 0.7 from another); Spearman's rho is the Pearson correlation of the same ranks.
Kendall's tau is tau-b (ties on either side corrected), as `scipy.stats.kendalltau`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def agreement_pairs(ours: pd.DataFrame, theirs: pd.DataFrame, *, ours_metric: str, theirs_metric: str) -> pd.DataFrame:
    """Rows scored by both metrics: row, query_id, ours, theirs, ours_rank, theirs_rank, rank_gap,
    sorted by rank_gap descending (the rows that disagree most first), then row."""
    left = _metric_scores(ours, ours_metric, "ours")
    right = _metric_scores(theirs, theirs_metric, "theirs").drop(columns=["query_id"])
    pairs = left.merge(right, on="row", how="inner").dropna(subset=["ours", "theirs"])
    pairs["ours_rank"] = pairs["ours"].rank(pct=True) if len(pairs) else pairs["ours"]
    pairs["theirs_rank"] = pairs["theirs"].rank(pct=True) if len(pairs) else pairs["theirs"]
    pairs["rank_gap"] = (pairs["ours_rank"] - pairs["theirs_rank"]).abs()
    return pairs.sort_values(["rank_gap", "row"], ascending=[False, True], kind="stable").reset_index(drop=True)


def _metric_scores(frame: pd.DataFrame, metric: str, name: str) -> pd.DataFrame:
    part = frame[frame["metric"] == metric]
    if part.empty:
        found = ", ".join(sorted(map(str, frame["metric"].unique()))) or "none"
        raise ValueError(f"the run has no results for {metric!r} (metrics: {found})")
    return pd.DataFrame({
        "row": part["row"].astype(int).to_numpy(), "query_id": part["query_id"].astype(str).to_numpy(),
        name: pd.to_numeric(part["score"], errors="coerce").astype(float).to_numpy(),
    })


def rank_correlations(ours: Any, theirs: Any) -> dict[str, float]:
    """n, Spearman's rho and Kendall's tau-b with their two-sided p-values (NaN below 3 pairs or
    when one side is constant: no order to agree with)."""
    from scipy import stats

    x = pd.Series(ours, dtype=float).to_numpy()
    y = pd.Series(theirs, dtype=float).to_numpy()
    n = len(x)
    out = {"n": float(n), "spearman": math.nan, "spearman_p": math.nan, "kendall": math.nan, "kendall_p": math.nan}
    if n < 3 or len(set(x.tolist())) < 2 or len(set(y.tolist())) < 2:
        return out
    rho = stats.spearmanr(x, y)
    tau = stats.kendalltau(x, y)
    out.update(spearman=float(rho.statistic), spearman_p=float(rho.pvalue),
               kendall=float(tau.statistic), kendall_p=float(tau.pvalue))
    return out
