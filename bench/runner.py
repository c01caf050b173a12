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
   bootstrap CI).
"""

from __future__ import annotations

import argparse
import asyncio
import os
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
    args = parser.parse_args()

    workspace = tempfile.mkdtemp(prefix="tempo_eval_bench_")
    os.environ["TEMPO_EVAL_HOME"] = workspace
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.runner import evaluate

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

if __name__ == "__main__":
    main()
