"""The Compare page's as-of sections for run files with dates: the evidence-age distribution of
every run overlaid, and per run the queries that leak (future_leak@k > 0), each of which opens to
its ranked top-k documents with their publication dates, ages and flags (future, stale, undated).
The numbers come from the worker's saved comparison (`tempo_eval.compare.saved`).
"""

from __future__ import annotations

import streamlit as st

from tempo_eval.compare import saved as saved_comparisons
from tempo_eval_app import downloads, formatting

#: the columns of an opened query's documents, in this order
DOCUMENT_COLUMNS = ["rank", "doc_id", "date", "age", "flag", "grade"]


def show(found: saved_comparisons.StoredComparison) -> None:
    """The as-of sections, or a line saying which files would add them."""
    if not found.as_of:
        st.caption("Add a doc-dates and a query-dates file above for the as-of metrics: future leak, stale "
                   "evidence, median evidence age and Recency NDCG, the age of the evidence and the queries that leak.")
        return
    k = int(found.settings["k"])
    st.subheader("As-of: when the evidence was published")
    st.caption(formatting.md_escape(
        f"Stale after {found.settings['max_age']:g} days; Recency NDCG half-life {found.settings['half_life']:g} days. "
        "Future leak, stale evidence and median age cover every query with an as-of date, judged or not; "
        "Recency NDCG the judged ones."))
    figure = _age_figure(found.key, k)
    st.plotly_chart(figure, key="compare_age_chart", width="stretch")
    downloads.download_figure(figure, "evidence_age", key="age_fig")
    for note in found.notes:
        st.caption(formatting.md_escape(f"Note: {note}"))

    st.subheader("Queries that leak")
    columns = st.columns(min(len(found.runs), 3))
    for i, run in enumerate(found.runs):
        with columns[i % len(columns)]:
            _leaks(found, run, i, k)


@st.cache_resource(show_spinner=False, max_entries=16)
def _age_figure(key: str, k: int):
    """The age histogram of a saved comparison, built once (a saved comparison never changes;
    plotly validates a figure as it is built); shared, do not modify."""
    from tempo_eval.viz.evidence_age import age_histogram
    from tempo_eval_app import run_files

    return age_histogram(run_files.load(key).ages(), title=f"Age of the top {k} documents at the as-of date")


def _leaks(found: saved_comparisons.StoredComparison, run: str, i: int, k: int) -> None:
    table = found.leaking(run)
    dated = int(found.values[(found.values["run"] == run) & (found.values["metric"] == found.as_of[0])]["value"].notna().sum())
    st.markdown(formatting.md_escape(
        f"{run}: {len(table)} of {dated} queries have a document from after their as-of date in the top {k}"))
    if table.empty:
        return
    st.dataframe(table, hide_index=True, key=f"compare_leaks_{i}", width="stretch")
    query = st.selectbox("Open a leaking query", table["query_id"].tolist(), key=f"compare_leak_query_{i}",
                         index=None, placeholder="Choose a query")
    if query is not None:
        documents = found.ranked(run, query, k)
        shown = documents.reindex(columns=DOCUMENT_COLUMNS)
        shown = shown.assign(date=shown["date"].fillna(formatting.MISSING), age=[formatting.fmt_count(a) for a in shown["age"]])
        st.dataframe(shown.rename(columns={"age": "age (days)"}), hide_index=True, key=f"compare_leak_docs_{i}",
                     width="stretch")
        flags = documents["flag"].value_counts()
        st.caption(formatting.md_escape(
            f"{query}, as of {documents['as_of'].dropna().iloc[0] if documents['as_of'].notna().any() else 'unknown'}: "
            + ", ".join(f"{int(flags.get(f, 0))} {f}" for f in ("future", "stale", "undated"))))

