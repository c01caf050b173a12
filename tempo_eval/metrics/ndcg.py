"""NDCG math: gains, DCG / NDCG curves, the one table of rank discounts and trec_eval's ranking rule.

Plain functions on plain numbers; `tempo_eval.metrics.temporal_ndcg.TemporalNDCG` gathers settings
and calls them. Runs and qrels (files or mappings) are scored by the column kernel
`tempo_eval.metrics.ndcg_columns` over the same discount table (`tempo_eval.compare.trec_scores`).

Definitions (rank i starts at 1):

    DCG@k  = sum_{i=1..k} gain(rel_i) / log2(i + 1)
    IDCG@k = DCG@k of the ideal ranking (all relevances sorted descending)
    NDCG@k = DCG@k / IDCG@k

Gold mode follows trec_eval's `ndcg_cut.k` exactly:
- gain is the relevance grade itself ("linear"); grades <= 0 (non-relevant, unjudged, negative)
  give no gain. "exponential" gain, 2**rel - 1, is optional and is not what trec_eval computes;
- IDCG comes from every positive judgement of the query, sorted descending, cut at k;
- a run's documents are ranked by score descending, ties broken by document id descending
  (string comparison). Scores are compared at a chosen precision (`SCORE_PRECISIONS`): by default
  "float32", as trec_eval <= 9 and pytrec_eval-terrier 0.5.x store them (C floats), so two scores
  equal once rounded to float32 are a tie (1.0 and 1.0 + 1e-12 tie; the id decides); "double"
  compares them as trec_eval 10.0 does, where 1.0 + 1e-12 ranks above 1.0;
- a query whose judgements hold no relevant document has IDCG = 0: trec_eval reports 0.0 there,
  we report NaN ("not measurable": no ranking could score anything).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from numbers import Real
from operator import mul
from typing import Any

import numpy as np

from tempo_eval.core.ranking import rank_by_trec_eval  # noqa: F401 - trec_eval's rule, re-exported for the metric
from tempo_eval.metrics.base import NAN

GAIN_KINDS = ("linear", "exponential")
def dedupe(ids: Sequence[str]) -> list[str]:
    """`ids` without repeats; the first occurrence keeps its rank."""
    return list(dict.fromkeys(ids))


# ---- gains and curves --------------------------------------------------------------------------

def gain_list(relevances: Iterable[float], kind: str = "linear") -> list[float]:
    """The gain of each relevance grade, in order: linear: rel (trec_eval); exponential:
    2**rel - 1. A relevance <= 0 gives 0 gain under both, as in trec_eval (negative grades and
    unjudged documents earn nothing)."""
    if kind not in GAIN_KINDS:
        raise ValueError(f"gain kind must be one of {GAIN_KINDS}, got {kind!r}")
    if kind == "linear":
        return [0.0 if rel <= 0 else float(rel) for rel in relevances]
    return [0.0 if rel <= 0 else 2.0 ** rel - 1.0 for rel in relevances]


#: log2(n) for the first ranks' discounts: the same values math.log2 gives, looked up
_LOG2 = [math.nan, 0.0] + [math.log2(n) for n in range(2, 1026)]


def _log2(n: int) -> float:
    return _LOG2[n] if n < len(_LOG2) else math.log2(n)


def log2_ranks(k: int) -> np.ndarray:
    """log2(i + 1) for ranks i = 1..k: the one table of rank discounts (DCG divides a gain by
    it), from the C library as trec_eval computes them. Every NDCG here reads it: the row
    metrics (`discount`, `ndcg_curve_totals`), the column kernels (`ndcg_columns`), as-of math."""
    if k + 2 <= len(_LOG2):
        return np.array(_LOG2[2:k + 2])
    return np.array([_log2(i) for i in range(2, k + 2)])


#: `discount(rank)` of the first ranks (index = rank), looked up: the same divisions, done once
_DISCOUNTS = [math.nan] + [1.0 / _LOG2[rank + 1] for rank in range(1, len(_LOG2) - 1)]


def discount(rank: int) -> float:
    """1 / log2(rank + 1) for a rank starting at 1."""
    return 1.0 / _log2(rank + 1)


def discounted_gains(gains: Sequence[float], ranks: int) -> list[float]:
    """`gains[i] * discount(i + 1)` for the first `ranks` gains (a ranking's discounted gains)."""
    if ranks < len(_DISCOUNTS):
        return list(map(mul, gains[:ranks], _DISCOUNTS[1:ranks + 1]))
    return [gains[i] * discount(i + 1) for i in range(ranks)]


def ndcg_curve_totals(gains: Sequence[float], ideal_gains: Sequence[float], k: int) -> tuple[list[float], float, float]:
    """NDCG@1..k (NaN where IDCG is 0) with DCG@k and IDCG@k, for a k already checked and the
    ideal gains sorted descending already: one pass, the same sums in the same order as two DCG
    curves and their ratio, so the same floats, without the two curves in between (4.0 us
    against 6.9 for a Temporal NDCG row's 5 gains, measured). Past the gains given both curves
    stay flat. In focus-time and LLM modes the caller reads a NaN as 0.0 (the candidates are the
    retrieved documents themselves), in gold mode as "not measurable"."""
    n_gains, n_ideal = min(k, len(gains)), min(k, len(ideal_gains))
    depth = max(n_gains, n_ideal)
    logs = _LOG2 if depth + 2 <= len(_LOG2) else [_log2(i) for i in range(depth + 2)]
    curve: list[float] = []
    append = curve.append
    dcg = idcg = 0.0
    for i in range(depth):
        if i < n_gains and (g := gains[i]) > 0:
            dcg += g / logs[i + 2]
        if i < n_ideal and (g := ideal_gains[i]) > 0:
            idcg += g / logs[i + 2]
        append(dcg / idcg if idcg > 0 else NAN)
    if depth < k:  # both curves flat past the gains given
        curve += repeat(dcg / idcg if idcg > 0 else NAN, k - depth)
    return curve, dcg, idcg


# ---- gold judgements ---------------------------------------------------------------------------

def gold_relevance(gold: Any) -> dict[str, float]:
    """Gold judgements as id -> relevance.

    A list, tuple or set of ids is binary relevance (each id rel 1); a mapping id -> grade is
    graded relevance (grades are numbers; <= 0 means judged non-relevant). Anything else raises
    TypeError.
    """
    if isinstance(gold, Mapping):
        relevance: dict[str, float] = {}
        for doc, grade in gold.items():
            if not isinstance(doc, str):
                raise TypeError(f"gold_ids keys must be document id strings, got {doc!r}")
            if isinstance(grade, bool) or not isinstance(grade, Real) or math.isnan(grade):
                raise TypeError(f"gold_ids[{doc!r}] must be a numeric relevance grade, got {grade!r}")
            relevance[doc] = grade
        return relevance
    if isinstance(gold, (list, tuple, set, frozenset)):
        for doc in gold:
            if not isinstance(doc, str):
                raise TypeError(f"gold_ids must hold document id strings, got {doc!r}")
        return dict.fromkeys(gold, 1)
    raise TypeError(
        "gold_ids must be a list of relevant ids (binary) or a dict id -> grade (graded), "
        f"got {type(gold).__name__}"
    )


# ---- focus-time relevance ----------------------------------------------------------------------

def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b|. Two empty sets have no defined overlap: NaN."""
    union = len(a | b)
    if union == 0:
        return NAN
    return len(a & b) / union


def year_set_relevance(qft: set[int] | frozenset[int], dft: set[int] | frozenset[int]) -> float:
    """4 × Jaccard(QFT, DFT): a graded relevance in [0, 4] (the seed's focus-time formula), of two
    sets of integer years already checked (`as_year_set`). An empty DFT against a non-empty QFT is
    0; an empty QFT is the caller's "not measurable" case (NaN here when the DFT is empty too)."""
    return 4.0 * jaccard(qft, dft)
