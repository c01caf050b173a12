"""trec_eval's ranking rule: a run's documents by score descending, ties broken by document id
descending (string order), scores compared at a precision (`SCORE_PRECISIONS`): "float32" as
trec_eval <= 9 and pytrec_eval-terrier store them (C floats), or "double" as trec_eval 10.0.

The one rule for the TREC reader (`tempo_eval.io.trec_stream`) and the
NDCG math (`tempo_eval.metrics.ndcg`, which re-exports these names): it sits below both, so
neither imports the other for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real

import numpy as np

#: how run scores are compared when ranking: "float32" (trec_eval <= 9, pytrec_eval-terrier,
#: ir_measures) or "double" (trec_eval 10.0)
SCORE_PRECISIONS = ("float32", "double")
DEFAULT_SCORE_PRECISION = "float32"


# ---- ranking -----------------------------------------------------------------------------------

def rank_by_trec_eval(scores: Mapping[str, float], *, precision: str = DEFAULT_SCORE_PRECISION) -> list[str]:
    """Document ids ordered as trec_eval ranks a run: score descending, then id descending.

    With precision "float32" (default) scores are compared after rounding to float32 (trec_eval
    <= 9 keeps them as C floats), so scores that differ only beyond single precision tie and the
    larger id (string order) comes first; with "double" they are compared as given (trec_eval 10).
    Raises TypeError for a non-string id or a non-numeric score, ValueError for a NaN score.
    """
    if not isinstance(scores, Mapping):
        raise TypeError(f"scores must be a mapping of document id -> score, got {type(scores).__name__}")
    docs = list(scores)
    for doc in docs:
        if not isinstance(doc, str):
            raise TypeError(f"document ids must be strings, got {doc!r}")
    for value in scores.values():
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TypeError(f"scores must hold numeric scores, found {value!r}")
    array = _at_precision(np.asarray(list(scores.values()), dtype=np.float64), precision)
    if np.isnan(array).any():
        raise ValueError("scores holds a NaN score: a NaN cannot be ranked")
    return [doc for _, doc in sorted(zip(array.tolist(), docs, strict=True), reverse=True)]


def require_precision(precision: str) -> str:
    if precision not in SCORE_PRECISIONS:
        raise ValueError(f"score precision must be one of {', '.join(SCORE_PRECISIONS)}, got {precision!r}")
    return precision


def _at_precision(array: np.ndarray, precision: str) -> np.ndarray:
    """float64 scores as compared at `precision`: rounded to float32, or unchanged for double."""
    if require_precision(precision) == "double":
        return array
    # Scores beyond float32 range become +-inf, as they do in trec_eval; that overflow is expected.
    with np.errstate(over="ignore"):
        return array.astype(np.float32)
