"""Scores of a dataset for the Overview and the Heatmaps. Computed on the fly (no model, cached):
focus-time years and focus-time scores; per row future leak, stale evidence, median evidence age,
Recency NDCG and answer currency; and the age of every top-k document (the Overview's table and
age distribution, the Heatmaps' as-of × publication years). For a dataset too large to score on
the fly (`ON_THE_FLY_ROWS`): the selected runs' stored scores, per run and system, aggregated by
SQLite (`RunStore.system_summary`), read again only when a run grows (cached per run id and size)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.core.extract import extract_aft, extract_dft, extract_qft
from tempo_eval.engine.scoring import measure_batch
from tempo_eval.metrics.catalog import build_metric
from tempo_eval.metrics.evidence_rows import evidence_table
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
from tempo_eval_app import store_reads, words
from tempo_eval_app.errors import logger
from tempo_eval_app.store_reads import _dataset_frame, db_path


@st.cache_data(show_spinner=False, max_entries=32)
def _years_of_column(db: str, dataset_id: int, column: str, reference_date: str | None) -> list[Any]:
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


#: the score columns, each a metric's name (its reason goes in "<name> reason")
ASOF_COLUMNS = ("future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg", "answer_currency")


def has_asof_columns(frame: pd.DataFrame) -> bool:
    """Whether the dataset has anything for the as-of metrics: publication dates or outdated answers."""
    return "context_dates" in frame.columns or "outdated_references" in frame.columns


@st.cache_data(show_spinner="Computing as-of metrics…", max_entries=16)
def _asof_scores(db: str, dataset_id: int, k: int, max_age: float, half_life: float) -> pd.DataFrame:
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
            record[result.metric], record[f"{result.metric} reason"] = result.score, shown_reason(result)
        records.append(record)
    columns = ["query_id", "run", *[c for name in ASOF_COLUMNS for c in (name, f"{name} reason")]]
    return pd.DataFrame.from_records(records, columns=columns)


def shown_reason(result: Any) -> str:
    """The reason shown beside a score: "[code] reason" when not measurable."""
    reason = result.reason or ""
    return f"[{result.reason_code}] {reason}" if result.reason_code and math.isnan(result.score) else reason


def asof_scores(dataset_id: int, k: int, max_age: float, half_life: float) -> pd.DataFrame:
    """Per row: the as-of metrics and their reasons (NaN where not measurable, the reason says why)."""
    return _asof_scores(db_path(), int(dataset_id), int(k), float(max_age), float(half_life))


@st.cache_data(show_spinner=False, max_entries=16)
def _document_ages(db: str, dataset_id: int, k: int) -> pd.DataFrame:
    return evidence_table(_dataset_frame(db, dataset_id), k)


def document_ages(dataset_id: int, k: int) -> pd.DataFrame:
    """One line per top-k document of every row: row, query_id, run, rank, doc, date, as_of, age
    (days; NaN when either date is unknown), as_of_year, year."""
    return _document_ages(db_path(), int(dataset_id), int(k))


#: datasets with more rows than this are not scored on the fly by the Overview (focus-time
#: extraction of every row: about a minute per 100,000 rows); it shows their stored runs
ON_THE_FLY_ROWS = 10_000


def runs_of(dataset_id: int, run_ids: Sequence[int]) -> list[int]:
    """The runs among `run_ids` that evaluated the dataset `dataset_id` (a run deleted meanwhile is
    none of them), from the dataset's cached runs table."""
    of_dataset = set(store_reads.runs_table(int(dataset_id))["id"].astype(int))
    return [int(run_id) for run_id in run_ids if int(run_id) in of_dataset]


def summary_table(run_ids: Sequence[int]) -> pd.DataFrame:
    """One line per (run, system): run (name #id), system, rows, then per metric its mean over
    the scored rows and "<metric> measured" (scored / rows), and for answer currency the
    "current / outdated / other" counts."""
    lines = []
    for run_id in run_ids:
        summary = store_reads.system_summary(run_id)
        if summary.empty:
            continue
        label = store_reads.run_label(run_id)
        for system, part in summary.groupby(summary["system"].fillna(""), sort=True):
            line: dict[str, object] = {"run": label, "system": system or "(all rows)", "rows": int(part["n"].max())}
            for record in part.itertuples(index=False):
                name = words.metric_label(record.metric)
                line[name] = record.mean
                line[f"{name} measured"] = f"{int(record.n_scored):,}/{int(record.n):,}"
                if record.metric == "answer_currency":
                    line["current / outdated / other"] = (
                        f"{int(record.current):,} / {int(record.outdated):,} / {int(record.other):,}")
            lines.append(line)
    return pd.DataFrame(lines)
