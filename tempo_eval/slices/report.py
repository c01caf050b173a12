"""Slices of stored runs over time (`slices`): per bin of as-of date, focus year or evidence year,
a metric's n, mean and 95% interval, the rows not measured with their reasons, each run's change
point and the paired per-bin differences of each run against the first.

Scores come from the store one metric at a time, (row, score, reason code) only
(`RunStore.metric_scores`); the time of each row from the dataset's columns
(`tempo_eval.slices.keys`), kept per dataset. Intervals: Wilson for a metric whose every stored
score is 0 or 1, else the project's percentile bootstrap (`tempo_eval.compare.statistics.bootstrap_ci`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from tempo_eval.slices.keys import RowBins

# numpy, pandas and the statistics are imported by the functions that use them: `import tempo_eval`
# (which exports `slices`) stays cheap

CSV_COLUMNS = ["run", "bin_start", "n", "mean", "low", "high", "not_measured"]
#: a row of the dataset with no stored result for the metric
NOT_SCORED = "not scored"


@dataclass
class Bin:
    """One bin of one run: its first day, rows measured, mean with its interval, rows not
    measured and their reasons (reason code -> rows)."""

    start: str
    n: int
    mean: float
    low: float
    high: float
    not_measured: int
    reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "n": self.n, "mean": _num(self.mean), "low": _num(self.low),
                "high": _num(self.high), "not_measured": self.not_measured}


@dataclass
class RunSlices:
    """One run's bins, its change points (the first is the one reported by default) and the rows
    that have no place on the time axis (reason -> rows)."""

    run: int
    name: str
    dataset_id: int
    binary: bool
    bins: list[Bin]
    changepoints: list[dict[str, Any]] = field(default_factory=list)
    unplaced: dict[str, int] = field(default_factory=dict)
    changepoint_tested: bool = False
    alpha: float = 0.01

    @property
    def changepoint(self) -> dict[str, Any] | None:
        return self.changepoints[0] if self.changepoints else None

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "name": self.name, "bins": [b.to_dict() for b in self.bins],
                "changepoint": self.changepoint}


@dataclass
class Difference:
    """Per bin, the mean of b - a over the rows measured in both runs, with its interval."""

    a: int
    b: int
    bins: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "bins": self.bins}


@dataclass
class SliceReport:
    """What `slices` returns: `to_dict` (the JSON of `tempo-eval slices --format json`), `to_csv`,
    `to_text`, `frame` (one line per run and bin) and `reasons_frame` (rows not measured)."""

    metric: str
    by: str
    bin: str
    runs: list[RunSlices]
    differences: list[Difference]

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "by": self.by, "bin": self.bin,
                "runs": [r.to_dict() for r in self.runs],
                "differences": [d.to_dict() for d in self.differences]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    def frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([[r.run, b.start, b.n, b.mean, b.low, b.high, b.not_measured]
                             for r in self.runs for b in r.bins], columns=CSV_COLUMNS)

    def reasons_frame(self) -> Any:
        """run, bin_start (None for rows with no place in time), reason, rows."""
        import pandas as pd

        lines = [[r.run, b.start, reason, count] for r in self.runs for b in r.bins
                 for reason, count in sorted(b.reasons.items())]
        lines += [[r.run, None, reason, count] for r in self.runs for reason, count in sorted(r.unplaced.items())]
        return pd.DataFrame(lines, columns=["run", "bin_start", "reason", "rows"])

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows([r.run, b.start, b.n, _csv_num(b.mean), _csv_num(b.low), _csv_num(b.high),
                          b.not_measured] for r in self.runs for b in r.bins)
        return out.getvalue()

    def to_text(self) -> str:
        lines = [f"{self.metric} by {self.by.replace('_', ' ')}, {self.bin}ly bins"
                 .replace("dayly", "daily")]
        for r in self.runs:
            kind = "Wilson" if r.binary else "bootstrap"
            lines.append(f"\nrun #{r.run} {r.name}  (95% intervals: {kind})")
            lines.append(f"  {'bin':<10}  {'n':>6}  {'mean':>6}  {'95% interval':<15}  not measured")
            for b in r.bins:
                reasons = ", ".join(f"{k}: {v}" for k, v in sorted(b.reasons.items()))
                lines.append(f"  {b.start:<10}  {b.n:>6}  {_fmt(b.mean):>6}  "
                             f"{_fmt(b.low) + '–' + _fmt(b.high):<15}  {b.not_measured}"
                             + (f" ({reasons})" if reasons else ""))
            for reason, count in sorted(r.unplaced.items()):
                lines.append(f"  not placed in time: {count} rows, {reason}")
            if r.changepoint_tested:
                lines.extend("  " + _change_text(c) for c in r.changepoints)
                if not r.changepoints:
                    lines.append("  no change point found (test of no change not rejected at "
                                 f"{r.alpha:g})")
        paired = {d.b for d in self.differences}
        for r in self.runs[1:]:
            if r.run not in paired:
                lines.append(f"\nrun #{r.run} is on another dataset than run #{self.runs[0].run}: no paired difference")
        for d in self.differences:
            lines.append(f"\nrun #{d.b} minus run #{d.a}, rows measured in both")
            for b in d.bins:
                lines.append(f"  {b['start']:<10}  {b['n']:>6}  {_fmt(b['diff'], signed=True):>7}  "
                             f"{_fmt(b['low'], signed=True)}–{_fmt(b['high'], signed=True)}")
        return "\n".join(lines) + "\n"


def _change_text(c: dict[str, Any]) -> str:
    before, after, drop = c["before"], c["after"], c["drop"]
    return (f"change point at {c['start']}: before {_fmt(before['mean'])} ({_fmt(before['low'])}–"
            f"{_fmt(before['high'])}), after {_fmt(after['mean'])} ({_fmt(after['low'])}–{_fmt(after['high'])}), "
            f"drop {_fmt(drop['value'], signed=True)} ({_fmt(drop['low'], signed=True)}–"
            f"{_fmt(drop['high'], signed=True)}), p = {c['p_value']:.3g}")


def _fmt(value: Any, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _num(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _csv_num(value: float) -> str:
    return "" if value is None or math.isnan(value) else repr(float(value))


# ---- computing ---------------------------------------------------------------------------------

def mean_interval(values: np.ndarray, binary: bool, seed: int = 42) -> tuple[float, float, float]:
    """(mean, low, high) of measured values: Wilson when binary, else the percentile bootstrap."""
    from tempo_eval.compare.statistics import bootstrap_ci
    from tempo_eval.slices.stats import wilson_interval

    if values.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if binary:
        low, high = wilson_interval(float(values.sum()), float(values.size))
        return mean, float(low), float(high)
    low, high = bootstrap_ci(values, seed=seed)
    return mean, low, high


@dataclass
class _Scored:
    """A run's scores laid over its dataset's rows (NaN where not measured), and why a row is not
    measured: {row: reason code} of the rows with a NaN result; rows without one are not scored."""

    scores: np.ndarray
    codes: dict[int, Any]
    n_results: int

    def reason(self, row: int) -> str:
        return NOT_SCORED if row not in self.codes else str(self.codes[row] or "not measurable")


def _scored(store: Any, run_id: int, metric: str, n_rows: int) -> _Scored:
    import numpy as np

    rows, scores, codes = store.metric_scores(run_id, metric)
    by_row = np.full(n_rows, np.nan)
    inside = (rows >= 0) & (rows < n_rows)
    by_row[rows[inside]] = scores[inside]
    return _Scored(by_row, codes, int(rows.size))


def run_slices(store: Any, run_id: int, metric: str, keys: RowBins, scored: _Scored, *, binary: bool,
               changepoint: bool, penalty: float | None, seed: int, n_permutations: int,
               alpha: float) -> RunSlices:
    """One run's bins (and change points) from its scores and its dataset's row bins."""
    import numpy as np

    info = store.run_info(run_id)
    values = scored.scores[keys.rows]
    measured = ~np.isnan(values)
    bins = []
    for start, part in keys.bins():
        v = values[part][measured[part]]
        mean, low, high = mean_interval(v, binary, seed)
        missing = [scored.reason(r) for r in keys.rows[part][~measured[part]].tolist()]
        bins.append(Bin(start, int(v.size), mean, low, high, len(missing),
                        dict(Counter(str(m) for m in missing))))
    result = RunSlices(run_id, str(info["name"]), int(info["dataset_id"]), binary, bins,
                       unplaced=dict(keys.unplaced), changepoint_tested=changepoint, alpha=alpha)
    if changepoint:
        bin_of = np.searchsorted(np.unique(keys.starts), keys.starts)[measured]
        result.changepoints = changepoints(values[measured], bin_of, [b.start for b in bins], binary=binary,
                                           penalty=penalty, seed=seed, n_permutations=n_permutations,
                                           alpha=alpha)
    return result


def changepoints(values: np.ndarray, bin_of: np.ndarray, labels: list[str], *, binary: bool,
                 penalty: float | None = None, seed: int = 42, n_permutations: int | None = None,
                 alpha: float | None = None) -> list[dict[str, Any]]:
    """The change points of measured `values` in bins `bin_of` (indices into `labels`): by default
    the best single split, reported when its permutation p-value is below `alpha`; with a
    `penalty`, every split of the penalised optimal partition, each tested between its
    neighbouring change points. Each: start (first bin after), before / after (mean, low, high),
    drop (before - after, value, low, high), p_value."""
    import numpy as np

    from tempo_eval.slices.stats import (
        ALPHA,
        N_PERMUTATIONS,
        best_split,
        difference_interval,
        penalised_splits,
    )

    n_permutations = N_PERMUTATIONS if n_permutations is None else n_permutations
    alpha = ALPHA if alpha is None else alpha

    n_bins = len(labels)
    if penalty is None:
        cuts = [0, n_bins]
        split = best_split(values, bin_of, n_bins, n_permutations=n_permutations, seed=seed)
        found = [] if split is None else [split.index]
    else:
        n = np.bincount(bin_of, minlength=n_bins)
        sums = np.bincount(bin_of, weights=values, minlength=n_bins)
        sumsq = np.bincount(bin_of, weights=values * values, minlength=n_bins)
        found = penalised_splits(n, sums, sumsq, penalty)
        cuts = [0, *found, n_bins]
    out = []
    for point in found:
        low_cut = max(c for c in cuts if c < point)
        high_cut = min(c for c in cuts if c > point)
        inside = (bin_of >= low_cut) & (bin_of < high_cut)
        if penalty is None:
            local = split
        else:
            local = best_split(values[inside], bin_of[inside] - low_cut, high_cut - low_cut,
                               n_permutations=n_permutations, seed=seed)
            if local is not None:
                local = type(local)(point - low_cut, local.gain, local.p_value)
        if local is None or (penalty is None and local.p_value >= alpha):
            continue
        before = mean_interval(values[inside & (bin_of < point)], binary, seed)
        after = mean_interval(values[inside & (bin_of >= point)], binary, seed)
        drop = difference_interval(before, after)
        out.append({
            "start": labels[point], "before": dict(zip(("mean", "low", "high"), before, strict=True)),
            "after": dict(zip(("mean", "low", "high"), after, strict=True)),
            "drop": dict(zip(("value", "low", "high"), drop, strict=True)), "p_value": local.p_value,
        })
    return out


def paired_difference(keys: RowBins, a: _Scored, b: _Scored, seed: int = 42) -> list[dict[str, Any]]:
    """Per bin, over the rows measured in both: n, mean of b - a and its bootstrap interval."""
    import numpy as np

    from tempo_eval.compare.statistics import bootstrap_ci

    both = ~np.isnan(a.scores[keys.rows]) & ~np.isnan(b.scores[keys.rows])
    out = []
    for start, part in keys.bins():
        rows = keys.rows[part][both[part]]
        d = b.scores[rows] - a.scores[rows]
        low, high = bootstrap_ci(d, seed=seed) if d.size else (math.nan, math.nan)
        out.append({"start": start, "n": int(d.size), "diff": _num(float(d.mean())) if d.size else None,
                    "low": _num(low), "high": _num(high)})
    return out


def slices(runs: list[int | str] | int | str, metric: str, *, by: str = "as_of", bin: str = "year",
           changepoint: bool = False, penalty: float | None = None, store: Any = None,
           workspace: str | None = None, k: int = 10, seed: int = 42,
           n_permutations: int | None = None, alpha: float | None = None) -> SliceReport:
    """Scores of stored runs over time (see the module docstring). `runs` are run ids or names
    as `tempo-eval runs` lists them; `by` is as_of, focus_year or evidence_year (years: bin
    "year" only), `bin` week, month, quarter or year; `k` the top documents of evidence_year.
    The change point's test draws `n_permutations` (999) reassignments with `seed` and reports a
    change when p < `alpha` (0.01; `tempo_eval.slices.stats`); `penalty` finds several.
    The store is `store`, else the workspace `workspace`, else the default workspace.
    Raises LookupError for an unknown run, ValueError for an unknown by / bin or a metric the
    runs do not have."""
    import numpy as np

    from tempo_eval.slices.keys import row_bins_of_dataset
    from tempo_eval.slices.stats import ALPHA, N_PERMUTATIONS

    n_permutations = N_PERMUTATIONS if n_permutations is None else n_permutations
    alpha = ALPHA if alpha is None else alpha
    if store is None:
        from tempo_eval.store.runs import RunStore

        store = RunStore(None if workspace is None else _workspace_db(workspace))
    refs = [runs] if isinstance(runs, (int, str)) else list(runs)
    if not refs:
        raise ValueError("no run given: name at least one run")
    ids = [_run_id(store, ref) for ref in refs]
    report_runs, scored_runs, keys_of = [], [], {}
    for run_id in ids:
        info = store.run_info(run_id)
        dataset_id = int(info["dataset_id"])
        scored = _scored(store, run_id, metric, int(store.dataset_info(dataset_id)["n_rows"]))
        if not scored.n_results:
            have = ", ".join(store.metric_counts(run_id)["metric"]) or "no result"
            raise ValueError(f"run #{run_id} has no results for metric {metric!r} (it has: {have})")
        if dataset_id not in keys_of:
            keys_of[dataset_id] = row_bins_of_dataset(store, dataset_id, by, bin, k)
        keys = keys_of[dataset_id]
        known = scored.scores[~np.isnan(scored.scores)]
        binary = bool(known.size) and bool(np.isin(known, (0.0, 1.0)).all())
        scored_runs.append((run_id, dataset_id, scored))
        report_runs.append(run_slices(store, run_id, metric, keys, scored, binary=binary, changepoint=changepoint,
                                      penalty=penalty, seed=seed, n_permutations=n_permutations, alpha=alpha))
    differences = []
    first_id, first_dataset, first_scored = scored_runs[0]
    for run_id, dataset_id, scored in scored_runs[1:]:
        if dataset_id == first_dataset:
            differences.append(Difference(first_id, run_id, paired_difference(keys_of[dataset_id], first_scored,
                                                                              scored, seed)))
    return SliceReport(metric, by, bin, report_runs, differences)


def _run_id(store: Any, ref: int | str) -> int:
    """A run's id: an int is looked up directly (no listing of every run's counts), a text as
    `tempo-eval runs` lists runs (id, "#id" or name)."""
    from tempo_eval.compare.run_diff import resolve_run

    if isinstance(ref, int) and not isinstance(ref, bool):
        try:
            store.run_info(ref)
        except KeyError:
            raise LookupError(f"no run with id or name {str(ref)!r} (list them with 'tempo-eval runs')") from None
        return ref
    return resolve_run(store, ref)


def _workspace_db(workspace: str) -> Any:
    from tempo_eval.store.db import DB_FILENAME

    folder = Path(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / DB_FILENAME


def bin_rows(store: Any, run_id: int, metric: str, *, by: str, bin: str, start: str, k: int = 10) -> Any:
    """The rows of one run in the bin that starts on `start` (ISO date): row, query_id, query,
    score (NaN when not measured) and reason_code, in row order."""
    import numpy as np
    import pandas as pd

    from tempo_eval.slices.keys import row_bins_of_dataset

    dataset_id = int(store.run_info(run_id)["dataset_id"])
    keys = row_bins_of_dataset(store, dataset_id, by, bin, k)
    day = int(np.datetime64(start, "D").astype(np.int64))
    rows = np.unique(keys.rows[keys.starts == day])
    scored = _scored(store, run_id, metric, keys.n_rows)
    query_ids = store.dataset_column(dataset_id, "query_id") or [str(r) for r in range(keys.n_rows)]
    queries = store.dataset_column(dataset_id, "query") or [None] * keys.n_rows
    return pd.DataFrame({
        "row": rows, "query_id": [query_ids[r] for r in rows.tolist()],
        "query": [queries[r] for r in rows.tolist()], "score": scored.scores[rows],
        "reason_code": [None if not np.isnan(scored.scores[r]) else scored.reason(r) for r in rows.tolist()],
    })
