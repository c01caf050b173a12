"""Benchmark: the local engine against the Ray engine with 2 workers, end to end into the
workspace, in the same run.

    python bench/ray.py                 # 50,000 issue-27 rows, 200,000 focus-time rows, 2,000 lexical
    python bench/ray.py --scale-rows 20000 --rows 0 --verifier-rows 0    # a quick look

Three workloads, each read from the same file by both engines, end to end (reading, scoring, and
every result stored in a fresh workspace, where the dashboard and `runs` find it):
1. issue 27's rows (`bench/evaluate_scale.py`'s generator: a query naming a period, an answer
   with three dated statements, five retrieved contexts, about 1.1 KB a row; CSV),
   Temporal Faithfulness and Temporal NDCG, as `evaluate --metric temporal_faithfulness --metric
   temporal_ndcg` runs them;
2. focus-time: Temporal Faithfulness in its focus-time mode on short rows (JSONL);
3. lexical verifier: Factual Correctness with the offline lexical verifier (MiniLM similarity and
   a calibrated model of the facts' agreement), every verdict computed (each engine starts from
   an empty verdict cache).
The local engine is `evaluate(path, processes=default_processes())`, as the command line runs it:
the file streamed in batches, the offline metrics scored a batch at a time (in that many worker
processes, one per usable CPU, at most 4: 2 here; the library's own default is 1), each batch
committed. The Ray engine writes each
block into the workspace as it finishes (no import step); the time its driver spent writing the
workspace (beside the scoring) is printed, and so is the time `import-results` would take to
bring the same output into another workspace (an output made elsewhere), as a share of the Ray
run's time (issue 27.5's target: at most 10%).
The Ray cluster is local (`ray.init(num_cpus=2)`), started before the clock (its start-up time is
printed apart: `evaluate --engine ray` without --address pays it once per command). Printed:
rows/s of each engine end to end, and after start-up (from the first block's worth of rows to
the end: for Ray, once the input is read and the actors have started), and the ratios Ray /
local. Both engines' stored results are checked equal.
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
    from tempo_eval.distributed.output import import_results
    from tempo_eval.runner import evaluate
    from tempo_eval.scoring_pool import default_processes
    from tempo_eval.store.runs import RunStore

    n_rows = sum(1 for _ in path.open("rb")) - (path.suffix == ".csv")  # generated rows: one line each
    print(f"{name}: {n_rows:,} rows ({path.stat().st_size / 1e6:,.0f} MB {path.suffix[1:].upper()}); "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_local_")
    local_steady = Steady(block_size)
    start = time.perf_counter()
    processes = default_processes()  # the command line's default
    local = evaluate(str(path), metric_factory(), max_concurrency=4, progress=local_steady, processes=processes)
    t_local = time.perf_counter() - start
    local_frame = RunStore().results_frame(local.run_id)

    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_ray_")
    out = Path(tempfile.mkdtemp(prefix="tempo_eval_bench_out_")) / "out"
    ray_steady = Steady(block_size)
    with WorkspaceClock() as writes:
        ray_start = time.perf_counter()
        run = evaluate_ray(str(path), metric_factory(), out=out, num_workers=workers, block_size=block_size,
                           progress=ray_steady)
        t_ray = time.perf_counter() - ray_start
    same = RunStore().results_frame(run.run_id).equals(local_frame)

    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_import_")
    start = time.perf_counter()
    import_results(out)
    t_import = time.perf_counter() - start
    print(f"  local, {processes} processes:  {t_local:8.2f} s  {n_rows / t_local:9,.0f} rows/s end to end"
          f"  {local_steady.rate():9,.0f} rows/s after the first {block_size:,} rows")
    print(f"  ray, {workers} workers:      {t_ray:8.2f} s  {n_rows / t_ray:9,.0f} rows/s end to end"
          f"  {ray_steady.rate():9,.0f} rows/s after the first block ({run.n_blocks} blocks of {block_size:,};"
          f" first block done after {_since(ray_steady.first_at, ray_start)})")
    print(f"    of which the driver writing the workspace, beside the scoring: {writes.blocks:.2f} s for the "
          f"blocks' rows ({writes.blocks / t_ray:.1%} of the run), {writes.dataset:.2f} s for the dataset's rows "
          "(a thread)")
    print(f"  import-results of the same output into another workspace (not needed here): {t_import:.2f} s, "
          f"{t_import / t_ray:.0%} of the Ray run's time")
    print(f"  ratio ray / local:   x{t_local / t_ray:.2f} end to end into the workspace, "
          f"x{ray_steady.rate() / local_steady.rate():.2f} after start-up;  same results stored: {same}", flush=True)


class WorkspaceClock:
    """Within the `with`: the seconds the Ray driver spends writing blocks (`WorkspaceRun.record`,
    `catch_up`) and the dataset's rows (`store_dataset`) into the workspace."""

    def __enter__(self) -> WorkspaceClock:
        from tempo_eval.distributed.workspace import WorkspaceRun

        self.blocks = self.dataset = 0.0
        self.saved = {name: getattr(WorkspaceRun, name) for name in ("record", "catch_up", "store_dataset")}
        for name, method in self.saved.items():
            setattr(WorkspaceRun, name, self._timed(method, "dataset" if name == "store_dataset" else "blocks"))
        return self

    def _timed(self, method, what: str):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                setattr(self, what, getattr(self, what) + time.perf_counter() - start)
        return timed

    def __exit__(self, *exc: object) -> None:
        from tempo_eval.distributed.workspace import WorkspaceRun

        for name, method in self.saved.items():
            setattr(WorkspaceRun, name, method)


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
    parser.add_argument("--scale-rows", type=int, default=50_000, help="rows of issue 27's shape (0: skip)")
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the focus-time workload (0: skip)")
    parser.add_argument("--verifier-rows", type=int, default=2_000,
                        help="rows of the lexical-verifier workload (0: skip)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--block-size", type=int, default=2_000)
    args = parser.parse_args()

    import ray

    from bench.evaluate_scale import write_csv
    from tempo_eval.metrics.factual_correctness import FactualCorrectness
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    data = Path(tempfile.mkdtemp(prefix="tempo_eval_bench_data_"))
    scale, focus, lexical = data / "issue27.csv", data / "focus.jsonl", data / "lexical.jsonl"
    if args.scale_rows:
        write_csv(scale, rows=args.scale_rows, corpus_docs=50_000, seed=7)
    if args.rows:
        make_frame(args.rows).to_json(focus, orient="records", lines=True)
    if args.verifier_rows:
        lexical_frame(args.verifier_rows).to_json(lexical, orient="records", lines=True)

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}})
    ray.data.range(2).materialize()  # Ray Data's first execution starts its worker processes
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; ray.init(num_cpus=2) and "
          f"Ray Data warm-up: {time.perf_counter() - start:.1f} s (a cluster's start, not timed below)")
    if args.scale_rows:
        run_both("issue 27 rows, temporal_faithfulness + temporal_ndcg", scale,
                 lambda: [TemporalFaithfulness(), TemporalNDCG()], args.workers, args.block_size)
    if args.rows:
        run_both("focus-time temporal_faithfulness", focus, lambda: [TemporalFaithfulness()], args.workers,
                 args.block_size)
    if args.verifier_rows:
        run_both("factual_correctness, lexical verifier", lexical, lambda: [FactualCorrectness()], args.workers,
                 max(1, args.block_size // 10))
    ray.shutdown()


if __name__ == "__main__":
    main()
