"""The runs leaderboard: per run and metric, the mean with its 95% CI and the NaN counts by
reason; what a run used (verifier, judge, model); and the diff of two runs (settings that
differ, metric means that changed).

Pure functions over what the store returns (`RunStore.list_runs`, `RunStore.run_scores`,
`RunStore.run_info`), so the dashboard and scripts share them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval.common.values import is_na

LEADERBOARD_COLUMNS = [
    "run_id", "metric", "mean", "ci_low", "ci_high", "n_measurable", "n_total", "n_nan", "nan_reasons",
]


def run_setup(config: Mapping[str, Any]) -> dict[str, str]:
    """Which verifier, judge and model a run used, read from its stored configuration.

    - verifier: the names of the claim verifiers its metrics were given (lexical, nli, llm);
    - judge: the LLM judges' ids (endpoint and model) of metrics or verifiers that used one;
    - model: the verifiers' model ids.
    Empty text where the run used none (focus-time metrics need no model).
    """
    verifiers: dict[str, None] = {}
    judges: dict[str, None] = {}
    models: dict[str, None] = {}
    for metric in config.get("metrics", []) or []:
        settings = metric.get("settings", {}) if isinstance(metric, Mapping) else {}
        verifier = settings.get("verifier")
        if isinstance(verifier, Mapping):
            if verifier.get("name"):
                verifiers[str(verifier["name"])] = None
            if verifier.get("model_id"):
                model_id = str(verifier["model_id"])
                (judges if verifier.get("name") == "llm" else models)[model_id] = None
        llm = settings.get("llm")
        if isinstance(llm, Mapping) and llm.get("model_id"):
            judges[str(llm["model_id"])] = None
    return {"verifier": ", ".join(verifiers), "judge": ", ".join(judges), "model": ", ".join(models)}


def score_summary(scores: np.ndarray, codes: np.ndarray, *, confidence: float = 0.95,
                  n_resamples: int = 2000, seed: int = 42) -> dict[str, Any]:
    """One metric's scores (NaN: not measurable) and reason codes: the mean over measurable rows,
    the percentile bootstrap CI of that mean, n_measurable, n_total, n_nan and nan_reasons
    ({reason_code: count}, most first; "unknown" for a missing code). The one summary of the
    leaderboard and of a run's `aggregate` (`tempo_eval.engine.scoring.aggregate_frame`)."""
    from tempo_eval.compare.statistics import bootstrap_ci

    missing = np.isnan(scores)
    measurable = scores[~missing]
    low, high = bootstrap_ci(measurable, confidence=confidence, n_resamples=n_resamples, seed=seed)
    reasons = Counter("unknown" if is_na(c) else str(c) for c in codes[missing]).most_common()
    return {"mean": float(measurable.mean()) if measurable.size else math.nan, "ci_low": low,
            "ci_high": high, "n_measurable": int(measurable.size), "n_total": int(scores.size),
            "n_nan": int(missing.sum()), "nan_reasons": dict(reasons)}


def leaderboard(scores: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 2000) -> pd.DataFrame:
    """One row per (run, metric) of `scores` (columns run_id, metric, score, reason_code), in
    order of first appearance: its `score_summary`."""
    if scores.empty:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    values = scores["score"].to_numpy(dtype=float)
    codes = scores["reason_code"].to_numpy(dtype=object)
    # one pass over index arrays: 200 runs x a few metrics stay well under a second
    groups = scores.groupby(["run_id", "metric"], sort=False).indices.items()
    records = [{"run_id": int(run_id), "metric": str(metric), **score_summary(
                   values[index], codes[index], confidence=confidence, n_resamples=n_resamples)}
               for (run_id, metric), index in groups]
    return pd.DataFrame(records, columns=LEADERBOARD_COLUMNS)


def flatten_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run configuration as {dotted setting name: value}; metrics are keyed by their name
    (``metrics.temporal_ndcg.settings.k``), so the order of the metrics does not matter."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            if not value:
                flat[prefix] = {}
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        else:
            flat[prefix] = value

    for key, value in config.items():
        if key == "metrics" and isinstance(value, list):
            for metric in value:
                name = metric.get("name", "?") if isinstance(metric, Mapping) else str(metric)
                walk(f"metrics.{name}", {k: v for k, v in metric.items() if k != "name"} if isinstance(metric, Mapping) else metric)
        else:
            walk(str(key), value)
    return flat


def config_diff(config_a: Mapping[str, Any], config_b: Mapping[str, Any]) -> pd.DataFrame:
    """The settings whose values differ between two runs: setting, a, b (None where a run lacks
    the setting, e.g. a metric only one of them computed)."""
    a, b = flatten_config(config_a), flatten_config(config_b)
    rows = [
        {"setting": key, "a": a.get(key), "b": b.get(key)}
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    ]
    return pd.DataFrame(rows, columns=["setting", "a", "b"])


def mean_changes(board_a: pd.DataFrame, board_b: pd.DataFrame) -> pd.DataFrame:
    """Per metric of either run: mean_a, mean_b, change (b - a; NaN where one run lacks the
    metric or has no measurable row), n_measurable_a and n_measurable_b."""
    a = board_a.set_index("metric")
    b = board_b.set_index("metric")
    rows = []
    for metric in dict.fromkeys([*a.index, *b.index]):
        mean_a = float(a.at[metric, "mean"]) if metric in a.index else math.nan
        mean_b = float(b.at[metric, "mean"]) if metric in b.index else math.nan
        rows.append({
            "metric": metric, "mean_a": mean_a, "mean_b": mean_b, "change": mean_b - mean_a,
            "n_measurable_a": int(a.at[metric, "n_measurable"]) if metric in a.index else 0,
            "n_measurable_b": int(b.at[metric, "n_measurable"]) if metric in b.index else 0,
        })
    return pd.DataFrame(rows, columns=["metric", "mean_a", "mean_b", "change", "n_measurable_a", "n_measurable_b"])


def run_records(runs: pd.DataFrame, board: pd.DataFrame, setups: Mapping[int, Mapping[str, str]]) -> list[dict[str, Any]]:
    """One record per run of `runs` (`RunStore.list_runs`), in its order: id, name, dataset_id,
    dataset, status, rows (dataset rows with a stored result), created, created_by (who made the
    run; None: unknown), verifier, metrics and
    means ({metric: {mean, ci_low, ci_high, n_measurable, n_total, nan_reasons}}, from `board`, a
    `leaderboard` of those runs; NaN as None). What `tempo-eval runs` lists."""
    per_run: dict[int, dict[str, Any]] = {}
    for row in board.itertuples(index=False):
        means = {k: None if math.isnan(v) else float(v) for k, v in
                 (("mean", row.mean), ("ci_low", row.ci_low), ("ci_high", row.ci_high))}
        per_run.setdefault(int(row.run_id), {})[str(row.metric)] = {
            **means, "n_measurable": int(row.n_measurable), "n_total": int(row.n_total),
            "nan_reasons": dict(row.nan_reasons)}
    records = []
    for run in runs.itertuples(index=False):
        means = per_run.get(int(run.id), {})
        totals = [m["n_total"] for m in means.values()]
        records.append({
            "id": int(run.id), "name": run.name, "dataset_id": int(run.dataset_id), "dataset": run.dataset,
            "status": run.status, "rows": max(totals) if totals else 0, "created": run.created_at,
            "created_by": _known(getattr(run, "created_by", None)),
            "verifier": (setups.get(int(run.id)) or {}).get("verifier", ""), "metrics": list(means),
            "means": means,
        })
    return records


def _known(user: Any) -> str | None:
    """A recorded user, None where none is (pandas may hold SQL NULL as NaN)."""
    return user if isinstance(user, str) and user else None


def metric_trends(runs: pd.DataFrame, board: pd.DataFrame) -> pd.DataFrame:
    """Each metric's mean with its CI across runs in time order: one line per (run, metric) of
    `board` (a `leaderboard`) whose run is in `runs` (`RunStore.list_runs`), with run_id, name,
    created_at, metric, mean, ci_low, ci_high, n_measurable; sorted by created_at, then run id
    (runs created in the same second keep the order they were stored in)."""
    columns = ["run_id", "name", "created_at", "metric", "mean", "ci_low", "ci_high", "n_measurable"]
    if runs.empty or board.empty:
        return pd.DataFrame(columns=columns)
    meta = runs[["id", "name", "created_at"]].rename(columns={"id": "run_id"})
    joined = board.merge(meta, on="run_id", how="inner")
    return joined.sort_values(["created_at", "run_id"], kind="stable")[columns].reset_index(drop=True)


def baseline_deltas(board: pd.DataFrame, baseline_run_id: int) -> pd.DataFrame:
    """Per run and metric of `board`: mean minus the baseline run's mean of that metric
    (columns run_id, metric, delta); NaN where the baseline has no such metric or no measurable
    row. The baseline's own deltas are 0."""
    base = board[board["run_id"] == baseline_run_id].set_index("metric")["mean"]
    deltas = board["mean"].to_numpy(dtype=float) - board["metric"].map(base).to_numpy(dtype=float)
    return pd.DataFrame({"run_id": board["run_id"].to_numpy(), "metric": board["metric"].to_numpy(),
                         "delta": deltas})
