"""The Overview of a dataset too large to score on the fly: the selected runs' stored scores, per
run and system, aggregated by SQLite (`RunStore.system_summary`), read again only when a run
grows (cached per run id and size)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tempo_eval_app import store_reads, words

#: datasets with more rows than this are not scored on the fly by the Overview (focus-time
#: extraction of every row: about a minute per 100,000 rows); it shows their stored runs
ON_THE_FLY_ROWS = 10_000


def runs_of(dataset_id: int, run_ids: Sequence[int]) -> list[int]:
    """The runs among `run_ids` that evaluated the dataset `dataset_id` (a run deleted meanwhile is
    none of them), from the dataset's cached runs table."""
    of_dataset = set(store_reads.runs_table(int(dataset_id))["id"].astype(int))
    return [int(run_id) for run_id in run_ids if int(run_id) in of_dataset]


def summary_table(run_ids: Sequence[int]) -> pd.DataFrame:
    """One line per (run, system): run (name #id), system, rows, then per metric its mean over
    the scored rows and "<metric> measured" (scored / rows), and for answer currency the
    "current / outdated / other" counts."""
    lines = []
    for run_id in run_ids:
        summary = store_reads.system_summary(run_id)
        if summary.empty:
            continue
        label = store_reads.run_label(run_id)
        for system, part in summary.groupby(summary["system"].fillna(""), sort=True):
            line: dict[str, object] = {"run": label, "system": system or "(all rows)", "rows": int(part["n"].max())}
            for record in part.itertuples(index=False):
                name = words.metric_label(record.metric)
                line[name] = record.mean
                line[f"{name} measured"] = f"{int(record.n_scored):,}/{int(record.n):,}"
                if record.metric == "answer_currency":
                    line["current / outdated / other"] = (
                        f"{int(record.current):,} / {int(record.outdated):,} / {int(record.other):,}")
            lines.append(line)
    return pd.DataFrame(lines)
