"""As-of scores of a dataset (no model, computed on the fly, cached): per row future leak, stale
evidence, median evidence age, Recency NDCG and answer currency, and the age of every top-k
document (the Overview's table and age distribution, the Heatmaps' as-of × publication years)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval_app.store_reads import _dataset_frame, db_path

#: the score columns, each a metric's name (its reason goes in "<name> reason")
ASOF_COLUMNS = ("future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg", "answer_currency")


def has_asof_columns(frame: pd.DataFrame) -> bool:
    """Whether the dataset has anything for the as-of metrics: publication dates or outdated answers."""
    return "context_dates" in frame.columns or "outdated_references" in frame.columns


@st.cache_data(show_spinner="Computing as-of metrics…", max_entries=16)
def _asof_scores(db: str, dataset_id: int, k: int, max_age: float, half_life: float) -> pd.DataFrame:
    from tempo_eval.engine.scoring import measure_batch
    from tempo_eval.metrics.catalog import build_metric

    frame = _dataset_frame(db, dataset_id)
    metrics = {name: build_metric(name, k=k, max_age=max_age, half_life=half_life) for name in ASOF_COLUMNS}
    lacking = {name: metric.required_columns(frame.columns) for name, metric in metrics.items()}
    lacking = {name: needs for name, needs in lacking.items() if any(c not in frame.columns for c in needs)}
    measured = [metric for name, metric in metrics.items() if name not in lacking]
    rows = frame.to_dict(orient="records")
    # every row in one event loop (not one per metric and row: that cost most of the time)
    results = asyncio.run(measure_batch([(i, row, measured) for i, row in enumerate(rows)]))
    records = []
    for row, row_results in zip(rows, results, strict=True):
        record: dict[str, Any] = {"query_id": row.get("query_id"), "run": row.get("run")}
        for name, needs in lacking.items():
            record[name], record[f"{name} reason"] = math.nan, f"no {', '.join(needs)} column"
        for result in row_results:
            record[result.metric], record[f"{result.metric} reason"] = result.score, _reason(result)
        records.append(record)
    columns = ["query_id", "run", *[c for name in ASOF_COLUMNS for c in (name, f"{name} reason")]]
    return pd.DataFrame.from_records(records, columns=columns)


def _reason(result: Any) -> str:
    """The reason shown beside a score: "[code] reason" when not measurable."""
    reason = result.reason or ""
    return f"[{result.reason_code}] {reason}" if result.reason_code and math.isnan(result.score) else reason


def asof_scores(dataset_id: int, k: int, max_age: float, half_life: float) -> pd.DataFrame:
    """Per row: the as-of metrics and their reasons (NaN where not measurable, the reason says why)."""
    return _asof_scores(db_path(), int(dataset_id), int(k), float(max_age), float(half_life))


@st.cache_data(show_spinner=False, max_entries=16)
def _document_ages(db: str, dataset_id: int, k: int) -> pd.DataFrame:
    from tempo_eval.metrics.evidence_rows import evidence_table

    frame = _dataset_frame(db, dataset_id)
    return evidence_table(frame, k)


def document_ages(dataset_id: int, k: int) -> pd.DataFrame:
    """One line per top-k document of every row: row, query_id, run, rank, doc, date, as_of, age
    (days; NaN when either date is unknown), as_of_year, year."""
    return _document_ages(db_path(), int(dataset_id), int(k))
