"""Compare runs: NDCG@k curves with confidence bands, the significance table, per-query scatter of
run A against run B, and a drill-down listing each run's ranked documents with their years against
the query's years.

Three sources of runs: the retrieval systems of the active dataset (its `run` column, scored in
gold mode from retrieved_ids and gold_ids), the evaluation runs selected in the sidebar (any
stored metric, per query), or TREC run files named by a path on this machine, a folder of runs,
or uploads (scored by a worker process, `tempo_eval_app.compare_files`; paths confined by
`tempo_eval_app.paths`), with a doc-dates and a query-dates file for the as-of metrics.

Judged queries without results: one switch (`compare_missing`) for every source, the rule of
`tempo_eval.compare.trec_scores`: scored 0 as trec_eval -c (default), or left out; the caption counts them.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from tempo_eval.common.confine import allowed_roots, reads_confined_to
from tempo_eval.compare.report_html import comparison_html
from tempo_eval.compare.statistics import DEFAULT_TEST, TESTS, cis_columns, compare, direction
from tempo_eval.compare.trec_scores import compare_scores, score_dataset_runs
from tempo_eval.core.extract import extract_dft, extract_qft
from tempo_eval.io.trec_dataset import corpus_texts, systems
from tempo_eval.viz.curves import curve_bands, ndcg_curves_figure
from tempo_eval.viz.highlight import legend_html, render_marks, text_block, year_marks
from tempo_eval.viz.scatter import paired_scatter, paired_scores
from tempo_eval_app import (
    compare_files,
    errors,
    formatting,
    links,
    samples,
    selection,
    store_reads,
    widgets,
    words,
)

selection.page_setup("Compare runs")

SYSTEMS = "Retrieval systems of this dataset (NDCG@k from gold_ids)"
EVAL_RUNS = "Evaluation runs selected in the sidebar (a stored metric)"
FILES = "TREC run files (paths on this machine, a folder of runs, or uploads)"
MISSING_CHOICES = {"zero": "scored 0 (as trec_eval -c)", "drop": "left out of every run's comparison"}


@st.cache_resource(show_spinner="Scoring the runs…", max_entries=16)
def _system_scores(db: str, dataset_id: int, k: int, missing: str = "zero"):
    """The dataset's systems scored as the command line scores run files
    (`tempo_eval.compare.trec_scores.score_dataset_runs`: NDCG@1..k, trec_eval's ndcg_cut, against the
    qrels kept with the dataset, its `gold_ids` otherwise), with the page's rule for judged
    queries a system did not rank: scored 0 (trec_eval -c) or left out. Shared, do not modify."""
    frame = store_reads._dataset_frame(db, dataset_id)
    qrels = store_reads.store().dataset_qrels(dataset_id)
    return score_dataset_runs(frame, qrels, metrics=[f"ndcg@{k}"], missing=missing, curve_k=k)


def _tables(report) -> tuple[pd.DataFrame, pd.DataFrame, str, str, str]:
    # the caption of the table as shown on screen ("beats" columns), not of the exported tables
    return report.to_dataframe(), report.pairs_frame(), report.caption(screen=True), report.to_markdown(), report.to_latex()


def _best_marked(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The significance table as a plain frame and its column settings: a "best mean" column names
    the metrics where the run's mean is the best (what the exported tables put in bold), the means
    at 4 decimals. A pandas Styler did the same with bold type, at a cost per page run."""
    metrics = [c for c in table.columns if f"{c} beats" in table.columns]
    best: list[list[str]] = [[] for _ in range(len(table))]
    for metric in metrics:
        column, way = table[metric], direction(str(metric))
        if column.isna().all() or way == "none":
            continue
        top = column.max() if way == "higher" else column.min()
        for position, value in enumerate(column):
            if value == top:
                best[position].append(words.metric_label(metric))
    shown = table.copy()
    shown["best mean"] = [", ".join(names) or formatting.MISSING for names in best]
    # metrics by their display names, in the headers too ("Temporal Faithfulness beats")
    settings: dict[str, Any] = {m: st.column_config.NumberColumn(words.metric_label(m), format="%.4f") for m in metrics}
    settings.update({f"{m} beats": st.column_config.TextColumn(f"{words.metric_label(m)} beats") for m in metrics})
    return shown, settings


@st.cache_data(show_spinner="Significance tests…", max_entries=32)
def _system_report(
    db: str, dataset_id: int, k: int, chosen: tuple[str, ...], test: str, alpha: float, missing: str = "zero"
):
    """The engine's comparison of the chosen systems (`compare_scores`, the command line's)."""
    scores = _system_scores(db, dataset_id, k, missing).select(chosen)
    return _tables(compare_scores(scores, test=test, alpha=alpha))


@st.cache_data(show_spinner="Reading the documents of this query from the corpus…", max_entries=64)
def _corpus_texts(corpus: str, modified: int, doc_ids: tuple[str, ...]) -> dict[str, str]:
    """The corpus texts of these documents only (`modified` keys the cache to the file's version)."""
    with reads_confined_to(allowed_roots()):  # checked again where the file is opened
        return corpus_texts(corpus, doc_ids)


@st.cache_data(show_spinner="Significance tests…", max_entries=32)
def _files_report(key: str, k: int, test: str, alpha: float):
    """The comparison of the run files a worker saved (`key`), at cutoff k: NDCG@k and the
    as-of metrics, with each mean's confidence interval and the missing-query counts in the
    caption (as the command line prints them); last, the table with the CIs as numbers (CSV)."""
    found = compare_files.load(key)
    report = found.report(k, test=test, alpha=alpha)
    cis = found.cis(k)
    table, pairs, caption, markdown, latex = _tables(report)
    return _with_cis(table, cis, report.metrics), pairs, caption, markdown, latex, cis_columns(table, cis, report.metrics)


def _files_html(key: str, k: int, test: str, alpha: float, board: pd.DataFrame) -> str:
    """The comparison as one standalone HTML file (built when its button is clicked)."""
    return comparison_html(compare_files.load(key).report(k, test=test, alpha=alpha), board=board)


def _with_cis(table: pd.DataFrame, cis: dict, metrics: list[str]) -> pd.DataFrame:
    """The run table with a "<metric> 95% CI" text column after each mean."""
    out = table.copy()
    for metric in metrics:
        text = [f"{lo:.4f} – {hi:.4f}" if lo == lo else "—" for lo, hi in (cis[run][metric] for run in out["run"])]
        out.insert(list(out.columns).index(metric) + 1, f"{metric} 95% CI", text)
    return out


@st.cache_data(show_spinner="Significance tests…", max_entries=32)
def _report(per_query: dict, test: str, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame, str, str, str]:
    return _tables(compare(per_query, test=test, alpha=alpha))


@st.cache_data(show_spinner="Confidence bands…", max_entries=16)
def _bands(curves: dict[str, list[list[float]]]) -> pd.DataFrame:
    return curve_bands({name: np.asarray(rows, dtype=float) for name, rows in curves.items()})


# the figures are built once per input and shared (plotly validates every property of a figure
# as it is built, tens of ms a chart); st.plotly_chart copies a figure, never changes it
@st.cache_resource(show_spinner=False, max_entries=32)
def _curves_figure(bands: pd.DataFrame, title: str):
    return ndcg_curves_figure(bands, title=title)


@st.cache_resource(show_spinner=False, max_entries=32)
def _paired(a: pd.Series, b: pd.Series, name_a: str, name_b: str, metric: str):
    """(`paired_scores` of run A and run B, their scatter figure); shared, do not modify."""
    pairs = paired_scores(a, b, metric=metric)
    return pairs, paired_scatter(pairs, name_a=name_a, name_b=name_b, metric=metric)


@st.cache_resource(show_spinner=False, max_entries=64)
def _run_series(db: str, run_id: int, n_results: int, label: str, metric: str) -> dict[str, pd.Series]:
    """Per-query scores of `metric` in one evaluation run (one series per system within it),
    cached per run and size; shared, do not modify."""
    frame = store_reads.results_frame(run_id)
    part = frame[frame["metric"] == metric]
    if part.empty:
        return {}
    groups = part.groupby(part["run"].fillna(""), sort=False) if part["run"].notna().any() else [("", part)]
    return {f"{label} / {system}" if system else label: rows.groupby("query_id")["score"].mean()
            for system, rows in groups}


def _eval_series(run_ids: list[int], metric: str) -> dict[str, pd.Series]:
    """Per-query scores of `metric` for each evaluation run (and each system within it)."""
    series: dict[str, pd.Series] = {}
    for run_id in run_ids:
        series.update(_run_series(store_reads.db_path(), int(run_id), store_reads.n_results(run_id),
                                  store_reads.run_label(run_id), metric))
    return series


with errors.page_guard("compare"):
    dataset_id = selection.active_dataset_id()
    frame = store_reads.dataset_frame(dataset_id) if dataset_id is not None else pd.DataFrame()
    names = systems(frame)
    has_gold = {"retrieved_ids", "gold_ids"} <= set(frame.columns)
    sources = []
    if len(names) >= 2 and has_gold:
        sources.append(SYSTEMS)
    if selection.active_run_ids():
        sources.append(EVAL_RUNS)
    # two evaluation runs are compared without retrieval systems: no notice about them then
    if SYSTEMS not in sources and len(selection.active_run_ids()) < 2:
        st.info(
            ("This dataset holds a single retrieval system. " if dataset_id is not None else "")
            + "Compare the runs of a dataset with a `run` column (TREC runs + qrels on **Datasets**), "
            "select two evaluation runs in the sidebar, or name TREC run files below."
        )
        if st.button("Open the BM25 vs dense sample runs", key="compare_load_sample", type="primary"):
            selection.select_dataset(samples.load_sample_runs())
    sources.append(FILES)
    compare_files.reopen(FILES)  # a reload or another session finds its run-file comparison again

    source = st.radio("Compare", sources, key="compare_source", horizontal=True)
    missing = "zero"
    if source != EVAL_RUNS:
        missing = st.radio("Judged queries without results", list(MISSING_CHOICES), key="compare_missing",
                           format_func=MISSING_CHOICES.get, horizontal=True,
                           help="A judged query (one with a relevant document) that a run has no results for.")
    c1, c2, c3 = st.columns(3)
    links.init_from_param("compare_k", "k", int, lambda v: 1 <= v <= 100)
    # the default test is the command line's (schema.DEFAULT_SIGNIFICANCE_TEST)
    test = c2.selectbox("Significance test", [DEFAULT_TEST, *(t for t in TESTS if t != DEFAULT_TEST)], key="compare_test",
                        format_func={"fisher": "Fisher randomisation (paired)", "student": "paired t-test"}.get)
    alpha = c3.number_input("alpha", 0.001, 0.5, 0.05, 0.01, key="compare_alpha", format="%.3f")

    curves: dict[str, dict[str, list[float]]] = {}
    found = None
    if source == FILES:
        k = int(c1.number_input("k", 1, compare_files.MAX_K, 10, key="compare_k"))
        found = compare_files.scores(missing, k)
        curves = found.curves_at(k)
        if not found.as_of:
            for note in found.notes:
                st.caption(formatting.md_escape(f"Note: {note}"))
    elif source == SYSTEMS:
        k = int(c1.number_input("k", 1, 100, 10, key="compare_k"))
        chosen = st.multiselect("Runs", names, default=widgets.multiselect_default("compare_runs", names), key="compare_runs")
        system_scores = _system_scores(store_reads.db_path(), dataset_id, k, missing)
        by_name = system_scores.curves  # {system: (query ids, NDCG@1..k of each)}
        curves = {n: dict(zip(by_name[n][0], by_name[n][1].tolist(), strict=True)) for n in chosen if n in by_name}
        links.set_params(k=k, compare=",".join(chosen) if chosen != names else None)
    else:
        run_ids = selection.active_run_ids()
        per_run = {r: set(store_reads.results_frame(r)["metric"].unique()) for r in run_ids}
        if not any(per_run.values()):
            st.info("The selected evaluation runs have no results yet.")
            st.stop()
        # only the metrics every selected run has can be compared
        shared = sorted(set.intersection(*per_run.values()))
        if not shared:
            listing = "; ".join(
                f"{store_reads.run_label(r)}: {', '.join(sorted(ms)) or 'no results'}" for r, ms in per_run.items()
            )
            st.info(formatting.md_escape(
                f"The selected runs share no metric, so there is nothing to compare ({listing}). "
                "Select runs that computed the same metric, or evaluate one again with it."
            ))
            st.stop()
        metric = c1.selectbox("Metric", shared, key="compare_metric", format_func=words.metric_label,
                              help="The metrics every selected run computed.")
        series = _eval_series(run_ids, metric)
    if source != EVAL_RUNS:  # NDCG@k per query: the last point of each query's curve
        metric = f"ndcg@{k}"
        series = {name: pd.Series({q: c[-1] for q, c in per_query.items()}, dtype=float) for name, per_query in curves.items()}

    if len(series) < 2:
        st.info("Choose at least two runs to compare: two systems above, or two evaluation runs in the "
                "sidebar (or one run of a dataset with several systems).")
        st.stop()

    if curves:
        st.subheader("NDCG@k curves")
        bands = _bands({name: list(per_query.values()) for name, per_query in curves.items()})
        figure = _curves_figure(bands, f"Mean NDCG@1..{k} with 95% bootstrap bands")
        st.plotly_chart(figure, key="compare_curves", width="stretch")
        widgets.download_figure(figure, "ndcg_curves", key="curves_fig")

    st.subheader("Significance")
    board = None
    if found is not None:
        table, pairs, caption, markdown, latex, board = _files_report(found.key, k, test, float(alpha))
    elif curves:
        table, pairs, caption, markdown, latex = _system_report(
            store_reads.db_path(), dataset_id, k, tuple(curves), test, float(alpha), missing
        )
    else:
        per_query = {name: {metric: {str(q): float(v) for q, v in s.items()}} for name, s in series.items()}
        try:
            table, pairs, caption, markdown, latex = _report(per_query, test, float(alpha))
        except ValueError as exc:  # e.g. the runs share no scored query: say so, not "went wrong"
            st.info(formatting.md_escape(f"These runs cannot be compared on {metric}: {exc}"))
            st.stop()
    shown, columns = _best_marked(table)
    st.dataframe(shown, hide_index=True, width="stretch", key="compare_table", column_config=columns)
    st.caption(formatting.md_escape(caption.replace("the best mean is in bold", "“best mean” names the metrics "
                                                    "where the run's mean is the best")))
    # p-values as "< 0.001", not 28 decimals; "yes"/"no" for significant
    st.dataframe(formatting.pairs_table(pairs), hide_index=True, width="stretch", key="compare_pairs")
    row = st.container(horizontal=True)  # one block, not four columns: fewer elements to send and draw
    row.download_button("Table (Markdown)", markdown, "comparison.md", key="compare_md", icon=":material/download:")
    row.download_button("Table (LaTeX)", latex, "comparison.tex", key="compare_tex", icon=":material/download:")
    if board is not None:  # run files: the comparison as one HTML file and the table with CIs as CSV
        row.download_button("Comparison (HTML)", lambda: _files_html(found.key, k, test, float(alpha), board),
                            "comparison.html", mime="text/html", key="compare_html", icon=":material/download:")
        row.download_button("Table (CSV)", lambda: widgets.csv_bytes(board), "comparison.csv", mime="text/csv",
                            key="compare_csv", icon=":material/download:")
        compare_files.show_asof(found)

    st.subheader("Per query: run A against run B")
    labels = list(series)
    s1, s2 = st.columns(2)
    run_a = s1.selectbox("Run A", labels, index=0, key="compare_a")
    run_b = s2.selectbox("Run B", labels, index=1 if len(labels) > 1 else 0, key="compare_b")
    pairs_frame, scatter = _paired(series[run_a], series[run_b], run_a, run_b, metric)
    event = st.plotly_chart(scatter, key="compare_scatter", on_select="rerun", selection_mode="points", width="stretch")
    for point in widgets.selected(event, "points"):
        if point.get("customdata") is not None:
            st.session_state["compare_query"] = str(point["customdata"])
            break
    widgets.download_results(pairs_frame, f"per_query_{metric}", key="compare_dl")

    st.subheader("Drill-down")
    query_ids = list(pairs_frame["query_id"]) or sorted({q for s in series.values() for q in s.index})
    links.init_from_param("compare_query", "q", str, lambda q: q in query_ids)
    if st.session_state.get("compare_query") not in query_ids:
        st.session_state["compare_query"] = query_ids[0]
    query_id = st.selectbox("Query", query_ids, key="compare_query",
                            help="Or click a point of the scatter plot.")
    links.set_params(q=query_id)
    if found is not None:  # run files: each run's first k documents with their grades (and dates)
        columns = st.columns(min(len(curves), 3))
        for i, name in enumerate(curves):
            with columns[i % len(columns)]:
                value = series[name].get(query_id)
                st.markdown(f"**{formatting.md_escape(name)}** · {formatting.md_escape(metric)} {formatting.fmt_score(value)}")
                listing = found.ranked(name, str(query_id), k)
                if listing.empty:
                    st.caption("No results for this query.")
                    continue
                shown = ["rank", "doc_id", "grade", *(c for c in ("date", "age", "flag") if c in listing.columns)]
                st.dataframe(listing[shown], hide_index=True, key=f"drill_file_{i}")
                ranked = list(zip(listing["doc_id"], listing["grade"], strict=True))
                corpus = st.session_state.get("compare_corpus_file")
                if corpus:
                    try:
                        texts = _corpus_texts(corpus, Path(corpus).lstat().st_mtime_ns, tuple(doc for doc, _ in ranked))
                    except (ValueError, OSError) as refused:  # e.g. swapped for a link leading out
                        st.warning(formatting.md_escape(f"The corpus is not read: {refused}"))
                        texts = None
                    if texts is not None:
                        with st.expander("Documents"):
                            for rank, (doc, grade) in enumerate(ranked, start=1):
                                text = texts.get(doc)
                                widgets.plain(f"{rank}. {doc} (grade {grade}): "
                                              + (text if text is not None else "not in the corpus"))
        links.view_link("k", "compare", "q")
        st.stop()
    rows = frame[frame["query_id"].astype(str) == str(query_id)]
    query_text = next((q for q in rows.get("query", pd.Series(dtype=object)) if isinstance(q, str)), None)

    query_years: set[int] = set()
    blocks = []  # the query, its years and the legend: one element
    if query_text:
        qft = extract_qft(query_text)
        query_years = set(qft.years)
        blocks = [widgets.heading_html("Query"), text_block(render_marks(query_text, year_marks(qft.spans))),
                  widgets.plain_html("Query years: " + (formatting.year_ranges(query_years) or "none found"),
                                     muted=True)]
    widgets.html_blocks(*blocks, legend_html(("grounded", "ungrounded")))
    scores = {name: s.get(query_id) for name, s in series.items()}
    if source == SYSTEMS:
        columns = st.columns(min(len(curves), 3))
        for i, name in enumerate(curves):
            grades = dict(system_scores.ranked_documents(name, str(query_id), k))
            sys_rows = rows[rows["run"] == name] if "run" in rows.columns else rows
            with columns[i % len(columns)]:
                st.markdown(f"**{formatting.md_escape(name)}** · {formatting.md_escape(metric)} {formatting.fmt_score(scores.get(name))}")
                if sys_rows.empty:
                    st.caption("No ranking for this query.")
                    continue
                sys_row = sys_rows.iloc[0]
                ranked = list(sys_row["retrieved_ids"] or [])[:k]
                texts = sys_row.get("contexts") if isinstance(sys_row.get("contexts"), list) else []
                docs = []  # (rank, doc, its text, the years found in it): each text is read once
                for rank, doc in enumerate(ranked, start=1):
                    text = texts[rank - 1] if rank - 1 < len(texts) else ""
                    docs.append((rank, doc, text, extract_dft(text) if text else None))
                listing = [{"rank": rank, "doc_id": doc, "grade": grades.get(doc, 0),
                            "years": formatting.year_ranges(sorted(dft.years) if dft else [], most=8),
                            "overlap": formatting.year_ranges(query_years & set(dft.years if dft else []))}
                           for rank, doc, _, dft in docs]
                st.dataframe(pd.DataFrame(listing), hide_index=True, key=f"drill_{i}")
                with st.expander("Documents with their years"):
                    widgets.html_blocks(*(  # one element for all the documents
                        text_block(f"<b>{rank}. {html.escape(str(doc))}</b> "
                                   + render_marks(text, year_marks(dft.spans, query_years) if query_years else year_marks(dft.spans)))
                        for rank, doc, text, dft in docs if text))
    else:
        st.dataframe(pd.DataFrame({"run": list(scores), metric: list(scores.values())}), hide_index=True, key="drill_eval")
    links.view_link("k", "compare", "q")
