"""Score one dataset row with the chosen metrics: what the local runner and the Ray engine share.

Both engines (`tempo_eval.engine.runner` and `tempo_eval.engine.distributed.engine`) check their
metrics and columns (`check_metrics`, `check_columns`), identify a run by its configuration
(`run_config`), build each row and score it here (`measure_row`, `measure_batch`), so they score
alike; neither imports the other for it. A missing cell becomes NaN "missing_input", any
exception NaN "row_error": one failing row never sinks a run.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

import pandas as pd

from tempo_eval.common import __version__
from tempo_eval.common.schema import (
    MISSING_INPUT,
    ROW_ERROR,
    MetricResult,
    canonical_columns,
    not_measurable,
)
from tempo_eval.common.secrets import is_secret_name
from tempo_eval.common.values import is_na
from tempo_eval.metrics.base import Metric, MissingInput
from tempo_eval.store.datasets import frame_content_hash

logger = logging.getLogger("tempo_eval.engine.runner")  # the runner's log, as before the move


# ---- configuration: what identifies a run ---------------------------------------------------

def metric_config(metric: Metric) -> dict[str, Any]:
    """The stored identity of a metric: its name, class and public settings as plain JSON.

    Secret-named settings are dropped; objects (a verifier, an LLM provider) are reduced to their
    class and their `name`, `model_id` and `settings` strings (what decides their verdicts), so
    neither a key they hold nor their operational settings (timeouts, concurrency) reach the store.
    """
    cls = type(metric)
    settings = {
        key: _setting(value)
        for key, value in sorted(vars(metric).items())
        if not key.startswith("_") and not is_secret_name(key)
    }
    return {"name": metric.name, "class": f"{cls.__module__}.{cls.__qualname__}", "settings": settings}


def _setting(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Enum):
        return _setting(value.value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _setting(v) for k, v in value.items() if not is_secret_name(str(k))}
    if isinstance(value, (set, frozenset)):
        return sorted((_setting(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_setting(v) for v in value]
    identity: dict[str, Any] = {"class": f"{type(value).__module__}.{type(value).__qualname__}"}
    for attribute in ("name", "model_id", "settings"):
        attr = getattr(value, attribute, None)
        if isinstance(attr, str):
            identity[attribute] = attr
    return identity


def default_run_name(dataset_name: str, metrics: Sequence[Metric], when: datetime | None = None) -> str:
    """What ran, as a run's name when none is given: "temporal_qa · claims TF · lexical · 24 Nov 14:05"
    (the dataset's name without its extension, each metric with its mode, the verifier, the time)."""
    stem = PurePath(str(dataset_name)).stem if "." in str(dataset_name) else str(dataset_name)
    stem = stem if len(stem) <= 40 else stem[:39] + "…"
    from tempo_eval.common.run_names import describe_metrics

    when = when or datetime.now()
    parts = [stem, describe_metrics([metric_config(m) for m in metrics]), f"{when.day} {when:%b %H:%M}"]
    return " · ".join(p for p in parts if p)


def run_config(metrics: Sequence[Metric], *, reference_date: Any = None) -> dict[str, Any]:
    """The configuration a run is identified by (see the module docstring)."""
    return {
        "metrics": [metric_config(m) for m in metrics],
        "reference_date": _setting(reference_date),
        "tempo_eval_version": __version__,
    }


def aggregate_frame(frame: pd.DataFrame, *, metrics: Sequence[str] | None = None,
                    confidence: float = 0.95, n_resamples: int = 2000,
                    seed: int = 42) -> pd.DataFrame:
    """`RunResult.aggregate` for any results frame (columns metric, score, reason_code): each
    metric's `tempo_eval.compare.leaderboard.score_summary`."""
    from tempo_eval.compare.leaderboard import score_summary

    names = list(metrics) if metrics is not None else list(dict.fromkeys(frame["metric"]))
    all_scores = frame["score"].to_numpy(dtype=float)
    codes = frame["reason_code"].to_numpy(dtype=object)
    records = []
    for name in names:  # the metric's scores alone (not a copy of its part of the frame)
        rows = (frame["metric"] == name).to_numpy()
        summary = score_summary(all_scores[rows], codes[rows], confidence=confidence,
                                n_resamples=n_resamples, seed=seed)
        records.append({"metric": name, **summary})
    columns = ["metric", "mean", "ci_low", "ci_high", "n_measurable", "n_total", "n_nan", "nan_reasons"]
    return pd.DataFrame(records, columns=columns).set_index("metric")


# ---- scoring one row ------------------------------------------------------------------------

#: the metrics `metric_needs` checks by default (their modules: `tempo_eval.metrics.catalog`)
BUILT_IN_METRICS = ("temporal_faithfulness", "temporal_ndcg", "factual_correctness", "turn_faithfulness")


def missing_columns(metric: Metric, columns: Sequence[str]) -> list[str]:
    """The columns `metric` needs (`required_columns`) that a dataset with `columns` lacks; [] when
    the metric applies to it."""
    present = set(columns)
    return [c for c in metric.required_columns(list(columns)) if c not in present]


def metric_needs(columns: Sequence[str], metrics: Sequence[Metric] | None = None) -> dict[str, list[str]]:
    """Which metrics apply to a dataset with these columns: {metric name: the columns it lacks},
    an empty list where it applies. `metrics` defaults to the built-in metrics with their default
    settings (`BUILT_IN_METRICS`): Turn Faithfulness applies to conversations (a `turns` column),
    Temporal Faithfulness to answers with contexts, and so on. The dashboard's Evaluate page
    offers the metrics this says apply, and `check_columns` names them when it refuses one."""
    if metrics is None:
        from tempo_eval.metrics.catalog import metric_class

        metrics = [metric_class(name)() for name in BUILT_IN_METRICS]
    return {metric.name: missing_columns(metric, columns) for metric in metrics}


def _applicable_note(columns: Sequence[str]) -> str:
    applicable = [name for name, lacking in metric_needs(columns).items() if not lacking]
    return f"; the metrics that apply to these columns: {', '.join(applicable)}" if applicable else ""


def check_columns(metrics: Sequence[Metric], columns: Sequence[str]) -> None:
    """Raise ValueError unless every metric's `required_columns` are among `columns`.

    The message names the metric, the missing columns and the columns found. A metric that reads
    conversations (`turns`) on a dataset without them is told where conversations come from.
    """
    canonical = canonical_columns()
    from tempo_eval.io.errors import list_columns

    found = list_columns(list(columns))  # a wide file has thousands: name the first few
    for metric in metrics:
        required = metric.required_columns(columns)
        not_columns = [c for c in required if c not in canonical]
        if not_columns:
            if "turns" in not_columns:
                raise ValueError(
                    f"{metric.name} runs on conversations (a list of turns), not on dataset rows: "
                    "use the dashboard's Conversation page or "
                    f"{type(metric).__name__}().measure(turns=...)"
                )
            raise ValueError(
                f"{metric.name} needs {', '.join(not_columns)}, which no dataset column holds "
                f"(dataset columns are {', '.join(sorted(canonical))})"
            )
        missing = missing_columns(metric, columns)
        if "turns" in missing:
            raise ValueError(
                f"{metric.name} runs on conversations (a turns column: a list of user and assistant "
                f"turns per row), but the dataset has only {found}; load a conversation file "
                "(tempo_eval.io.load_conversations) or paste one on the dashboard's Conversation page"
                f"{_applicable_note(columns)}"
            )
        if missing:
            raise ValueError(
                f"{metric.name} needs the column(s) {', '.join(missing)} (it reads "
                f"{', '.join(required)}), but the dataset has only {found}; map a source column "
                f"to each, or choose another metric{_applicable_note(columns)}"
            )


async def measure_row(metrics: Sequence[Metric], row: Mapping[str, Any], index: int) -> list[MetricResult]:
    """Every metric's result for one dataset row (row number `index`, 0-based), failures isolated
    as in `measure`. Shared by the local runner and the Ray engine, so both score alike."""
    if len(metrics) == 1:  # the common case; gather would add a task per row
        return [await measure(metrics[0], row, index)]
    return list(await asyncio.gather(*(measure(m, row, index) for m in metrics)))


async def measure_batch(
    items: Sequence[tuple[int, Mapping[str, Any], Sequence[Metric]]],
) -> list[list[MetricResult]]:
    """The results of many rows, (index, row, metrics) each, scored one after the other in one
    focus-time memo (`tempo_eval.core.focus_memo`): each distinct text of the batch is extracted
    once. For offline metrics (`Metric.batchable`); failures isolated as in `measure`, and each
    row's results are those `measure_row` gives for it alone, their details packed
    (`tempo_eval.common.packed_details`: read like the dict, stored without being expanded)."""
    from tempo_eval.common.packed_details import packing_details
    from tempo_eval.core.focus_memo import extraction_memo

    out = []
    # each metric's `row_reader` for the rows' columns (the same for every row of a batch), made once
    readers: dict[tuple[int, tuple[str, ...]], Callable[[Mapping[str, Any]], dict[str, Any]]] = {}
    with extraction_memo(), packing_details():
        for index, row, metrics in items:
            columns = tuple(row)
            results = []  # a loop, not a comprehension: an awaiting comprehension is a coroutine a row
            for metric in metrics:
                read = readers.get((id(metric), columns))
                if read is None:
                    read = readers[id(metric), columns] = _row_reader(metric, columns)
                results.append(await measure(metric, row, index, read))
            out.append(results)
    return out


def _row_reader(metric: Metric, columns: tuple[str, ...]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """`metric.row_reader(columns)`; its `inputs_from_row` when that fails (each row's failure
    then isolated by `measure`, as row by row)."""
    try:
        return metric.row_reader(columns)
    except Exception:
        return metric.inputs_from_row


async def measure(
    metric: Metric, row: Mapping[str, Any], index: int,
    read: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
) -> MetricResult:
    """One (row, metric); a missing cell becomes NaN "missing_input", any exception NaN
    "row_error". `read` reads the metric's inputs from the row (`Metric.row_reader`; default
    `metric.inputs_from_row`)."""
    try:
        result = await metric.ameasure(**(metric.inputs_from_row if read is None else read)(row))
        if not isinstance(result, MetricResult):
            raise TypeError(f"{type(metric).__name__} returned {type(result).__name__}, not MetricResult")
        return result
    except MissingInput as missing:  # the row is incomplete: not measurable, nothing to retry
        return not_measurable(metric.name, MISSING_INPUT, str(missing), column=missing.column)
    except Exception as exc:  # isolate the row: the run goes on
        message = f"{type(exc).__name__}: {exc}"
        kind = "query" if "query_id" in row else "conversation"  # a conversation dataset's rows
        logger.warning("row %d (%s %s), metric %s failed: %s", index, kind,
                       row.get("query_id", row.get("conversation_id")), metric.name, message)
        return not_measurable(metric.name, ROW_ERROR, f"Evaluating this row failed: {message}")


def check_metrics(metrics: Sequence[Metric]) -> list[Metric]:
    if isinstance(metrics, Metric):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        raise ValueError("metrics must name at least one metric")
    for metric in metrics:
        if not isinstance(metric, Metric):
            raise TypeError(f"metrics must be Metric instances, got {type(metric).__name__}")
    names = [m.name for m in metrics]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(
            f"metric {duplicates[0]!r} appears twice; results are stored per metric name, "
            "so evaluate different settings of one metric in separate runs"
        )
    return metrics


def row_dict(columns: Sequence[str], values: Sequence[Any], reference_date: Any) -> dict[str, Any]:
    row = dict(zip(columns, values, strict=True))
    if reference_date is not None and is_na(row.get("reference_date")):
        row["reference_date"] = reference_date
    return row


def system(row: Mapping[str, Any]) -> str | None:
    value = row.get("run")
    return None if is_na(value) else str(value)


def as_dataset(dataset: Any) -> Any:
    from tempo_eval.io.dataset import Dataset

    if isinstance(dataset, pd.DataFrame):
        # A frame built in memory: canonical columns expected; ids generated as the loaders do.
        frame = dataset
        if "query_id" not in frame.columns and "conversation_id" not in frame.columns:
            frame = frame.assign(query_id=[f"q{i + 1}" for i in range(len(frame))])
        return Dataset(frame=frame, name="dataframe", mapping={}, content_hash=frame_content_hash(frame),
                       source_format="dataframe")
    if not isinstance(getattr(dataset, "frame", None), pd.DataFrame):
        raise TypeError(
            f"dataset must be a tempo_eval.io Dataset or a pandas DataFrame, got {type(dataset).__name__}"
        )
    return dataset
