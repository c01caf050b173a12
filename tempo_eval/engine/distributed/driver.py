"""The Ray engine's driver loop: blocks handed to actors as they are read, results written as
they come back.

    pool = ActorPool(ray, BlockScorer, payload, num_workers=2, ...)   # the actors start now
    driver = Driver(stream, metrics, out=out, workspace=workspace, pool=pool, done=done, ...)
    driver.run()                                                       # every block scored and written

`ActorPool` drives the actors directly (`ray.remote` on the actor class, `ray.wait` for the first
finished block): Ray Data's executor, which `map_batches` ran, cost the driver about half its CPU
(scheduling, fetching blocks through its own operators) and needed every block made up front.
Each actor has at most `per_actor` blocks in flight (`_in_flight`) and a new block goes to the
actor with the fewest.

`Driver` reads the input's batches (one per block), stores each batch's rows in the workspace and
in OUT/dataset.json.gz, and hands the block to the pool unless it is done already; a finished
block's files are written (`output.write_block`, or `merge_block` for recomputed failures), then
its rows go into the workspace in one transaction (`WorkspaceRun.record`), then its new
verdicts into the verdict cache. A block done in OUT but missing from the workspace (a driver
killed between the two) is written from its files when its batch is read.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tempo_eval.engine.distributed import output

logger = logging.getLogger("tempo_eval.engine.distributed.engine")

#: seconds `ray.wait` blocks at a time, so that Ctrl-C is seen while the actors score
_WAIT_SECONDS = 0.5


def _in_flight(n_blocks: int, num_workers: int) -> int:
    """Blocks queued per actor. Two keep an actor busy while the next block travels (20% faster
    with 30 blocks on 2 actors); with few blocks, the actor that starts first would take them all
    while the others are still loading their model (measured: 2 blocks, 2 actors, 1.6x slower)."""
    return 1 if n_blocks <= 2 * num_workers else 2


def blocks_of(batches: Iterable[tuple[int, Any]], size: int) -> Iterator[tuple[int, Any]]:
    """(first row, frame) of `size` rows each (the last one shorter) from the reader's batches,
    which are mostly that size already (a CSV batch is shorter by its blank rows, a Parquet
    batch ends with its row group)."""
    import pandas as pd

    pending: list[Any] = []
    held = start = 0
    for _, frame in batches:
        if not held and len(frame) == size:
            yield start, frame
            start += size
            continue
        pending.append(frame)
        held += len(frame)
        while held >= size:
            whole = pd.concat(pending, ignore_index=True) if len(pending) > 1 else pending[0]
            yield start, whole.iloc[:size]
            rest = whole.iloc[size:]
            pending, held, start = ([rest] if len(rest) else []), len(rest), start + size
    if held:
        yield start, pd.concat(pending, ignore_index=True) if len(pending) > 1 else pending[0]


@dataclass
class Block:
    """A block handed to an actor: its number, whether it recomputes failed results of a finished
    block (merged into its files), and how many rows it scores."""

    number: int
    retry: bool
    n_rows: int


class ActorPool:
    """`num_workers` actors of `actor_class`, started at once, each built with the shipped metrics
    `payload`; blocks go to the least busy one (see the module docstring)."""

    def __init__(self, ray: Any, actor_class: type, payload: bytes, *, num_workers: int, gpus_per_worker: float,
                 reference_date: str | None, max_concurrency: int, source: Any) -> None:
        self.ray = ray
        options: dict[str, Any] = {"num_cpus": 1}
        if gpus_per_worker:
            options["num_gpus"] = gpus_per_worker
        remote = ray.remote(**options)(actor_class)
        shipped = ray.put(payload)  # once for every actor
        self.actors = [remote.remote(shipped, reference_date, max_concurrency, source, gpus_per_worker)
                       for _ in range(num_workers)]
        self.busy = [0] * num_workers
        self.per_actor = 2
        self._refs: dict[Any, tuple[int, Block]] = {}

    @property
    def in_flight(self) -> int:
        return len(self._refs)

    @property
    def full(self) -> bool:
        return len(self._refs) >= self.per_actor * len(self.actors)

    def submit(self, block: Block, *args: Any) -> None:
        """Score `block` (`args` for `BlockScorer.score`) on the least busy actor."""
        actor = min(range(len(self.actors)), key=self.busy.__getitem__)
        self.busy[actor] += 1
        self._refs[self.actors[actor].score.remote(*args)] = (actor, block)

    def finished(self, *, block: bool) -> list[tuple[Block, Any]]:
        """The blocks finished so far with what their actor returned (with `block`, waiting
        until one is); an actor's error is raised here."""
        if not self._refs:
            return []
        while True:
            ready, _ = self.ray.wait(list(self._refs), num_returns=1, timeout=_WAIT_SECONDS if block else 0)
            if ready or not block:
                break
        if ready:  # every other one finished meanwhile too
            ready, _ = self.ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        done = []
        for ref in ready:
            actor, item = self._refs.pop(ref)
            self.busy[actor] -= 1
            done.append((item, self.ray.get(ref)))
        return done

    def close(self) -> None:
        """Stop the actors (their blocks in flight are dropped): they leave a joined cluster's CPUs."""
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception as error:  # already gone with its cluster
                logger.debug("could not stop an actor: %s", error)
        self._refs.clear()


class Driver:
    """One call's loop over the input's batches (see the module docstring)."""

    def __init__(self, stream: Any, metrics: Sequence[Any], *, out: str | Path, workspace: Any, pool: ActorPool,
                 done: set[int], block_size: int, retry_failed: bool, db_path: str,
                 progress: Callable[[int, int], None] | None) -> None:
        self.stream, self.names = stream, [m.name for m in metrics]
        self.out, self.workspace, self.pool, self.done = out, workspace, pool, done
        self.block_size, self.retry_failed, self.db_path, self.progress = block_size, retry_failed, db_path, progress
        self.columns = [str(c) for c in stream.columns]
        self.run_id = None if workspace is None else workspace.run_id
        self.n_rows = self.rows_done = self.read = 0
        self.computed_blocks = self.skipped_blocks = self.retried_rows = self.caught_up = 0
        self.verdicts_added = self.cache_hits = self.cache_misses = 0
        self._cache: Any = None
        #: results per block already in the workspace (a resume writes the blocks it lacks)
        self._in_workspace = workspace.block_counts(block_size) if workspace is not None and done else {}
        estimate = stream.n_rows or stream.estimated_rows or 0
        pool.per_actor = _in_flight(max(1, math.ceil(estimate / block_size)), len(pool.actors))

    def run(self) -> None:
        """Every batch read, stored and scored (or skipped: done), every block written."""
        dataset = output.DatasetWriter(self.out, self.columns)
        try:
            for offset, frame in blocks_of(self.stream.batches(), self.block_size):
                self.read = offset + len(frame)
                if self.workspace is not None:
                    self.workspace.store_rows(offset, frame)
                dataset.add(frame)
                self._block(offset // self.block_size, offset, frame)
                self._collect(block=False)
                self._report()
            while self.pool.in_flight:
                self._collect(block=True)
            dataset.finish()
        except BaseException:
            dataset.abandon()
            raise
        self.n_rows = self.stream.n_rows if self.stream.n_rows is not None else self.read
        if self.workspace is not None:
            self.workspace.finish_dataset(self.n_rows, list(self.stream.warnings))
        if self.caught_up:
            logger.info("%d finished blocks of %s were not in the workspace yet: written from their files",
                        self.caught_up, self.out)
        self._report()

    def finish(self) -> tuple[int, list[str]]:
        """(blocks, the reader's warnings) of the finished call, written into the manifest with the
        row count, the run marked finished there."""
        n_blocks = max(1, math.ceil(self.n_rows / self.block_size))
        warnings = [str(w) for w in self.stream.warnings]
        output.finish(self.out, n_rows=self.n_rows, n_blocks=n_blocks, warnings=warnings)
        return n_blocks, warnings

    def _block(self, number: int, offset: int, frame: Any) -> None:
        """Hand the block at `offset` to an actor: whole when not done, else its failed results
        (with `retry_failed`); a done block the workspace lacks is written from its files."""
        rows = range(offset, offset + len(frame))
        if number in self.done:
            self.skipped_blocks += 1
            if self.workspace is not None and self._in_workspace.get(number, 0) < len(rows) * len(self.names):
                self.workspace.write_from_files(Path(self.out), number, rows)
                self.caught_up += 1
            failed = output.failed_results(self.out, [number]).get(number, {}) if self.retry_failed else {}
            self.rows_done += len(rows) - len(failed)
            if not failed:
                return
            numbers = sorted(failed)
            self.retried_rows += len(numbers)
            values = frame.to_numpy(dtype=object)[[n - offset for n in numbers]].tolist()
            self._submit(Block(number, True, len(numbers)), numbers, values, [failed[n] for n in numbers])
            return
        self.computed_blocks += 1
        self._submit(Block(number, False, len(rows)), list(rows), frame.to_numpy(dtype=object).tolist(), None)

    def _submit(self, block: Block, numbers: list[int], values: list[list[Any]], todo: list[list[str]] | None) -> None:
        while self.pool.full:  # at most `per_actor` blocks queued at an actor: memory stays a few blocks'
            self._collect(block=True)
        self.pool.submit(block, self.columns, numbers, values, todo, self.run_id)

    def _collect(self, *, block: bool) -> None:
        for item, (results, details, encoded, verdicts, hits, misses) in self.pool.finished(block=block):
            write = output.merge_block if item.retry else output.write_block
            write(self.out, item.number, results, details)
            if self.workspace is not None:  # after the files: a block in the workspace is done in `out`
                self.workspace.record(encoded)
            if verdicts:
                if self._cache is None:
                    from tempo_eval.store.verdict_cache import VerdictCache

                    self._cache = VerdictCache(self.db_path)
                self.verdicts_added += self._cache.add_many(verdicts)
            self.cache_hits += hits
            self.cache_misses += misses
            self.rows_done += item.n_rows
            self._report()

    def _report(self) -> None:
        if self.progress is not None:
            total = self.stream.n_rows or max(self.stream.estimated_rows or 0, self.read)
            self.progress(self.rows_done, max(total, self.rows_done))
