"""The shapes every layer shares: dataset columns, the result of a metric and its reason codes.

This module sits at the bottom of the engine and imports nothing from it, so the readers (io),
the metrics, the store and both engines can all speak of the same columns and results without
importing each other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

NAN = float("nan")

# ---- dataset columns ------------------------------------------------------------------------

#: the canonical dataset columns (see `tempo_eval.io.dataset` for what each holds)
CANONICAL_COLUMNS: tuple[str, ...] = (
    "query_id", "query", "contexts", "answer", "reference", "retrieved_ids", "gold_ids", "run",
    "reference_date", "context_dates", "outdated_references",
)

#: dataset columns a metric may read but never needs: a row without them is still measurable
OPTIONAL_COLUMNS = frozenset({"query_id", "run", "reference_date"})

#: the columns of a conversation dataset (one row per conversation): its id and its turns, a list
#: of {"role", "content", "retrieval_context"} records (Turn Faithfulness reads `turns`)
CONVERSATION_COLUMNS = ("conversation_id", "turns")

_CANONICAL = frozenset(CANONICAL_COLUMNS) | frozenset(CONVERSATION_COLUMNS)


def canonical_columns() -> frozenset[str]:
    """The canonical dataset column names (`CANONICAL_COLUMNS`) and the conversation columns
    (`CONVERSATION_COLUMNS`)."""
    return _CANONICAL


#: the names pandas and pyarrow give a saved row index: "Unnamed: 0" (CSV written with its index,
#: read back by pandas or by our reader, which names a header cell with no name that way), an empty
#: name, "index" columns pyarrow writes as "__index_level_0__"
_INDEX_COLUMN = re.compile(r"(Unnamed: \d+(_level_\d+)?|__index_level_\d+__|)")


def is_index_column(name: Any) -> bool:
    """True for a column that holds a saved row index, not data: "Unnamed: 0", "" and
    "__index_level_0__". Readers drop it, so it never becomes a dataset column or a metric."""
    return isinstance(name, str) and _INDEX_COLUMN.fullmatch(name.strip()) is not None


def index_columns(names: Iterable[Any]) -> list[Any]:
    """The names among `names` that `is_index_column` calls a saved row index, in order: a whole
    header checked in one call (a reader asks once a batch, not once a column)."""
    return [name for name in names if is_index_column(name)]


# ---- comparing runs -------------------------------------------------------------------------

#: the significance test the command line (`compare`) and the dashboard's Compare page use unless
#: told otherwise: the paired t-test (as in ranx), exact and instant; Fisher's randomisation test
#: (10,000 sign flips per run pair) takes about 0.4 s per pair at 1,000 queries
DEFAULT_SIGNIFICANCE_TEST = "student"


# ---- reason codes of a NaN score ------------------------------------------------------------

#: a row that lacks a value the metric needs (see `tempo_eval.metrics.base.MissingInput`)
MISSING_INPUT = "missing_input"
#: a row whose scoring raised an unexpected error
ROW_ERROR = "row_error"
#: rows cut off by the runner's `deadline`: a failure, so resuming computes them again
DEADLINE_ERROR = "judge_error"
#: a foreign score (RAGAS, DeepEval) the tool itself could not compute
FOREIGN_ERROR = "foreign_error"


def is_retryable(reason_code: str | None) -> bool:
    """True for the reason codes of a failure rather than of a not-measurable input: "error" and
    every code ending in "_error" (row_error, judge_error, verifier_error). A later attempt may
    succeed, so a resumed run computes these again; no_temporal_claims, empty_query_time,
    missing_input and the like are answers, and stay."""
    return reason_code is not None and (reason_code == "error" or reason_code.endswith("_error"))


# ---- the result of a metric -----------------------------------------------------------------

@dataclass
class MetricResult:
    """A score with its explanation.

    `score` is a float in [0, 1] or NaN. When NaN, `reason_code` is a machine-readable cause such
    as "no_temporal_claims" or "judge_error"; `reason` is always a sentence a person can read.
    `details` holds the evidence the score was computed from (per-year grounding, per-rank gains,
    per-claim verdicts under "claims", per-window scores) and is what the dashboard draws.
    """

    metric: str
    score: float
    reason: str = ""
    reason_code: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    success: bool | None = None

    @property
    def is_nan(self) -> bool:
        return math.isnan(self.score)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "score": self.score, "reason": self.reason,
                "reason_code": self.reason_code, "success": self.success, "details": self.details}


def not_measurable(metric: str, reason_code: str, reason: str, **details: Any) -> MetricResult:
    """A NaN result; every NaN carries a machine-readable reason and a readable sentence."""
    return MetricResult(metric, NAN, reason, reason_code, dict(details))


# ---- stored results ----------------------------------------------------------------------------

#: the columns of a run's results as every floor reads them (store, export, engines)
RESULT_COLUMNS = ["row", "query_id", "run", "metric", "score", "reason_code", "reason"]


def frame_of_result_rows(rows: list[tuple]) -> Any:
    """The results frame of SELECT row_idx, query_id, system, metric, score, reason_code, reason."""
    import numpy as np
    import pandas as pd

    # column by column: much faster than a list of row tuples for 100,000s of results; a NULL
    # score (None) becomes NaN in the float column
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(RESULT_COLUMNS)
    dtypes = {"row": np.int64, "score": float}
    data = {name: np.asarray(values, dtype=dtypes.get(name, object))
            for name, values in zip(RESULT_COLUMNS, columns, strict=True)}
    return pd.DataFrame(data, columns=RESULT_COLUMNS)
