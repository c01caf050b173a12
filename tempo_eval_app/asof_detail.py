"""The as-of part of one row in detail (`row_detail.show_row`): the row's dated documents and its
answer's currency, so each as-of value can be checked by hand.

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

from tempo_eval_app import formatting

#: the as-of metrics whose details list the ranked documents
RANKED = ("future_leak", "stale_evidence", "median_evidence_age", "recency_ndcg")
FUTURE, STALE, UNDATED, DATED, NO_AS_OF = "future", "stale", "undated", "dated", "no as-of date"
DOCUMENT_COLUMNS = ["rank", "doc", "published", "age (days)", "counted as"]


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


def show(results: Mapping[str, Any], *, key: str) -> None:
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
