"""The read path of `tempo-eval evaluate`, followed as data: which modules it visits, how often,
and how many times control climbs back up a floor.

    python bench/read_path.py [--data data/sample/temporal_qa.csv] [--metric temporal_ndcg]

Runs `tempo-eval evaluate DATA --metric METRIC` twice in fresh workspaces (the first to import
every module, so imports are not counted) and traces the second with `sys.setprofile` (and
`threading.setprofile`, so the reading threads count too), from the first call that takes the
dataset argument (`io.stream.open_stream`, which the command line calls, or `engine.runner.as_stream`)
until `evaluate` returns. Only the data's own trip counts, at the granularity the issue means
("followed as data from evaluate's dataset argument through reading to the store"):

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
time belongs to the `tempo_eval` module that called them).

- a visit: control enters a module by a call (or a generator resumed) from a different module;
- a climb: such an entry into a module on a higher floor than the module control comes from (a
  callback, or a generator of a higher floor driven from below): control going back up without
  returning. Plain returns are not counted: every call down has one.

Floors come from `FLOORS` below (by package, the longest prefix wins), the map of
docs/architecture.md. Target (issue 42): no module visited more than twice, at most 5 climbs.
Exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
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
MAX_VISITS, MAX_CLIMBS = 2, 5


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT / "data" / "sample" / "temporal_qa.csv"))
    parser.add_argument("--metric", default="temporal_ndcg")
    args = parser.parse_args()
    trace = Trace()
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as traced:
        evaluate(args.data, args.metric, warm)
        code = evaluate(args.data, args.metric, traced, trace)
    if code != 0 or not trace.on:
        print(f"evaluate exited {code}; traced: {trace.on}")
        return 2
    print(f"read path of `tempo-eval evaluate {Path(args.data).name} --metric {args.metric}`: "
          f"{sum(trace.visits.values())} visits in {len(trace.visits)} modules, {len(trace.climbs)} climbs")
    for module, count in trace.visits.most_common():
        mark = "  <- over" if count > MAX_VISITS else ""
        print(f"  {count:3d}  floor {floor(module):2d}  {module}{mark}")
    print("climbs (from -> to):")
    for left, back in trace.climbs:
        print(f"  {left} ({floor(left)}) -> {back} ({floor(back)})")
    over = [m for m, c in trace.visits.items() if c > MAX_VISITS]
    ok = not over and len(trace.climbs) <= MAX_CLIMBS
    print(f"target (each module <= {MAX_VISITS} visits, <= {MAX_CLIMBS} climbs): {'met' if ok else 'missed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
