"""Benchmark: the local runner against the Ray engine with 2 workers, in the same run.

    python bench/ray.py                                  # 200,000 rows focus-time, 2,000 rows lexical
    python bench/ray.py --rows 20000 --verifier-rows 500

Two workloads, each read from the same JSONL file by both engines, end to end (reading, scoring,
writing results; the local runner commits every row to a fresh workspace, the Ray engine writes
one Parquet file per block):
1. focus-time: Temporal Faithfulness in its focus-time mode (pure Python, one core per process);
2. lexical verifier: Factual Correctness with the offline lexical verifier (MiniLM similarity and a
   calibrated model of the facts' agreement), every verdict computed (each engine starts from an empty verdict
   cache).
The Ray cluster is local (`ray.init(num_cpus=2)`), started before the clock (its start-up time is
printed apart). Printed: rows/s of each engine end to end, and after start-up (from the first
block's worth of rows to the end: for Ray, once the input is read and the actors have started),
and the ratios Ray / local; the focus-time target is 1.7x on 2 cores. Both engines' scores are
checked equal.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# this file is named ray.py: its own folder must not shadow the ray package
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import pandas as pd  # noqa: E402

from bench.runner import make_frame  # noqa: E402


def lexical_frame(n_rows: int) -> pd.DataFrame:
    """Answers and references with distinct claims per row (no verdict repeats across rows)."""
    frame = make_frame(n_rows)
    frame["reference"] = [
        f"The {q.split()[3]} was built in {1850 + (i * 7) % 170} at a cost of {1000 + i} pounds."
        for i, q in enumerate(frame["query"])
    ]
    frame["answer"] = [f"{a} It cost {1000 + i + (i % 4 == 0)} pounds." for i, a in enumerate(frame["answer"])]
    return frame


def run_both(name: str, path: Path, metric_factory, workers: int, block_size: int) -> None:
    from tempo_eval.distributed.engine import evaluate_ray
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.runner import evaluate

    n_rows = sum(1 for _ in path.open(encoding="utf-8"))
    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_local_")
    local_steady = Steady(block_size)
    start = time.perf_counter()
    local = evaluate(load_dataset(path), metric_factory(), max_concurrency=4, progress=local_steady)
    t_local = time.perf_counter() - start
    local_frame = local.frame

    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_ray_")
    out = Path(tempfile.mkdtemp(prefix="tempo_eval_bench_out_")) / "out"
    ray_steady = Steady(block_size)
    start = time.perf_counter()
    run = evaluate_ray(str(path), metric_factory(), out=out, num_workers=workers, block_size=block_size,
                       progress=ray_steady)
    t_ray = time.perf_counter() - start
    same = run.frame.equals(local_frame)
    print(f"{name}: {n_rows:,} rows; load average {os.getloadavg()[0]:.1f}")
    print(f"  local runner:        {t_local:8.2f} s  {n_rows / t_local:9,.0f} rows/s end to end"
          f"  {local_steady.rate():9,.0f} rows/s after the first {block_size:,} rows")
    print(f"  ray, {workers} workers:      {t_ray:8.2f} s  {n_rows / t_ray:9,.0f} rows/s end to end"
          f"  {ray_steady.rate():9,.0f} rows/s after the first block ({run.n_blocks} blocks of {block_size:,};"
          f" first block done after {_since(ray_steady.first_at, start)})")
    print(f"  ratio ray / local:   x{t_local / t_ray:.2f} end to end, x{ray_steady.rate() / local_steady.rate():.2f}"
          f" after start-up;  same results: {same}")


def _since(moment: float | None, start: float) -> str:
    """Seconds from `start` to `moment`, or "never" (a workload smaller than one block)."""
    return "never" if moment is None else f"{moment - start:.1f} s"


class Steady:
    """A progress callback: rows per second from the first `after` rows done to the end (the rate
    once reading and, for Ray, starting the actors are over)."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.first_at = self.first_done = self.last_at = self.last_done = None

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.first_at is None and done >= self.after:
            self.first_at, self.first_done = now, done
        self.last_at, self.last_done = now, done

    def rate(self) -> float:
        if self.first_at is None or self.last_at == self.first_at:
            return float("nan")
        return (self.last_done - self.first_done) / (self.last_at - self.first_at)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the focus-time workload")
    parser.add_argument("--verifier-rows", type=int, default=2_000, help="rows of the lexical-verifier workload")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--block-size", type=int, default=2_000)
    args = parser.parse_args()

    import ray

    from tempo_eval.metrics.factual_correctness import FactualCorrectness
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    data = Path(tempfile.mkdtemp(prefix="tempo_eval_bench_data_"))
    focus, lexical = data / "focus.jsonl", data / "lexical.jsonl"
    make_frame(args.rows).to_json(focus, orient="records", lines=True)
    lexical_frame(args.verifier_rows).to_json(lexical, orient="records", lines=True)

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}})
    ray.data.range(2).materialize()  # Ray Data's first execution starts its worker processes
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; ray.init(num_cpus=2) and "
          f"Ray Data warm-up: {time.perf_counter() - start:.1f} s (a cluster's start, not timed below)")
    run_both("focus-time temporal_faithfulness", focus, lambda: [TemporalFaithfulness()], args.workers,
             args.block_size)
    run_both("factual_correctness, lexical verifier", lexical, lambda: [FactualCorrectness()], args.workers,
             max(1, args.block_size // 10))
    ray.shutdown()


if __name__ == "__main__":
    main()
