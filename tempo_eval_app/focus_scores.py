"""Focus-time years and focus-time scores of a dataset (no model, computed on the fly, cached)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval_app.asof_scores import shown_reason
from tempo_eval_app.errors import logger
from tempo_eval_app.store_reads import _dataset_frame, db_path


@st.cache_data(show_spinner=False, max_entries=32)
def _years_of_column(db: str, dataset_id: int, column: str, reference_date: str | None) -> list[Any]:
    from tempo_eval.core.extract import extract_aft, extract_dft, extract_qft

    frame = _dataset_frame(db, dataset_id)
    if column not in frame.columns:
        return [None] * len(frame)
    extract = {"query": extract_qft, "answer": extract_aft}.get(column, extract_dft)
    dates = frame["reference_date"] if "reference_date" in frame.columns else [None] * len(frame)
    out: list[Any] = []
    for value, row_date in zip(frame[column], dates, strict=True):
        ref = row_date if isinstance(row_date, str) and row_date else reference_date
        if isinstance(value, str):
            out.append(sorted(extract(value, reference_date=ref).years))
        elif isinstance(value, (list, tuple)):
            out.append([sorted(extract_dft(text, reference_date=ref).years) for text in value if isinstance(text, str)])
        else:
            out.append(None)
    return out


def years_of_column(dataset_id: int, column: str, reference_date: str | None = None) -> list[Any]:
    """Per row, the focus-time years of a text column (a list of years), or of each text of a
    list column (a list of lists); None where the cell is missing."""
    return _years_of_column(db_path(), int(dataset_id), column, reference_date)

FOCUS_COLUMNS = [
    "query_id", "run", "temporal_faithfulness", "tf_reason", "ndcg_focus_time", "ndcg_ft_reason",
    "ndcg_gold", "ndcg_gold_reason",
]


def _measure_or_nan(metric: Any, row: dict[str, Any]) -> tuple[float, str]:
    """(score, reason) of one metric on one row; an error becomes NaN with its message."""
    try:
        result = metric.measure(**metric.inputs_from_row(row))
    except Exception as exc:  # one bad row must not hide the others
        logger.warning("row %s, %s: %s", row.get("query_id"), metric.name, exc)
        return math.nan, f"not measurable: {exc}"
    return result.score, shown_reason(result)


@st.cache_data(show_spinner="Computing focus-time metrics…", max_entries=16)
def _focus_time_scores(db: str, dataset_id: int, k: int) -> pd.DataFrame:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    frame = _dataset_frame(db, dataset_id)
    faithfulness = TemporalFaithfulness(mode="focus_time")
    ndcg_focus = TemporalNDCG(k=k, mode="focus_time")
    ndcg_gold = TemporalNDCG(k=k, mode="gold")
    records = []
    for row in frame.to_dict(orient="records"):
        record: dict[str, Any] = {"query_id": row.get("query_id"), "run": row.get("run")}
        has = {name for name, value in row.items() if value is not None and not (isinstance(value, float) and math.isnan(value))}
        record["temporal_faithfulness"], record["tf_reason"] = (
            _measure_or_nan(faithfulness, row) if {"answer", "contexts"} <= has else (math.nan, "no answer or contexts")
        )
        record["ndcg_focus_time"], record["ndcg_ft_reason"] = (
            _measure_or_nan(ndcg_focus, row) if {"query", "contexts"} <= has else (math.nan, "no query or contexts")
        )
        record["ndcg_gold"], record["ndcg_gold_reason"] = (
            _measure_or_nan(ndcg_gold, row) if {"retrieved_ids", "gold_ids"} <= has else (math.nan, "no retrieved_ids or gold_ids")
        )
        records.append(record)
    return pd.DataFrame.from_records(records, columns=FOCUS_COLUMNS)


def focus_time_scores(dataset_id: int, k: int = 10) -> pd.DataFrame:
    """Per row: Temporal Faithfulness (focus time), Temporal NDCG@k (focus time and gold), with
    the reason of each score; NaN where not measurable (the reason says why)."""
    return _focus_time_scores(db_path(), int(dataset_id), int(k))
