"""One dataset row of one stored run in detail: the component of the Results page's "One row in
detail" and of the Run diff page's side-by-side versions.

Query; scores with their reason codes; the answer with its claims coloured by verdict (or, for a
run that checked years rather than claims, its years marked grounded or not in the contexts);
the claims; the contexts with their years; per-year grounding; the ranked documents with the
relevant ones marked; for as-of metrics, the dated documents and the answer's currency
(`asof_detail`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval.core.extract import extract_aft, extract_dft
from tempo_eval.viz.highlight import claim_marks, legend_html, render_marks, text_block, year_marks
from tempo_eval_app import asof_detail, formatting, store_reads, widgets, words


def rank_table(ranks: list) -> pd.DataFrame:
    """The per-rank entries of an NDCG result as a table: a "relevant" column (relevance > 0)
    after the document, and list / dict cells as text."""
    table = pd.DataFrame(ranks)
    for column in table.columns:  # plain lists, not Series.map: a few rows, on every page run
        values = table[column].tolist()
        if any(isinstance(v, (list, dict)) for v in values):
            table[column] = [str(v) for v in values]
    if "relevance" in table.columns:
        relevant = pd.to_numeric(table["relevance"], errors="coerce").fillna(0) > 0
        table.insert(min(2, len(table.columns)), "relevant", ["✓ relevant" if r else "" for r in relevant])
    return table


def _answer(answer: str, claims: list[dict], contexts: list, ref: str | None, key: str) -> None:
    if claims:
        st.markdown("**Answer**, claims coloured by verdict")
        marks, missing = claim_marks(answer, claims)
        widgets.html_blocks(legend_html(), text_block(render_marks(answer, marks)))
        if missing:
            st.caption(f"{len(missing)} claim(s) not found word for word in the answer are listed below.")
        return
    st.markdown("**Answer**, years marked grounded or not in the contexts")
    texts = [c for c in contexts if isinstance(c, str)]
    context_years = set().union(*(extract_dft(c, reference_date=ref).years for c in texts)) if texts else set()
    widgets.html_blocks(legend_html(("grounded", "ungrounded")),
                        text_block(render_marks(answer, year_marks(extract_aft(answer, reference_date=ref).spans,
                                                                   context_years))))


def show_row(run_id: int, row: int, *, key: str) -> None:
    """Everything stored about one dataset row of one run; `key` prefixes the widget keys (two
    rows can be shown on one page)."""
    s = store_reads.store()
    dataset_id = int(s.run_info(run_id)["dataset_id"])
    if not 0 <= row < int(store_reads.dataset_info(dataset_id)["n_rows"]):
        st.caption(f"The dataset has no row {formatting.md_escape(row)}.")
        return
    record = store_reads.dataset_row(dataset_id, row)  # one row, not the whole dataset
    here = store_reads.row_results(run_id, row)  # one key range, whatever the run's size
    if here.empty:
        st.caption(f"Run #{formatting.md_escape(run_id)} has no result for row {formatting.md_escape(row)}.")
        return
    ref = record.get("reference_date") if isinstance(record.get("reference_date"), str) else None
    query = record.get("query")
    if isinstance(query, str):
        widgets.html_blocks(widgets.heading_html("Query"), widgets.plain_html(query))
    scores = here[["metric", "score", "reason_code", "reason"]]
    st.dataframe(formatting.display_table(scores), hide_index=True, width="stretch", key=f"{key}_detail_scores")
    results = {m: s.get_result(run_id, row, m) for m in here["metric"]}

    answer = record.get("answer")
    contexts = record.get("contexts") if isinstance(record.get("contexts"), list) else []
    claims = [c for r in results.values() for c in r.details.get("claims", []) if isinstance(c, dict)]
    if isinstance(answer, str):
        _answer(answer, claims, contexts, ref, key)
    if claims:
        table = pd.DataFrame([{k: c.get(k) for k in ("claim", "verdict", "evidence", "reason")} for c in claims])
        st.dataframe(formatting.display_table(table), hide_index=True, width="stretch", key=f"{key}_detail_claims")

    if contexts:
        st.markdown("**Contexts** with their years")
        cards = []
        for i, text in enumerate(contexts, start=1):
            if not isinstance(text, str):
                continue
            dft = extract_dft(text, reference_date=ref)
            years = formatting.year_ranges(dft.years) or "none found"
            cards.append(widgets.card_html(f"Context {i:d} · years: {years}", render_marks(text, year_marks(dft.spans))))
        widgets.html_blocks(*cards)  # one element for all the contexts' cards

    asof_detail.show(results, key=key)
    for metric, result in results.items():
        years = result.details.get("years")
        if isinstance(years, list) and years:
            st.markdown(f"**Per-year grounding** ({formatting.md_escape(words.metric_label(metric))})")
            st.dataframe(pd.DataFrame([
                {"year": y.get("year"), "grounded": y.get("grounded"),
                 "contexts": ", ".join(str(int(c) + 1) for c in y.get("contexts", [])),
                 "answer spans": "; ".join(map(str, y.get("answer_spans", [])))}
                for y in years
            ]), hide_index=True, width="stretch", key=f"{key}_years_{metric}")
        ranks = result.details.get("ranks")
        if isinstance(ranks, list) and ranks and metric not in asof_detail.RANKED:
            st.markdown(f"**Ranked documents** ({formatting.md_escape(words.metric_label(metric))}), relevant ones marked")
            st.dataframe(formatting.display_table(rank_table(ranks)), hide_index=True, width="stretch", key=f"{key}_ranks_{metric}")
