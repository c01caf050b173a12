"""`evaluate_ray`: score a dataset in a pool of Ray actors, one Parquet file per block of rows, each
block written into the workspace as it finishes.

The `num_workers` actors (`BlockScorer`) unpickle the metrics once (a verifier and its NLI model
are built once per actor) while the driver reads the input: a file on this machine is streamed a
block at a time by the local engine's own reader (`tempo_eval.io.stream`), so the first block is
scored while the rest is read; a URI or a directory of parts is read with Ray Data (`reader`).
Rows are scored by the local runner's own functions (`tempo_eval.engine.scoring`): same scores,
same NaN reasons. `driver` hands the blocks out and writes what comes back (see `output` for the
layout, `workspace` for the run in the workspace), so only one process ever writes.

Killed or interrupted, the same call (or CLI command) resumes: finished blocks are skipped, and
their failed results (row_error, judge_error, ...) are computed again, as a local resume does.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_eval.common.extras import require_extra
from tempo_eval.engine.distributed import output
from tempo_eval.engine.distributed.driver import ActorPool, Driver
from tempo_eval.engine.distributed.reader import _URI
from tempo_eval.engine.distributed.shipping import (
    CacheSource,
    install_default_caches,
    ship_metrics,
    unship_metrics,
)

logger = logging.getLogger(__name__)

DEFAULT_BLOCK_SIZE = 1000


@dataclass
class RayRun:
    """What `evaluate_ray` returns: where the output is and what this call did.

    `run_id` is the run in the workspace (None when written to `out` only), `computed_blocks`
    were scored by this call, `skipped_blocks` found finished in `out` (resume),
    `retried_rows` rows of those had failed results that this call computed again;
    `verdicts_added` is how many new verdicts the workers' results added to the verdict cache;
    `cache_hits` / `cache_misses` count the workers' verdict lookups found / not found in it."""

    out: Path
    status: str
    n_rows: int
    n_blocks: int
    metrics: list[str]
    computed_blocks: int
    skipped_blocks: int
    verdicts_added: int
    cache_hits: int = 0
    cache_misses: int = 0
    retried_rows: int = 0
    run_id: int | None = None
    #: what the reader noted about the input (the local loader's warnings)
    warnings: list[str] = field(default_factory=list)
    #: seconds `ray.init` took (0 when Ray was running already), part of the call's time
    ray_init_s: float = 0.0

    @cached_property
    def frame(self) -> pd.DataFrame:
        """One row per (dataset row, metric), the local runner's columns (`output.read_results`)."""
        return output.read_results(self.out)

    def aggregate(self, **kwargs: Any) -> pd.DataFrame:
        """As `RunResult.aggregate`."""
        from tempo_eval.engine.scoring import aggregate_frame

        return aggregate_frame(self.frame, metrics=self.metrics, **kwargs)


def evaluate_ray(data: Any, metrics: Sequence[Any], *, out: str | Path,
                 mapping: Mapping[str, str] | None = None, format: str | None = None,
                 reference_date: Any = None, address: str | None = None, num_workers: int = 2,
                 gpus_per_worker: float = 0, block_size: int = DEFAULT_BLOCK_SIZE,
                 max_concurrency: int = 4, retry_failed: bool = True,
                 progress: Callable[[int, int], None] | None = None, store: Any = None,
                 run_name: str | None = None, user: str | None = None) -> RayRun:
    """Evaluate `data` with `metrics` on Ray; per-row results go to the directory `out` and, block
    by block as they finish, into the workspace as a normal run.

    `data` is a path or URI (a file on this machine, streamed a block at a time by the local
    engine's reader; a URI, a directory of part files, or a list, read with Ray Data, see
    `reader`), or an already loaded Dataset / DataFrame. `address` is the Ray cluster to join
    (default: the running one, else a local one started here and stopped at the end).
    `num_workers` actors score blocks of `block_size` rows, `max_concurrency` rows at once each
    (for judges that wait on the network). Resumes an interrupted run into the same `out`, and
    with `retry_failed` (default) computes again the failed results of its finished blocks.
    `store` is the workspace's RunStore (default: the workspace TEMPO_EVAL_HOME names), or False
    to write `out` only (`import_results` brings it in later); the run is named `run_name` (kept
    when None) and found again by a resume of the same `out`; `user` is recorded as who made it.
    Raises OutputBusy when another driver is writing `out`, RunInUse when another process writes
    its run in the workspace.
    Raises ValueError (InputError for bad input) before anything is scored.
    """
    require_extra("ray", "ray", "The Ray engine")
    import ray

    from tempo_eval.core.extract import parse_reference_date
    from tempo_eval.engine.scoring import check_columns, check_metrics, run_config
    from tempo_eval.store.run_records import config_hash

    metrics = check_metrics(metrics)
    for name, value in (("num_workers", num_workers), ("block_size", block_size),
                        ("max_concurrency", max_concurrency)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(gpus_per_worker, bool) or not isinstance(gpus_per_worker, (int, float)) or not (
        math.isfinite(gpus_per_worker) and gpus_per_worker >= 0
    ):
        raise ValueError(f"gpus_per_worker must be a number >= 0, got {gpus_per_worker!r}")
    if not isinstance(retry_failed, bool):
        raise ValueError(f"retry_failed must be True or False, got {retry_failed!r}")
    if store is not False and store is not None and not hasattr(store, "write_encoded"):
        raise ValueError(f"store must be a RunStore, None (the workspace) or False (no workspace), got {store!r}")
    parsed_date = parse_reference_date(reference_date)
    reference_date = parsed_date.isoformat() if parsed_date is not None else None

    started_here = not ray.is_initialized()
    clock = time.perf_counter()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=True)
    init_s = time.perf_counter() - clock
    pool = None
    try:
        # the actors start (a process each, the metrics built) while the driver reads the
        # input's first pass: neither waits for the other
        source, db_path = _cache_source(ray, metrics, address)
        pool = ActorPool(ray, BlockScorer, ship_metrics(metrics, source, gpus_per_worker=gpus_per_worker),
                         num_workers=num_workers, gpus_per_worker=gpus_per_worker,
                         reference_date=reference_date, max_concurrency=max_concurrency, source=source)
        stream = _open_input(data, mapping, format, block_size)
        columns = [str(c) for c in stream.columns]
        if "query_id" not in columns:
            raise ValueError("the dataset has no query_id column (load it with tempo_eval.io.load_dataset)")
        check_columns(metrics, columns)
        config = run_config(metrics, reference_date=reference_date)
        # n_rows, n_blocks and the reader's warnings are known once the input is read to the end
        # (a streamed file); a resume of a run stopped before then compares the rest
        n_rows = stream.n_rows
        manifest = {
            "format": output.FORMAT_NAME, "format_version": output.FORMAT_VERSION,
            "dataset_name": stream.name, "content_hash": stream.content_hash,
            "mapping": dict(stream.mapping), "source_format": stream.source_format,
            "warnings": [str(w) for w in stream.warnings], "n_rows": n_rows,
            "config": config, "config_hash": config_hash(config), "metrics": [m.name for m in metrics],
            "block_size": block_size, "n_blocks": None if n_rows is None else max(1, math.ceil(n_rows / block_size)),
        }
        with output.claim(out):
            done = output.prepare(out, manifest)
            workspace = None
            if store is not False:
                from tempo_eval.engine.distributed.workspace import WorkspaceRun
                from tempo_eval.engine.scoring import default_run_name
                from tempo_eval.store.runs import RunStore

                workspace = WorkspaceRun.open(store if store is not None else RunStore(), output.read_manifest(out),
                                              name=run_name, default_name=default_run_name(stream.name, metrics),
                                              user=user)
            try:
                driver = Driver(stream, metrics, out=out, workspace=workspace, pool=pool, done=done,
                                block_size=block_size, retry_failed=retry_failed, db_path=db_path,
                                progress=progress)
                driver.run()
                n_blocks, warnings = driver.finish()
                run = RayRun(out=Path(out), status="finished", n_rows=driver.n_rows, n_blocks=n_blocks,
                             metrics=list(manifest["metrics"]), computed_blocks=driver.computed_blocks,
                             skipped_blocks=driver.skipped_blocks, verdicts_added=driver.verdicts_added,
                             cache_hits=driver.cache_hits, cache_misses=driver.cache_misses,
                             retried_rows=driver.retried_rows, warnings=warnings, run_id=driver.run_id,
                             ray_init_s=init_s)
            except BaseException as exc:
                if workspace is not None:
                    _stopped(workspace, exc)
                raise
            if workspace is not None:
                workspace.finish("finished")
            return run
    finally:
        if pool is not None:
            pool.close()
        if started_here:
            ray.shutdown()


def _cache_source(ray: Any, metrics: Sequence[Any], address: str | None) -> tuple[CacheSource, str]:
    """Where the actors read verdicts (`CacheSource`), and the workspace database's path."""
    from tempo_eval.store.db import database_location, database_url

    db_path = database_location()
    snapshot = None
    if (address is not None or database_url() is not None) and _uses_verifier(metrics):
        # workers on other machines cannot open the workspace file, and a server's database is
        # not a file: ship what it knows
        from tempo_eval.store.verdict_cache import VerdictCache

        snapshot = ray.put(VerdictCache(db_path).records())
    # the actors open a SQLite file, never a server: a URL (and the password in it) stays here
    return CacheSource(None if database_url() is not None else db_path, snapshot), db_path


def _uses_verifier(metrics: Sequence[Any]) -> bool:
    # factual_correctness always verifies (lexical by default); others when given a verifier
    return any(getattr(m, "verifier", None) is not None or m.name == "factual_correctness" for m in metrics)


def _open_input(data: Any, mapping: Mapping[str, str] | None, format: str | None, block_size: int) -> Any:
    """The input as a DatasetStream of `block_size`-row batches: a file on this machine streamed
    by the local engine's reader (`open_stream`: scoring starts with its first batch, memory
    grows with a batch); a URI, a directory or a list of paths read with Ray Data (`reader`);
    a loaded Dataset or DataFrame cut into batches."""
    from tempo_eval.engine.scoring import as_dataset
    from tempo_eval.io.stream import frame_stream, open_stream

    if isinstance(data, (str, Path)) and not _URI.match(str(data)) and os.path.isfile(data):
        return open_stream(data, mapping, format=format, batch_rows=block_size)
    if isinstance(data, (str, Path)) or (isinstance(data, (list, tuple)) and data
                                         and all(isinstance(d, (str, Path)) for d in data)):
        from tempo_eval.engine.distributed.reader import read_dataset

        dataset = read_dataset([str(d) for d in data] if isinstance(data, (list, tuple)) else str(data),
                               mapping, format=format)
    else:
        dataset = as_dataset(data)
    return frame_stream(dataset, block_size)


def _stopped(workspace: Any, exc: BaseException) -> None:
    """Mark the workspace's run as the local runner marks a stopped one (failed on an error,
    cancelled on an interruption); its finished blocks stay, and a resume goes on from them."""
    failed = isinstance(exc, Exception)
    try:
        workspace.finish("failed" if failed else "cancelled", f"{type(exc).__name__}: {exc}" if failed else None)
    except Exception as status_error:  # a full disk refuses the status too: report the cause
        logger.warning("could not mark run %d as stopped: %s", workspace.run_id, status_error)


class BlockScorer:
    """The actor (`ActorPool` starts `num_workers` of them): builds the metrics once, then scores
    one block per call (`score`)."""

    def __init__(self, payload: bytes, reference_date: str | None, max_concurrency: int,
                 source: CacheSource, gpus_per_worker: float) -> None:
        from tempo_eval.common.secrets import secret_values
        from tempo_eval.engine.distributed.shipping import worker_cache

        install_default_caches(source, gpus_per_worker)
        self.metrics = unship_metrics(payload)
        self.cache = worker_cache(source)
        self.reference_date = reference_date
        self.max_concurrency = max_concurrency
        self.secrets = secret_values()
        # One focus-time memo for the actor's life, as the local runner keeps one for the whole
        # run: a text repeated across blocks (a context, a query) is extracted once. It lives in
        # this context, in which every block is scored.
        self.context = contextvars.copy_context()
        self.context.run(self._open_memo)
        # What is alive now (Ray, the libraries, the metrics, the verifier's model) lives as long
        # as the actor: leave it out of the cyclic collector's full passes, which otherwise rescan
        # it after every few blocks (a quarter of the scoring time, measured with bench/ray.py).
        gc.collect()
        gc.freeze()

    def _open_memo(self) -> None:
        from tempo_eval.core.focus_memo import extraction_memo

        self.memo = contextlib.ExitStack()  # closed with the actor, in its context (`__del__`)
        self.memo.enter_context(extraction_memo())

    def __del__(self) -> None:
        memo = getattr(self, "memo", None)
        if memo is not None:
            self.context.run(memo.close)

    def score(self, columns: list[str], numbers: Sequence[int], rows: list[list[Any]],
              todo: list[list[str]] | None,
              run_id: int | None) -> tuple[bytes, bytes, Any, dict[str, Any], int, int]:
        """Rows `numbers` (their cells `rows`, under `columns`), every metric or `todo`'s for
        each row: (results file, details file, the rows the workspace stores for run `run_id`
        or None, the new verdicts, cache hits, cache misses)."""
        from tempo_eval.common.process import gc_paused
        from tempo_eval.common.run_sync import run_sync

        offline = all(m.batchable(columns) for m in self.metrics)
        # An offline block leaves no cycles (see `heap_settled_per_batch`): the collector is off
        # while it is scored and what it leaves (the memo's new focus times) is frozen after, as
        # a local scoring process does. Rows scored one by one (a judge) keep the collector on.
        with gc_paused() if offline else contextlib.nullcontext():
            scored = self.context.run(run_sync, score_rows(self.metrics, columns, rows, numbers,
                                                           self.reference_date, self.max_concurrency, todo))
            results, details, encoded = output.encode_block_rows(scored, self.secrets, run_id or 0)
        if offline:
            del scored
            gc.freeze()
        new, hits, misses = self.cache.drain()
        return results, details, None if run_id is None else encoded, new, hits, misses


async def score_rows(
    metrics: Sequence[Any], columns: Sequence[str], rows: Sequence[Sequence[Any]], numbers: Sequence[int],
    reference_date: str | None, max_concurrency: int, todo: Sequence[Sequence[str]] | None = None,
) -> list[tuple[int, str, str | None, list[Any]]]:
    """(row number, query_id, system, results) for each of `rows` (numbered `numbers`), as the
    local runner scores a batch: the offline metrics (`Metric.batchable`) of all the rows in one
    `measure_batch`, the others `max_concurrency` rows at once; `todo` names the metrics to
    compute for each row (default: all)."""
    from tempo_eval.engine.scoring import measure_batch, measure_row, row_dict, system

    dicts = [row_dict(columns, values, reference_date) for values in rows]
    chosen = [list(metrics) if todo is None else [m for m in metrics if m.name in todo[k]] for k in range(len(rows))]
    batched = {m.name for m in metrics if m.batchable(columns)}
    offline = await measure_batch([(numbers[k], dicts[k], [m for m in chosen[k] if m.name in batched])
                                   for k in range(len(rows))])
    online = [[m for m in chosen[k] if m.name not in batched] for k in range(len(rows))]
    scored: list[Any] = [None] * len(rows)
    queue = iter(range(len(rows)))

    async def worker() -> None:
        for k in queue:  # one shared iterator: each row goes to one worker
            results = offline[k] + (await measure_row(online[k], dicts[k], numbers[k]) if online[k] else [])
            scored[k] = (numbers[k], str(dicts[k].get("query_id")), system(dicts[k]), results)

    await asyncio.gather(*(worker() for _ in range(min(max_concurrency, len(rows)))))
    return scored
