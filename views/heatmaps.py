"""Temporal heatmaps: query years against retrieved-document years, and answer years against
context years, per run; decade or century bins for long spans; selecting a cell lists the rows
behind it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from tempo_eval.io.trec_dataset import systems
from tempo_eval.viz.heatmap import MAX_BINS, cell_from_selection, heatmap_figure, year_heatmap
from tempo_eval_app import (
    dataset_scores,
    errors,
    formatting,
    links,
    selection,
    store_reads,
    widgets,
)

selection.page_setup("Temporal heatmaps")

ALL = "(all rows)"
BINS = {"auto": None, "year": 1, "decade": 10, "century": 100}


def _cell_picker(data, key: str, chart_event) -> tuple[str, str] | None:
    """The selected cell: a click on the chart, else the picker (which tests set through
    session state)."""
    cells = sorted(data.cells, key=lambda c: (-len(data.cells[c]), c))
    if not cells:
        return None
    clicked = cell_from_selection(chart_event)
    # the chart keeps its selection across reruns: apply a click once, so the picker can still
    # choose another cell afterwards
    if clicked in data.cells and st.session_state.get(f"_clicked_{key}") != clicked:
        st.session_state[key] = clicked
    st.session_state[f"_clicked_{key}"] = clicked
    if st.session_state.get(key) not in data.cells:
        st.session_state[key] = cells[0]
    return st.selectbox(
        "Cell", cells, key=key, format_func=lambda c: f"{c[0]} × {c[1]} ({_items(len(data.cells[c]))})",
        help="Or click a cell of the heatmap.",
    )


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _merged_note(data) -> str:
    """" More than 40 years: merged into decades." when the bins asked for were too many."""
    if data.requested_width is None:
        return ""
    names = {1: "years", 10: "decades", 100: "centuries"}
    return (f" More than {MAX_BINS} {names[data.requested_width]} hold a year: merged into "
            f"{names[data.width]} so every row stays readable.")


def _chart(data, figure, name: str, caption: str, file_name: str) -> tuple[str, str] | None:
    """A heatmap with its caption (plain text, escaped here) and figure download; the cell chosen
    (`_cell_picker`)."""
    event = st.plotly_chart(figure, key=f"heat_{name}_chart", on_select="rerun", selection_mode="points",
                            width="stretch")
    st.caption(formatting.md_escape(caption))
    widgets.download_figure(figure, file_name, key=f"heat_{name}_fig")
    return _cell_picker(data, f"heat_{name}_cell", event)


def _cell_rows(table: pd.DataFrame, with_run: bool, name: str, file_name: str) -> None:
    """The rows behind the chosen cell, with their download; no run column of Nones for a
    dataset without retrieval systems."""
    table = table if with_run else table.drop(columns=["run"])
    st.dataframe(table, hide_index=True, width="stretch", key=f"heat_{name}_rows")
    widgets.download_results(table, file_name, key=f"heat_{name}_dl")


def _snippet(text: object, limit: int = 160) -> str:
    text = str(text or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _asof_heatmap(dataset_id: int, run: str, rows: list[int], top_k: int, width, names) -> None:
    """The as-of year of each question against the publication year of its top-k documents."""
    frame = store_reads.dataset_frame(dataset_id)
    if "context_dates" not in frame.columns or "reference_date" not in frame.columns:
        st.info("This needs the as-of date of each row (reference_date) and the publication dates of its "
                "documents (context_dates).")
        return
    ages = dataset_scores.document_ages(dataset_id, top_k)
    ages = ages[ages["row"].isin(rows)]
    items = [((int(r.row), int(r.rank)), [] if pd.isna(r.as_of_year) else [int(r.as_of_year)],
              [] if pd.isna(r.year) else [int(r.year)]) for r in ages.itertuples()]
    data = year_heatmap(items, width=width)
    figure = heatmap_figure(data, row_title="as-of year", col_title="publication year", colorscale="Greens",
                            title=f"As-of year × publication year of the top {top_k} documents · {run}")
    cell = _chart(data, figure, "asof",
                  f"{data.n_items} (question, document) pairs with both dates; {data.n_without_years} without. "
                  "Cells right of the diagonal hold documents published in a later year than the question.",
                  "heatmap_asof_publication")
    if cell is not None:
        keys = set(data.keys_for(*cell))
        picked = ages[[(int(r), int(k)) in keys for r, k in zip(ages["row"], ages["rank"], strict=True)]]
        table = picked[["query_id", "run", "rank", "doc", "as_of", "date", "age", "future"]]
        _cell_rows(table, bool(names), "asof", "heatmap_asof_cell_rows")


with errors.page_guard("heatmaps"):
    dataset_id = selection.require_dataset_id()
    frame = store_reads.dataset_frame(dataset_id)
    if "query_id" not in frame.columns:  # stored by the Conversation page or a conversation file
        st.info("This dataset holds conversations, not queries with answers and documents: its years "
                "are drawn on the **Conversation** page. Choose a dataset of queries for heatmaps.")
        st.stop()
    names = systems(frame)
    c1, c2, c3 = st.columns(3)
    options = names or [ALL]
    links.init_from_param("heat_run", "run", str, lambda v: v in options)
    run = c1.selectbox("Run", options, key="heat_run")
    links.init_from_param("heat_bin", "bin", str, lambda v: v in BINS)
    bin_name = c2.selectbox("Bins", list(BINS), key="heat_bin",
                            help="auto: years for spans up to 40 years, decades up to 400, centuries beyond.")
    top_k = int(c3.number_input("Documents per query (top k)", 1, 100, 10, key="heat_k"))
    links.set_params(run=run if names else None, bin=bin_name)
    width = BINS[bin_name]

    # one vectorised comparison, not a .iloc per row (0.33 s a rerun at 20,000 rows)
    rows = np.flatnonzero(frame["run"].to_numpy(dtype=object) == run).tolist() if names else list(range(len(frame)))
    query_years = dataset_scores.years_of_column(dataset_id, "query")
    context_years = dataset_scores.years_of_column(dataset_id, "contexts")
    answer_years = dataset_scores.years_of_column(dataset_id, "answer")
    ids = frame["query_id"].astype(str).tolist()

    tab_docs, tab_answers, tab_asof = st.tabs(
        ["Query × retrieved documents", "Answer × contexts", "As-of × publication years"])
    with tab_asof:
        _asof_heatmap(dataset_id, run, rows, top_k, width, names)
    with tab_docs:
        if "query" not in frame.columns or "contexts" not in frame.columns:
            st.info("This needs query texts and document texts (contexts, or a corpus with the runs).")
        else:
            items = [
                ((i, rank), query_years[i] or [], years)
                for i in rows
                for rank, years in enumerate((context_years[i] or [])[:top_k])
            ]
            data = year_heatmap(items, width=width)
            figure = heatmap_figure(data, row_title="query years", col_title="document years",
                                    title=f"Query years × years of the top {top_k} documents · {run}")
            cell = _chart(data, figure, "qd",
                          f"{data.n_items:,} (query, document) pairs with years on both sides; {data.n_without_years:,} "
                          f"without. Same-bin share: {formatting.fmt_score(data.diagonal_share)}.{_merged_note(data)}",
                          "heatmap_query_documents")
            if cell is not None:
                listing = []
                for i, rank in data.keys_for(*cell):
                    row = frame.iloc[i]
                    retrieved = row.get("retrieved_ids") if isinstance(row.get("retrieved_ids"), list) else []
                    listing.append({
                        "query_id": ids[i], "run": row.get("run"), "query": row.get("query"), "rank": rank + 1,
                        "doc_id": retrieved[rank] if rank < len(retrieved) else None,
                        "query years": formatting.year_ranges(query_years[i] or []),
                        "document years": formatting.year_ranges(context_years[i][rank]),
                        "document": _snippet(row["contexts"][rank]),
                    })
                _cell_rows(pd.DataFrame(listing), bool(names), "qd", "heatmap_cell_rows")

    with tab_answers:
        if "answer" not in frame.columns or "contexts" not in frame.columns:
            st.info("This needs answers and contexts.")
        else:
            items = [
                (i, answer_years[i] or [], sorted({y for years in (context_years[i] or []) for y in years}))
                for i in rows
            ]
            data = year_heatmap(items, width=width)
            figure = heatmap_figure(data, row_title="answer years", col_title="context years",
                                    title=f"Answer years × context years · {run}", colorscale="Oranges")
            cell = _chart(data, figure, "ac",
                          f"{data.n_items:,} answers with years on both sides; {data.n_without_years:,} without. "
                          f"Answer years far from the diagonal are years the contexts do not mention.{_merged_note(data)}",
                          "heatmap_answer_contexts")
            if cell is not None:
                listing = [
                    {
                        "query_id": ids[i], "run": frame.iloc[i].get("run"), "answer": frame.iloc[i].get("answer"),
                        "answer years": formatting.year_ranges(answer_years[i] or []),
                        "context years": formatting.year_ranges(y for ys in context_years[i] or [] for y in ys),
                    }
                    for i in data.keys_for(*cell)
                ]
                _cell_rows(pd.DataFrame(listing), bool(names), "ac", "heatmap_answer_cell_rows")
    links.view_link("run", "bin")
