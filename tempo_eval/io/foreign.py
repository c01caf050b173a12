"""Results files of other evaluation tools, read as an external run beside ours.

Two files are recognised by content:

- a RAGAS result, `EvaluationResult.to_pandas()` written as CSV / JSON Lines / JSON / Parquet:
  the dataset's columns (user_input, response, retrieved_contexts, ...) plus one float column per
  metric. Every column that maps to no canonical column and holds only numbers (or empty cells)
  is a metric, named `ragas:<column>` (`ragas:faithfulness`);
- a DeepEval test run JSON (what `deepeval test run` / `evaluate()` save, e.g. under
  DEEPEVAL_RESULTS_FOLDER): `testCases[]` with input, actualOutput, expectedOutput,
  retrievalContext and `metricsData[]` holding name, score, threshold, success, reason (and
  error). Metrics are named `deepeval:<name>` (`deepeval:Faithfulness`).

`load_foreign_results` gives the dataset the file describes (the same `Dataset` `load_dataset`
reads from the same bytes, so evaluating the file with our metrics lands on the same stored
dataset) and one score per (row, metric); `import_foreign_results` stores them as a finished run
of that dataset, whose results appear wherever runs appear. A foreign score is kept as given
(NaN when the tool recorded none, reason code `foreign_error` when it recorded an error).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from tempo_eval.io.errors import InputError
from tempo_eval.io.jsonfiles import (  # noqa: F401 - the DeepEval test-run detection, re-exported
    deepeval_case_records,
    deepeval_test_run,
    is_deepeval_test_run,
)
from tempo_eval.schema import CANONICAL_COLUMNS, FOREIGN_ERROR, MetricResult

TOOLS = ("ragas", "deepeval")


@dataclass
class ForeignScore:
    """One foreign score of one dataset row."""

    row: int
    metric: str
    score: float
    reason: str = ""
    success: bool | None = None
    threshold: float | None = None
    error: str | None = None


@dataclass
class ForeignResults:
    """The dataset a results file describes and the tool's scores for its rows."""

    tool: str
    dataset: Any  # tempo_eval.io.dataset.Dataset
    scores: list[ForeignScore] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(score.metric for score in self.scores))


def load_foreign_results(source: Any, *, name: str | None = None) -> ForeignResults:
    """A RAGAS result file or a DeepEval test run JSON (see the module doc). Raises InputError
    when the file is neither, naming what was found."""
    from tempo_eval.io._source import gunzip_if_needed, read_input
    from tempo_eval.io.dataset import load_dataset

    raw = read_input(source, name=name, default_name="results")
    data = gunzip_if_needed(raw)
    document = _json_document(data)
    test_run = deepeval_test_run(document)
    if test_run is not None:
        scores = _deepeval_scores(test_run, raw.name)  # checks the test cases before the rows
        dataset = load_dataset(raw.data, name=raw.name, format="json")
        return ForeignResults("deepeval", dataset, scores)
    dataset = load_dataset(raw.data, name=raw.name)
    scores = _ragas_scores(dataset, raw.name)
    return ForeignResults("ragas", dataset, scores)


def _json_document(data: bytes) -> Any:
    head = data.lstrip()[:1]
    if head != b"{":
        return None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None


def _number(value: Any) -> float | None:
    """The value as a float when it is a number or numeric text; None when it is not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        return _number(value.item())
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _ragas_scores(dataset: Any, source: str) -> list[ForeignScore]:
    from tempo_eval.io.cells import is_missing

    frame = dataset.frame
    metrics = []
    for column in frame.columns:
        if column in CANONICAL_COLUMNS:
            continue
        values = [v for v in frame[column].tolist() if not is_missing(v)]
        if values and all(_number(v) is not None for v in values):
            metrics.append(column)
    if not metrics:
        found = ", ".join(map(str, frame.columns))
        raise InputError(
            "found no score column; expected a RAGAS result (EvaluationResult.to_pandas(): the dataset "
            "columns plus one numeric column per metric, such as faithfulness) or a DeepEval test run "
            f'JSON ({{"testCases": [...]}}); columns found: {found}',
            source=source,
        )
    scores = []
    for column in metrics:
        for row, value in enumerate(frame[column].tolist()):
            number = None if is_missing(value) else _number(value)
            scores.append(ForeignScore(
                row=row, metric=f"ragas:{column}", score=math.nan if number is None else number,
                reason="" if number is not None else "RAGAS recorded no score for this row",
            ))
    return scores


def _deepeval_scores(document: dict[str, Any], source: str) -> list[ForeignScore]:
    scores = []
    cases = [case for case in document["testCases"] if isinstance(case, dict)]
    if not cases:
        conversational = len(document.get("conversationalTestCases") or [])
        extra = (
            f"; its {conversational} conversational test case(s) are not imported: evaluate the "
            "conversations with turn_faithfulness instead" if conversational else ""
        )
        raise InputError(f"the test run has no single-turn test cases (testCases is empty){extra}", source=source)
    for row, case in enumerate(cases):
        metrics = case.get("metricsData") or []
        if not isinstance(metrics, list):
            raise InputError(
                "metricsData is not a list; expected [{\"name\": ..., \"score\": ...}]",
                source=source, row=row + 1, row_label="test case", column="metricsData",
            )
        for item in metrics:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise InputError(
                    "a metricsData entry has no name; expected {\"name\": ..., \"score\": ...}",
                    source=source, row=row + 1, row_label="test case", column="metricsData",
                )
            number = _number(item.get("score"))
            error = item.get("error")
            threshold = _number(item.get("threshold"))
            success = item.get("success")
            scores.append(ForeignScore(
                row=row, metric=f"deepeval:{item['name']}",
                score=math.nan if number is None or error else number,
                reason=str(error or item.get("reason") or ""),
                success=success if isinstance(success, bool) else None,
                threshold=threshold, error=str(error) if error else None,
            ))
    if not scores:
        raise InputError("the test run's test cases have no metricsData; expected scores to import", source=source)
    return scores


def import_foreign_results(foreign: ForeignResults, store: Any, *, run_name: str | None = None) -> int:
    """Store the dataset and its foreign scores as a finished run; returns the run id. Importing
    the same file again updates the same run (renamed when `run_name` is given)."""
    dataset = foreign.dataset
    dataset_id = store.save_dataset(dataset)
    # shaped like the runner's configuration (metrics as {name, class, settings})
    config = {
        "external": foreign.tool, "source": dataset.name, "content_hash": dataset.content_hash,
        "metrics": [{"name": m, "class": f"external:{foreign.tool}", "settings": {}} for m in foreign.metrics],
    }
    run_id, _ = store.create_or_resume_run(
        dataset_id, config, name=run_name or f"{foreign.tool}: {dataset.name}"
    )
    if run_name is not None:  # the run found again gets the name asked for, as `evaluate` does
        store.rename_run(run_id, run_name)
    frame = dataset.frame
    by_row: dict[int, list[Any]] = {}
    for score in foreign.scores:
        details: dict[str, Any] = {"external": foreign.tool}
        if score.threshold is not None:
            details["threshold"] = score.threshold
        reason_code = FOREIGN_ERROR if score.error else (None if not math.isnan(score.score) else "no_foreign_score")
        by_row.setdefault(score.row, []).append(MetricResult(
            metric=score.metric, score=score.score, reason=score.reason, reason_code=reason_code,
            details=details, success=score.success,
        ))
    systems = frame["run"].tolist() if "run" in frame.columns else None
    for row, results in sorted(by_row.items()):
        system = systems[row] if systems is not None else None
        store.record_row(run_id, row, str(frame["query_id"].iloc[row]), results, system=system)
    store.set_status(run_id, "finished")
    return run_id
