"""Scores over time on the dashboard: the cached `tempo_eval.slices` report of some runs, its
chart (curves with bands, change points, the difference below), a clicked bin's rows opening in
the row details Results uses, and the CSV and HTML downloads. The Time page and Run diff draw it."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.compare.report_html import slices_html
from tempo_eval.slices.report import bin_rows, slices
from tempo_eval_app import formatting, row_detail, store_reads, widgets, words

BY = {"as_of": "As-of date", "focus_year": "Focus year", "evidence_year": "Evidence year"}
BINS = ("week", "month", "quarter", "year")


@st.cache_data(show_spinner="Slicing the scores over time…", max_entries=32)
def _report(db: str, runs: tuple[int, ...], sizes: tuple[int, ...], metric: str, by: str, bin: str) -> Any:
    return slices(list(runs), metric, by=by, bin=bin, changepoint=True, store=store_reads.store_for(db))


def report(runs: list[int], metric: str, by: str, bin: str) -> Any:
    """The slices of `runs` (cached per run sizes: a run still being written is read again)."""
    return _report(store_reads.db_path(), tuple(int(r) for r in runs),
                   tuple(store_reads.n_results(r) for r in runs), metric, by, bin)


@st.cache_data(show_spinner=False, max_entries=32)
def _bin_rows(db: str, run: int, size: int, metric: str, by: str, bin: str, start: str) -> pd.DataFrame:
    return bin_rows(store_reads.store_for(db), run, metric, by=by, bin=bin, start=start)


def metrics_of(run_ids: list[int]) -> list[str]:
    """The metrics every one of the runs holds, in order."""
    held = [list(store_reads.store().metric_counts(int(r))["metric"]) for r in run_ids]
    return [m for m in held[0] if all(m in h for h in held[1:])] if held else []


def _picked(event: Any, fig: Any) -> tuple[int, str] | None:
    """(run, bin start) of the first clicked point: its customdata, looked up in the figure by
    curve and point number where the selection does not carry it."""
    for point in widgets.selected(event, "points"):
        if not isinstance(point, dict):
            continue
        data = point.get("customdata")
        curve, index = point.get("curve_number"), point.get("point_index", point.get("point_number"))
        if data is None and isinstance(curve, int) and isinstance(index, int) and 0 <= curve < len(fig.data):
            custom = fig.data[curve].customdata
            data = custom[index] if custom is not None and 0 <= index < len(custom) else None
        if isinstance(data, (list, tuple)) and len(data) == 2:
            return int(data[0]), str(data[1])
    return None


def _changes_caption(rep: Any) -> None:
    for run in rep.runs:
        if not run.changepoints:
            st.caption(formatting.md_escape(store_reads.run_label(run.run)) + ": no change point found (the test of no change was not "
                       "rejected at 1%).")
        for c in run.changepoints:
            st.caption(
                formatting.md_escape(store_reads.run_label(run.run)) + f": the level changes at **{formatting.md_escape(c['start'])}**: "
                f"{c['before']['mean']:.3f} ({c['before']['low']:.3f}–{c['before']['high']:.3f}) before, "
                f"{c['after']['mean']:.3f} ({c['after']['low']:.3f}–{c['after']['high']:.3f}) after; drop "
                f"{c['drop']['value']:+.3f} ({c['drop']['low']:+.3f}–{c['drop']['high']:+.3f}), permutation "
                f"p = {c['p_value']:.3g}.")


def show(runs: list[int], metric: str, by: str, bin: str, *, key: str) -> None:
    """The chart of `runs` on `metric`, its numbers, downloads and a clicked bin's rows."""
    from tempo_eval.viz.slices import slices_figure

    try:
        rep = report(runs, metric, by, bin)
    except (ValueError, LookupError) as refused:
        st.warning(formatting.md_escape(str(refused)))
        return
    if not any(b.n for r in rep.runs for b in r.bins):
        unplaced = {k: v for r in rep.runs for k, v in r.unplaced.items()}
        why = "; ".join(f"{v} rows: {k}" for k, v in unplaced.items()) or "no measured row"
        st.info(f"No row of these runs has a place on this axis ({formatting.md_escape(why)}). Try another **By**.")
        return
    fig = slices_figure(rep, labels={r.run: store_reads.run_label(r.run) for r in rep.runs},
                        metric_label=words.metric_label(metric))
    event = st.plotly_chart(fig, key=f"{key}_chart", on_select="rerun", selection_mode="points",
                            width="stretch")
    _changes_caption(rep)
    st.caption("Click a point to open the rows of its bin. Intervals: Wilson for 0/1 scores, else bootstrap.")
    st.dataframe(rep.frame(), hide_index=True, width="stretch", key=f"{key}_bins", column_config={
        c: st.column_config.NumberColumn(c, format="%.3f") for c in ("mean", "low", "high")})
    reasons = rep.reasons_frame()
    if not reasons.empty:
        with st.expander(f"{int(reasons['rows'].sum())} row(s) not measured or not placed in time, with reasons"):
            st.dataframe(reasons, hide_index=True, width="stretch", key=f"{key}_reasons")
    stem = f"scores_over_time_{metric}_{by}_{bin}"
    row = st.container(horizontal=True)
    row.download_button("CSV", data=lambda: rep.to_csv().encode("utf-8"), file_name=f"{stem}.csv", mime="text/csv",
                        key=f"{key}_csv", icon=":material/download:")
    row.download_button("HTML", data=lambda: slices_html(rep).encode("utf-8"), file_name=f"{stem}.html",
                        mime="text/html", key=f"{key}_html", icon=":material/download:",
                        help="One file with the chart and the tables; opens offline.")
    picked = _picked(event, fig)
    if picked is not None:
        _bin(picked, metric, by, bin, key=key)


def _bin(picked: tuple[int, str], metric: str, by: str, bin: str, *, key: str) -> None:
    run, start = picked
    rows = _bin_rows(store_reads.db_path(), run, store_reads.n_results(run), metric, by, bin, start)
    st.subheader(f"Bin {formatting.md_escape(start)}: {len(rows):d} row(s) of run #{run:d}")
    event = st.dataframe(rows, hide_index=True, width="stretch", key=f"{key}_bin_rows", on_select="rerun",
                         selection_mode="single-row",
                         column_config={"score": st.column_config.NumberColumn("score", format="%.3f"),
                                        "query": st.column_config.TextColumn(width="large")})
    chosen = widgets.selected(event)
    index = chosen[0] if chosen and chosen[0] < len(rows) else (0 if len(rows) else None)
    if index is not None:
        st.caption("Click a row to open it." if not chosen else "")
        row_detail.show_row(run, int(rows["row"].iloc[index]), key=f"{key}_detail")
