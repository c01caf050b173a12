"""Scores over time at scale: a 1,000,000-result run sliced by as-of date.

    python bench/slices.py              # 1,000,000 rows x 1 metric
    python bench/slices.py --rows 200000

Builds, in a temporary workspace, a dataset of N rows with as-of dates over 2000-2024 and a run of
one 0/1 metric on it (answers right 80% of the time before 2015, 35% after; 1% not measured),
written to the store as the runner writes results (`encode_rows` / `write_encoded`). Then times:

- `slices` (as_of, month bins, with the change point): the first call reads and bins the
  dataset's as-of column (kept per dataset afterwards), every call reads the run's (row, score,
  reason) in SQL, never a result row's details; the issue's target is under 2 s;
- the same call again (the dataset's bins cached, as on the Time page after its first draw);
- the reference, measured in the same run: the run's results loaded whole from the store
  (`RunStore.results_frame`, what a page that "loads the rows of a run" would do) and a pandas
  groupby of their scores by the month of each row's as-of date: n and mean only, no interval.

Prints each time and the ratio reference / slices.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def build(store, n_rows: int) -> int:
    """A dataset of `n_rows` dated rows and a run of one 0/1 metric on it; the run's id."""
    import numpy as np
    import pandas as pd

    from tempo_eval.common.schema import MetricResult
    from tempo_eval.io.dataset import Dataset
    from tempo_eval.store.results import encode_rows

    rng = np.random.default_rng(7)
    days = rng.integers(np.datetime64("2000-01-01").astype(int), np.datetime64("2024-12-31").astype(int), n_rows)
    dates = days.astype("datetime64[D]").astype(str)
    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_rows)],
        "query": ["What happened?"] * n_rows,
        "answer": ["It happened."] * n_rows,
        "reference_date": dates,
    })
    dataset = Dataset(frame=frame, name=f"bench slices {n_rows}", mapping={}, content_hash=f"bench-slices-{n_rows}",
                      source_format="csv", warnings=[])
    dataset_id = store.save_dataset(dataset)
    run_id, _ = store.create_or_resume_run(dataset_id, {"metrics": ["accuracy"]}, name="bench", resume=False)
    year = days.astype("datetime64[D]").astype("datetime64[Y]").astype(int) + 1970
    right = rng.random(n_rows) < np.where(year >= 2015, 0.35, 0.80)
    missing = rng.random(n_rows) < 0.01
    step = 50_000
    for first in range(0, n_rows, step):
        rows = []
        for row in range(first, min(n_rows, first + step)):
            result = (MetricResult("accuracy", float("nan"), "no answer", "missing_input") if missing[row]
                      else MetricResult("accuracy", float(right[row]), ""))
            rows.append((row, f"q{row}", [result], None))
        store.write_encoded(encode_rows(run_id, rows, []))
    store.set_status(run_id, "finished")
    return run_id


def reference(store, run_id: int) -> object:
    """n and mean per month of as-of date by pandas, the results loaded whole from the store."""
    import pandas as pd

    results = store.results_frame(run_id)
    dataset_id = int(store.run_info(run_id)["dataset_id"])
    dates = pd.to_datetime(pd.Series(store.dataset_column(dataset_id, "reference_date")))
    results["month"] = dates.dt.to_period("M").to_numpy()[results["row"].to_numpy()]
    return results.groupby("month")["score"].agg(["count", "mean"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from tempo_eval.slices.report import slices
    from tempo_eval.store.runs import RunStore

    with tempfile.TemporaryDirectory() as home:
        os.environ["TEMPO_EVAL_HOME"] = home
        store = RunStore(Path(home) / "tempo_eval.sqlite")
        started = time.perf_counter()
        run_id = build(store, args.rows)
        print(f"built {args.rows:,} results in {time.perf_counter() - started:.1f} s")
        timings = {}
        for label in ("slices, first call", "slices, dataset bins cached"):
            started = time.perf_counter()
            report = slices([run_id], "accuracy", by="as_of", bin="month", changepoint=True, store=store)
            timings[label] = time.perf_counter() - started
        started = time.perf_counter()
        ref = reference(store, run_id)
        timings["reference (results loaded + pandas groupby)"] = time.perf_counter() - started
        bins = report.runs[0].bins
        assert len(bins) == len(ref) and sum(b.n for b in bins) == int(ref["count"].sum())
        change = report.runs[0].changepoint
        print(f"{len(bins)} monthly bins, {sum(b.n for b in bins):,} measured, "
              f"{sum(b.not_measured for b in bins):,} not measured; change point at "
              f"{change['start'] if change else None}")
        for label, seconds in timings.items():
            print(f"{label:<48} {seconds:6.2f} s")
        warm = timings["slices, dataset bins cached"]
        for label in ("slices, first call", "slices, dataset bins cached"):
            print(f"ratio reference / {label}: {timings['reference (results loaded + pandas groupby)'] / timings[label]:.1f}x")
        print(f"target: slices under 2 s: {'met' if warm < 2 else 'NOT met'} ({warm:.2f} s with the bins cached)")


if __name__ == "__main__":
    main()
