"""One dataset row of one stored run in detail: the component of the Results page's "One row in
detail" and of the Run diff page's side-by-side versions.

Query; scores with their reason codes; the answer with its claims coloured by verdict (or, for a
run that checked years rather than claims, its years marked grounded or not in the contexts);
the claims; the contexts with their years; per-year grounding; the ranked documents with the
relevant ones marked; for as-of metrics (`show_asof`), so each as-of value can be checked by hand:
- `dated_documents`: one line per top-k document (rank, doc id, publication date, age in days,
  what it counted as: future, stale, undated or dated; with Recency NDCG its relevance and gain),
  from the stored results' `details["ranks"]`;
- `explanations`: each as-of score as the arithmetic on that table (2 future of 9 dated = 0.222);
- `currency_table`: every reference of answer currency, current or outdated, whether it matched
  and, with a verifier, its verdict.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.core.extract import extract_aft, extract_dft
from tempo_eval.viz.highlight import claim_marks, legend_html, render_marks, text_block, year_marks
from tempo_eval_app import formatting, store_reads, widgets, words

#: the as-of metrics whose details list the ranked documents
RANKED = ("future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg")
FUTURE, STALE, UNDATED, DATED, NO_AS_OF = "future", "stale", "undated", "dated", "no as-of date"
DOCUMENT_COLUMNS = ["rank", "doc", "published", "age (days)", "counted as"]


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

    show_asof(results, key=key)
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
        if isinstance(ranks, list) and ranks and metric not in RANKED:
            st.markdown(f"**Ranked documents** ({formatting.md_escape(words.metric_label(metric))}), relevant ones marked")
            st.dataframe(formatting.display_table(rank_table(ranks)), hide_index=True, width="stretch", key=f"{key}_ranks_{metric}")


def _ranks(result: Any) -> list[dict]:
    ranks = getattr(result, "details", {}).get("ranks")
    return [r for r in ranks if isinstance(r, dict)] if isinstance(ranks, list) else []


def counted_as(entry: Mapping[str, Any]) -> str:
    """What a ranked document counted as: undated (no publication date), no as-of date (the row
    has none: no age), future (published after the as-of date), stale (older than max_age) or
    dated."""
    if entry.get("undated"):
        return UNDATED
    if entry.get("age") is None:
        return NO_AS_OF
    if entry.get("future"):
        return FUTURE
    return STALE if entry.get("stale") else DATED


def dated_documents(results: Mapping[str, Any]) -> pd.DataFrame:
    """The top-k documents of a row's as-of results (`{metric: MetricResult}`), one line each:
    rank, doc, published, age (days), counted as, and relevance and gain when Recency NDCG was
    measured. Stale evidence's ranks lead (only they carry the stale flag); an empty frame when
    no as-of result lists documents."""
    present = [m for m in ("stale_evidence", *RANKED) if _ranks(results.get(m))]
    if not present:
        return pd.DataFrame(columns=DOCUMENT_COLUMNS)
    lines: dict[int, dict[str, Any]] = {}
    for metric in dict.fromkeys(present):
        for entry in _ranks(results[metric]):
            rank = int(entry.get("rank", 0))
            if rank not in lines:
                lines[rank] = {
                    "rank": rank, "doc": None if entry.get("doc") is None else str(entry["doc"]),
                    "published": entry.get("date"), "age (days)": entry.get("age"),
                    "counted as": counted_as(entry),
                }
            if metric == "recency_ndcg":
                lines[rank].update(relevance=entry.get("relevance"), gain=entry.get("gain"))
    table = pd.DataFrame([lines[r] for r in sorted(lines)])
    table["age (days)"] = pd.array(table["age (days)"], dtype="Int64")
    return table


def _score(result: Any) -> float:
    score = getattr(result, "score", math.nan)
    return math.nan if score is None else float(score)


def explanations(results: Mapping[str, Any], table: pd.DataFrame) -> list[str]:
    """Each measured as-of score as the arithmetic on `dated_documents`' table."""
    if table.empty:
        return []
    kinds = table["counted as"]
    dated = int(kinds.isin((FUTURE, STALE, DATED)).sum())
    lines = []
    for metric in RANKED:
        result = results.get(metric)
        if result is None or math.isnan(_score(result)):
            continue
        k = result.details.get("k", len(table))
        if metric == "future_leak":
            lines.append(f"Future leak@{k} = {int((kinds == FUTURE).sum())} future of {dated} dated "
                         f"= {_score(result):.3f}")
        elif metric == "stale_evidence":
            lines.append(f"Stale evidence@{k} = {int((kinds == STALE).sum())} stale (older than "
                         f"{result.details.get('max_age', 0):g} days) of {dated} dated = {_score(result):.3f}")
        elif metric == "median_evidence_age":
            ages = [int(a) for a, kind in zip(table["age (days)"], kinds, strict=True)
                    if kind in (DATED, STALE)]
            median = statistics.median(ages) if ages else math.nan
            lines.append(f"Median evidence age@{k} = median of the {len(ages)} ages of documents not from "
                         f"the future = {median:g} days")
        else:
            lines.append(f"Recency NDCG@{k} = DCG {result.details.get('dcg', math.nan):.3f} (sum of gain / "
                         f"log2(rank + 1)) / ideal DCG {result.details.get('idcg', math.nan):.3f} "
                         f"= {_score(result):.3f}")
    return lines


def currency_table(result: Any) -> pd.DataFrame:
    """Answer currency's references, one line each: reference, kind (current / outdated),
    matched (the one that decided the label) and, when a verifier decided, its verdict."""
    details = getattr(result, "details", {}) or {}
    references = [(text, "current") for text in details.get("references") or []]
    references += [(text, "outdated") for text in details.get("outdated_references") or []]
    verdicts = details.get("verdicts") if isinstance(details.get("verdicts"), list) else None
    lines = []
    for index, (text, kind) in enumerate(references):
        line = {"reference": text, "kind": kind, "matched": "✓ matched" if text == details.get("matched") else ""}
        if verdicts is not None and index < len(verdicts) and isinstance(verdicts[index], dict):
            line["verdict"] = verdicts[index].get("verdict")
        lines.append(line)
    return pd.DataFrame(lines, columns=["reference", "kind", "matched", *(["verdict"] if verdicts is not None else [])])


def show_asof(results: Mapping[str, Any], *, key: str) -> None:
    """The dated-documents table with the arithmetic of each as-of score, and answer currency's
    label with its references; nothing when the row has no as-of result."""
    table = dated_documents(results)
    if not table.empty:
        as_of = next((r.details.get("as_of") for m, r in results.items() if m in RANKED), None)
        st.markdown(f"**Dated documents** at the as-of date {formatting.md_escape(as_of or '(none)')}")
        shown = table.assign(published=table["published"].fillna(formatting.MISSING),
                             **{"age (days)": [formatting.fmt_count(a) for a in table["age (days)"]]})
        st.dataframe(shown, hide_index=True, width="stretch", key=f"{key}_dated_documents",
                     column_config={"age (days)": st.column_config.TextColumn(
                         help="As-of date minus publication date; negative: published after the question")})
        for line in explanations(results, table):
            st.caption(formatting.md_escape(line))
    currency = results.get("answer_currency")
    label = getattr(currency, "details", {}).get("label") if currency is not None else None
    if currency is not None and (label or getattr(currency, "details", {}).get("references")):
        matched = currency.details.get("matched")
        how = "verifier verdicts" if currency.details.get("verdicts") is not None else "word match"
        st.markdown(f"**Answer currency**: {formatting.md_escape(label or 'not measured')}"
                    + (f", matching {formatting.md_escape(repr(matched))}" if matched else "")
                    + f" ({formatting.md_escape(how)})")
        st.dataframe(currency_table(currency), hide_index=True, width="stretch", key=f"{key}_currency")
