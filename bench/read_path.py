"""The read path of `tempo-eval evaluate`, followed as data: which modules it visits, how often,
and how many times control climbs back up a floor.

    python bench/read_path.py [--data data/sample/temporal_qa.csv] [--metric temporal_ndcg]

Runs `tempo-eval evaluate DATA --metric METRIC` twice in fresh workspaces (the first to import
every module, so imports are not counted) and traces the second with `sys.setprofile` (and
`threading.setprofile`), from the first call that takes the dataset argument
(`io.stream.open_stream`, which the command line calls, or `engine.runner.as_stream`) until the rows are handed to scoring
(`engine.scoring.measure_batch` / `row_dict` / `measure_row`). Only `tempo_eval` modules count;
the standard library and other packages are transparent (their time belongs to the `tempo_eval`
module that called them).

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
MAX_VISITS, MAX_CLIMBS = 2, 5


def floor(module: str) -> int:
    best = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len, default="tempo_eval")
    return FLOORS[best]


class Trace:
    """The profile function: per thread, a stack of the modules control is in (None for other
    packages); a thread's first entry into a module counts as a visit."""

    def __init__(self) -> None:
        self.on = False
        self.done = False
        self.stacks: defaultdict[int, list[str | None]] = defaultdict(list)
        self.visits: Counter[str] = Counter()
        self.climbs: list[tuple[str, str]] = []
        self.path: list[str] = []

    @property
    def stack(self) -> list[str | None]:
        return self.stacks[threading.get_ident()]

    def _here(self) -> str | None:
        return next((m for m in reversed(self.stack) if m is not None), None)

    def __call__(self, frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if event not in ("call", "return") or self.done:
            return
        name = frame.f_globals.get("__name__", "")
        module = name if name.startswith("tempo_eval") else None
        if event == "call":
            if not self.on and (name, frame.f_code.co_name) in START:
                self.on = True
                self.stacks.clear()
            if self.on and (name, frame.f_code.co_name) in STOP:
                self.done = True
                return
            if self.on:
                here = self._here()
                if module is not None and module != here:
                    self.visits[module] += 1
                    self.path.append(module)
                    if here is not None and floor(module) > floor(here):
                        self.climbs.append((here, module))
                self.stack.append(module)
            return
        if self.on and self.stack:
            self.stack.pop()


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
