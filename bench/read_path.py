"""The read path of `tempo-eval evaluate`, followed as data: which modules it visits, how often,
and how many times control climbs back up a floor; for a file of one batch and for a file of
several, to see what each extra batch adds.

    python bench/read_path.py [--data data/sample/temporal_qa.csv] [--metric temporal_ndcg]

Runs `tempo-eval evaluate DATA --metric METRIC` twice in fresh workspaces (the first to import
every module, so imports are not counted) and traces the second with `sys.setprofile` (and
`threading.setprofile`, so the reading threads count too), from the first call that takes the
dataset argument (`io.stream.open_stream`, which the command line calls, or `engine.runner.as_stream`)
until `evaluate` returns. Then the same for a CSV file of `EXTRA_BATCHES + 1` batches (the last
one half full) made of DATA's rows repeated, each copy's query ids made unique. Only the data's
own trip counts, at the granularity the issue means ("followed as data from evaluate's dataset
argument through reading to the store"):

- the read: `open_stream` and everything below it, and every entry into the `tempo_eval.io`
  package from outside it (the stream's generators, resumed by the runner a batch at a time;
  pyarrow's reading thread calling back into `io`);
- the store write of the rows: every call into `tempo_eval.store.datasets` (the dataset's record,
  each batch of rows, its completion) and everything below it;
- not scoring: nothing below `engine.scoring.measure_batch` / `row_dict` / `measure_row`;
- not the rest of the command's set-up, which never touches the rows (building the metrics, the
  run's record and lock, the worker pool): the first version of this bench counted it, and
  stopped at the first batch scored, so a file of several batches had its later reads and
  writes uncounted.

Only `tempo_eval` modules count; the standard library and other packages are transparent (their
time belongs to the `tempo_eval` module that called them). So is the database driver: the
methods of the workspace connection and its cursor (`store.db.WorkspaceConnection`, `_Cursor`:
sqlite3's own classes, subclassed to turn a sqlite3 error into a WorkspaceError naming the file)
and of PostgreSQL's adapter of the same interface (`store.pg.PgConnection`, `PgCursor`),
with everything they call. They are sqlite3 itself, as a module of ours: counting each of their
methods as a visit to `store.db` would count SQL statements (and cursor fetches), not rooms; the
statements are the store's own business. Every other function of `store.db` counts.

- a visit: control enters a module by a call (or a generator resumed) from a different module;
- a climb: such an entry into a module on a higher floor than the module control comes from (a
  callback, or a generator of a higher floor driven from below): control going back up without
  returning. Plain returns are not counted: every call down has one.

Floors come from `FLOORS` below (by package, the longest prefix wins), the map of
docs/architecture.md. Target (issue 42), as it reads for a stream: for a file of one batch, no
module visited more than twice and at most 5 climbs; each extra batch adds at most one visit to
any module (a stream is resumed once a batch: one entry into each room the batch passes
through) and no climb. Exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import threading
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: package or module prefix -> floor (ground is -1)
FLOORS = {
    "tempo_eval.common": -1, "tempo_eval.core": 0, "tempo_eval.llm": 0, "tempo_eval.store.db": 0,
    "tempo_eval.store.packing": 0, "tempo_eval.store.verdict_cache": 0, "tempo_eval.store.jobs": 0,
    "tempo_eval.verify": 1, "tempo_eval.metrics": 2, "tempo_eval.io": 3, "tempo_eval.compare.statistics": 3,
    "tempo_eval.store": 4, "tempo_eval.compare": 4, "tempo_eval.slices": 4, "tempo_eval.viz": 4,
    "tempo_eval.engine.scoring": 5, "tempo_eval.engine.pool": 6, "tempo_eval.engine.distributed": 6,
    "tempo_eval.engine.run_tasks": 6, "tempo_eval.engine.runner": 7, "tempo_eval.cli": 8, "tempo_eval.jobs": 8,
    "tempo_eval": 8,
}
START = {("tempo_eval.io.stream", "open_stream"), ("tempo_eval.engine.runner", "as_stream")}
STOP = {("tempo_eval.engine.scoring", name) for name in ("measure_batch", "row_dict", "measure_row")}
#: modules an entry into which (from outside the read path) starts a stretch of the data's trip
#: (`store.datasets` entered from the store itself, e.g. a run's record cleaning its name, is not)
DATA_ROOTS = ("tempo_eval.io", "tempo_eval.store.datasets")
#: the database driver (see the module docstring): transparent, with everything below it
DRIVER = {"tempo_eval.store.db": ("WorkspaceConnection.", "_Cursor."),
          "tempo_eval.store.pg": ("PgConnection.", "PgCursor.")}
MAX_VISITS, MAX_CLIMBS = 2, 5
#: batches the second file has beyond its first; each may add one visit to a module, no climb
EXTRA_BATCHES = 2
MAX_VISITS_PER_BATCH = 1


def floor(module: str) -> int:
    best = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len, default="tempo_eval")
    return FLOORS[best]


class Trace:
    """The profile function: per thread, a stack of (module, on the data's trip) for each frame
    (module None for other packages); an entry on the trip into another module is a visit."""

    def __init__(self) -> None:
        self.on = False
        self.stacks: defaultdict[int, list[tuple[str | None, bool]]] = defaultdict(list)
        self.visits: Counter[str] = Counter()
        self.climbs: list[tuple[str, str]] = []
        self.path: list[str] = []

    @property
    def stack(self) -> list[tuple[str | None, bool]]:
        return self.stacks[threading.get_ident()]

    def _here(self) -> str | None:
        return next((m for m, _ in reversed(self.stack) if m is not None), None)

    def __call__(self, frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if event not in ("call", "return"):
            return
        name = frame.f_globals.get("__name__", "")
        module = name if name.startswith("tempo_eval") else None
        if event == "return":
            if self.on and self.stack:
                self.stack.pop()
            return
        key = (name, frame.f_code.co_name)
        if not self.on:
            if key not in START:
                return
            self.on = True
            self.stacks.clear()
        stack = self.stack
        inside = bool(stack) and stack[-1][1]
        if key in STOP:
            stack.append((module, False))  # scoring: not the read, and nothing below it either
            return
        if frame.f_code.co_qualname.startswith(DRIVER.get(name, ())):
            stack.append((None, False))  # the database driver: transparent, and what it calls
            return
        entering = key in START or (
            module is not None and module.startswith(DATA_ROOTS) and not _below_stop(stack)
            and not (module.startswith("tempo_eval.store") and (self._here() or "").startswith("tempo_eval.store"))
        )
        on = inside or entering
        if on and module is not None:
            here = self._here()
            if module != here:
                self.visits[module] += 1
                self.path.append(module)
                if here is not None and floor(module) > floor(here):
                    self.climbs.append((here, module))
        stack.append((module, on))


def _below_stop(stack: list[tuple[str | None, bool]]) -> bool:
    """True when scoring is on the stack (a call made while scoring is not the read)."""
    return any(m == "tempo_eval.engine.scoring" for m, _ in stack)


def evaluate(data: str, metric: str, workspace: str, trace: Trace | None = None) -> int:
    from tempo_eval.cli import main

    os.environ["TEMPO_EVAL_HOME"] = workspace
    argv = ["evaluate", data, "--metric", metric, "--no-progress"]
    if trace is None:
        return main(argv)
    sys.setprofile(trace)
    threading.setprofile(trace)
    try:
        return main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


def traced(data: str, metric: str) -> Trace:
    """The trace of `evaluate DATA` (after a first run that imports every module)."""
    trace = Trace()
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as traced_home:
        evaluate(data, metric, warm)
        code = evaluate(data, metric, traced_home, trace)
    if code != 0 or not trace.on:
        raise SystemExit(f"evaluate {data} exited {code}; traced: {trace.on}")
    return trace


def batches_file(data: Path, out: Path, batches: float) -> int:
    """A CSV file of `batches` times the stream's batch of rows: DATA's rows over and over, the
    query ids of each copy made unique (`q1` -> `q1~2`); the number of rows written."""
    from tempo_eval.io.stream import BATCH_ROWS

    with data.open(newline="", encoding="utf-8") as source:
        reader = csv.reader(source)
        header = next(reader)
        rows = [row for row in reader if any(row)]
    id_column = header.index("query_id")
    wanted = int(batches * BATCH_ROWS)
    with out.open("w", newline="", encoding="utf-8") as target:
        writer = csv.writer(target)
        writer.writerow(header)
        for i in range(wanted):
            row = list(rows[i % len(rows)])
            row[id_column] = f"{row[id_column]}~{i // len(rows) + 1}"
            writer.writerow(row)
    return wanted


def report(title: str, trace: Trace) -> None:
    print(f"{title}: {sum(trace.visits.values())} visits in {len(trace.visits)} modules, "
          f"{len(trace.climbs)} climbs")
    for left, back in trace.climbs:
        print(f"  climb {left} ({floor(left)}) -> {back} ({floor(back)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT / "data" / "sample" / "temporal_qa.csv"),
                        help="a CSV file of one batch of rows (and a query_id column)")
    parser.add_argument("--metric", default="temporal_ndcg")
    args = parser.parse_args()
    one = traced(args.data, args.metric)
    with tempfile.TemporaryDirectory() as folder:
        many_path = Path(folder) / "batches.csv"
        n_rows = batches_file(Path(args.data), many_path, EXTRA_BATCHES + 0.5)
        many = traced(str(many_path), args.metric)
    report(f"read path of `tempo-eval evaluate {Path(args.data).name} --metric {args.metric}` (one batch)", one)
    report(f"the same rows repeated: {n_rows:,} rows, {EXTRA_BATCHES + 1} batches", many)
    print(f"  visits  floor  module  (one batch | {EXTRA_BATCHES + 1} batches | added per extra batch)")
    over = []
    for module in sorted(set(one.visits) | set(many.visits), key=lambda m: (-many.visits[m], -one.visits[m], m)):
        per_batch = (many.visits[module] - one.visits[module]) / EXTRA_BATCHES
        missed = one.visits[module] > MAX_VISITS or per_batch > MAX_VISITS_PER_BATCH
        over += [module] if missed else []
        print(f"  {one.visits[module]:3d} {many.visits[module]:4d} {per_batch:+5.1f}  floor {floor(module):2d}  "
              f"{module}{'  <- over' if missed else ''}")
    climbs_per_batch = (len(many.climbs) - len(one.climbs)) / EXTRA_BATCHES
    ok = not over and len(one.climbs) <= MAX_CLIMBS and climbs_per_batch <= 0
    print(f"target (one batch: each module <= {MAX_VISITS} visits, <= {MAX_CLIMBS} climbs; each extra batch: "
          f"<= {MAX_VISITS_PER_BATCH} visit per module, no climb): {'met' if ok else 'missed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
