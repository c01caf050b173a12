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
    wanted = (position < k) & (rows < len(queries))  # no query at all: nothing wanted
    if len(queries):
        wanted &= queries[np.minimum(rows, len(queries) - 1)] == codes
    index = np.flatnonzero(wanted)
    return index, rows[index], position[index]


def scatter(n_rows: int, width: int, rows: np.ndarray, columns: np.ndarray, values: np.ndarray,
            fill: float) -> np.ndarray:
    """A (n_rows, width) matrix of `fill` with `values` at (rows, columns)."""
    out = np.full((n_rows, width), fill, dtype=np.float64)
    out[rows, columns] = values
    return out


def take(docids: Any, index: np.ndarray) -> Any:
    import pyarrow as pa

    return docids.take(pa.array(index, type=pa.int64())) if len(index) else pa.array([], pa.string())


def top_docids(codes: np.ndarray, docids: Any, queries: np.ndarray, k: int) -> Any:
    """The document ids at ranks 1..k of the queries in `queries`: what a doc-dates file must
    be read for (`read_id_dates(path, wanted=...)`, with the qrels' document ids)."""
    index, _, _ = top_rows(codes, queries, k)
    return take(docids, index)


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
    import pyarrow as pa

    index, rows, ranks = top_rows(codes, queries, k)
    published = scatter(len(queries), k, rows, ranks, doc_dates.days_of(take(docids, index)), np.nan)
    as_of = query_dates.days_of(list(query_ids))
    if qrels is None:
        return asof.run_scores(published, as_of, k, max_age=max_age, half_life=half_life)
    q_codes, q_docids, q_grades = np.asarray(qrels[0]), qrels[1], np.asarray(qrels[2], dtype=np.float64)
    judgments = pa.table({"code": q_codes, "docid": q_docids, "grade": q_grades})
    relevance = grades_of_cells(np.asarray(codes)[index], take(docids, index), judgments)
    relevance = scatter(len(queries), k, rows, ranks, relevance, 0.0)
    positive = np.flatnonzero(q_grades > 0)
    order = positive[np.argsort(q_codes[positive], kind="stable")]
    r_index, r_rows, r_ranks = top_rows(q_codes[order], queries, len(order) + 1)
    chosen = order[r_index]
    width = int(r_ranks.max()) + 1 if len(r_ranks) else 1
    ideal_relevance = scatter(len(queries), width, r_rows, r_ranks, q_grades[chosen], 0.0)
    ideal_published = scatter(len(queries), width, r_rows, r_ranks, doc_dates.days_of(take(q_docids, chosen)), np.nan)
    ranked = np.bincount(rows, minlength=len(queries))
    return asof.run_scores(published, as_of, k, relevance=relevance, ideal_relevance=ideal_relevance,
                           ideal_published=ideal_published, max_age=max_age, half_life=half_life, ranked=ranked)


def grades_of_cells(codes: np.ndarray, docids: Any, qrels: Any) -> np.ndarray:
    """The grade of each (code, docid) pair in `qrels` (an Arrow table of columns code, docid,
    grade), 0 when unjudged (a hash join in Arrow)."""
    import pyarrow as pa

    left = pa.table({"code": codes, "docid": docids, "cell": np.arange(len(codes))})
    joined = left.join(qrels, keys=["code", "docid"], join_type="inner")
    grade = np.zeros(len(codes))
    grade[joined.column("cell").to_numpy()] = joined.column("grade").to_numpy()
    return grade


#: the as-of metrics of run files, by the name before "@K" (`compare --metric future_leak@10`)
RUN_METRICS = ("future_leak", "stale_evidence", "median_age", "recency_ndcg")


def parse_run_metric(name: str) -> tuple[str, int] | None:
    """("future_leak", 10) for "future_leak@10" (any case); None for a name that is no as-of
    metric (ndcg@K is read elsewhere); ValueError for an as-of name without a positive cutoff."""
    head, _, cutoff = name.strip().lower().partition("@")
    if head not in RUN_METRICS:
        return None
    if not cutoff.isdigit() or int(cutoff) < 1:
        raise ValueError(f"{name!r}: expected {head}@K with a positive K, e.g. {head}@10")
    return head, int(cutoff)


def asof_per_query(
    runs: dict[str, tuple[np.ndarray, Any]],
    query_ids: list[str],
    qrels: tuple[np.ndarray, Any, np.ndarray],
    metrics: dict[str, tuple[str, int]],
    *,
    doc_dates: Any,
    query_dates: Any,
    missing: str = "zero",
    max_age: float = asof.DEFAULT_MAX_AGE,
    half_life: float = asof.DEFAULT_HALF_LIFE,
) -> dict[str, dict[str, dict[str, float]]]:
    """per_query[run][metric][query id] for the as-of metrics of run files.

    `runs`: name -> (codes, docids), each run's rows grouped by query code, best first;
    `query_ids[code]` is each code's id; `qrels` are columns (codes, docids, grades); `metrics`:
    name -> (kind, k) (`parse_run_metric`). `doc_dates` / `query_dates` are `id<TAB>date` files
    (paths; the doc-dates file is streamed once, keeping the documents the runs rank in their top
    k and the judged ones). Future leak, stale evidence and median age cover every query any run
    has results for, judged or not; Recency NDCG the judged queries (a relevant document), and a
    judged query a run has no results for is 0 for it with `missing="zero"`, as ndcg@K (NaN with
    "drop"). NaN where not measurable: no as-of date, no dated top-k document, no relevant one.
    """
    import pyarrow as pa

    from tempo_eval.core.pubdates import read_id_dates

    widest = max((k for _, k in metrics.values()), default=1)
    all_codes = np.unique(np.concatenate([np.asarray(codes) for codes, _ in runs.values()])) if runs else np.zeros(0, np.int64)
    q_codes, q_docids, q_grades = np.asarray(qrels[0]), qrels[1], np.asarray(qrels[2], dtype=np.float64)
    judged = np.unique(q_codes[q_grades > 0])
    wanted = [top_docids(codes, docids, all_codes, widest) for codes, docids in runs.values()]
    docs = read_id_dates(doc_dates, wanted=pa.concat_arrays([*wanted, pa.array(q_docids, pa.string())]))
    queries = read_id_dates(query_dates, kind="query", wanted=[query_ids[c] for c in all_codes])
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, (codes, docids) in runs.items():
        out[name] = {}
        present = np.isin(judged, np.asarray(codes))
        for metric, (kind, k) in metrics.items():
            targets = judged if kind == "recency_ndcg" else all_codes
            ids = [query_ids[c] for c in targets]
            scores = run_asof_scores(
                codes, docids, targets, ids, k, doc_dates=docs, query_dates=queries,
                qrels=(q_codes, q_docids, q_grades) if kind == "recency_ndcg" else None,
                max_age=max_age, half_life=half_life,
            )
            values = scores[kind]
            if kind == "recency_ndcg":
                as_of = queries.days_of(ids)
                fill = 0.0 if missing == "zero" else np.nan
                values = np.where(~present & ~np.isnan(as_of), fill, values)
            out[name][metric] = dict(zip(ids, values.tolist(), strict=True))
    return out
