"""`evaluate_ray`: score a dataset in a Ray actor pool, one Parquet file per block of rows, each
block written into the workspace as it finishes.

The driver reads the dataset (`reader`), checks the metrics' columns as the local runner does,
and cuts the rows into blocks of `block_size`. Blocks without output go to `map_batches` with a
callable class (`BlockScorer`), one block per call, in a pool of `num_workers` actors (each with
`gpus_per_worker` GPUs). Each actor unpickles the metrics once, so a verifier and its NLI model
are built once per actor. Rows are scored by the local runner's own functions: the offline
metrics a block at a time (`tempo_eval.scoring.measure_batch`, in one focus-time memo kept for
the actor's life), the others row by row (`measure_row`): same scores, same NaN reasons, a
failing row NaN "row_error". The actor returns the block as Parquet bytes and as the rows the
workspace stores, plus the verdicts it added to the cache; the driver writes them all (see
`output` for the layout and why a block is written once, `workspace` for the run in the
workspace: a normal run from the first block, no import step), so only one process ever writes.

Killed or interrupted, the same call (or CLI command) resumes: finished blocks are skipped, and
their failed results (row_error, judge_error, ...) are computed again, as a local resume does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import gc
import json
import logging
import math
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval._extras import require_extra
from tempo_eval.distributed import output
from tempo_eval.distributed.shipping import (
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

    @cached_property
    def frame(self) -> pd.DataFrame:
        """One row per (dataset row, metric), the local runner's columns (`output.read_results`)."""
        return output.read_results(self.out)

    def aggregate(self, **kwargs: Any) -> pd.DataFrame:
        """As `RunResult.aggregate`."""
        from tempo_eval.scoring import aggregate_frame

        return aggregate_frame(self.frame, metrics=self.metrics, **kwargs)


def evaluate_ray(
    data: Any,
    metrics: Sequence[Any],
    *,
    out: str | Path,
    mapping: Mapping[str, str] | None = None,
    format: str | None = None,
    reference_date: Any = None,
    address: str | None = None,
    num_workers: int = 2,
    gpus_per_worker: float = 0,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_concurrency: int = 4,
    retry_failed: bool = True,
    progress: Callable[[int, int], None] | None = None,
    store: Any = None,
    run_name: str | None = None,
) -> RayRun:
    """Evaluate `data` with `metrics` on Ray; per-row results go to the directory `out` and, block
    by block as they finish, into the workspace as a normal run.

    `data` is a path or URI (a file, a directory of part files, or a list; read with Ray Data,
    see `reader`), or an already loaded Dataset / DataFrame. `address` is the Ray cluster to join
    (default: the running one, else a local one started here and stopped at the end).
    `num_workers` actors score blocks of `block_size` rows, `max_concurrency` rows at once each
    (for judges that wait on the network). Resumes an interrupted run into the same `out`, and
    with `retry_failed` (default) computes again the failed results of its finished blocks.
    `store` is the workspace's RunStore (default: the workspace TEMPO_EVAL_HOME names), or False
    to write `out` only (`import_results` brings it in later); the run is named `run_name` (kept
    when None) and found again by a resume of the same `out`.
    Raises OutputBusy when another driver is writing `out`, RunInUse when another process writes
    its run in the workspace.
    Raises ValueError (InputError for bad input) before anything is scored.
    """
    require_extra("ray", "ray", "The Ray engine")
    import ray

    from tempo_eval.core.extract import parse_reference_date
    from tempo_eval.scoring import as_dataset, check_columns, check_metrics, run_config
    from tempo_eval.store.run_records import config_hash

    metrics = check_metrics(metrics)
    for name, value, minimum in (("num_workers", num_workers, 1), ("block_size", block_size, 1),
                                 ("max_concurrency", max_concurrency, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
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
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=True)
    try:
        if isinstance(data, (str, Path)) or (isinstance(data, (list, tuple)) and data
                                             and all(isinstance(d, (str, Path)) for d in data)):
            from tempo_eval.distributed.reader import read_dataset

            dataset = read_dataset([str(d) for d in data] if isinstance(data, (list, tuple)) else str(data),
                                   mapping, format=format)
        else:
            dataset = as_dataset(data)
        frame: pd.DataFrame = dataset.frame
        if "query_id" not in frame.columns:
            raise ValueError("the dataset has no query_id column (load it with tempo_eval.io.load_dataset)")
        check_columns(metrics, [str(c) for c in frame.columns])

        config = run_config(metrics, reference_date=reference_date)
        n_rows = len(frame)
        n_blocks = max(1, math.ceil(n_rows / block_size))
        manifest = {
            "format": output.FORMAT_NAME, "format_version": output.FORMAT_VERSION,
            "dataset_name": dataset.name, "content_hash": dataset.content_hash,
            "mapping": dict(dataset.mapping), "source_format": dataset.source_format,
            "warnings": [str(w) for w in dataset.warnings], "n_rows": n_rows,
            "config": config, "config_hash": config_hash(config), "metrics": [m.name for m in metrics],
            "block_size": block_size, "n_blocks": n_blocks,
        }
        with output.claim(out):
            done = output.prepare(out, manifest, frame)
            workspace = None
            if store is not False:
                from tempo_eval.distributed.workspace import WorkspaceRun
                from tempo_eval.scoring import default_run_name
                from tempo_eval.store.runs import RunStore

                workspace = WorkspaceRun.open(store if store is not None else RunStore(), output.read_manifest(out),
                                              name=run_name, default_name=default_run_name(dataset.name, metrics))
            try:
                run = _run(ray, frame, metrics, manifest, done, workspace, out=out, address=address,
                           reference_date=reference_date, num_workers=num_workers,
                           gpus_per_worker=gpus_per_worker, block_size=block_size,
                           max_concurrency=max_concurrency, retry_failed=retry_failed, progress=progress)
            except BaseException as exc:
                if workspace is not None:
                    _stopped(workspace, exc)
                raise
            if workspace is not None:
                workspace.finish("finished")
            return run
    finally:
        if started_here:
            ray.shutdown()


def _stopped(workspace: Any, exc: BaseException) -> None:
    """Mark the workspace's run as the local runner marks a stopped one (failed on an error,
    cancelled on an interruption); its finished blocks stay, and a resume goes on from them."""
    failed = isinstance(exc, Exception)
    try:
        workspace.finish("failed" if failed else "cancelled", f"{type(exc).__name__}: {exc}" if failed else None)
    except Exception as status_error:  # a full disk refuses the status too: report the cause
        logger.warning("could not mark run %d as stopped: %s", workspace.run_id, status_error)


def _run(
    ray: Any, frame: pd.DataFrame, metrics: Sequence[Any], manifest: dict[str, Any], done: set[int],
    workspace: Any, *,
    out: str | Path, address: str | None, reference_date: str | None, num_workers: int,
    gpus_per_worker: float, block_size: int, max_concurrency: int, retry_failed: bool,
    progress: Callable[[int, int], None] | None,
) -> RayRun:
    """The run once `out` is claimed and prepared (`done` blocks finished): what is left to score,
    the scoring, the finished manifest; each block also into `workspace` (a WorkspaceRun, or None)."""
    from tempo_eval.store.db import default_db_path

    n_rows, n_blocks = int(manifest["n_rows"]), int(manifest["n_blocks"])
    if workspace is not None and done:
        caught_up = workspace.catch_up(Path(out), done)
        if caught_up:
            logger.info("%d finished blocks of %s were not in the workspace yet: written from their files",
                        caught_up, out)
    retry = output.failed_results(out, done) if retry_failed and done else {}
    work: list[tuple[int, Sequence[int], list[list[str]] | None]] = [
        (b, range(b * block_size, b * block_size + _block_rows(b, block_size, n_rows)), None)
        for b in range(n_blocks) if b not in done
    ]
    work += [(b, list(rows), list(rows.values())) for b, rows in retry.items()]
    retried_rows = sum(len(rows) for rows in retry.values())
    logger.info("%d rows in %d blocks, %d blocks to evaluate, %d failed rows to evaluate again",
                n_rows, n_blocks, n_blocks - len(done), retried_rows)

    db_path = str(default_db_path())
    snapshot = None
    if address is not None and _uses_verifier(metrics):
        # workers on other machines cannot open the workspace file: ship what it knows
        from tempo_eval.store.verdict_cache import VerdictCache

        snapshot = ray.put(VerdictCache(db_path).records())
    source = CacheSource(db_path, snapshot)
    payload = ship_metrics(metrics, source, gpus_per_worker=gpus_per_worker)

    rows_done = sum(_block_rows(b, block_size, n_rows) for b in done) - retried_rows
    if progress is not None:
        progress(rows_done, n_rows)
    # The canonical rows are written beside the scoring, once the blocks are handed to Ray:
    # the driver then mostly waits (for the actors to start, then for blocks), while before
    # that the thread would hold the GIL the block shipping needs.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    writer: list[concurrent.futures.Future[None]] = []

    def write_dataset() -> None:
        def both() -> None:
            output.write_dataset(out, frame)
            if workspace is not None:
                workspace.store_dataset(frame)

        writer.append(pool.submit(both))

    added = hits = misses = 0
    try:
        if work:
            added, hits, misses = _score(
                ray, frame, work, out=out, payload=payload, source=source,
                reference_date=reference_date, num_workers=num_workers, gpus_per_worker=gpus_per_worker,
                max_concurrency=max_concurrency, db_path=db_path, progress=progress,
                rows_done=rows_done, started=write_dataset, workspace=workspace,
            )
        if not writer:
            write_dataset()
        writer[0].result()  # its error, if any, is this call's
    finally:
        pool.shutdown(wait=True)
    output.set_status(out, "finished")
    return RayRun(out=Path(out), status="finished", n_rows=n_rows, n_blocks=n_blocks,
                  metrics=[m.name for m in metrics], computed_blocks=n_blocks - len(done),
                  skipped_blocks=len(done), verdicts_added=added, cache_hits=hits, cache_misses=misses,
                  retried_rows=retried_rows, warnings=list(manifest["warnings"]),
                  run_id=None if workspace is None else workspace.run_id)


def _block_rows(block: int, block_size: int, n_rows: int) -> int:
    return max(0, min(block_size, n_rows - block * block_size))


def _in_flight(n_blocks: int, num_workers: int) -> int:
    """Blocks queued per actor. Two keep an actor busy while the next block travels (20% faster
    with 30 blocks on 2 actors); with few blocks, the actor that starts first would take them all
    while the others are still loading their model (measured: 2 blocks, 2 actors, 1.6x slower)."""
    return 1 if n_blocks <= 2 * num_workers else 2


def _take(values: np.ndarray, rows: Sequence[int]) -> np.ndarray:
    return values[rows.start:rows.stop] if isinstance(rows, range) else values[list(rows)]


def _uses_verifier(metrics: Sequence[Any]) -> bool:
    # factual_correctness always verifies (lexical by default); others when given a verifier
    return any(getattr(m, "verifier", None) is not None or m.name == "factual_correctness" for m in metrics)


def _score(
    ray: Any, frame: pd.DataFrame, work: list[tuple[int, Sequence[int], list[list[str]] | None]], *,
    out: str | Path, payload: bytes, source: CacheSource, reference_date: str | None, num_workers: int,
    gpus_per_worker: float, max_concurrency: int, db_path: str,
    progress: Callable[[int, int], None] | None, rows_done: int, started: Callable[[], None], workspace: Any,
) -> tuple[int, int, int]:
    """Score `work`: (block, its rows, None for every metric or the metric names to compute again
    for each row). `started` is called once the blocks are handed to Ray. Each block's files are
    written, then its rows into `workspace` (when not None)."""
    from tempo_eval.store.verdict_cache import VerdictCache

    columns = [str(c) for c in frame.columns]
    values = frame.to_numpy(dtype=object)
    items = [
        {"block": block, "retry": todo is not None,
         "rows": pickle.dumps((rows, _take(values, rows).tolist(), todo), protocol=pickle.HIGHEST_PROTOCOL)}
        for block, rows, todo in work
    ]
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = False  # write blocks as they finish
    ds = ray.data.from_items(items, override_num_blocks=len(items))
    scored = ds.map_batches(
        BlockScorer,
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=min(num_workers, len(items)),
                                           max_tasks_in_flight_per_actor=_in_flight(len(items), num_workers)),
        num_cpus=1,
        num_gpus=gpus_per_worker or None,
        fn_constructor_kwargs={
            "payload": payload, "columns": columns, "reference_date": reference_date, "max_concurrency": max_concurrency,
            "source": source, "gpus_per_worker": gpus_per_worker,
            "run_id": None if workspace is None else workspace.run_id,
        },
    )
    cache: VerdictCache | None = None  # opened on the first block that brings verdicts
    added = 0
    n_rows = len(frame)
    counts = {"hits": 0, "misses": 0}
    results = iter(scored.iter_rows())
    started()
    for result in results:
        block = int(result["block"])
        write = output.merge_block if bool(result["retry"]) else output.write_block
        write(out, block, bytes(result["results"]), bytes(result["details"]))
        if workspace is not None:  # after the files: a block in the workspace is done in `out`
            workspace.record(pickle.loads(bytes(result["store_rows"])))
        verdicts = json.loads(bytes(result["verdicts"]))
        if verdicts:
            if cache is None:
                cache = VerdictCache(db_path)
            added += cache.add_many(verdicts)
        counts["hits"] += int(result["cache_hits"])
        counts["misses"] += int(result["cache_misses"])
        rows_done += int(result["n_rows"])
        if progress is not None:
            progress(rows_done, n_rows)
    return added, counts["hits"], counts["misses"]


class BlockScorer:
    """The actor: builds the metrics once, then scores one block per call."""

    def __init__(
        self, payload: bytes, columns: list[str], reference_date: str | None,
        max_concurrency: int, source: CacheSource, gpus_per_worker: float, run_id: int | None = None,
    ) -> None:
        from tempo_eval._secrets import secret_values
        from tempo_eval.distributed.shipping import worker_cache

        install_default_caches(source, gpus_per_worker)
        self.metrics = unship_metrics(payload)
        self.cache = worker_cache(source)
        self.columns = columns
        self.reference_date = reference_date
        self.max_concurrency = max_concurrency
        self.secrets = secret_values()
        self.run_id = run_id
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

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from tempo_eval._async import run_sync

        numbers, rows, todo = pickle.loads(batch["rows"][0])
        scored = self.context.run(run_sync, score_rows(self.metrics, self.columns, rows, numbers,
                                                       self.reference_date, self.max_concurrency, todo))
        results, details, encoded = output.encode_block_rows(scored, self.secrets, self.run_id or 0)
        store_rows = b"" if self.run_id is None else pickle.dumps(encoded, protocol=pickle.HIGHEST_PROTOCOL)
        new, hits, misses = self.cache.drain()
        verdicts = json.dumps(new, ensure_ascii=False).encode("utf-8")
        return {
            "cache_hits": np.array([hits]),
            "cache_misses": np.array([misses]),
            "block": batch["block"],
            "retry": batch["retry"],
            "n_rows": np.array([len(rows)]),
            "results": np.array([results], dtype=object),
            "details": np.array([details], dtype=object),
            "verdicts": np.array([verdicts], dtype=object),
            "store_rows": np.array([store_rows], dtype=object),
        }


async def score_rows(
    metrics: Sequence[Any], columns: Sequence[str], rows: Sequence[Sequence[Any]], numbers: Sequence[int],
    reference_date: str | None, max_concurrency: int, todo: Sequence[Sequence[str]] | None = None,
) -> list[tuple[int, str, str | None, list[Any]]]:
    """(row number, query_id, system, results) for each of `rows` (numbered `numbers`), as the
    local runner scores a batch: the offline metrics (`Metric.batchable`) of all the rows in one
    `measure_batch`, the others `max_concurrency` rows at once; `todo` names the metrics to
    compute for each row (default: all)."""
    from tempo_eval.scoring import measure_batch, measure_row, row_dict, system

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
