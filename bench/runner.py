"""Benchmark: the batch runner on a large dataset, and the cost of resuming a finished run.

    python bench/runner.py                 # 100,000 rows, focus-time Temporal Faithfulness
    python bench/runner.py --rows 20000

The rows are written to a JSONL file and read with `load_dataset`, as the CLI does. Measured in
one process, on the same rows (wall time, and CPU time of this process, which is steadier when
other processes share the machine):
1. reference: the bare metric, `await metric.ameasure(...)` row after row, nothing stored;
2. `evaluate(...)` on a fresh workspace: the dataset stored, every row measured and committed to
   the run store (ratio 2 / 1 = what the runner, the store and per-row commits add to the metric);
3. `evaluate(...)` again on the finished run: nothing is recomputed; the time is finding the
   dataset by hash and the run by configuration and listing the stored pairs (ratio 3 / 2);
4. reading the 100,000 results back (`RunResult.frame`) and `RunResult.aggregate()` (mean and
   bootstrap CI);
5. store size (issue 11, target <= 3x the input): the rows written as a CSV file (queries with a
   period, so Temporal NDCG has a query focus time), evaluated with the two focus-time metrics
   (temporal_faithfulness, temporal_ndcg) in a fresh workspace; the SQLite file (after a WAL
   checkpoint) against the CSV's size, where the bytes went (per table, from dbstat; results'
   details as JSON text and as stored), and what the integrity checks on open cost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

PLACES = ["bridge", "library", "harbour", "museum", "station", "cathedral", "stadium", "tower"]
PERIODS = ["World War II", "the Great Depression", "the Cold War", "World War I"]


def make_frame(n_rows: int) -> pd.DataFrame:
    """Deterministic rows: an answer with two years (one grounded, one not for every third row)
    and two contexts, one naming a year, one a named period."""
    answers, contexts = [], []
    for i in range(n_rows):
        place = PLACES[i % len(PLACES)]
        built = 1850 + (i * 7) % 170
        renovated = built + 10 + i % 30
        told = renovated if i % 3 else renovated + 1
        answers.append(f"The {place} was built in {built} and renovated in {renovated}.")
        contexts.append([
            f"Work on the {place} started in {built - 2} and ended in {built}.",
            f"It was restored in {told}, long after {PERIODS[i % len(PERIODS)]}.",
        ])
    return pd.DataFrame({
        "query_id": [f"q{i + 1}" for i in range(n_rows)],
        "query": [f"When was the {PLACES[i % len(PLACES)]} built?" for i in range(n_rows)],
        "answer": answers,
        "contexts": contexts,
    })


async def bare(metric, frame: pd.DataFrame) -> None:
    for answer, contexts in zip(frame["answer"], frame["contexts"], strict=True):
        await metric.ameasure(answer=answer, contexts=contexts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--store-rows", type=int, default=50_000,
                        help="rows of the store-size measurement (two metrics each)")
    args = parser.parse_args()

    workspace = tempfile.mkdtemp(prefix="tempo_eval_bench_")
    os.environ["TEMPO_EVAL_HOME"] = workspace
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    path = Path(workspace) / "bench.jsonl"
    make_frame(args.rows).to_json(path, orient="records", lines=True)
    dataset = load_dataset(path)
    frame = dataset.frame
    print(f"{args.rows:,} rows, focus-time temporal_faithfulness, max_concurrency={args.concurrency}")
    print(f"workspace {workspace}")

    start, cpu = time.perf_counter(), time.process_time()
    asyncio.run(bare(TemporalFaithfulness(), frame))
    t_bare, c_bare = time.perf_counter() - start, time.process_time() - cpu
    print(f"reference (bare metric, nothing stored): {t_bare:8.2f} s wall {c_bare:8.2f} s CPU"
          f"  {args.rows / t_bare:9,.0f} rows/s")

    start, cpu = time.perf_counter(), time.process_time()
    first = evaluate(dataset, [TemporalFaithfulness()], max_concurrency=args.concurrency)
    t_first, c_first = time.perf_counter() - start, time.process_time() - cpu
    print(f"evaluate, fresh run:                     {t_first:8.2f} s wall {c_first:8.2f} s CPU"
          f"  {args.rows / t_first:9,.0f} rows/s  (x{t_first / t_bare:.2f} wall, x{c_first / c_bare:.2f} CPU"
          f" of the bare metric; {first.computed:,} computed)")

    start, cpu = time.perf_counter(), time.process_time()
    second = evaluate(dataset, [TemporalFaithfulness()], max_concurrency=args.concurrency)
    t_second, c_second = time.perf_counter() - start, time.process_time() - cpu
    print(f"evaluate, finished run again (resume):   {t_second:8.2f} s wall {c_second:8.2f} s CPU"
          f"  (x{t_second / t_first:.3f} wall, x{c_second / c_first:.3f} CPU of the first call;"
          f" {second.computed} computed, {second.reused:,} reused)")

    start = time.perf_counter()
    n_results = len(second.frame)
    t_read = time.perf_counter() - start
    start = time.perf_counter()
    row = second.aggregate().iloc[0]
    t_aggregate = time.perf_counter() - start
    print(f"read {n_results:,} results: {t_read:.2f} s; aggregate (mean + 2000-resample bootstrap CI): "
          f"{t_aggregate:.2f} s -> mean {row['mean']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}], "
          f"measurable {row['n_measurable']:,}/{row['n_total']:,}, NaN reasons {row['nan_reasons']}")
    size = sum(p.stat().st_size for p in Path(workspace).iterdir() if p.suffix != ".jsonl")
    print(f"run store size: {size / 1e6:.1f} MB")
    store_size(args.store_rows)


def store_size(n_rows: int) -> None:
    """Section 5 of the module docstring."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.db import DB_FILENAME
    from tempo_eval.store.packing import _unpack
    from tempo_eval.store.runs import RunStore

    workspace = Path(tempfile.mkdtemp(prefix="tempo_eval_bench_store_"))
    frame = make_frame(n_rows)
    frame["query"] = [f"What happened to the {PLACES[i % len(PLACES)]} between {1850 + i % 100} and "
                      f"{1900 + i % 100}?" for i in range(n_rows)]
    source = workspace / "input.csv"
    frame.to_csv(source, index=False)
    db_path = workspace / DB_FILENAME
    store = RunStore(db_path)
    start = time.perf_counter()
    evaluate(load_dataset(source), [TemporalFaithfulness(), TemporalNDCG()], store=store)
    elapsed = time.perf_counter() - start
    store.close()
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stored, given = db_path.stat().st_size, source.stat().st_size
    print(f"store size, {n_rows:,} rows x 2 focus-time metrics ({elapsed:.1f} s): input CSV "
          f"{given / 1e6:.1f} MB, workspace file {stored / 1e6:.1f} MB = x{stored / given:.2f} the input "
          "(target <= x3)")
    try:
        tables = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:  # SQLite built without dbstat
        tables = []
    for name, size in tables[:6]:
        print(f"  {name:28s} {size / 1e6:8.2f} MB")
    details = conn.execute("SELECT details FROM results").fetchall()
    as_text = sum(len(_unpack(d).encode("utf-8")) for (d,) in details)
    as_stored = sum(len(d) if isinstance(d, bytes) else len(d.encode("utf-8")) for (d,) in details)
    reasons = conn.execute("SELECT SUM(LENGTH(CAST(reason AS BLOB))) FROM results").fetchone()[0]
    print(f"  results' details: {as_text / len(details):.0f} bytes of JSON per result, stored "
          f"{as_stored / len(details):.0f} (zlib with a preset dictionary); reasons "
          f"{reasons / len(details):.0f} bytes per result")
    for check in ("quick_check", "integrity_check"):
        start = time.perf_counter()
        conn.execute(f"PRAGMA {check}").fetchall()
        took = time.perf_counter() - start
        print(f"  PRAGMA {check}: {took:.3f} s ({stored / 1e6 / max(took, 1e-9):.0f} MB/s)")
    conn.close()


if __name__ == "__main__":
    main()
