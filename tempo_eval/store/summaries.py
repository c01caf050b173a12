"""Summaries of a run's results computed by SQLite, whatever the run's size: per system (the
dataset's run column) and metric, how many results, how many scored, their mean, and answer
currency's label counts (the label leads the stored reason: `current: ...`)."""

from __future__ import annotations

import pandas as pd

SUMMARY_COLUMNS = ["system", "metric", "n", "n_scored", "mean", "current", "outdated", "other"]


class SummaryRecords:
    """The part of `RunStore` that aggregates results in SQL (the connection and lock are the
    store's)."""

    _conn: object
    _lock: object

    def system_summary(self, run_id: int) -> pd.DataFrame:
        """One line per (system, metric) of a run: system (None when the dataset has no run
        column), metric, n (results), n_scored (with a score; NaN results are stored as NULL),
        mean (of the scores; NaN when none), and the answer-currency label counts current,
        outdated and other (0 for other metrics). One aggregate query: nothing is loaded."""
        with self._lock:  # type: ignore[attr-defined]
            rows = self._conn.execute(  # type: ignore[attr-defined]
                "SELECT system, metric, COUNT(*), COUNT(score), AVG(score) FROM results WHERE run_id = ?"
                " GROUP BY system, metric ORDER BY system, metric", (int(run_id),)).fetchall()
            # the labels apart: carrying every result's reason through the grouping costs more
            # than a second pass over the answer-currency results alone, and that pass reads
            # every result of the run (the key leads with the row): only when there are some
            labels = []
            if any(metric == "answer_currency" for _, metric, *_ in rows):
                labels = self._conn.execute(  # type: ignore[attr-defined]
                    "SELECT system, COUNT(CASE WHEN substr(reason, 1, 8) = 'current:' THEN 1 END),"
                    " COUNT(CASE WHEN substr(reason, 1, 9) = 'outdated:' THEN 1 END),"
                    " COUNT(CASE WHEN substr(reason, 1, 6) = 'other:' THEN 1 END) FROM results"
                    " WHERE run_id = ? AND metric = 'answer_currency' GROUP BY system", (int(run_id),)).fetchall()
        frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS[:5])
        frame["mean"] = pd.to_numeric(frame["mean"], errors="coerce").astype(float)
        counts = {system: rest for system, *rest in labels}
        for index, name in enumerate(("current", "outdated", "other")):
            frame[name] = [int(counts[system][index]) if metric == "answer_currency" and system in counts else 0
                           for system, metric in zip(frame["system"], frame["metric"], strict=True)]
        return frame

    def last_row(self, run_id: int) -> int | None:
        """The highest dataset row with a result in the run (None: no result): one seek of the
        primary key, whatever the run's size (a COUNT reads every result of the run)."""
        with self._lock:  # type: ignore[attr-defined]
            (last,) = self._conn.execute(  # type: ignore[attr-defined]
                "SELECT MAX(row_idx) FROM results WHERE run_id = ?", (int(run_id),)).fetchone()
        return None if last is None else int(last)
