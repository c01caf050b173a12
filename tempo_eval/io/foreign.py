"""Results files of other evaluation tools, read as an external run beside ours.

Two files are recognised by content:

- a RAGAS result, `EvaluationResult.to_pandas()` written as CSV / JSON Lines / JSON / Parquet:
  the dataset's columns (user_input, response, retrieved_contexts, ...) plus one float column per
  metric. A column that maps to no canonical column, holds only numbers (or empty cells) and is
  named like a RAGAS metric (`RAGAS_METRICS`) is a metric, named `ragas:<column>`
  (`ragas:faithfulness`); another numeric column (`year`) stays a dataset column, with a warning;
- a DeepEval test run JSON (what `deepeval test run` / `evaluate()` save, e.g. under
  DEEPEVAL_RESULTS_FOLDER): `testCases[]` with input, actualOutput, expectedOutput,
  retrievalContext and `metricsData[]` holding name, score, threshold, success, reason (and
  error). Metrics are named `deepeval:<name>` (`deepeval:Faithfulness`).

`load_foreign_results` gives the dataset the file describes (the same `Dataset` `load_dataset`
reads from the same bytes, so evaluating the file with our metrics lands on the same stored
dataset) and one score per (row, metric); `import_foreign_results` stores them as a finished run
of that dataset, whose results appear wherever runs appear. A foreign score is kept as given
(NaN when the tool recorded none, reason code `foreign_error` when it recorded an error).

What is refused, with an InputError naming the file, row and column: a score outside its metric's
range (`metric_range`: [0, 1] but for RAGAS's 1-5 rubric scores; inf is outside), a metric given
twice (two columns that differ only in case or spaces, or one name twice in a test case's
metricsData), and a JSON object holding a key twice (JSON parsers keep the last one silently).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from tempo_eval.common.schema import CANONICAL_COLUMNS, FOREIGN_ERROR, MetricResult
from tempo_eval.io.errors import InputError
from tempo_eval.io.jsonfiles import deepeval_test_run
from tempo_eval.io.jsonlines import json_lines

#: the score columns RAGAS writes (its metrics' `name`; a "(mode=...)" suffix is allowed) and their
#: range, where it is not [0, 1]
RAGAS_METRICS: dict[str, tuple[float, float]] = {
    name: (0.0, 1.0) for name in (
        "faithfulness", "faithfulness_with_hhem", "answer_relevancy", "response_relevancy",
        "context_precision", "llm_context_precision_with_reference", "llm_context_precision_without_reference",
        "non_llm_context_precision_with_reference", "id_based_context_precision", "context_recall",
        "llm_context_recall", "non_llm_context_recall", "id_based_context_recall", "context_entity_recall",
        "context_utilization", "context_relevance", "answer_correctness", "answer_similarity",
        "semantic_similarity", "factual_correctness", "noise_sensitivity", "noise_sensitivity_relevant",
        "noise_sensitivity_irrelevant", "response_groundedness", "answer_accuracy", "nv_accuracy",
        "nv_context_relevance", "nv_response_groundedness", "summary_score", "bleu_score", "rouge_score",
        "chrf_score", "exact_match", "string_present", "non_llm_string_similarity", "topic_adherence",
        "tool_call_accuracy", "tool_call_f1", "agent_goal_accuracy", "sql_semantic_equivalence",
        "datacompy_score", "faithful_rate", "relevance_rate", "harmfulness", "maliciousness", "coherence",
        "correctness", "conciseness",
    )
} | {"domain_specific_rubrics": (1.0, 5.0), "rubrics_score": (1.0, 5.0), "instance_rubrics": (1.0, 5.0)}


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
    document = _checked_json(gunzip_if_needed(raw), raw.name)
    test_run = deepeval_test_run(document)
    if test_run is not None:
        scores = _deepeval_scores(test_run, raw.name)  # checks the test cases before the rows
        dataset = load_dataset(raw.data, name=raw.name, format="json")
        return ForeignResults("deepeval", dataset, scores)
    dataset = load_dataset(raw.data, name=raw.name)
    scores = _ragas_scores(dataset, raw.name)
    return ForeignResults("ragas", dataset, scores)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _checked_json(data: bytes, source: str) -> Any:
    """The JSON object `data` holds (None when it holds something else); InputError when a JSON
    document, or a line of JSON Lines, has an object with a key twice. Text that is not JSON is
    left to the loader, which says what is wrong with it."""
    if data.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
        return document if type(document) is dict else None
    except _DuplicateKey as duplicate:
        raise InputError(f"the key {duplicate.args[0]!r} appears twice in one JSON object; expected each key "
                         "once (a JSON reader would keep only the last value)", source=source) from None
    except (ValueError, RecursionError):
        pass  # JSON Lines, or broken JSON: line by line below
    for number, line in json_lines(text):
        try:
            json.loads(line, object_pairs_hook=_unique_keys)
        except _DuplicateKey as duplicate:
            raise InputError(f"the key {duplicate.args[0]!r} appears twice in this JSON object; expected each "
                             "key once (a JSON reader would keep only the last value)", source=source,
                             line=number) from None
        except (ValueError, RecursionError):
            continue
    return None


def metric_range(tool: str, name: str) -> tuple[float, float] | None:
    """The range of the foreign metric `name` of `tool`; None when it is not a metric name we know
    (RAGAS: `RAGAS_METRICS`; a DeepEval metric always names itself, in [0, 1])."""
    if tool == "deepeval":
        return (0.0, 1.0)
    return RAGAS_METRICS.get(name.strip().lower().split("(mode=")[0].strip())


def _bounded(number: float | None, bounds: tuple[float, float], source: str, **place: Any) -> float | None:
    """`number` when it is NaN, missing or in `bounds`; else InputError at `place`."""
    if number is None or math.isnan(number) or bounds[0] <= number <= bounds[1]:
        return number
    raise InputError(f"the score is {number!r}; expected a number in [{bounds[0]:g}, {bounds[1]:g}] or empty",
                     source=source, **place)


def _number(value: Any) -> float | None:
    """The value as a float when it is a number or numeric text; None when it is not."""
    if hasattr(value, "item") and not isinstance(value, (str, bool, int, float)):  # numpy scalars
        return _number(value.item())
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _ragas_scores(dataset: Any, source: str) -> list[ForeignScore]:
    from tempo_eval.io.cells import is_missing

    frame = dataset.frame
    metrics: dict[str, tuple[float, float]] = {}
    by_key: dict[str, str] = {}
    for column in frame.columns:
        if column in CANONICAL_COLUMNS:
            continue
        values = [v for v in frame[column].tolist() if not is_missing(v)]
        if not values or not all(_number(v) is not None for v in values):
            continue
        bounds = metric_range("ragas", str(column))
        if bounds is None:
            dataset.warnings.append(f"{source}: column {column!r} holds numbers but is not a RAGAS metric "
                                    "name; kept as a dataset column, not imported as a score")
            continue
        key = " ".join(str(column).lower().split())
        if key in by_key:
            raise InputError(f"the metric column {column!r} is given twice (also as {by_key[key]!r}); "
                             "expected one column per metric", source=source, column=str(column))
        by_key[key] = str(column)
        metrics[column] = bounds
    if not metrics:
        found = ", ".join(map(str, frame.columns))
        raise InputError(
            "found no score column; expected a RAGAS result (EvaluationResult.to_pandas(): the dataset "
            "columns plus one numeric column per metric, such as faithfulness) or a DeepEval test run "
            f'JSON ({{"testCases": [...]}}); columns found: {found}',
            source=source,
        )
    scores = []
    for column, bounds in metrics.items():
        for row, value in enumerate(frame[column].tolist()):
            number = None if is_missing(value) else _number(value)
            number = _bounded(number, bounds, source, row=row + 1, column=str(column))
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
        place = {"source": source, "row": row + 1, "row_label": "test case",
                 "column": "metricsData"}
        if not isinstance(metrics, list):
            raise InputError('metricsData is not a list; expected [{"name": ..., "score": ...}]',
                             **place)
        names: set[str] = set()
        for item in metrics:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise InputError('a metricsData entry has no name; '
                                 'expected {"name": ..., "score": ...}',
                                 **place)
            if item["name"].strip().lower() in names:
                raise InputError(f"the metric {item['name']!r} is given twice; expected one entry per metric",
                                 **place)
            names.add(item["name"].strip().lower())
            error = item.get("error")
            number = _number(item.get("score"))
            if not error:  # a score beside an error is not kept
                _bounded(number, (0.0, 1.0), source, row=row + 1, row_label="test case",
                         column=f"metricsData {item['name']!r} score")
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


def import_foreign_results(foreign: ForeignResults, store: Any, *, run_name: str | None = None,
                           user: str | None = None) -> int:
    """Store the dataset and its foreign scores as a finished run; returns the run id. Importing
    the same file again updates the same run (renamed when `run_name` is given). `user` is
    recorded as who made the run and the dataset when they are new."""
    dataset = foreign.dataset
    dataset_id = store.save_dataset(dataset, user=user)
    # shaped like the runner's configuration (metrics as {name, class, settings})
    config = {
        "external": foreign.tool, "source": dataset.name, "content_hash": dataset.content_hash,
        "metrics": [{"name": m, "class": f"external:{foreign.tool}", "settings": {}} for m in foreign.metrics],
    }
    run_id, _ = store.create_or_resume_run(dataset_id, config, default_name=run_name or f"{foreign.tool}: {dataset.name}",
                                           user=user)
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
