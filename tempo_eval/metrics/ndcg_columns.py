"""NDCG@1..k of runs held as columns (`tempo_eval.io.trec_stream`), vectorised over queries.

The arithmetic is trec_eval's `ndcg_cut`, term by term: the gain of the document at rank i
(1-based) is its grade when positive, divided by log2(i + 1) computed by the C library, summed
left to right; the ideal sum takes the query's positive grades sorted descending; NDCG@j is the
ratio of the two sums at j. So the values equal pytrec_eval's bit for bit, not only to 1e-9.
A query without a relevant document has no ideal gain: NaN here (trec_eval: 0.0), as in
`tempo_eval.metrics.ndcg`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tempo_eval.metrics.asof_columns import grades_of_cells, scatter, take, top_rows
from tempo_eval.metrics.base import require_k
from tempo_eval.metrics.ndcg import GAIN_KINDS, log2_ranks


def gain_sums(grades: np.ndarray, gain_kind: str = "linear") -> np.ndarray:
    """Cumulative discounted gains along each row of a (queries, k) grade matrix."""
    if gain_kind not in GAIN_KINDS:
        raise ValueError(f"gain kind must be one of {GAIN_KINDS}, got {gain_kind!r}")
    positive = np.where(grades > 0, grades, 0.0)
    gains = positive if gain_kind == "linear" else np.exp2(positive) - 1.0
    return np.cumsum(gains / log2_ranks(grades.shape[1]), axis=1)


def ideal_grades(codes: np.ndarray, grades: np.ndarray, n_queries: int, k: int) -> np.ndarray:
    """(n_queries, k): each query's k highest positive grades, descending, zero-padded."""
    keep = grades > 0
    codes, values = codes[keep], grades[keep].astype(np.float64)
    order = np.lexsort((-values, codes))
    codes, values = codes[order], values[order]
    counts = np.bincount(codes, minlength=n_queries)
    starts = np.zeros(n_queries, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    rank = np.arange(len(codes)) - starts[codes]
    out = np.zeros((n_queries, k))
    within = rank < k
    out[codes[within], rank[within]] = values[within]
    return out


def ranked_grades(
    run_codes: np.ndarray,
    run_docids: pa.Array,
    qrels: pa.Table,
    queries: np.ndarray,
    k: int,
) -> np.ndarray:
    """(len(queries), k): the grade of each query's documents at ranks 1..k (0 when unjudged).

    `run_codes` / `run_docids` are a run's rows grouped by query code, best first; `qrels` has
    columns code, docid, grade; `queries` are the codes to fill rows for (sorted)."""
    index, rows, ranks = top_rows(run_codes, queries, k)
    grades = grades_of_cells(run_codes[index], take(run_docids, index), qrels)
    return scatter(len(queries), k, rows, ranks, grades, 0.0)


def ndcg_matrix(ranked: np.ndarray, ideal: np.ndarray, gain_kind: str = "linear") -> np.ndarray:
    """NDCG@1..k per row from ranked and ideal grade matrices of the same shape (NaN where the
    ideal gain is 0)."""
    require_k(ranked.shape[1])
    dcg = gain_sums(ranked, gain_kind)
    idcg = gain_sums(ideal, gain_kind)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / idcg, np.nan)
