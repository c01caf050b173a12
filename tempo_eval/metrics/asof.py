"""As-of math: the age of retrieved evidence against the date a question was asked.

Plain numpy functions on plain numbers, the same for one dataset row (a 1 x k matrix) and for a
whole TREC run (queries x depth). Dates are days since 1970-01-01 as float64, NaN where unknown
(`tempo_eval.core.pubdates`); an interval date (a year, a month) is passed as its first day.
A run with fewer than k documents pads its row with NaN dates and 0 relevance: a missing document
counts like an undated one (it is in no denominator and earns no gain).

    age_i = as_of - published_i                      (whole days; NaN when either is unknown)
    future_leak@k    = #{i <= k: age_i < 0} / #{i <= k: age_i known}
    stale_evidence@k = #{i <= k: age_i > max_age} / #{i <= k: age_i known}
    median_age@k     = median{age_i: i <= k, age_i known, age_i >= 0}
    recency_ndcg@k   = DCG / IDCG,  DCG = sum_{i <= k} g_i / log2(i + 1),
        g_i = rel_i * 2^(-age_i / half_life) when age_i >= 0, 0 when age_i < 0, rel_i when unknown;
        IDCG is the same sum over the ideal ordering (gains sorted descending) of every relevant
        document of the query, each with its own gain.

Not measurable (NaN): no as-of date, no top-k document with a known date (every age NaN), for
median age no dated document that is not from the future, for Recency NDCG an IDCG of 0 (no
relevant document, or every relevant document from the future). `reason_codes` names why.
Recency NDCG of a query that ranks no document at all (`ranked` = 0) is 0, as NDCG's: an empty
ranking earns no gain; it is not a ranking of undated documents.
"""

from __future__ import annotations

import re
import string
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from tempo_eval.metrics.ndcg import log2_ranks

DEFAULT_MAX_AGE = 365
DEFAULT_HALF_LIFE = 365

NO_AS_OF = "no_as_of"
NO_DATES = "no_dates"
NO_GOLD = "no_gold"
NO_REFERENCE = "no_reference"


def _matrix(values: np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"expected a queries x documents matrix, got shape {array.shape}")
    return array


def evidence_ages(as_of: np.ndarray | float, published: np.ndarray) -> np.ndarray:
    """age_i = as_of - published_i in whole days, one row per query (NaN where either is unknown).

    `as_of`: days per query (shape (Q,)) or one number; `published`: days, shape (Q, k)."""
    published = _matrix(published)
    as_of = np.asarray(as_of, dtype=np.float64).reshape(-1, 1) if np.ndim(as_of) else np.float64(as_of)
    return np.floor(as_of) - np.floor(published)


def dated_counts(ages: np.ndarray) -> np.ndarray:
    """How many of each row's documents have a known age (the denominator of leak and stale)."""
    return np.count_nonzero(~np.isnan(_matrix(ages)), axis=1)


def _share(hits: np.ndarray, known: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(known > 0, hits / np.maximum(known, 1), np.nan)


def future_leak(ages: np.ndarray) -> np.ndarray:
    """Per row: share of the dated documents published after the as-of date (age < 0); NaN when
    no document has a known age."""
    ages = _matrix(ages)
    with np.errstate(invalid="ignore"):
        future = np.count_nonzero(ages < 0, axis=1)
    return _share(future, dated_counts(ages))


def stale_evidence(ages: np.ndarray, max_age: float = DEFAULT_MAX_AGE) -> np.ndarray:
    """Per row: share of the dated documents older than `max_age` days (age > max_age); NaN when
    no document has a known age."""
    require_days(max_age, "max_age", allow_zero=True)
    ages = _matrix(ages)
    with np.errstate(invalid="ignore"):
        stale = np.count_nonzero(ages > max_age, axis=1)
    return _share(stale, dated_counts(ages))


def median_evidence_age(ages: np.ndarray) -> np.ndarray:
    """Per row: the median age in days of the dated documents not from the future (age >= 0);
    NaN when there is none. An even count averages the two middle ages."""
    ages = _matrix(ages)
    with np.errstate(invalid="ignore"):
        past = np.where(ages >= 0, ages, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: NaN, as documented
        return np.nanmedian(past, axis=1) if past.shape[1] else np.full(past.shape[0], np.nan)


def recency_gains(relevance: np.ndarray, ages: np.ndarray, half_life: float = DEFAULT_HALF_LIFE) -> np.ndarray:
    """g_i = rel_i * 2^(-age_i / half_life) for age_i >= 0, 0 for a document from the future
    (age_i < 0), rel_i when the age is unknown. Relevance <= 0 gives no gain (as trec_eval)."""
    require_days(half_life, "half_life")
    relevance = np.maximum(_matrix(relevance), 0.0)
    ages = _matrix(ages)
    if relevance.shape != ages.shape:
        raise ValueError(f"relevance {relevance.shape} and ages {ages.shape} differ in shape")
    unknown = np.isnan(ages)
    known_ages = np.where(unknown, 0.0, ages)
    decay = np.where(known_ages >= 0, np.exp2(-np.maximum(known_ages, 0.0) / half_life), 0.0)
    return np.where(unknown, relevance, relevance * decay)


def dcg(gains: np.ndarray) -> np.ndarray:
    """Per row: sum_i g_i / log2(i + 1) over the row's columns in order (the discounts of
    `tempo_eval.metrics.ndcg.log2_ranks`)."""
    gains = _matrix(gains)
    return gains @ (1.0 / log2_ranks(gains.shape[1])) if gains.shape[1] else np.zeros(gains.shape[0])


def ideal_dcg(ideal_gains: np.ndarray, k: int) -> np.ndarray:
    """Per row: the DCG of the row's gains sorted descending, cut at k (the row holds the gains
    of every relevant document of the query, padded with 0)."""
    ideal_gains = _matrix(ideal_gains)
    best = -np.sort(-ideal_gains, axis=1)[:, :k]
    return dcg(best)


def recency_ndcg(
    relevance: np.ndarray,
    ages: np.ndarray,
    ideal_relevance: np.ndarray,
    ideal_ages: np.ndarray,
    half_life: float = DEFAULT_HALF_LIFE,
    *,
    ranked: np.ndarray | None = None,
) -> np.ndarray:
    """Per row: Recency NDCG@k, k = the number of columns of `relevance` / `ages` (the top k).

    `ideal_relevance` / `ideal_ages`: every relevant document of the query (padded with 0
    relevance), whatever was retrieved. `ranked`: how many documents each row ranks in its top k
    (the rest of the row is padding); a row that ranks none scores 0 when IDCG > 0. NaN where
    IDCG is 0, or where the row ranks documents none of which has a known age (`reason_codes`
    says which)."""
    k = _matrix(relevance).shape[1]
    found = dcg(recency_gains(relevance, ages, half_life))
    ideal = ideal_dcg(recency_gains(ideal_relevance, ideal_ages, half_life), k)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(ideal > 0, found / np.where(ideal > 0, ideal, 1.0), np.nan)
    return np.where(_dated_or_empty(ages, ranked), score, np.nan)


def _dated_or_empty(ages: np.ndarray, ranked: np.ndarray | None) -> np.ndarray:
    """Rows with a dated top-k document, or (with `ranked`) no document at all."""
    dated = dated_counts(ages) > 0
    return dated if ranked is None else dated | (np.asarray(ranked).reshape(-1) == 0)


def reason_codes(
    as_of: np.ndarray, ages: np.ndarray, *, relevant: np.ndarray | None = None,
    ranked: np.ndarray | None = None,
) -> list[str | None]:
    """Why each row is not measurable, in order of precedence: no as-of date (`no_as_of`), no
    relevant document (`no_gold`, only when `relevant`, the per-row count of relevant documents,
    is given: Recency NDCG), no top-k document with a known date (`no_dates`; with `ranked`, the
    per-row count of ranked documents, not for a row that ranks none: Recency NDCG scores it 0);
    None when measurable on those grounds (median age and Recency NDCG may still be NaN: see
    their functions)."""
    as_of = np.asarray(as_of, dtype=np.float64).reshape(-1)
    no_gold = np.zeros(len(as_of), bool) if relevant is None else np.ravel(relevant) <= 0
    undated = ~_dated_or_empty(ages, ranked)
    codes = np.select([np.isnan(as_of), no_gold, undated], [NO_AS_OF, NO_GOLD, NO_DATES], "")
    return [code or None for code in codes.tolist()]


def run_scores(
    published: np.ndarray,
    as_of: np.ndarray,
    k: int,
    *,
    relevance: np.ndarray | None = None,
    ideal_relevance: np.ndarray | None = None,
    ideal_published: np.ndarray | None = None,
    max_age: float = DEFAULT_MAX_AGE,
    half_life: float = DEFAULT_HALF_LIFE,
    ranked: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every as-of metric at cutoff k for a whole run, one value per query (NaN: not measurable).
    `ranked` (Q,): how many documents each query ranks (`recency_ndcg`: 0 scores 0).

    `published`: (Q, depth) publication days of each query's documents in rank order (NaN for an
    undated or missing document); `as_of`: (Q,) days (NaN: no as-of date). With `relevance`
    ((Q, depth) grades of the same documents) and `ideal_relevance` / `ideal_published` ((Q, M):
    every relevant document of the query with its date, padded with 0 / NaN), `recency_ndcg` too.
    Returns {"future_leak", "stale_evidence", "median_age"[, "recency_ndcg"]}: arrays of shape (Q,).
    """
    published = _matrix(published)[:, :k]
    as_of = np.asarray(as_of, dtype=np.float64).reshape(-1)
    if len(as_of) != published.shape[0]:
        raise ValueError(f"{len(as_of)} as-of dates for {published.shape[0]} queries")
    ages = evidence_ages(as_of, published)
    scores = {
        "future_leak": future_leak(ages),
        "stale_evidence": stale_evidence(ages, max_age),
        "median_age": median_evidence_age(ages),
    }
    if relevance is not None:
        if ideal_relevance is None or ideal_published is None:
            raise ValueError("recency_ndcg needs ideal_relevance and ideal_published with relevance")
        ideal_ages = evidence_ages(as_of, ideal_published)
        scores["recency_ndcg"] = recency_ndcg(
            _matrix(relevance)[:, :k], ages, ideal_relevance, ideal_ages, half_life, ranked=ranked
        )
    return scores


def require_days(value: float, name: str, *, allow_zero: bool = False) -> float:
    """A number of days: a finite number > 0 (>= 0 when `allow_zero`), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number of days, got {value!r}")
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a number of days {bound}, got {value!r}")
    return float(value)


# ---- answer currency ------------------------------------------------------------------------------

CURRENT, OUTDATED, OTHER = "current", "outdated", "other"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lowercase, drop punctuation and the articles a/an/the, collapse
    whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def mentions(answer: str, reference: str) -> bool:
    """True when the normalised `reference` occurs in the normalised `answer` on word boundaries.
    A reference that normalises to nothing (only punctuation or articles) matches nothing."""
    needle = normalize_answer(reference)
    return bool(needle) and f" {needle} " in f" {normalize_answer(answer)} "


def currency_label(
    answer: str, current: Sequence[str], outdated: Sequence[str] = ()
) -> tuple[str, str | None]:
    """(`current` / `outdated` / `other`, the reference matched): current when the answer
    mentions any current reference, else outdated when it mentions any outdated one."""
    matches = [mentions(answer, reference) for reference in (*current, *outdated)]
    return label_from_matches(current, outdated, matches)


def label_from_matches(
    current: Sequence[str], outdated: Sequence[str], matches: Sequence[bool]
) -> tuple[str, str | None]:
    """`currency_label` given whether each reference matched (`matches`: current references
    first, then outdated ones), as a verifier decides them."""
    if len(matches) != len(current) + len(outdated):
        raise ValueError(f"{len(matches)} matches for {len(current) + len(outdated)} references")
    for reference, matched in zip(current, matches, strict=False):
        if matched:
            return CURRENT, reference
    for reference, matched in zip(outdated, matches[len(current):], strict=True):
        if matched:
            return OUTDATED, reference
    return OTHER, None


def currency_counts(labels: Sequence[str | None], has_outdated: Sequence[bool]) -> dict[str, Any]:
    """The summary of a run: how many rows are current / outdated / other, and the
    outdated-answer rate with its numerator and denominator: the share of `outdated` labels among
    the rows that have outdated references (a None label, a row not measured, is left out); NaN
    when no such row."""
    pairs = [label for label, has in zip(labels, has_outdated, strict=True) if has and label is not None]
    outdated_among = sum(label == OUTDATED for label in pairs)
    return {
        CURRENT: sum(label == CURRENT for label in labels),
        OUTDATED: sum(label == OUTDATED for label in labels),
        OTHER: sum(label == OTHER for label in labels),
        "with_outdated": len(pairs),
        "outdated_among": outdated_among,
        "outdated_rate": outdated_among / len(pairs) if pairs else float("nan"),
    }

