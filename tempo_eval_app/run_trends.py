"""The Runs page's trends: each metric's mean with its CI across the runs of the active dataset in
time order (a point opens its run in Results), and the leaderboard's change columns against a
baseline run the user pins. Computed by `tempo_eval.compare.leaderboard`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval.compare.leaderboard import baseline_deltas, metric_trends
from tempo_eval.viz.trends import trend_chart
from tempo_eval_app import formatting, selection, store_reads, widgets

BASELINE_KEY = "runs_baseline"


def delta_column(metric: str) -> str:
    return f"{metric} Δ"


def pin_baseline(table: pd.DataFrame, runs: pd.DataFrame, metrics: list[str], where) -> tuple[pd.DataFrame, list[str]]:
    """A "Baseline for the Δ columns" picker drawn in `where`; with a run pinned, `table` (the
    leaderboard) gains a "METRIC Δ" column per metric (mean minus the baseline's mean). Returns the
    table and the added columns."""
    ids = [int(i) for i in table["id"]]
    names = {int(r.id): f"{r.name} · #{r.id}" for r in table.itertuples()}
    pinned = st.session_state.get(BASELINE_KEY)
    if pinned not in [None, *ids]:
        st.session_state[BASELINE_KEY] = None
        if int(pinned) not in set(store_reads.runs_table(None)["id"].astype(int)):
            # deleted; ids are never reused, so no other run takes its place
            where.caption(f"The pinned baseline run #{formatting.md_escape(pinned)} no longer exists (deleted): "
                          "no baseline is pinned.")
    baseline = where.selectbox("Baseline for the Δ columns", [None, *ids], key=BASELINE_KEY,
                               format_func=lambda i: "none" if i is None else names.get(int(i), f"#{i}"),
                               help="Pin a run: each metric gets a column with every run's mean minus this run's.")
    if baseline is None:
        return table, []
    deltas = baseline_deltas(store_reads.runs_board(runs), int(baseline))
    wide = deltas.pivot_table(index="run_id", columns="metric", values="delta", aggfunc="first", dropna=False)
    added = []
    table = table.copy()
    for metric in metrics:
        column = delta_column(metric)
        table[column] = table["id"].map(wide[metric]) if metric in wide.columns else float("nan")
        added.append(column)
    return table, added


@st.cache_resource(show_spinner=False, max_entries=16)
def _trend_figure(db: str, dataset_id: int, version: tuple):
    """The trend chart of a dataset's runs (None: no stored mean), built once per version of its
    runs (`store_reads.run_listing`) and shared (Streamlit draws a copy; never modify it)."""
    runs = store_reads.runs_table(dataset_id)
    trends = metric_trends(runs, store_reads.runs_board(runs))
    return None if trends.empty else trend_chart(trends)


def show_trends(runs: pd.DataFrame, dataset_id: int) -> None:
    """The trend chart of the runs of `dataset_id` among `runs`; a clicked point opens its run."""
    mine = runs[runs["dataset_id"] == dataset_id]
    if len(mine) < 2:
        st.caption("Trends need two runs of the active dataset.")
        return
    figure = _trend_figure(store_reads.db_path(), int(dataset_id), store_reads.run_listing(int(dataset_id)))
    if figure is None:
        st.caption("No metric has a stored mean yet.")
        return
    event = st.plotly_chart(figure, key="runs_trends", on_select="rerun", selection_mode="points",
                            width="stretch")
    st.caption(f"{len(mine):d} runs of this dataset, oldest first. Click a point to open its run in Results.")
    for point in widgets.selected(event, "points"):
        if isinstance(point, dict) and point.get("customdata") is not None:
            run_id = int(point["customdata"])
            st.caption(f"Opening run #{formatting.md_escape(run_id)}…")
            selection.open_page("views/results.py", dataset_id, [run_id])
