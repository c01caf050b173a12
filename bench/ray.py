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
Each Ray run starts its own local cluster, as `evaluate --engine ray` without --address does:
`ray.init` is inside the end-to-end time, and printed apart (with the ratio leaving it out: a
cluster started once and joined by many runs). Printed: rows/s of each engine end to end, and
after start-up (from the first block's worth of rows to the end), the ratios Ray / local, where
the Ray driver's time goes (waiting for the actors, block files, the workspace's rows, the
dataset's rows), and CPU seconds by role (the driver or main process, Ray's actors, Ray's other
processes; the local engine's scoring processes). Both engines' stored results are checked equal.
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


def run_both(name: str, path: Path, metric_factory, workers: int, block_size: int, repeat: int = 1) -> None:
    """Both engines on `path`, alternating (local, Ray, local, Ray, ...) `repeat` times each: the
    machine's load changes, so each pair is compared within itself and the load average printed."""
    n_rows = sum(1 for _ in path.open("rb")) - (path.suffix == ".csv")  # generated rows: one line each
    print(f"{name}: {n_rows:,} rows ({path.stat().st_size / 1e6:,.0f} MB {path.suffix[1:].upper()})", flush=True)
    ratios = []
    for attempt in range(repeat):
        t_local, local_frame = run_local(path, metric_factory, n_rows, block_size)
        t_ray, t_init, ray_frame = run_ray(path, metric_factory, n_rows, workers, block_size)
        ratios.append((t_local / t_ray, t_local / (t_ray - t_init)))
        print(f"  pair {attempt + 1}: speed ray / local x{t_local / t_ray:.2f} end to end into the workspace "
              f"(x{t_local / (t_ray - t_init):.2f} leaving out ray.init's {t_init:.1f} s);  same results stored: "
              f"{ray_frame.equals(local_frame)};  load average now {_load()}", flush=True)
    if repeat > 1:
        print(f"  speed ray / local end to end: {', '.join(f'x{r:.2f}' for r, _ in ratios)}; leaving out "
              f"ray.init: {', '.join(f'x{r:.2f}' for _, r in ratios)}", flush=True)


def _cpu_by_role() -> dict[str, float]:
    """CPU seconds so far of this process ("driver", its own threads included) and of its live
    descendants: Ray's workers and actors ("ray::..." processes) and Ray's daemons (gcs_server,
    raylet, ...) apart. A descendant that has exited is not counted (nor reaped into ours)."""
    import resource

    tick = os.sysconf("SC_CLK_TCK")
    parents, cpu, names = {}, {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        pid = int(entry.name)
        parents[pid], cpu[pid], names[pid] = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, name
    me = os.getpid()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {"driver": usage.ru_utime + usage.ru_stime, "ray workers": 0.0, "ray daemons": 0.0}
    for pid in cpu:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, me):
            ancestor = parents.get(ancestor)
        if ancestor == me and pid != me:
            out["ray workers" if names[pid].startswith("ray::") else "ray daemons"] += cpu[pid]
    return out


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def run_local(path: Path, metric_factory, n_rows: int, block_size: int):
    from tempo_eval.engine.pool import default_processes
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.store.runs import RunStore

    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_local_")
    steady = Steady(block_size, _cpu_by_role)  # the scoring processes end with the run: sampled at the last batch
    load = _load()
    cpu = _cpu_by_role()
    start = time.perf_counter()
    processes = default_processes()  # the command line's default
    local = evaluate(str(path), metric_factory(), max_concurrency=4, progress=steady, processes=processes)
    t_local = time.perf_counter() - start
    print(f"  local, {processes} processes:  {t_local:8.2f} s  {n_rows / t_local:9,.0f} rows/s end to end"
          f"  {steady.rate():9,.0f} rows/s after the first {block_size:,} rows   (load average {load})")
    at_last = steady.sampled or cpu
    print(f"    CPU seconds to the last batch: main process {at_last['driver'] - cpu['driver']:.1f} s, scoring "
          f"processes (the fork server's children) {at_last['ray daemons'] - cpu['ray daemons']:.1f} s", flush=True)
    return t_local, RunStore().results_frame(local.run_id)


def run_ray(path: Path, metric_factory, n_rows: int, workers: int, block_size: int):
    from tempo_eval.engine.distributed.engine import evaluate_ray
    from tempo_eval.engine.distributed.output import import_results
    from tempo_eval.store.runs import RunStore

    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_ray_")
    out = Path(tempfile.mkdtemp(prefix="tempo_eval_bench_out_")) / "out"
    steady = Steady(block_size, _cpu_by_role)  # the actors end with the run: their CPU at the last block
    load = _load()
    cpu = _cpu_by_role()
    with DriverClock() as clock:
        ray_start = time.perf_counter()
        # as `evaluate --engine ray` without --address: a local cluster started and stopped by the call
        run = evaluate_ray(str(path), metric_factory(), out=out, num_workers=workers, block_size=block_size,
                           progress=steady)
        t_ray = time.perf_counter() - ray_start
    at_last = steady.sampled or cpu
    spent = ", ".join(f"{role} {at_last[role] - cpu[role]:.1f} s" for role in cpu)
    frame = RunStore().results_frame(run.run_id)

    os.environ["TEMPO_EVAL_HOME"] = tempfile.mkdtemp(prefix="tempo_eval_bench_import_")
    # import-results reads dataset.json.gz whole, under the input limit (128 MB by default: about
    # 110,000 of these rows); the bench raises it rather than stop after the Ray run
    os.environ.setdefault("TEMPO_EVAL_MAX_INPUT_MB", "100000")
    start = time.perf_counter()
    import_results(out)
    t_import = time.perf_counter() - start
    scoring = steady.last_at - (ray_start + run.ray_init_s) if steady.last_at else float("nan")
    print(f"  ray, {workers} workers:      {t_ray:8.2f} s  {n_rows / t_ray:9,.0f} rows/s end to end"
          f"  {steady.rate():9,.0f} rows/s after the first block ({run.n_blocks} blocks of {block_size:,};"
          f" first block done after {_since(steady.first_at, ray_start)})   (load average {load})")
    print(f"    phases: ray.init {run.ray_init_s:.2f} s (a local cluster started by the call), input opened (first "
          f"pass) {clock.opening:.2f} s, from ray.init's end to the last block {scoring:.2f} s, after the last block "
          f"{ray_start + t_ray - (steady.last_at or ray_start):.2f} s (the cluster stopped)")
    print(f"    the driver: waiting for actors {clock.waiting:.2f} s, block files {clock.files:.2f} s, blocks' rows "
          f"into the workspace {clock.blocks:.2f} s, dataset's rows (workspace and dataset.json.gz) "
          f"{clock.dataset:.2f} s")
    print(f"    CPU seconds to the last block: {spent}")
    print(f"  import-results of the same output into another workspace (not needed here): {t_import:.2f} s, "
          f"{t_import / scoring:.0%} of the scoring time, {t_import / t_ray:.0%} of the Ray run's", flush=True)
    return t_ray, run.ray_init_s, frame


class DriverClock:
    """Within the `with`, where the Ray driver's time goes: opening the input (`_open_input`: the
    first pass over a file), waiting for the actors (`ActorPool.finished` when it blocks), writing
    block files (`write_block`, `merge_block`), blocks' rows into the workspace
    (`WorkspaceRun.record`, `write_from_files`) and the dataset's rows (`WorkspaceRun.store_rows`,
    `DatasetWriter.add`). Wall-clock seconds, measured by wrapping those functions."""

    def __enter__(self) -> DriverClock:
        from tempo_eval.engine.distributed import driver, engine, output
        from tempo_eval.engine.distributed.workspace import WorkspaceRun

        self.opening = self.waiting = self.files = self.blocks = self.dataset = 0.0
        self.saved = [(WorkspaceRun, "record", "blocks"), (WorkspaceRun, "write_from_files", "blocks"),
                      (WorkspaceRun, "store_rows", "dataset"), (output.DatasetWriter, "add", "dataset"),
                      (engine, "_open_input", "opening"), (output, "write_block", "files"),
                      (output, "merge_block", "files"), (driver.ActorPool, "finished", "waiting")]
        self.saved = [(owner, name, owner.__dict__[name], what) for owner, name, what in self.saved]
        for owner, name, method, what in self.saved:
            setattr(owner, name, self._timed(method, what))
        return self

    def _timed(self, method, what: str):
        def timed(*args, **kwargs):
            if what == "waiting" and not kwargs.get("block"):
                return method(*args, **kwargs)
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                setattr(self, what, getattr(self, what) + time.perf_counter() - start)
        return timed

    def __exit__(self, *exc: object) -> None:
        for owner, name, method, _ in self.saved:
            setattr(owner, name, method)


def _since(moment: float | None, start: float) -> str:
    """Seconds from `start` to `moment`, or "never" (a workload smaller than one block)."""
    return "never" if moment is None else f"{moment - start:.1f} s"


class Steady:
    """A progress callback: rows per second from the first `after` rows done to the end (the rate
    once reading and, for Ray, starting the actors are over)."""

    def __init__(self, after: int, sample=None) -> None:
        self.after = after
        self.first_at = self.first_done = self.last_at = self.last_done = None
        self.sample, self.sampled = sample, None  # `sample()` at each call: the last one is kept

    def __call__(self, done: int, total: int) -> None:
        if self.sample is not None:
            self.sampled = self.sample()
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
    parser.add_argument("--repeat", type=int, default=1, help="pairs of runs (local, Ray) per workload, alternating")
    args = parser.parse_args()

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

    # each Ray run starts its own local cluster (ray.init, timed and printed apart), as the command
    # line does without --address; its workers import tempo_eval from this checkout
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(_HERE.parent), os.environ.get("PYTHONPATH")) if p)
    print(f"machine: {os.cpu_count()} CPUs, load average {_load()}", flush=True)
    if args.scale_rows:
        run_both("issue 27 rows, temporal_faithfulness + temporal_ndcg", scale,
                 lambda: [TemporalFaithfulness(), TemporalNDCG()], args.workers, args.block_size, args.repeat)
    if args.rows:
        run_both("focus-time temporal_faithfulness", focus, lambda: [TemporalFaithfulness()], args.workers,
                 args.block_size, args.repeat)
    if args.verifier_rows:
        run_both("factual_correctness, lexical verifier", lexical, lambda: [FactualCorrectness()], args.workers,
                 max(1, args.block_size // 10), args.repeat)


if __name__ == "__main__":
    main()
