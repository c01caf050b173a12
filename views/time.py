"""Scores over time: a metric of the chosen runs per bin of as-of date, focus year or evidence
year, with 95% bands, where the level changes, and each run minus the first below. A point
clicked opens its bin's rows, and a row the row details of Results. Computed by
`tempo_eval.slices` (the scores read in SQL, never a run's rows); drawn by
`tempo_eval_app.time_slices`."""

from __future__ import annotations

import streamlit as st

from tempo_eval_app import errors, formatting, links, selection, store_reads, time_slices, words

selection.page_setup("Scores over time")

with errors.page_guard("scores over time"):
    runs = store_reads.runs_table(None)
    runs = runs[runs["n_results"] > 0]
    if runs.empty:
        st.info("Scores over time need a stored run with results: evaluate a dataset on **Evaluate**.")
        st.stop()
    ids = [int(i) for i in runs["id"]]
    names = {int(r.id): f"{store_reads.run_label(int(r.id), r.name, r.config_hash)} · {r.dataset}" for r in runs.itertuples()}
    links.init_from_param("time_by", "by", str, lambda v: v in time_slices.BY)
    links.init_from_param("time_bin", "bin", str, lambda v: v in time_slices.BINS)
    if not [r for r in st.session_state.get("time_runs", []) if r in ids]:
        dataset_id = selection.active_dataset_id()
        active = [r for r in selection.active_run_ids() if r in ids]
        mine = [int(i) for i in runs.loc[runs["dataset_id"] == dataset_id, "id"]]
        st.session_state["time_runs"] = active[:2] or mine[:1] or ids[:1]
    chosen = st.multiselect("Runs", ids, key="time_runs", format_func=names.get,
                            help="The first run is the one the others are compared with, per bin.")
    if not chosen:
        st.info("Choose at least one run.")
        st.stop()
    metrics = time_slices.metrics_of(chosen)
    if not metrics:
        st.warning("These runs hold no metric in common.")
        st.stop()
    c1, c2, c3 = st.columns([2, 2, 1])
    if st.session_state.get("time_metric") not in metrics:
        st.session_state["time_metric"] = metrics[0]
    metric = c1.selectbox("Metric", metrics, key="time_metric", format_func=words.metric_label)
    st.session_state.setdefault("time_by", "as_of")
    by = c2.segmented_control("By", list(time_slices.BY), key="time_by", format_func=time_slices.BY.get) or "as_of"
    st.session_state.setdefault("time_bin", "year")
    bins = time_slices.BINS if by == "as_of" else ("year",)
    if st.session_state["time_bin"] not in bins:
        st.session_state["time_bin"] = "year"
    bin_ = c3.selectbox("Bin", bins, key="time_bin")
    links.set_params(by=by, bin=bin_)
    st.caption(formatting.md_escape(f"{words.metric_label(metric)} per {bin_} of the rows' {time_slices.BY[by].lower()}."))
    time_slices.show(chosen, metric, by, bin_, key="time")
    links.view_link("by", "bin")
