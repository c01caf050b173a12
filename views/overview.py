"""Overview: the active dataset's focus-time metrics, computed without any model.

A dataset of more than `dataset_scores.ON_THE_FLY_ROWS` rows is not scored here (focus-time
extraction of every row takes minutes): the page shows the selected runs' stored scores instead,
aggregated by SQLite, their first page of rows and, on request, the age distribution.

Temporal Faithfulness (focus-time mode) per row and its mean; Temporal NDCG@k in focus-time mode
(query years against context years) and in gold mode (retrieved_ids against gold_ids). A dataset
with publication dates or outdated answers also gets the as-of metrics per row and per system,
and the age distribution of its top-k documents per system.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from tempo_eval.core.extract import extract_aft, extract_dft
from tempo_eval.metrics.answer_currency import label_from_reason
from tempo_eval.viz.evidence_age import age_histogram
from tempo_eval.viz.highlight import legend_html, render_marks, text_block, year_marks
from tempo_eval_app import (
    dataset_scores,
    errors,
    formatting,
    links,
    selection,
    store_reads,
    widgets,
)

selection.page_setup("Overview")


def _row_label(frame: pd.DataFrame, position: int) -> str:
    """What the row picker shows: run (when the dataset has several), query id, start of the query."""
    row = frame.iloc[position]
    run, query = row.get("run"), row.get("query")
    parts = [run] if isinstance(run, str) and run else []
    parts.append(str(row.get("query_id")))
    return " · ".join([*parts, query[:90]] if isinstance(query, str) and query else parts)

ASOF_LABELS = {
    "future_leak": "Future leak@{k}",
    "stale_evidence": "Stale evidence@{k}",
    "median_evidence_age": "Median evidence age@{k} (days)",
    "recency_ndcg": "Recency NDCG@{k}",
    "answer_currency": "Answer currency",
}


def _asof_section(dataset_id: int, k: int) -> None:
    """As-of metrics per row (publication dates against the as-of date) and the age distribution."""
    st.subheader("As-of: when the evidence was published")
    a1, a2, _ = st.columns(3)
    max_age = a1.number_input("Stale after (days, max_age)", 0, 36500, 365, key="overview_max_age")
    half_life = a2.number_input("Recency half-life (days)", 1, 36500, 365, key="overview_half_life")
    scores = dataset_scores.asof_scores(dataset_id, k, max_age, half_life)
    groups = sorted({str(s) for s in scores["run"].dropna()}) or [None]
    summary = []
    for system in groups:
        part = scores if system is None else scores[scores["run"].astype(str) == system]
        record: dict[str, object] = {"system": system or "(all rows)", "rows": len(part)}
        for name, label in ASOF_LABELS.items():
            record[label.format(k=k)] = float(part[name].mean())  # over the measurable rows; NaN if none
        labels = [label_from_reason(r) for r in part["answer_currency reason"]]
        record["current / outdated / other"] = " / ".join(str(labels.count(x)) for x in ("current", "outdated", "other"))
        summary.append(record)
    st.dataframe(pd.DataFrame(summary), hide_index=True, width="stretch", key="overview_asof_systems",
                 column_config={label.format(k=k): st.column_config.NumberColumn(format="%.3f")
                                for label in ASOF_LABELS.values()})
    table = scores.copy()
    if table["run"].isna().all():
        table = table.drop(columns=["run"])
    st.dataframe(table, hide_index=True, width="stretch", key="overview_asof_table",
                 column_config={name: st.column_config.NumberColumn(ASOF_LABELS[name].format(k=k), format="%.3f")
                                for name in ASOF_LABELS},
                 # the scores right after the ids, their reasons after them
                 column_order=[c for c in ("query_id", "run", *ASOF_LABELS, *(f"{n} reason" for n in ASOF_LABELS))
                               if c in table.columns])
    widgets.download_results(table, f"asof_{dataset_id}", key="overview_asof_dl")
    _age_chart(dataset_id, k)


def _stored_runs(dataset_id: int, n_rows: int, k: int) -> None:
    """A dataset too large to score here: the selected runs' stored scores, aggregated by SQLite,
    the first page of rows, and on request the age distribution (read column-wise)."""
    st.info(f"This dataset has {n_rows:,} rows, more than the {dataset_scores.ON_THE_FLY_ROWS:,} the Overview scores "
            "on the fly (that would take minutes): it shows the scores of the selected runs, as stored.")
    run_ids = dataset_scores.runs_of(dataset_id, selection.active_run_ids())
    if not run_ids:
        widgets.empty_state("No run of this dataset is selected: evaluate it (the evaluation runs beside the app), "
                            "then select its run in the sidebar.", "evaluate")
        return
    st.markdown("**Mean per run and system** (over the rows where the metric is measurable)")
    summary = dataset_scores.summary_table(run_ids)
    st.dataframe(formatting.display_table(summary), hide_index=True, width="stretch", key="overview_stored_summary")
    page = store_reads.results_page(run_ids, 0, store_reads.PAGE_ROWS - 1)
    st.subheader("Per row")
    st.caption(f"The first {store_reads.PAGE_ROWS:,} dataset rows; every row, with filters and each row in detail, "
               "on **Results**.")
    scores = [c for c in page.columns if c not in ("eval_run", "run_id", "row", "query_id", "system")]
    st.dataframe(page.drop(columns=["run_id"]), hide_index=True, width="stretch", key="overview_stored_rows",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in scores
                                if not str(c).endswith(" reason")})
    # the ages are read from every row of the dataset (seconds at this size): on request
    if st.toggle(f"Age distribution of the top {k:d} documents (reads all {n_rows:,} rows of the dataset)",
                 key="overview_stored_ages"):
        if "context_dates" in store_reads.dataset_frame(dataset_id).columns:
            _age_chart(dataset_id, k)
        else:
            st.caption("The dataset has no publication dates (context_dates).")


@st.cache_resource(show_spinner=False, max_entries=16)
def _age_figure(ages: pd.DataFrame, k: int):
    """The age histogram of these document ages, built once per ages (plotly validates a figure
    as it is built); shared, do not modify."""
    by_run = {str(name): part["age"].to_numpy() for name, part in ages.groupby(ages["run"].fillna("(all rows)"))}
    return age_histogram(by_run, title=f"Age of the top {k} documents at the as-of date")


def _age_chart(dataset_id: int, k: int) -> None:
    """The age at the as-of date of every row's top-k documents, one distribution per system."""
    ages = dataset_scores.document_ages(dataset_id, k)
    if len(ages):
        st.plotly_chart(_age_figure(ages, int(k)), key="overview_age_chart", width="stretch")
        st.caption(formatting.md_escape(
            f"{int(ages['age'].notna().sum())} of {len(ages)} top-{k} documents have both dates; "
            f"{int(ages['future'].sum())} were published after their question's as-of date."))


def _selected_runs(dataset_id: int) -> None:
    """The stored means of the runs of this dataset selected in the sidebar, each named by its run,
    above the figures computed here: a claims-mode run's Temporal Faithfulness is not the focus-time
    one, and the page says which is which."""
    run_ids = dataset_scores.runs_of(dataset_id, selection.active_run_ids())
    if not run_ids:
        return
    summary = dataset_scores.summary_table(run_ids)
    if summary.empty:
        return
    st.markdown("**Selected runs, as stored** (mean over the rows where the metric is measurable, in each run's "
                "own mode and verifier)")
    # a static table: a few lines, and the row table below stays the page's first grid. st.table
    # renders its cells as Markdown: every cell (a run's name is user text) is escaped
    shown = formatting.display_table(summary).set_index("run")
    shown = shown.map(formatting.md_escape)
    shown.index = [formatting.md_escape(label) for label in shown.index]
    shown.columns = [formatting.md_escape(column) for column in shown.columns]
    st.table(shown)


with errors.page_guard("overview"):
    dataset_id = selection.require_dataset_id()
    info = store_reads.dataset_info(dataset_id)
    st.caption(f"Dataset **{formatting.md_escape(info['name'])}** · {formatting.md_escape(info['n_rows'])} rows · format {formatting.md_escape(info['format'] or '—')}")
    for warning in info.get("warnings") or []:
        st.warning(formatting.md_escape(warning))

    links.init_from_param("overview_k", "k", int, lambda v: 1 <= v <= 100)
    k = st.number_input("Cutoff k for Temporal NDCG@k", 1, 100, value=10, key="overview_k")
    links.set_params(k=k)
    if int(info["n_rows"] or 0) > dataset_scores.ON_THE_FLY_ROWS:
        _stored_runs(dataset_id, int(info["n_rows"]), int(k))
        links.view_link("k")
        st.stop()
    frame = store_reads.dataset_frame(dataset_id)
    scores = dataset_scores.focus_time_scores(dataset_id, int(k))
    _selected_runs(dataset_id)
    st.markdown("**Computed here in focus-time mode** (no model, no stored run: the same figures whatever "
                "run is selected)")

    means = {
        "Temporal Faithfulness (focus time)": "temporal_faithfulness",
        f"Temporal NDCG@{k} (focus time)": "ndcg_focus_time",
        f"Temporal NDCG@{k} (gold)": "ndcg_gold",
    }
    systems = sorted({str(s) for s in scores["run"].dropna()})
    if len(systems) > 1:
        # a run-file dataset holds several retrieval systems: one mean each, never pooled
        st.markdown("**Mean per system** (over the rows where the metric is measurable)")
        per_system = []
        for system in systems:
            part = scores[scores["run"].astype(str) == system]
            record: dict[str, object] = {"system": system, "rows": len(part)}
            for label, column in means.items():
                record[label] = float(part[column].mean())  # over the measurable rows; NaN if none
                record[f"{label} measurable"] = f"{part[column].count()}/{len(part)}"
            per_system.append(record)
        st.dataframe(formatting.display_table(pd.DataFrame(per_system)), hide_index=True, width="stretch",
                     key="overview_systems")
    else:
        columns = st.columns(len(means))
        for column, (label, name) in zip(columns, means.items(), strict=True):
            values = scores[name]
            measurable = values.dropna()
            column.metric(label, formatting.fmt_score(float(measurable.mean())) if len(measurable) else formatting.MISSING,
                          help="Mean over the rows where the metric is measurable." if len(measurable)
                          else "No row is measurable: the table below says why, row by row.")
            column.caption(f"{formatting.fmt_count(len(measurable))} of {formatting.fmt_count(len(values))} rows measured")

    table = scores.copy()
    if "query" in frame.columns:
        table["query"] = frame["query"].tolist()
    if table["run"].isna().all():
        table = table.drop(columns=["run"])
    st.subheader("Per row")
    st.caption("Click a row to see its answer's years against its contexts.")
    for column in ("tf_reason", "ndcg_ft_reason", "ndcg_gold_reason"):
        if column in table.columns:
            table[column] = [r if isinstance(r, str) and r else formatting.MISSING for r in table[column]]
    event = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        column_config={
            "query_id": st.column_config.TextColumn("query id"),
            "tf_reason": st.column_config.TextColumn("why not measured (TF)", help="Why the row has no Temporal Faithfulness score"),
            "ndcg_ft_reason": st.column_config.TextColumn("why not measured (NDCG focus time)"),
            "ndcg_gold_reason": st.column_config.TextColumn("why not measured (NDCG gold)"),
            "temporal_faithfulness": st.column_config.ProgressColumn("TF (focus time)", min_value=0.0, max_value=1.0, format="%.3f", width="medium"),
            "ndcg_focus_time": st.column_config.ProgressColumn(f"NDCG@{k} focus time", min_value=0.0, max_value=1.0, format="%.3f", width="medium"),
            "ndcg_gold": st.column_config.ProgressColumn(f"NDCG@{k} gold", min_value=0.0, max_value=1.0, format="%.3f", width="medium"),
            "query": st.column_config.TextColumn("query", width="medium"),
        },
        # the scores right after the ids, the long texts after them: no scrolling to see a score
        column_order=[c for c in ("query_id", "run", "temporal_faithfulness", "ndcg_focus_time", "ndcg_gold", "query",
                                  "tf_reason", "ndcg_ft_reason", "ndcg_gold_reason") if c in table.columns],
        key="overview_table",
    )
    widgets.download_results(table, f"focus_time_{dataset_id}", key="overview_dl")
    if dataset_scores.has_asof_columns(frame):
        _asof_section(dataset_id, int(k))

    if "answer" in frame.columns and len(frame):
        st.subheader("Answer years against context years")
        # the row clicked in the table (a position: a query id repeats across the runs of a dataset),
        # else the one the link names, else the first
        links.init_from_param("overview_row", "row", int, lambda v: 0 <= v < len(frame))
        clicked = widgets.selected(event)
        if clicked:
            st.session_state["overview_row"] = int(clicked[0])
        chosen = int(st.session_state.get("overview_row", 0))
        chosen = chosen if 0 <= chosen < len(frame) else 0
        links.set_params(row=chosen)
        st.markdown(f"**{formatting.md_escape(_row_label(frame, chosen))}**")
        row = frame.iloc[chosen]
        answer = row.get("answer")
        contexts = row.get("contexts") if isinstance(row.get("contexts"), list) else []
        ref = row.get("reference_date") or None
        if isinstance(answer, str):
            aft = extract_aft(answer, reference_date=ref)
            context_years = set().union(*(extract_dft(c, reference_date=ref).years for c in contexts)) if contexts else set()
            score = scores.iloc[chosen]
            # the legend, the marked answer, its score and the contexts' cards: one element
            widgets.html_blocks(
                legend_html(("grounded", "ungrounded")),
                text_block(render_marks(answer, year_marks(aft.spans, context_years))),
                widgets.plain_html(f"Temporal Faithfulness {formatting.fmt_score(score['temporal_faithfulness'])}: "
                                   f"{score['tf_reason']}", muted=True),
                *(widgets.card_html(f"Context {i:d}", render_marks(text, year_marks(extract_dft(text, reference_date=ref).spans)))
                  for i, text in enumerate(contexts, start=1)),
            )
        else:
            st.caption("This row has no answer.")

    nan_reasons = pd.Series([r for r, s in zip(scores["tf_reason"], scores["temporal_faithfulness"], strict=True) if isinstance(s, float) and math.isnan(s)])
    if len(nan_reasons):
        with st.expander(f"Why {len(nan_reasons)} rows have no Temporal Faithfulness score"):
            st.dataframe(formatting.display_table(nan_reasons.value_counts().rename_axis("why not measured").reset_index()),
                         hide_index=True)
    links.view_link("k", "row")
