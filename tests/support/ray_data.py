"""Generated datasets for the Ray engine tests, and a test-double metric that fails on some rows.

The rows cover every outcome of the focus-time metrics: grounded and ungrounded years, answers
without a year (no_temporal_claims), rows without an answer (missing_input), graded relevance
for temporal_ndcg, and rows whose answer makes `FailsOnSomeRows` raise (row_error).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from tempo_eval.metrics.base import Metric, MetricResult

PLACES = ["bridge", "library", "harbour", "museum", "station", "cathedral", "stadium", "tower"]
PERIODS = ["World War II", "the Great Depression", "the Cold War", "World War I"]


def generated_rows(n_rows: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n_rows):
        place = PLACES[i % len(PLACES)]
        built = 1850 + (i * 7) % 170
        renovated = built + 10 + i % 30
        told = renovated if i % 3 else renovated + 1
        if i % 97 == 5:
            answer = None  # missing_input
        elif i % 53 == 7:
            answer = f"The {place} is admired by many visitors."  # no year: no_temporal_claims
        elif i % 211 == 11:
            answer = f"The {place} was built in {built}; explode"  # FailsOnSomeRows raises
        else:
            answer = f"The {place} was built in {built} and renovated in {renovated}."
        rows.append({
            "query_id": f"q{i + 1}",
            "query": f"When was the {place} built before {built + 5}?",
            "answer": answer,
            "contexts": [
                f"Work on the {place} started in {built - 2} and ended in {built}.",
                f"It was restored in {told}, long after {PERIODS[i % len(PERIODS)]}.",
            ],
            "retrieved_ids": [f"d{(i + k) % 50}" for k in range(5)],
            "gold_ids": {f"d{(i + 1) % 50}": 2, f"d{(i + 7) % 50}": 1},
            "reference_date": "2024-06-30" if i % 2 else None,
        })
    return rows


def write_jsonl(rows: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class FailsOnSomeRows(Metric):
    """Scores 1.0, except that it raises on an answer containing "explode" (a metric bug on one row)."""

    name = "fails_on_some_rows"
    input_names = ("answer",)

    async def _ameasure(self, *, answer: str) -> MetricResult:
        if "explode" in answer:
            raise RuntimeError(f"cannot handle {answer[-7:]!r}")
        return MetricResult(self.name, 1.0, "fine")


class FailsWhileFlagged(Metric):
    """Scores 1.0, except that it raises on an answer containing "explode" while the file `flag`
    exists: a failure that a later attempt (a resume) gets past, as a judge's timeout would."""

    name = "fails_while_flagged"
    input_names = ("answer",)

    def __init__(self, flag: str) -> None:
        self.flag = flag

    async def _ameasure(self, *, answer: str) -> MetricResult:
        if "explode" in answer and Path(self.flag).exists():
            raise RuntimeError("flagged")
        return MetricResult(self.name, 1.0, "fine")


def write_dataset(out: str | os.PathLike[str], frame: Any) -> None:
    """OUT/dataset.json.gz written whole, as the store encodes the rows (`frame_rows_json`), unless
    it is there: what `output.DatasetWriter` writes a batch at a time."""
    from tempo_eval.engine.distributed.output import DATASET
    from tempo_eval.store.datasets import frame_rows_json

    path = Path(out) / DATASET
    if not path.exists():
        path.write_bytes(gzip.compress(frame_rows_json(frame).encode("utf-8"), compresslevel=3))
