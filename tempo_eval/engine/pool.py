"""Offline batches scored in worker processes: the local engine's use of more than one CPU.

    pool = ScoringPool(metrics, processes=2, run_id=run_id)
    pool.submit(offset, columns, values, pending, id_column, reference_date)
    scored, stopped = pool.wait(cancel=cancel, stop_at=stop_at)   # ScoredBatch each
    store.write_encoded(scored[0].encoded)
    pool.close()

The runner (`tempo_eval.engine.runner`) hands a batch of rows whose metrics are all offline
(`Metric.batchable`: the focus-time metrics) to the pool and goes on reading the file and storing
the dataset's rows; a worker scores the batch with `tempo_eval.engine.scoring.measure_batch` and encodes
the results for the store with `tempo_eval.store.results.encode_rows`, so the runner only writes
them (`write_encoded`). Each worker keeps its focus-time memo across its batches and settles its
heap after each batch as the runner does (the collector off during a batch, what it leaves frozen),
so a batch scores in a worker exactly as in the runner's process: same results, same details.

- The metrics travel once per worker (pickled when the pool starts), not with every batch.
- Workers are started by a fork server (`multiprocessing`'s "forkserver": safe with the threads
  of the reading process, and each worker forks from a server that has the scoring modules
  imported already, so the modules' memory is shared); they ignore Ctrl-C (the runner stops them)
  and leave at once when the process that started them dies (a kill -9 leaves no orphan).
- The log records of a worker (a row's failure, say) are sent with its batch and logged here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tempo_eval.common.process import gc_paused

if TYPE_CHECKING:  # imported by the workers (and the fork server), not by `warm_up`'s caller
    from tempo_eval.store.results import EncodedRows

logger = logging.getLogger("tempo_eval.engine.runner")

#: batches a worker may have in flight (one scored, one waiting), so it never waits for the next;
#: memory stays that of a few batches, whatever the size of the file
IN_FLIGHT_PER_WORKER = 2
#: rows below which a run is scored in its own process: starting a worker costs about a second
POOL_MIN_ROWS = 5000
#: the most worker processes the command line starts by default
MAX_DEFAULT_PROCESSES = 4
#: how long `wait` blocks at a time before it looks at cancel, the deadline and the workers
_POLL_SECONDS = 0.05
#: how long a stopped worker has to exit before it is killed
_EXIT_SECONDS = 2.0


class ScoringProcessError(RuntimeError):
    """A scoring worker process died (killed, out of memory) or failed outside a row; the rows
    stored so far are kept."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container or `taskset` limits)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_processes() -> int:
    """The command line's default number of scoring processes: the usable CPUs, at most
    `MAX_DEFAULT_PROCESSES`."""
    return max(1, min(usable_cpus(), MAX_DEFAULT_PROCESSES))


#: batches scored row by row (online metrics) between two full collections of the frozen heap
_FULL_COLLECT_BATCHES = 50


@contextlib.contextmanager
def heap_settled_per_batch() -> Iterator[Callable[[bool], None]]:
    """A `settle(online)` to call after each batch (`online`: rows were scored one by one, by a
    judge or a model), in the runner and in each scoring worker: what the batch left alive (the
    extraction memo's new focus times, the store's caches) is frozen (`gc.freeze`), so the cyclic
    collector does not rescan the run's growing heap again and again (that cost half the scoring
    time of the focus-time metrics, measured on 20,000 rows). Offline batches leave no cycles
    (measured: a collection after each found nothing, and cost 10-25 ms a batch, a full one over
    the memo 1 s), so the heap is unfrozen and fully collected only after `_FULL_COLLECT_BATCHES`
    online batches (requests, tasks and errors do leave cycles), and unfrozen at the end. When
    something else froze objects before (a Ray actor does), or the collector is off, the heap is
    left as it is."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield lambda online: None
        return
    online_batches = 0

    def settle(online: bool) -> None:
        nonlocal online_batches
        online_batches += bool(online)
        if online_batches >= _FULL_COLLECT_BATCHES:
            online_batches = 0
            gc.unfreeze()
            gc.collect()
        gc.freeze()

    try:
        yield settle
    finally:
        gc.unfreeze()


@dataclass
class ScoredBatch:
    """A batch's results, encoded for `RunStore.write_encoded`: `rows` rows, `results` results."""

    offset: int
    encoded: EncodedRows
    rows: int
    results: int


@dataclass
class InFlight:
    """What the runner keeps of a batch handed to the pool: enough to store deadline results for
    it if it never comes back (`ScoringPool.abandon`)."""

    offset: int
    columns: list[str]
    values: Any
    pending: list[tuple[int, list[str]]]


class ScoringPool:
    """`processes` worker processes scoring offline batches (see the module docstring). Each
    keeps `memo_share` of the focus-time memo's limits (default 1 / processes)."""

    def __init__(self, metrics: Sequence[Any], *, processes: int, run_id: int,
                 memo_share: float | None = None) -> None:
        from tempo_eval.common.secrets import secret_values
        from tempo_eval.core.focus_memo import MAX_ENTRIES, MAX_RECENT

        try:
            payload = pickle.dumps(list(metrics), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a lock, a connection, a local class: what pickle refuses
            raise ValueError(f"the metrics cannot be sent to a scoring process ({type(exc).__name__}: {exc})") from None
        context = _context([type(m).__module__ for m in metrics])
        self.run_id = run_id
        self._tasks = context.Queue()
        self._results = context.Queue()
        self._in_flight: dict[int, InFlight] = {}
        self._closed = False
        self._next_id = 0
        level = logging.getLogger("tempo_eval").getEffectiveLevel()
        # the workers together keep as many focus times as one process: memory does not grow with
        # their number (two workers with the whole memo each: +100 MB at 60,000 rows; with half
        # each, about a tenth more extraction on a corpus of 50,000 documents, measured)
        share = 1 / processes if memo_share is None else memo_share
        memo = (max(1, int(MAX_ENTRIES * share)), max(1, int(MAX_RECENT * share)))
        self._workers = [
            context.Process(target=_serve, name=f"tempo-eval-scoring-{n + 1}", daemon=True,
                            args=(self._tasks, self._results, payload, secret_values(), level, memo))
            for n in range(processes)
        ]
        try:
            for worker in self._workers:
                worker.start()
        except BaseException:
            self.close()
            raise

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers if w.pid is not None]

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def capacity(self) -> int:
        """The batches the pool takes in flight at once."""
        return IN_FLIGHT_PER_WORKER * len(self._workers)

    def submit(self, offset: int, columns: list[str], values: Any,
               pending: list[tuple[int, list[str]]], id_column: str, reference_date: Any) -> None:
        """Hand rows `pending` ((row number, metric names) each) of the batch at `offset` to a
        worker; `values` are the batch's cells (`frame.to_numpy(dtype=object)`)."""
        batch_id, self._next_id = self._next_id, self._next_id + 1
        self._in_flight[batch_id] = InFlight(offset, columns, values, pending)
        whole = len(pending) == len(values)
        cells = (values if whole else values[[i - offset for i, _ in pending]]).tolist()
        self._tasks.put((batch_id, self.run_id, columns, cells, pending, id_column, reference_date))

    def wait(self, *, cancel: threading.Event | None = None, stop_at: float | None = None,
             block: bool = True) -> tuple[list[ScoredBatch], str | None]:
        """The batches finished so far (with `block`, waiting a moment, `_POLL_SECONDS`, for one
        when none has), and why the caller should stop waiting: "cancel" (`cancel` is set),
        "deadline" (`stop_at`, monotonic, passed) or None. Raises ScoringProcessError."""
        scored: list[ScoredBatch] = []
        while True:
            if cancel is not None and cancel.is_set():
                return scored, "cancel"
            if stop_at is not None and time.monotonic() >= stop_at:
                return scored, "deadline"
            try:
                reply = self._results.get(timeout=_POLL_SECONDS if block and not scored else 0)
            except queue.Empty:
                if not scored:
                    self._check_workers()
                return scored, None
            scored.append(self._finished(*reply))

    def abandon(self) -> list[InFlight]:
        """The batches in flight, given up (the pool is to be closed)."""
        abandoned = list(self._in_flight.values())
        self._in_flight.clear()
        return abandoned

    def close(self) -> None:
        """Stop the workers and wait for them: at once (terminated) when batches are still in
        flight, else after they have taken their stop signal. Closing again does nothing."""
        if self._closed:
            return
        self._closed = True
        orderly = not self._in_flight
        if orderly:
            for _ in self._workers:
                self._tasks.put(None)
        else:  # nothing more is read from the queue: do not wait to flush it at exit
            self._tasks.cancel_join_thread()
        give_up = time.monotonic() + _EXIT_SECONDS
        for worker in self._workers:
            if worker.pid is None:
                continue
            if orderly:
                worker.join(max(0.0, give_up - time.monotonic()))
            if worker.is_alive():
                worker.terminate()
                worker.join(_EXIT_SECONDS)
            if worker.is_alive():
                worker.kill()
                worker.join()
        self._in_flight.clear()
        for channel in (self._tasks, self._results):
            channel.close()

    def _finished(self, batch_id: int, encoded: EncodedRows | None,
                  records: list[logging.LogRecord], failure: str | None) -> ScoredBatch:
        for record in records:  # a row's failure, logged where the run is
            logging.getLogger(record.name).handle(record)
        batch = self._in_flight.pop(batch_id)
        if failure is not None or encoded is None:
            rows = f"{batch.pending[0][0]}-{batch.pending[-1][0]}"
            raise ScoringProcessError(f"a scoring process failed on rows {rows}: {failure}")
        return ScoredBatch(batch.offset, encoded, len(batch.pending),
                           sum(len(names) for _, names in batch.pending))

    def _check_workers(self) -> None:
        for worker in self._workers:
            code = worker.exitcode
            if code is None:
                continue
            how = f"exit status {code}"
            if code < 0:
                with contextlib.suppress(ValueError):
                    how = f"killed by signal {signal.Signals(-code).name}"
            raise ScoringProcessError(
                f"scoring process {worker.pid} stopped unexpectedly ({how}; out of memory, or killed) "
                f"with {len(self._in_flight)} batch(es) of rows in flight; the rows stored so far are kept: "
                "evaluate again to resume, or with processes=1 (--processes 1) to score in one process"
            )


@contextlib.contextmanager
def pool_for(metrics: Sequence[Any], columns: Sequence[str], *, processes: int, rows: int,
             run_id: int) -> Iterator[ScoringPool | None]:
    """A pool for a run, closed on the way out, when it is worth it: more than one process asked
    for, every metric offline (`Metric.batchable`), at least `POOL_MIN_ROWS` rows (a worker takes
    a second to start); else None (the run scores in its own process, as when a metric cannot be
    sent to another one)."""
    if processes < 2 or rows < POOL_MIN_ROWS or not all(m.batchable(columns) for m in metrics):
        yield None
        return
    try:
        pool = ScoringPool(metrics, processes=processes, run_id=run_id)
    except ValueError as error:
        logger.warning("run %d is scored in this process: %s", run_id, error)
        yield None
        return
    logger.info("run %d: batches scored in %d worker processes", run_id, processes)
    try:
        yield pool
    finally:
        pool.close()


def warm_up(modules: Sequence[str] = ()) -> None:
    """Start the fork server now, importing the scoring modules and `modules` (those of the
    metrics), while this process goes on (the command line imports its own modules and reads the
    file's first pass): a pool started later forks its workers at once. Once per process; the
    server ends with it. Importing this module imports neither pandas nor numpy, so the server's
    imports run beside the caller's."""
    if _context(list(modules)).get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def _context(modules: list[str]) -> Any:
    """The fork server context, its server importing the scoring modules once (the workers fork
    from it with them imported)."""
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:  # not on Linux or macOS
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(dict.fromkeys(
        ["tempo_eval.engine.pool", "tempo_eval.engine.scoring", "tempo_eval.store.results", *modules])))
    return context


# ---- in the worker --------------------------------------------------------------------------

class _Records(logging.Handler):
    """The worker's log records, kept to be sent with its batch."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args = record.getMessage(), None  # the arguments may not pickle
        if record.exc_info:
            record.exc_text = self.format(record)
            record.exc_info = None
        self.records.append(record)

    def drain(self) -> list[logging.LogRecord]:
        records, self.records = self.records, []
        return records


def _serve(tasks: Any, results: Any, payload: bytes, secrets: list[str], level: int, memo: tuple[int, int]) -> None:
    """A worker: score the batches of `tasks` until None, each reply put on `results`."""
    from tempo_eval.core.focus_memo import extraction_memo

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner stops the pool on Ctrl-C
    _leave_with_parent()
    results.cancel_join_thread()  # every reply is read before the worker is told to stop
    handler = _Records()
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    metrics = {m.name: m for m in pickle.loads(payload)}
    loop = asyncio.new_event_loop()
    # a text repeated across the worker's batches is extracted once; the heap settled after each
    # batch as in the runner's process (offline batches: no full collection), and before the
    # collector is on again: a batch leaves no cycles (tests/engine/test_worker_heap.py), and the young
    # collection that re-enabling it set off scanned what the batch left (the memo's new focus
    # times, the encoded rows: 20,000 objects a batch of 1,000 bench rows) for nothing (14 us a
    # row against 268 us of scoring, measured in one process on a loaded machine)
    with extraction_memo(*memo), heap_settled_per_batch() as settle:
        while (task := tasks.get()) is not None:
            batch_id = task[0]
            with gc_paused():
                try:
                    encoded = loop.run_until_complete(_score(metrics, secrets, *task[1:]))
                    reply = (batch_id, encoded, handler.drain(), None)
                except BaseException:  # not a row's failure (measure isolates those): fail the run
                    reply = (batch_id, None, handler.drain(), traceback.format_exc(limit=-3))
                settle(False)
            results.put(reply)
    loop.close()


async def _score(metrics: dict[str, Any], secrets: list[str], run_id: int, columns: list[str],
                 cells: list[list[Any]], pending: list[tuple[int, list[str]]], id_column: str,
                 reference_date: Any) -> EncodedRows:
    from tempo_eval.engine.scoring import measure_batch, row_dict, system
    from tempo_eval.store.results import encode_rows

    rows = [row_dict(columns, values, reference_date) for values in cells]
    scored = await measure_batch([(i, row, [metrics[name] for name in names])
                                  for (i, names), row in zip(pending, rows, strict=True)])
    return encode_rows(run_id, [(i, str(row.get(id_column)), results, system(row))
                                for (i, _), row, results in zip(pending, rows, scored, strict=True)], secrets)


def _leave_with_parent() -> None:
    """Exit as soon as the process that started this one is gone (killed with -9, say)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
