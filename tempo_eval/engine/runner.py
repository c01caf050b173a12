"""Evaluate a dataset with chosen metrics: bounded concurrency, progress, cancellation, resume.

    result = evaluate(dataset, [TemporalFaithfulness(), TemporalNDCG(k=10)], progress=bar.update)
    result.frame          # one row per (dataset row, metric): score, reason_code, reason
    result.aggregate()    # per metric: mean, bootstrap CI, how many rows were measurable

What the runner guarantees:

- Before any row: every metric's `required_columns` must be columns of the dataset, else
  ValueError naming the metric, the missing columns and the columns found (a metric that cannot
  be scored on any row fails the run at once, not once per row). Turn Faithfulness runs on
  conversation datasets (one row per conversation: `conversation_id` and `turns`, see
  `tempo_eval.io.load_conversations`); the conversation id is then the row's id. A bad
  `reference_date` raises ValueError.
- One failing row never sinks a run: an exception raised for a (row, metric) becomes a NaN result
  with reason_code "row_error" and the exception's message, the failure is logged and the run
  goes on. A row with no value in a column its metric needs is NaN "missing_input".
- Every row is committed to the run store as soon as all its metrics are done. The same dataset
  with the same configuration (metric classes and settings, verifier/judge identity, reference
  date as an ISO date) is the same run: evaluating it again, after a crash, a kill or a
  cancellation, skips every stored (row, metric) pair and computes only the rest. Stored failures
  (NaN whose reason code is "error" or ends in "_error": row_error, judge_error, verifier_error)
  are computed again and overwritten unless `retry_failed=False`; genuinely not-measurable
  results (no_temporal_claims, empty_query_time, missing_input, ...) are kept. Resuming a
  finished run without failures computes nothing.
- `cancel` (a `threading.Event`) is checked before each row starts; rows in flight finish and are
  stored, the run is marked "cancelled" and can be resumed later. Ctrl-C (KeyboardInterrupt, task
  cancellation) stops the run between rows: the workers yield to the event loop after every row,
  so an interrupt is seen even when each row's metric never waits on anything.
- One process at a time evaluates a run: two evaluations of the same dataset and configuration
  started together (two terminals, two processes) find one run, and the second waits for the
  first to finish (a warning says so), then reuses its rows: each row is computed once. A holder
  that was killed does not block: its lock is taken over. A call cancelled, or past its deadline,
  while it waits writes nothing to the run (its rows are the other process's to write): its
  result holds the rows stored so far and, past the deadline, NaN "judge_error" for the others.
- `deadline` (seconds for the whole call): once it has passed, rows in flight and rows not yet
  started are stored as NaN "judge_error" saying the deadline passed, so a later call (resume)
  computes them again; `RunResult.deadline_rows` counts them.
- An exception that escapes a row (the store failing, say) stops the run: the other rows in
  flight are cancelled and awaited before the run is marked "failed", so nothing is written to a
  failed run afterwards.
- `processes` > 1 scores offline batches in worker processes (`tempo_eval.engine.pool`), with
  the results of one process. Cancel, Ctrl-C and the deadline stop the workers at once (their
  batches in flight are not stored, or past the deadline stored as NaN "judge_error"); a worker
  that dies fails the run with `ScoringProcessError`, the rows stored before kept.
- `on_results`, when given, receives the run's results in row order, a batch of rows at a time
  (a frame with `RunResult.frame`'s columns), as soon as the batch and those before it are
  stored, resumed rows included: the command line writes --out while the rows are scored.
  `RunResult.results_streamed` says whether it received every row's results. One with a
  `take_encoded(rows)` method gets the batches scored by worker processes as the rows written
  (`tempo_eval.store.results.EncodedRows`) instead, without a frame made of them.
- Settings whose names look like secrets (api_key, token, ...) are never part of the stored
  configuration; objects among the settings (a verifier, a judge) are identified by their class,
  `name`, `model_id` and `settings` strings only.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from tempo_eval.common.process import gc_paused
from tempo_eval.common.run_sync import run_sync
from tempo_eval.common.schema import (  # noqa: F401 - MISSING_INPUT and ROW_ERROR re-exported
    DEADLINE_ERROR,
    MISSING_INPUT,
    ROW_ERROR,
    MetricResult,
    not_measurable,
)
from tempo_eval.common.values import is_na
from tempo_eval.core.focus_memo import extraction_memo
from tempo_eval.engine.pool import ScoringPool, heap_settled_per_batch, pool_for
from tempo_eval.engine.run_tasks import measure_row_until, run_workers
from tempo_eval.engine.scoring import (  # noqa: F401 - metric_config, check_columns re-exported
    aggregate_frame,
    as_dataset,
    check_columns,
    check_metrics,
    default_run_name,
    measure_batch,
    measure_row,
    metric_config,
    row_dict,
    run_config,
    system,
)
from tempo_eval.io.stream import DatasetStream, frame_stream, open_stream
from tempo_eval.metrics.base import Metric
from tempo_eval.store.db import WorkspaceError, check_free_space
from tempo_eval.store.results import RESULT_COLUMNS, EncodedRows, encoded_frame
from tempo_eval.store.runs import RunStore

if TYPE_CHECKING:
    from tempo_eval.engine.distributed.engine import RayRun

logger = logging.getLogger(__name__)

#: progress(done_rows, total_rows); called once at the start (resumed rows count as done) and
#: after every stored row
ProgressCallback = Callable[[int, int], None]


# ---- the result -----------------------------------------------------------------------------

@dataclass
class RunResult:
    """What `evaluate` returns; the scores themselves are read from the store on first access.

    `computed` counts the (row, metric) pairs computed by this call, `reused` those found in the
    store from earlier calls (resume).
    """

    run_id: int
    dataset_id: int
    status: str
    n_rows: int
    metrics: list[str]
    computed: int
    reused: int
    store: RunStore = field(repr=False)
    #: rows given NaN "judge_error" because `deadline` passed before they finished
    deadline_rows: int = 0
    #: results this call gives without storing them (the deadline passed while another process
    #: held the run: its rows are that process's to write), in `frame`'s columns
    unstored: pd.DataFrame | None = field(default=None, repr=False)
    #: whether `on_results` received the results of every row (they are then `frame`, in parts)
    results_streamed: bool = False
    #: whether an earlier run of the same dataset and settings (and name, when one was given) was
    #: continued rather than a new run made
    resumed: bool = False

    @cached_property
    def frame(self) -> pd.DataFrame:
        """One row per (dataset row, metric): row, query_id, run, metric, score, reason_code, reason."""
        stored = self.store.results_frame(self.run_id)
        if self.unstored is None or self.unstored.empty:
            return stored
        both = pd.concat([stored, self.unstored], ignore_index=True)
        return both.sort_values(["row", "metric"], kind="stable", ignore_index=True)

    @cached_property
    def claims(self) -> pd.DataFrame:
        """One row per verified claim, with verdict, evidence, probabilities and reason."""
        return self.store.claims_frame(self.run_id)

    def result(self, row: int, metric: str) -> MetricResult:
        """The full stored result (details and claims) of one dataset row and metric."""
        return self.store.get_result(self.run_id, row, metric)

    def aggregate(self, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 42) -> pd.DataFrame:
        """Per metric (the index): mean over measurable rows, percentile bootstrap CI of that mean,
        n_measurable, n_total, n_nan and nan_reasons ({reason_code: count}).

        A metric with no measurable row has mean and CI NaN; n_total counts stored results.
        """
        return aggregate_frame(self.frame, metrics=self.metrics, confidence=confidence,
                               n_resamples=n_resamples, seed=seed)


# ---- evaluation -----------------------------------------------------------------------------

def evaluate(
    dataset: Any,
    metrics: Sequence[Metric],
    *,
    store: RunStore | None = None,
    run_name: str | None = None,
    reference_date: Any = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    max_concurrency: int = 4,
    resume: bool = True,
    retry_failed: bool = True,
    deadline: float | None = None,
    processes: int = 1,
    on_results: Callable[[pd.DataFrame], None] | None = None,
    engine: str = "local",
    user: str | None = None,
    **engine_options: Any,
) -> RunResult | RayRun:
    """Evaluate every row of `dataset` with every metric, storing each row as it completes.

    `dataset` is a `tempo_eval.io` Dataset (or a DataFrame with canonical columns).
    `reference_date` (a date, or ISO text "YYYY-MM-DD"; a time part is dropped) fills rows
    without one and is part of the run's identity. With `resume` (default) an earlier run of the
    same dataset and configuration continues: the newest, or, given `run_name`, the newest of that
    name (a name no such run has makes a new run; a run is never renamed; an empty `run_name`
    raises ValueError before anything is stored); `resume=False` starts a new run. With `retry_failed` (default)
    resuming recomputes the stored results that failed (reason code "row_error", "judge_error",
    "verifier_error", ...). Up to `max_concurrency` rows are in flight at once on one event loop.
    Raises ValueError, before anything is stored, when a metric needs a column the dataset lacks.
    See the module docstring for failure isolation, cancellation and resume.

    `processes` > 1 scores the batches of a large dataset in that many worker processes while this
    one reads and stores, when every metric is offline (see `tempo_eval.engine.pool`); the
    results are those of one process. `on_results(frame)` gets the stored results in row order,
    a batch at a time, during the run (see the module docstring). `user` is recorded as who made
    the run and the dataset when they are new (None: unknown; `tempo_eval.common.identity`).

    `engine="ray"` runs on a Ray cluster instead and returns a `tempo_eval.engine.distributed.engine.
    RayRun`: `dataset` may then also be a path or URI read by Ray Data, `out=DIR` (required) gets
    the per-row results as Parquet, each block also written into `store` (default: the workspace)
    as it finishes, and `address`, `num_workers`, `gpus_per_worker`, `block_size`, `mapping`,
    `format` are passed on (see `evaluate_ray`). `cancel`, `resume` and `deadline` are for the
    local engine: given with `engine="ray"` they raise TypeError.
    """
    if engine == "ray":
        from tempo_eval.engine.distributed.engine import evaluate_ray

        local_only = {"cancel": cancel is not None, "resume": resume is not True, "deadline": deadline is not None,
                      "processes": processes != 1, "on_results": on_results is not None}
        given = [name for name, set_ in local_only.items() if set_]
        if given:  # the Ray engine writes to `out` and resumes by blocks: these would be ignored
            raise TypeError(f"{', '.join(given)}: only for engine='local'")

        return evaluate_ray(dataset, metrics, reference_date=reference_date, progress=progress, store=store,
                            run_name=run_name, max_concurrency=max_concurrency, retry_failed=retry_failed,
                            user=user, **engine_options)
    if engine != "local":
        raise ValueError(f"engine must be 'local' or 'ray', got {engine!r}")
    if engine_options:
        raise TypeError(f"{', '.join(sorted(engine_options))}: only for engine='ray'")
    return run_sync(aevaluate(
        dataset, metrics, store=store, run_name=run_name, reference_date=reference_date,
        progress=progress, cancel=cancel, max_concurrency=max_concurrency, resume=resume,
        retry_failed=retry_failed, deadline=deadline, processes=processes, on_results=on_results, user=user,
    ))


async def aevaluate(
    dataset: Any,
    metrics: Sequence[Metric],
    *,
    store: RunStore | None = None,
    run_name: str | None = None,
    reference_date: Any = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    max_concurrency: int = 4,
    resume: bool = True,
    retry_failed: bool = True,
    deadline: float | None = None,
    processes: int = 1,
    on_results: Callable[[pd.DataFrame], None] | None = None,
    user: str | None = None,
) -> RunResult:
    """`evaluate` as a coroutine (for callers already inside an event loop)."""
    from tempo_eval.core.extract import parse_reference_date

    metrics = check_metrics(metrics)
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise ValueError(f"max_concurrency must be a positive integer, got {max_concurrency!r}")
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    if deadline is not None and not (isinstance(deadline, (int, float)) and deadline > 0):
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    if run_name is not None and not str(run_name).split():  # before anything is stored
        raise ValueError(f"run_name must not be empty, got {run_name!r}")
    stop_at = None if deadline is None else time.monotonic() + float(deadline)
    # Once, not per row: a bad date fails the run before it starts. The ISO date is the identity,
    # so "2024-06-30T00:00" and "2024-06-30" are the same run.
    parsed_date = parse_reference_date(reference_date)
    reference_date = parsed_date.isoformat() if parsed_date is not None else None
    stream = as_stream(dataset)
    if "query_id" not in stream.columns and "conversation_id" not in stream.columns:
        raise ValueError(
            "the dataset has no query_id column (nor conversation_id, for conversations): "
            "load it with tempo_eval.io.load_dataset or load_conversations"
        )
    check_columns(metrics, [str(c) for c in stream.columns])
    store = store if store is not None else RunStore()

    if stream.dataset is not None:
        dataset_id, store_rows = store.save_dataset(stream.dataset, user=user), False
    else:
        dataset_id, complete = store.begin_dataset(
            name=stream.name, content_hash=stream.content_hash, mapping=stream.mapping,
            source_format=stream.source_format, user=user,
        )
        store_rows = not complete
        check_free_space(store.connection, _store_bytes(stream, len(metrics), store_rows),
                         f"storing {stream.name} and one result per row and metric")
    config = run_config(metrics, reference_date=reference_date)
    # a run of the same dataset and settings is resumed: the newest, or with `run_name` the newest
    # of that name (another name makes a new run; a run is never renamed)
    run_id, resumed = store.create_or_resume_run(
        dataset_id, config, name=run_name, default_name=default_run_name(stream.name or "dataset", metrics),
        resume=resume, user=user,
    )
    names = [m.name for m in metrics]
    try:
        waited, holding = await _wait_for_run(store, run_id, cancel, stop_at)
        if not holding:  # stopped waiting (cancel, deadline): the run is the other process's
            return _not_evaluated(store, dataset_id, run_id, stream, names, deadline)
        resumed = waited or resumed
        run = _Run(store, dataset_id, run_id, metrics, names, reference_date, retry_failed, stop_at, deadline,
                   _with_rate(progress), processes, on_results)
        result = await run.evaluate(stream, resumed, store_rows, cancel, max_concurrency)
        result.resumed = resumed
        return result
    finally:
        with contextlib.suppress(WorkspaceError):  # a full disk: the lock is taken over later
            store.release_run(run_id)


def as_stream(dataset: Any) -> DatasetStream:
    """A path (streamed, `tempo_eval.io.stream.open_stream`), a DatasetStream, a Dataset or a
    DataFrame, as batches of rows."""
    if isinstance(dataset, DatasetStream):
        return dataset
    if isinstance(dataset, (str, os.PathLike)):
        return open_stream(dataset)
    return frame_stream(as_dataset(dataset))


#: stored bytes per result (score, reason, packed details), a generous mean
_RESULT_BYTES = 400


def _store_bytes(stream: DatasetStream, n_metrics: int, store_rows: bool) -> int:
    """About what evaluating `stream` adds to the workspace: its rows (packed, about half their
    text when stored) and one result per row and metric."""
    rows = stream.n_rows or stream.estimated_rows
    return (stream.size // 2 if store_rows else 0) + rows * n_metrics * _RESULT_BYTES


def _with_rate(progress: Callable[..., None] | None) -> ProgressCallback | None:
    """`progress` called (done, total), or (done, total, rows_per_second) when it takes three
    arguments: rows per second computed by this call, rows reused from the store not counted."""
    if progress is None:
        return None
    try:
        takes_rate = len(inspect.signature(progress).parameters) >= 3
    except (TypeError, ValueError):
        takes_rate = False
    if not takes_rate:
        return progress
    started = time.monotonic()
    first: list[int] = []

    def report(done: int, total: int) -> None:
        if not first:
            first.append(done)
        elapsed = time.monotonic() - started
        rate = (done - first[0]) / elapsed if elapsed > 0 else 0.0
        progress(done, total, rate)

    return report


def _id_column(columns: Sequence[str]) -> str:
    """A conversation dataset is keyed by its conversation ids, any other by its query ids."""
    return "query_id" if "query_id" in columns else "conversation_id"


#: how often a process waiting for another one's run looks again, in seconds
_LOCK_POLL_SECONDS = 0.5


async def _wait_for_run(
    store: RunStore, run_id: int, cancel: threading.Event | None, stop_at: float | None
) -> tuple[bool, bool]:
    """Take the run's lock, waiting while another live process holds it: (waited, holding).
    Waited, that process's rows are in the store (read them as a resume); not holding (cancelled
    or past the deadline while waiting), nothing may be written to the run."""
    holder = store.acquire_run(run_id)
    if holder is None:
        return False, True
    logger.warning(
        "run %d is being evaluated by process %s on %s; waiting for it to finish, then its results "
        "are reused (Ctrl-C to stop waiting)", run_id, holder["pid"], holder["host"],
    )
    while holder is not None:
        if (cancel is not None and cancel.is_set()) or (stop_at is not None and time.monotonic() >= stop_at):
            return True, False
        await asyncio.sleep(_LOCK_POLL_SECONDS)
        holder = store.acquire_run(run_id)
    return True, True


def _not_evaluated(
    store: RunStore, dataset_id: int, run_id: int, stream: DatasetStream, names: list[str],
    deadline: float | None,
) -> RunResult:
    """This call's result when it stopped waiting for another process's evaluation of the run:
    the rows stored so far, and (past the deadline) NaN judge_error for the others, which are
    not stored: that process still writes the run, and its results must not be overwritten."""
    stored = store.completed(run_id)
    unstored = None
    missing_rows: set[int] = set()
    records = []
    n_rows = 0
    for offset, frame in stream.batches():
        n_rows = offset + len(frame)
        if deadline is None:
            continue
        id_column = _id_column(list(frame.columns))
        ids = frame[id_column].tolist()
        systems = frame["run"].tolist() if "run" in frame.columns else None
        reason = _deadline_result_reason(deadline)
        for j, qid in enumerate(ids):
            i = offset + j
            for name in names:
                if (i, name) not in stored:
                    missing_rows.add(i)
                    records.append((i, str(qid), None if systems is None or is_na(systems[j]) else str(systems[j]),
                                    name, float("nan"), DEADLINE_ERROR, reason))
    if records:
        unstored = pd.DataFrame(records, columns=RESULT_COLUMNS)
    logger.warning("run %d: stopped waiting for the process evaluating it; nothing was written", run_id)
    return RunResult(
        run_id=run_id, dataset_id=dataset_id, status="cancelled", n_rows=n_rows, metrics=names,
        computed=0, reused=len(stored), store=store, deadline_rows=len(missing_rows), unstored=unstored,
    )


class _Run:
    """One locked evaluation of a run: the batches of the dataset in order, each scored (offline
    metrics a batch at a time, the others row by row with `max_concurrency` rows in flight) and
    stored; see the module docstring for what is guaranteed."""

    def __init__(
        self, store: RunStore, dataset_id: int, run_id: int, metrics: Sequence[Metric], names: list[str],
        reference_date: Any, retry_failed: bool, stop_at: float | None, deadline: float | None,
        progress: ProgressCallback | None, processes: int = 1,
        on_results: Callable[[pd.DataFrame], None] | None = None,
    ) -> None:
        self.store, self.dataset_id, self.run_id = store, dataset_id, run_id
        self.processes = processes
        #: the worker processes scoring offline batches, when the run uses them (`pool_for`)
        self.pool: ScoringPool | None = None
        self.metrics, self.names, self.reference_date = metrics, names, reference_date
        self.retry_failed, self.stop_at, self.deadline, self.progress = retry_failed, stop_at, deadline, progress
        self.done = self.computed = self.reused = self.deadline_rows = 0
        self.total = 0
        self._reported: tuple[int, int] | None = None
        self.status = "finished"
        #: whether the last batch had rows scored one by one (see `heap_settled_per_batch`)
        self.online_batch = False
        self.on_results = on_results
        #: the first row whose results `on_results` has not had; batches stored out of order
        #: (offset -> (end, results as written or None: read from the store)) wait for those before
        self._next_row = 0
        self._stored: dict[int, tuple[int, EncodedRows | None]] = {}
        #: batches in the pool: offset -> (end, whether every row of the batch was handed over)
        self._in_pool: dict[int, tuple[int, bool]] = {}

    async def evaluate(
        self, stream: DatasetStream, resumed: bool, store_rows: bool, cancel: threading.Event | None,
        max_concurrency: int,
    ) -> RunResult:
        store, run_id = self.store, self.run_id
        self.total = stream.n_rows or stream.estimated_rows
        logger.info("run %d on dataset %d: %s rows%s", run_id, self.dataset_id,
                    self.total if stream.n_rows else f"about {self.total}", " (resumed)" if resumed else "")
        n_rows = 0
        try:
            # a text repeated across batches (a context, a query) is extracted once; the pool, if
            # any, is stopped on the way out (the batches it has in flight are then not stored)
            with extraction_memo(), heap_settled_per_batch() as settle, pool_for(
                    self.metrics, [str(c) for c in stream.columns], processes=self.processes, rows=self.total,
                    run_id=run_id) as self.pool:
                n_rows = await self._batches(stream, resumed, store_rows, cancel, max_concurrency, settle)
        except (Exception, asyncio.CancelledError, KeyboardInterrupt) as exc:
            failed = isinstance(exc, Exception)
            try:
                if not failed and stream.n_rows is not None and self.done == stream.n_rows:
                    store.set_status(run_id, "finished")  # interrupted after the last row was stored
                else:
                    store.set_status(run_id, "failed" if failed else "cancelled",
                                     f"{type(exc).__name__}: {exc}" if failed else None)
            except WorkspaceError as status_error:  # a full disk refuses the status too: report the cause
                logger.warning("could not mark run %d as stopped: %s", run_id, status_error)
            raise
        store.set_status(run_id, self.status)
        return RunResult(
            run_id=run_id, dataset_id=self.dataset_id, status=self.status,
            n_rows=stream.n_rows if stream.n_rows is not None else n_rows, metrics=self.names,
            computed=self.computed, reused=self.reused, store=store, deadline_rows=self.deadline_rows,
            results_streamed=self.on_results is not None and self.status == "finished" and self._next_row == n_rows,
        )

    async def _batches(
        self, stream: DatasetStream, resumed: bool, store_rows: bool, cancel: threading.Event | None,
        max_concurrency: int, settle: Callable[[bool], None],
    ) -> int:
        """Score and store every batch; the number of rows read."""
        n_rows = 0
        reported = False
        for offset, frame in stream.batches():
            n_rows = offset + len(frame)
            if store_rows:  # the last batch (the stream knows its end by then) completes the dataset
                last = stream.n_rows == n_rows
                self.store.add_dataset_rows(self.dataset_id, offset, frame, n_rows=n_rows if last else None,
                                            warnings=stream.warnings)
                store_rows = not last
            self.total = max(self.total, n_rows)
            if cancel is not None and cancel.is_set():
                self.status = "cancelled"
                return n_rows
            pending = self._pending(frame, offset, resumed)
            self.done += len(frame) - len(pending)
            if not reported:
                self._report()  # at the start: resumed rows count as done
                reported = True
            if pending and self.pool is not None and not self._past_deadline():
                await self._hand_over(frame, offset, pending, cancel)  # stored when it comes back
            else:
                if pending:
                    await self._score(frame, offset, pending, cancel, max_concurrency)
                if self.status != "cancelled":
                    self._batch_stored(offset, n_rows)
            if self.status == "cancelled":
                return n_rows
            self._report()
            del frame, pending
            settle(self.online_batch)
            await asyncio.sleep(0)  # Ctrl-C (a cancellation) is seen between batches
        await self._collect(cancel, keep=0)
        if self.status == "cancelled":
            return n_rows
        if store_rows and stream.n_rows is not None:  # a stream that ended without a batch
            self.store.finish_dataset(self.dataset_id, stream.n_rows, stream.warnings)
        self.total = n_rows
        self._report()
        return n_rows

    def _report(self) -> None:
        """progress(done, total), once per change: after every row scored on its own, every batch
        scored together, and at the end (when the total, estimated until then, is known)."""
        if self.progress is not None and (self.done, self.total) != self._reported:
            self._reported = (self.done, self.total)
            self.progress(self.done, self.total)

    def _pending(self, frame: pd.DataFrame, offset: int, resumed: bool) -> list[tuple[int, list[Metric]]]:
        end = offset + len(frame)
        done_pairs = (self.store.completed_between(self.run_id, offset, end, retry_failed=self.retry_failed)
                      if resumed else set())
        self.reused += sum(1 for _, name in done_pairs if name in self.names)
        every = list(self.metrics)  # one list for the rows with nothing stored (every row of a new run)
        pending = [(i, [m for m in every if (i, m.name) not in done_pairs] if done_pairs else every)
                   for i in range(offset, end)]
        return [(i, todo) for i, todo in pending if todo]

    async def _score(
        self, frame: pd.DataFrame, offset: int, pending: list[tuple[int, list[Metric]]],
        cancel: threading.Event | None, max_concurrency: int,
    ) -> None:
        columns = [str(c) for c in frame.columns]
        id_column = _id_column(columns)
        values = frame.to_numpy(dtype=object)
        rows = {i: row_dict(columns, values[i - offset], self.reference_date) for i, _ in pending}
        batched = {m.name for m in self.metrics if m.batchable(columns)}
        if self.stop_at is not None and time.monotonic() >= self.stop_at:
            results = {i: [_deadline_result(m, self.deadline) for m in todo] for i, todo in pending}
            self.deadline_rows += len(pending)
            self._record([(i, rows[i], results[i]) for i, _ in pending], id_column)
            return
        online = [(i, [m for m in todo if m.name not in batched]) for i, todo in pending]
        offline_only = not any(todo for _, todo in online)
        self.online_batch = not offline_only
        with gc_paused():  # the batch's cycles are collected after it (`heap_settled_per_batch`)
            offline = await measure_batch(
                [(i, rows[i], [m for m in todo if m.name in batched]) for i, todo in pending]
            )
            first = {i: found for (i, _), found in zip(pending, offline, strict=True)}
            if offline_only:
                self._record([(i, rows[i], first[i]) for i, _ in pending], id_column)  # one transaction
                return
        queue = iter(online)

        async def worker() -> None:
            for i, todo in queue:  # one shared iterator: each row goes to one worker
                if cancel is not None and cancel.is_set():
                    self.status = "cancelled"
                    return
                results = await measure_row_until(todo, rows[i], i, self.stop_at) if todo else []
                if results is None:
                    results = [_deadline_result(m, self.deadline) for m in todo]
                    self.deadline_rows += 1
                self._record([(i, rows[i], first[i] + results)], id_column)
                self._report()
                # A metric that never awaits would otherwise keep the loop busy to the last
                # row, and Ctrl-C (delivered as a cancellation) would wait for it.
                await asyncio.sleep(0)

        await run_workers([worker() for _ in range(min(max_concurrency, len(online)))])

    def _past_deadline(self) -> bool:
        return self.stop_at is not None and time.monotonic() >= self.stop_at

    async def _hand_over(
        self, frame: pd.DataFrame, offset: int, pending: list[tuple[int, list[Metric]]],
        cancel: threading.Event | None,
    ) -> None:
        """Give the batch to the pool, storing what it has finished meanwhile; wait while it has
        as many batches in flight as it takes."""
        assert self.pool is not None
        columns = [str(c) for c in frame.columns]
        self._in_pool[offset] = (offset + len(frame), len(pending) == len(frame))
        names: dict[int, list[str]] = {}  # rows that share a list of metrics share its names: pickled once
        self.pool.submit(offset, columns, frame.to_numpy(dtype=object), [(i, names.get(id(todo)) or names.setdefault(
            id(todo), [m.name for m in todo])) for i, todo in pending], _id_column(columns), self.reference_date)
        await self._collect(cancel, keep=self.pool.capacity - 1)

    async def _collect(self, cancel: threading.Event | None, *, keep: int) -> None:
        """Store the batches the pool has finished, waiting until at most `keep` are in flight.
        Cancelled: the run stops (the batches in flight are not stored). Past the deadline: the
        batches in flight are stored as NaN judge_error, and the pool stopped."""
        pool = self.pool
        while pool is not None and pool.in_flight:
            must_wait = pool.in_flight > keep
            scored, stopped = pool.wait(cancel=cancel, stop_at=self.stop_at, block=must_wait)
            for batch in scored:
                self.store.write_encoded(batch.encoded)
                self.done += batch.rows
                self.computed += batch.results
                end, whole = self._in_pool.pop(batch.offset)
                # every row of the batch computed now: its results are those just written
                self._batch_stored(batch.offset, end, batch.encoded if whole else None)
            self._report()
            if stopped == "cancel":
                self.status = "cancelled"
                return
            if stopped == "deadline":
                self._abandon_pool()
                return
            if not must_wait and not scored:
                return
            await asyncio.sleep(0)  # Ctrl-C (a cancellation) is seen while the workers score

    def _abandon_pool(self) -> None:
        """The deadline passed: the pool's batches in flight stored as NaN judge_error (resumed
        later), the pool stopped; the batches left are then stored so by `_score`."""
        assert self.pool is not None
        abandoned = self.pool.abandon()
        self.pool.close()
        self.pool = None
        by_name = {m.name: m for m in self.metrics}
        for batch in abandoned:
            rows = [(i, row_dict(batch.columns, batch.values[i - batch.offset], self.reference_date),
                     [_deadline_result(by_name[name], self.deadline) for name in names])
                    for i, names in batch.pending]
            self.deadline_rows += len(rows)
            self._record(rows, _id_column(batch.columns))
            self._batch_stored(batch.offset, self._in_pool.pop(batch.offset)[0])

    def _batch_stored(self, offset: int, end: int, results: EncodedRows | None = None) -> None:
        """Rows offset..end-1 are stored (`results`: their results as written, else read from the
        store): `on_results` gets them once the rows before them are given. An `on_results` with
        a `take_encoded(rows)` method is given the rows as written (`EncodedRows`, no frame made:
        the command line writes --out from them)."""
        if self.on_results is None:
            return
        self._stored[offset] = (end, results)
        while self._next_row in self._stored:
            end, encoded = self._stored.pop(self._next_row)
            take_encoded = getattr(self.on_results, "take_encoded", None)
            if encoded is not None and take_encoded is not None:
                if encoded.results:
                    take_encoded(encoded)
            else:
                frame = (self.store.results_rows(self.run_id, self._next_row, end - 1) if encoded is None
                         else encoded_frame(encoded))
                if len(frame):
                    self.on_results(frame)
            self._next_row = end

    def _record(self, scored: list[tuple[int, Mapping[str, Any], list[MetricResult]]], id_column: str) -> None:
        self.store.record_rows(
            self.run_id, [(i, str(row.get(id_column)), results, system(row)) for i, row, results in scored]
        )
        self.done += len(scored)
        self.computed += sum(len(results) for _, _, results in scored)


def _deadline_result(metric: Metric, deadline: float | None) -> MetricResult:
    return not_measurable(metric.name, DEADLINE_ERROR, _deadline_result_reason(deadline))


def _deadline_result_reason(deadline: float | None) -> str:
    return (f"The deadline of {deadline:g} s for the run passed before this row was evaluated; "
            "evaluate again to resume and compute it.")


