"""The runner's rows scored one at a time on its event loop (online metrics: a judge, a model):
the workers run as tasks that stop together, and a row stops at the run's deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tempo_eval.common.schema import MetricResult
from tempo_eval.engine.scoring import measure_row
from tempo_eval.metrics.base import Metric


async def run_workers(coroutines: Sequence[Any]) -> None:
    """Run the workers; when one raises (or this is cancelled), cancel the others and wait until
    they have stopped before re-raising the first error, so none writes a row afterwards.

    Unlike `asyncio.TaskGroup` the error is re-raised as itself, not wrapped in an ExceptionGroup.
    """
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def measure_row_until(todo: Sequence[Metric], row: Mapping[str, Any], index: int,
                            stop_at: float | None) -> list[MetricResult] | None:
    """`measure_row`, or None when the deadline `stop_at` (monotonic) passes first (before the
    row starts, or while it runs: the row is then cancelled)."""
    if stop_at is None:
        return await measure_row(todo, row, index)
    left = stop_at - time.monotonic()
    if left <= 0:
        return None
    try:
        return await asyncio.wait_for(measure_row(todo, row, index), left)
    except TimeoutError:
        return None
