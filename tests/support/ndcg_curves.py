"""The plain DCG / NDCG curves the tests compare the product's one-pass kernels against
(`tempo_eval.metrics.ndcg.ndcg_curve_totals`, `TemporalNDCG`'s `_curve`), and the focus-time
relevance of two focus times. Nothing in the product calls them: they are the formulas."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

from tempo_eval.core.focus import as_year_set
from tempo_eval.metrics.base import NAN, require_k
from tempo_eval.metrics.ndcg import (
    _LOG2,
    GAIN_KINDS,
    _log2,
    gold_relevance,
    ndcg_curve_totals,
    year_set_relevance,
)


def dcg_curve(gains: Sequence[float], k: int) -> list[float]:
    """DCG@1..k in one pass: element j-1 is sum_{i<=j} gains[i-1] / log2(i + 1).

    When fewer than k gains are given, the curve stays flat after the last one.
    """
    return dcg_curve_unchecked(gains, require_k(k))


def dcg_curve_unchecked(gains: Sequence[float], k: int) -> list[float]:
    """`dcg_curve` for a k already checked."""
    curve: list[float] = []
    total = 0.0
    n = min(k, len(gains))
    logs = _LOG2 if n + 2 <= len(_LOG2) else [_log2(i) for i in range(n + 2)]
    for i in range(n):
        if gains[i] > 0:
            # divide (not multiply by a cached reciprocal) so sums match trec_eval to the last bit
            total += gains[i] / logs[i + 2]
        curve.append(total)
    return curve + list(repeat(total, k - n))


def ndcg_curve(gains: Sequence[float], ideal_gains: Iterable[float], k: int) -> list[float]:
    """NDCG@1..k; `ideal_gains` in any order (sorted descending here); NaN where IDCG is 0."""
    return ndcg_curve_totals(gains, sorted(ideal_gains, reverse=True), require_k(k))[0]


def ndcg_of_curves(dcg: Sequence[float], idcg: Sequence[float]) -> list[float]:
    """NDCG@1..k from DCG@1..k and IDCG@1..k."""
    return [d / i if i > 0 else NAN for d, i in zip(dcg, idcg, strict=True)]


def gain(rel: float, kind: str = "linear") -> float:
    """The gain of one relevance grade, written out (`gain_list` is the product's): linear: rel
    (trec_eval); exponential: 2**rel - 1; 0 for a relevance <= 0 under both."""
    if kind not in GAIN_KINDS:
        raise ValueError(f"gain kind must be one of {GAIN_KINDS}, got {kind!r}")
    if rel <= 0:
        return 0.0
    return float(rel) if kind == "linear" else 2.0 ** rel - 1.0


def gold_gains(retrieved_ids: Sequence[str], gold: Any, gain_kind: str = "linear") -> list[float]:
    """The gain of each retrieved id, in order; ids absent from `gold` (a list, binary, or a dict
    id -> grade, as in `gold_relevance`) get 0."""
    relevance = gold_relevance(gold)
    return [gain(relevance.get(doc, 0), gain_kind) for doc in retrieved_ids]


def focus_time_relevance(qft: Any, dft: Any) -> float:
    """4 × Jaccard(QFT, DFT) of two FocusTimes or sets of integer years."""
    return year_set_relevance(as_year_set(qft, name="qft"), as_year_set(dft, name="dft"))
