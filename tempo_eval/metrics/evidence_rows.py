"""The top-k documents of every row of a dataset with their publication dates and ages, as one
table: what the Overview's age distribution and the Heatmaps' as-of years read.

The same documents, dates and ages as the row metrics' `details["ranks"]`
(`tempo_eval.metrics.evidence_age`): documents in rank order, retrieved ids deduplicated (the
first occurrence keeps its rank and date), `context_dates` aligned with `retrieved_ids` (else with
`contexts`), `age = as_of - published` in whole days from each date's first day. Built column-wise:
each distinct date text is read once (a dataset of 200,000 rows holds a few thousand distinct
dates), so the table costs a pass over the cells, not a date parse per document.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tempo_eval.common.values import is_na
from tempo_eval.core.pubdates import DateError, PubDate, parse_date

COLUMNS = ["row", "query_id", "run", "rank", "doc", "date", "as_of", "age", "future", "as_of_year", "year"]

#: a date text that cannot be read: its row is left out (its metrics say why)
_INVALID = object()


class _Dates:
    """Each distinct date value read once: a PubDate, None (missing) or _INVALID."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.known: dict[Any, Any] = {}

    def __call__(self, value: Any) -> Any:
        key = (type(value), value)  # 2023 is a year, 2023.0 is not a date: never one entry
        try:
            return self.known[key]
        except KeyError:
            pass
        except TypeError:  # not hashable (a list, a dict): read it on its own
            return self._read(value)
        parsed = self.known[key] = self._read(value)
        return parsed

    def _read(self, value: Any) -> Any:
        if isinstance(value, PubDate):
            return value
        try:
            return parse_date(value, column=self.column)
        except DateError:
            return _INVALID


def top_documents(ids: Any, contexts: Any, dates: list, k: int) -> tuple[list, list] | None:
    """(documents, their raw dates) of a row's top k, retrieved ids deduplicated (the first
    occurrence keeps its rank and date), or None when the row's lists are not aligned (the row
    metrics, `evidence_age._Evidence`, read a row with it and refuse that)."""
    if ids is not None:
        if len(ids) != len(dates):
            return None
        docs, raw, seen = [], [], set()
        for doc, value in zip(ids, dates, strict=True):
            if doc in seen:
                continue
            seen.add(doc)
            if len(docs) < k:
                docs.append(doc)
                raw.append(value)
        return docs, raw
    if contexts is not None and len(contexts) != len(dates):
        return None
    count = len(dates) if contexts is None else len(contexts)
    return list(range(min(count, k))), (dates or [None] * count)[:k]


def evidence_table(frame: Any, k: int) -> Any:
    """One line per top-k document of every row of a dataset frame that has `context_dates`:
    row, query_id, run, rank, doc, date (as normalised), as_of, age (days, NaN when either date is
    unknown), future, as_of_year and year (of the publication date's first day). A row whose
    dates cannot be read or are not aligned with its documents is left out (its metrics say
    why)."""
    import pandas as pd

    if "context_dates" not in frame.columns:
        return pd.DataFrame([], columns=COLUMNS)
    n = len(frame)

    def column(name: str) -> list:
        return frame[name].tolist() if name in frame.columns else [None] * n

    all_dates, ids_col, contexts_col = column("context_dates"), column("retrieved_ids"), column("contexts")
    query_ids, runs, as_ofs = column("query_id"), column("run"), column("reference_date")
    read_date, read_as_of = _Dates("context_dates"), _Dates("reference_date")
    rows, ranks, docs, parsed, as_of_of = [], [], [], [], []
    for position in range(n):
        dates = all_dates[position]
        if not isinstance(dates, list):
            continue
        ids, contexts = ids_col[position], contexts_col[position]
        ids, contexts = None if is_na(ids) else ids, None if is_na(contexts) else contexts
        top = top_documents(ids, contexts, dates, k)
        if top is None:
            continue
        as_of = read_as_of(None if is_na(as_ofs[position]) else as_ofs[position])
        if as_of is _INVALID or any(read_date(value) is _INVALID for value in dates):
            continue  # every date of the row is read, as the row metrics read them
        top_docs, top_dates = top
        rows += [position] * len(top_docs)
        ranks += range(1, len(top_docs) + 1)
        docs += top_docs
        parsed += [read_date(value) for value in top_dates]
        as_of_of += [as_of] * len(top_docs)
    published = np.array([math.nan if d is None else d.day for d in parsed], dtype=np.float64)
    asked = np.array([math.nan if d is None else d.day for d in as_of_of], dtype=np.float64)
    age = asked - published
    with np.errstate(invalid="ignore"):
        future = age < 0
    row_index = np.asarray(rows, dtype=np.int64)
    return pd.DataFrame({
        "row": row_index,
        "query_id": [query_ids[r] for r in rows],
        "run": [runs[r] for r in rows],
        "rank": np.asarray(ranks, dtype=np.int64),
        "doc": docs,
        "date": [None if d is None else d.label for d in parsed],
        "as_of": [None if d is None else d.label for d in as_of_of],
        "age": age,
        "future": future,
        "as_of_year": [None if d is None else d.first.year for d in as_of_of],
        "year": [None if d is None else d.first.year for d in parsed],
    }, columns=COLUMNS)
