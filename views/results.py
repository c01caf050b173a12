"""Results: the per-row grid of any stored run, read from the store, so it works in any session,
after a refresh and after a server restart; the address (`?dataset=3&runs=5&metric=...`)
reopens the same view.

One line per dataset row and evaluation run: a score column per metric, its reason code, and the
system (the dataset's run column). Filters: metric and score range (0 to 1, or the metric's own
range and unit: Median evidence age in days), NaN reason, system, free text.
One row opens in detail: query, answer with its claims coloured by verdict, contexts with their
years, per-year grounding and per-rank gains. Downloads: CSV, JSONL, Parquet.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval_app import (
    errors,
    formatting,
    links,
    row_detail,
    score_scale,
    selection,
    store_reads,
    widgets,
    words,
)

selection.page_setup("Results")

ANY = "(any metric)"


def _metrics(grid: pd.DataFrame) -> list[str]:
    fixed = {"eval_run", "run_id", "row", "query_id", "system", "query"}
    return [c for c in grid.columns if c not in fixed and not str(c).endswith(" reason")]


def _split(raw: str | None) -> list[str]:
    return [part for part in (raw or "").split(",") if part]


def filter_grid(grid: pd.DataFrame, *, metric: str, score_range: tuple[float, float] | None,
                ranged: list[str], reasons: list[str], systems: list[str], text: str) -> pd.DataFrame:
    """The lines of the grid that pass the filters: a score of one of the `ranged` metrics within
    `score_range` (None: no range filter), a reason of the metric (ANY: of any metric), ..."""
    metrics = _metrics(grid)
    chosen = metrics if metric == ANY else [metric]
    keep = pd.Series(True, index=grid.index)
    if score_range is not None:
        low, high = score_range
        keep &= ((grid[ranged] >= low) & (grid[ranged] <= high)).any(axis=1)
    if reasons:
        keep &= grid[[f"{name} reason" for name in chosen]].isin(reasons).any(axis=1)
    if systems:
        keep &= grid["system"].astype(str).isin(systems)
    if text.strip():
        searched = [c for c in ("query_id", "query", "system", "eval_run") if c in grid.columns]
        keep &= widgets.contains_text(grid[searched], text)
    return grid[keep]


with errors.page_guard("results"):
    dataset_id = selection.require_dataset_id()
    run_ids = selection.active_run_ids()
    if not run_ids:
        widgets.empty_state("No evaluation run selected: choose one in the sidebar, open one from **Runs**, or start one.",
                            "evaluate")
        st.stop()
    # a run of 400,000 results is read a page at a time (one key range per run), never whole
    paged = store_reads.total_results(run_ids) > store_reads.PAGED_OVER
    if paged:
        n_dataset_rows = int(store_reads.dataset_info(dataset_id)["n_rows"])
        pages = max(1, -(-n_dataset_rows // store_reads.PAGE_ROWS))
        links.init_from_param("results_page", "page", int, lambda v: 1 <= v <= pages)
        page_no = int(st.number_input(f"Page of {pages:,} ({store_reads.PAGE_ROWS:,} dataset rows each)", 1, pages, 1,
                                      key="results_page"))
        first_row = (page_no - 1) * store_reads.PAGE_ROWS
        grid = store_reads.results_page(run_ids, first_row, first_row + store_reads.PAGE_ROWS - 1)
        links.set_params(page=page_no if page_no > 1 else None)
        st.caption("These runs are large: the grid shows one page of dataset rows at a time, and the filters and "
                   "downloads below apply to the page shown.")
    else:
        grid = store_reads.results_grid(run_ids)
    if grid.empty:
        st.info("No stored result on this page." if paged else "The selected runs have no stored result yet.")
        st.stop()
    metrics = _metrics(grid)
    reason_columns = [f"{m} reason" for m in metrics]
    all_reasons = sorted({str(v) for c in reason_columns for v in grid[c].dropna().unique()})
    systems = sorted({str(v) for v in grid["system"].dropna().unique()})

    f1, f2, f3 = st.columns(3)
    links.init_from_param("results_metric", "metric", str, lambda v: v in metrics)
    metric = f1.selectbox("Metric", [ANY, *metrics], key="results_metric")
    # a share or score filters on 0..1; Median evidence age on its own range, in days; "any
    # metric" on 0..1, over the metrics scored 0..1
    scales = {m: score_scale.score_scale(m, grid[m]) for m in metrics}
    scale = score_scale.UNIT_INTERVAL if metric == ANY else scales[metric]
    ranged = [m for m in metrics if scales[m].is_unit_interval] if metric == ANY else [metric]
    range_key = "results_range" if scale.is_unit_interval else f"results_range_{metric}"
    kept = st.session_state.get(range_key)
    if kept is not None and not scale.holds(*kept):  # another page of a paged run: another range
        del st.session_state[range_key]
    links.init_from_param(range_key, "range", lambda v: tuple(float(x) for x in v.split(",")),
                          lambda v: len(v) == 2 and scale.holds(*v))
    low, high = f1.slider(
        "Score range" if scale.unit is None
        else f"{formatting.md_escape(words.metric_label(metric))} range ({formatting.md_escape(scale.unit)})",
        scale.low, scale.high, (scale.low, scale.high), scale.step, key=range_key,
        help="Applies to the metrics scored 0 to 1; pick a metric to filter it on its own scale."
        if metric == ANY and len(ranged) < len(metrics) else None)
    full_range = (low, high) == (scale.low, scale.high)
    links.init_from_param("results_reasons", "nan", _split, lambda v: all(x in all_reasons for x in v))
    reasons = f2.multiselect("Why not measured", all_reasons, key="results_reasons", placeholder="any")
    links.init_from_param("results_systems", "system", _split, lambda v: all(x in systems for x in v))
    chosen_systems = f2.multiselect("System", systems, key="results_systems", placeholder="any",
                                    disabled=not systems, help="The dataset's run column (retrieval system).")
    links.init_from_param("results_text", "q")
    text = f3.text_input("Search", key="results_text", placeholder="query id or query text…")
    links.set_params(metric=None if metric == ANY else metric, range=None if full_range else f"{low},{high}",
                     nan=reasons or None, system=chosen_systems or None, q=text or None)

    shown = filter_grid(grid, metric=metric, score_range=None if full_range else (low, high), ranged=ranged,
                        reasons=reasons, systems=chosen_systems, text=text)
    display = shown.drop(columns=["run_id"])
    if len(run_ids) == 1:
        display = display.drop(columns=["eval_run"])
    if not systems:
        display = display.drop(columns=["system"])
    if paged:  # NaN counts of the whole runs, from one aggregate query each
        counts = pd.concat([store_reads.metric_counts(r) for r in run_ids]).groupby("metric")["n_nan"].sum()
        nan_counts = {m: int(counts.get(m, 0)) for m in metrics}
        where = f" on this page · {store_reads.total_results(run_ids):,} results in all"
    else:
        nan_counts = {m: int(grid[m].isna().sum()) for m in metrics}
        where = ""
    st.caption(
        f"{len(shown):,} of {len(grid):,} lines{formatting.md_escape(where)} · "
        + " · ".join(f"{formatting.md_escape(words.metric_label(m))}: {n:,} not measured" for m, n in nan_counts.items())
    )
    # numbers stay numbers (the grid sorts by them); they show in the one format (fmt_score's 3
    # decimals), missing as "—" (the grid's placeholder): drawn by the browser, not by a pandas
    # Styler formatting every cell on the server at each run
    column_config = {m: st.column_config.NumberColumn(words.metric_label(m), format="%.3f",
                                                      help=f"{formatting.md_escape(words.metric_label(m))} score; "
                                                      "— where the row is not measured (the reason is beside it)")
                     for m in metrics}
    column_config.update({f"{m} reason": st.column_config.TextColumn(f"{words.metric_label(m)}: why not measured")
                          for m in metrics})
    column_config["query"] = st.column_config.TextColumn("query", width="medium")
    column_config["query_id"] = st.column_config.TextColumn("query id")
    column_config["eval_run"] = st.column_config.TextColumn("run")
    column_config["row"] = st.column_config.NumberColumn("row", help="The row's number in the dataset, from 1")
    # the query id names a line; the row number (from 1, as a spreadsheet counts) only without one
    display = display.assign(row=display["row"] + 1)
    named = "query_id" in display.columns and not display["query_id"].map(formatting.is_missing).any()
    order = [c for c in ["eval_run", *([] if named else ["row"]), "query_id", "system", *metrics, "query", *reason_columns] if c in display.columns]
    reasons_shown = [c for c in reason_columns if c in display.columns]
    if reasons_shown:  # an empty reason shows as missing too, not as an empty cell
        display = display.assign(**{c: display[c].mask(display[c].astype("string").str.strip().isin(("", "None", "nan")))
                                    for c in reasons_shown})
    st.caption("Click a line to open it in detail below.")
    event = st.dataframe(display, hide_index=True, width="stretch", column_config=column_config, column_order=order,
                         placeholder=formatting.MISSING, on_select="rerun", selection_mode="single-row",
                         key="results_grid")
    stem = f"results_runs_{'_'.join(map(str, run_ids))}"
    widgets.download_results(shown.reset_index(drop=True), stem, key="results_dl")

    st.subheader("One row in detail")
    # the line clicked in the grid, else the one the link names, else the first line shown
    clicked = widgets.selected(event)
    if clicked and clicked[0] < len(shown):
        line = shown.iloc[int(clicked[0])]
        st.session_state["results_detail_run"], st.session_state["results_row"] = int(line["run_id"]), int(line["row"])
    links.init_from_param("results_detail_run", "drun", int, lambda v: v in run_ids)
    detail_run = int(st.session_state.get("results_detail_run", run_ids[0]))
    detail_run = detail_run if detail_run in run_ids else run_ids[0]
    rows = sorted(int(r) for r in grid.loc[grid["run_id"] == detail_run, "row"])
    first = int(shown["row"].iloc[0]) if len(shown) else (rows[0] if rows else 0)
    links.init_from_param("results_row", "row", int, lambda v: v in rows)
    row = int(st.session_state.get("results_row", first))
    links.set_params(row=row, drun=detail_run if len(run_ids) > 1 else None)
    here = grid.loc[(grid["run_id"] == detail_run) & (grid["row"] == row), "query_id"] if "query_id" in grid else []
    st.caption(f"Run **{formatting.md_escape(store_reads.run_label(detail_run))}** · "
               f"{formatting.md_escape(formatting.row_name(here.iloc[0] if len(here) else None, row))}")
    row_detail.show_row(detail_run, int(row), key="results")
    links.view_link("metric", "range", "nan", "system", "q", "row", "drun", "page")

