"""As-of metrics for whole TREC runs held as columns (query code, document id per row).

A run is its rows grouped by query code, best first (as the streaming TREC reader keeps them);
qrels are columns code, docid, grade. Dates come from a doc-dates and a query-dates file
(`tempo_eval.core.pubdates.IdDates`): only the documents of the top k and the relevant ones are
looked up. The formulas are `tempo_eval.metrics.asof.run_scores`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempo_eval.core.pubdates import IdDates
from tempo_eval.metrics import asof


def ranks_in_groups(codes: np.ndarray) -> np.ndarray:
    """The 0-based position of each row within its run of equal consecutive codes."""
    n = len(codes)
    if not n:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def top_rows(codes: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row indices, matrix row, rank) of the rows at ranks 1..k of the queries in `queries`
    (sorted codes): the cells they fill in a (len(queries), k) matrix."""
    codes = np.asarray(codes)
    position = ranks_in_groups(codes)
    rows = np.searchsorted(queries, codes)
    wanted = position < k
    if len(queries):
        wanted &= (rows < len(queries)) & (queries[np.minimum(rows, len(queries) - 1)] == codes)
    else:
        wanted &= False
    index = np.flatnonzero(wanted)
    return index, rows[index], position[index]


def scatter(n_rows: int, width: int, rows: np.ndarray, columns: np.ndarray, values: np.ndarray,
            fill: float) -> np.ndarray:
    """A (n_rows, width) matrix of `fill` with `values` at (rows, columns)."""
    out = np.full((n_rows, width), fill, dtype=np.float64)
    out[rows, columns] = values
    return out


def _take(docids: Any, index: np.ndarray) -> Any:
    import pyarrow as pa

    return docids.take(pa.array(index, type=pa.int64())) if len(index) else pa.array([], pa.string())


def top_docids(codes: np.ndarray, docids: Any, queries: np.ndarray, k: int) -> Any:
    """The document ids at ranks 1..k of the queries in `queries`: what a doc-dates file must
    be read for (`read_id_dates(path, wanted=...)`, with the qrels' document ids)."""
    index, _, _ = top_rows(codes, queries, k)
    return _take(docids, index)


def run_asof_scores(
    codes: np.ndarray,
    docids: Any,
    queries: np.ndarray,
    query_ids: list[str],
    k: int,
    *,
    doc_dates: IdDates,
    query_dates: IdDates,
    qrels: tuple[np.ndarray, Any, np.ndarray] | None = None,
    max_age: float = asof.DEFAULT_MAX_AGE,
    half_life: float = asof.DEFAULT_HALF_LIFE,
) -> dict[str, np.ndarray]:
    """Future leak, stale evidence and median age at k (and Recency NDCG when `qrels`, columns
    (codes, docids, grades), are given) for the queries `queries` (sorted codes; `query_ids`
    their ids, in the same order) of one run (`codes`, `docids`: its rows grouped by query, best
    first). One value per query, NaN where not measurable (`asof.reason_codes` says why)."""
    index, rows, ranks = top_rows(codes, queries, k)
    published = scatter(len(queries), k, rows, ranks, doc_dates.days_of(_take(docids, index)), np.nan)
    as_of = query_dates.days_of(list(query_ids))
    if qrels is None:
        return asof.run_scores(published, as_of, k, max_age=max_age, half_life=half_life)
    q_codes, q_docids, q_grades = np.asarray(qrels[0]), qrels[1], np.asarray(qrels[2], dtype=np.float64)
    relevance = _grades_of_cells(np.asarray(codes)[index], _take(docids, index), q_codes, q_docids, q_grades)
    relevance = scatter(len(queries), k, rows, ranks, relevance, 0.0)
    positive = np.flatnonzero(q_grades > 0)
    order = positive[np.argsort(q_codes[positive], kind="stable")]
    r_index, r_rows, r_ranks = top_rows(q_codes[order], queries, len(order) + 1)
    chosen = order[r_index]
    width = int(r_ranks.max()) + 1 if len(r_ranks) else 1
    ideal_relevance = scatter(len(queries), width, r_rows, r_ranks, q_grades[chosen], 0.0)
    ideal_published = scatter(len(queries), width, r_rows, r_ranks, doc_dates.days_of(_take(q_docids, chosen)), np.nan)
    return asof.run_scores(published, as_of, k, relevance=relevance, ideal_relevance=ideal_relevance,
                           ideal_published=ideal_published, max_age=max_age, half_life=half_life)


def _grades_of_cells(codes: np.ndarray, docids: Any, q_codes: np.ndarray, q_docids: Any, q_grades: np.ndarray) -> np.ndarray:
    """The grade of each (code, docid) pair in the qrels, 0 when unjudged (a hash join in Arrow)."""
    import pyarrow as pa

    left = pa.table({"code": codes, "docid": docids, "cell": np.arange(len(codes))})
    right = pa.table({"code": q_codes, "docid": q_docids, "grade": q_grades})
    joined = left.join(right, keys=["code", "docid"], join_type="inner")
    grade = np.zeros(len(codes))
    grade[joined.column("cell").to_numpy()] = joined.column("grade").to_numpy()
    return grade
