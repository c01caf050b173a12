"""Future leak@k, Stale evidence@k, Median evidence age@k and Recency NDCG@k on dataset rows.

The as-of date is `reference_date` (when the question was asked); the publication dates are
`context_dates`, aligned with `retrieved_ids` (or with `contexts` when the row has no ids). The
math is `tempo_eval.metrics.asof`; these classes read one row, call it on a 1 x k matrix and
explain the number:

- `details["ranks"]`: every top-k document's rank, id (`doc`: the retrieved id, else the 0-based
  list index), `date` (as given, normalised: `2023-01-06`, `2023-01`, `2023`), `age` in days,
  and the flags `future`, `stale`, `undated`; Recency NDCG adds `relevance` and `gain`.
- Retrieved ids are deduplicated (the first occurrence, with its date, keeps its rank), as for
  gold Temporal NDCG.
- NaN with a reason code, never 0: `no_as_of` (no reference_date), `no_dates` (no top-k document
  with a known date; for median age, none that is not from the future), `no_gold` (Recency NDCG:
  no relevant document, or every relevant document published after the as-of date). Recency NDCG
  of a row that retrieved nothing but has relevant documents is 0, as NDCG's (and `compare`'s).
- `doc_dates` (an `IdDates`: `evaluate --doc-dates FILE`, the file `compare` reads): a retrieved
  document without a date in the row takes the file's, and Recency NDCG dates the relevant
  documents the row did not retrieve from it (the ideal ordering), as `compare` does.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from tempo_eval.common.values import is_na
from tempo_eval.core.pubdates import IdDates, PubDate, parse_date
from tempo_eval.metrics import asof
from tempo_eval.metrics.base import (
    Metric,
    MetricResult,
    canonical_columns,
    not_measurable,
    require_k,
)
from tempo_eval.metrics.evidence_rows import top_documents
from tempo_eval.metrics.ndcg import gold_relevance


class _Evidence:
    """A row's documents in rank order: ids, dates and ages (the as-of date may be unknown)."""

    def __init__(self, retrieved_ids: Sequence[str] | None, contexts: Sequence[str] | None,
                 context_dates: Sequence[Any] | None, reference_date: Any,
                 doc_dates: IdDates | None = None) -> None:
        documents = retrieved_ids if retrieved_ids is not None else contexts
        if context_dates is None:
            context_dates = [None] * (0 if documents is None else len(documents))
        top = top_documents(retrieved_ids, contexts, list(context_dates), sys.maxsize)
        if top is None:
            name = "retrieved_ids" if retrieved_ids is not None else "contexts"
            noun = "ids" if retrieved_ids is not None else "documents"
            raise ValueError(
                f"context_dates has {len(context_dates)} dates but {name} has {len(documents)} "
                f"{noun}: the lists must be aligned (null where a date is unknown)"
            )
        self.docs: list[Any] = top[0]
        self.dates: list[PubDate | None] = [
            parse_date(value, column="context_dates") if not isinstance(value, PubDate) else value
            for value in top[1]
        ]
        if doc_dates is not None and retrieved_ids is not None and None in self.dates:
            from_file = doc_dates.dates_of(self.docs)
            self.dates = [own if own is not None else filed for own, filed in zip(self.dates, from_file, strict=True)]
        as_of = parse_date(reference_date, column="reference_date")
        self.as_of: PubDate | None = as_of
        days = np.array([math.nan if d is None else d.day for d in self.dates], dtype=np.float64)
        self.ages = asof.evidence_ages(math.nan if as_of is None else as_of.day, days.reshape(1, -1))[0]

    def top(self, k: int) -> np.ndarray:
        return self.ages[:k].reshape(1, -1)

    def ranks(self, k: int, max_age: float | None = None) -> list[dict[str, Any]]:
        rows = []
        for index, (doc, when, age) in enumerate(zip(self.docs[:k], self.dates[:k], self.ages[:k], strict=True)):
            known = not math.isnan(age)
            rows.append({
                "rank": index + 1,
                "doc": doc,
                "date": None if when is None else when.label,
                "age": int(age) if known else None,
                "future": bool(known and age < 0),
                "stale": bool(known and max_age is not None and age > max_age),
                "undated": when is None,
            })
        return rows


class _AsOfMetric(Metric):
    """Settings and row reading shared by the four as-of ranking metrics."""

    input_names: ClassVar[tuple[str, ...]] = (
        "retrieved_ids", "contexts", "context_dates", "reference_date", "k",
    )

    def __init__(self, k: int = 10, *, doc_dates: IdDates | None = None) -> None:
        self.k = require_k(k)
        self.doc_dates = doc_dates

    def required_columns(self, columns: Collection[str]) -> list[str]:
        """The dataset needs `context_dates` (or `retrieved_ids` with a doc-dates file); a row
        whose cell is empty is NaN `no_dates`, a row without `reference_date` NaN `no_as_of`."""
        return ["retrieved_ids"] if self.doc_dates is not None else ["context_dates"]

    def inputs_from_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        canonical = canonical_columns()
        inputs = {
            name: row[name]
            for name in self.input_names
            if name in canonical and name in row and not is_na(row[name])
        }
        if "retrieved_ids" in inputs:
            inputs.pop("contexts", None)
        return inputs

    def _read(self, retrieved_ids: Any, contexts: Any, context_dates: Any, reference_date: Any,
              k: int | None, max_age: float | None = None,
              ) -> tuple[_Evidence, int, np.ndarray, dict[str, Any]]:
        """A row's evidence, the cutoff, the top k's ages (1 x k) and every metric's details."""
        k = require_k(self.k if k is None else k)
        evidence = _Evidence(retrieved_ids, contexts, context_dates, reference_date, self.doc_dates)
        top = evidence.top(k)
        return evidence, k, top, {
            "k": k,
            "as_of": None if evidence.as_of is None else evidence.as_of.label,
            "ranks": evidence.ranks(k, max_age),
            "dated": int(asof.dated_counts(top)[0]),
        }

    def _not_measurable(self, code: str, k: int, details: dict[str, Any]) -> MetricResult:
        reasons = {
            asof.NO_AS_OF: "The row has no as-of date (reference_date), so no document can be "
                           "placed before or after it.",
            asof.NO_DATES: f"None of the top {k} documents has a known publication date.",
            asof.NO_GOLD: "The row has no relevant document (gold_ids), so no ranking can score.",
        }
        return not_measurable(self.name, code, reasons[code], **details)


class FutureLeak(_AsOfMetric):
    """Future leak@k: share of the top-k documents with a known date published after the as-of
    date. Lower is better. An interval date (a year, a month) is from the future only when its
    first day is after the as-of date."""

    name = "future_leak"
    direction = "lower"

    async def _ameasure(self, retrieved_ids: Any = None, contexts: Any = None, context_dates: Any = None,
                        reference_date: Any = None, k: int | None = None) -> MetricResult:
        evidence, k, top, details = self._read(retrieved_ids, contexts, context_dates,
                                               reference_date, k)
        code = _code(evidence, top)
        if code:
            return self._not_measurable(code, k, details)
        score = float(asof.future_leak(top)[0])
        future = sum(r["future"] for r in details["ranks"])
        details["future"] = future
        reason = (f"Future leak@{k} = {score:.3f}: {future} of the {details['dated']} dated documents "
                  f"in the top {k} were published after the as-of date {details['as_of']}.")
        return MetricResult(self.name, score, reason, None, details)


class StaleEvidence(_AsOfMetric):
    """Stale evidence@k: share of the top-k documents with a known date older than `max_age`
    days at the as-of date (age > max_age). Lower is better."""

    name = "stale_evidence"
    direction = "lower"

    def __init__(self, k: int = 10, *, max_age: float = asof.DEFAULT_MAX_AGE,
                 doc_dates: IdDates | None = None) -> None:
        super().__init__(k, doc_dates=doc_dates)
        self.max_age = asof.require_days(max_age, "max_age", allow_zero=True)

    async def _ameasure(self, retrieved_ids: Any = None, contexts: Any = None, context_dates: Any = None,
                        reference_date: Any = None, k: int | None = None) -> MetricResult:
        evidence, k, top, details = self._read(retrieved_ids, contexts, context_dates,
                                               reference_date, k, self.max_age)
        details["max_age"] = self.max_age
        code = _code(evidence, top)
        if code:
            return self._not_measurable(code, k, details)
        score = float(asof.stale_evidence(top, self.max_age)[0])
        stale = sum(r["stale"] for r in details["ranks"])
        details["stale"] = stale
        reason = (f"Stale evidence@{k} = {score:.3f}: {stale} of the {details['dated']} dated documents "
                  f"in the top {k} were older than {self.max_age:g} days on {details['as_of']}.")
        return MetricResult(self.name, score, reason, None, details)


class MedianEvidenceAge(_AsOfMetric):
    """Median evidence age@k, in days: the median age of the top-k documents with a known date
    that are not from the future (age >= 0). Not a share: the score is a number of days."""

    name = "median_evidence_age"
    direction = "none"  # an age: neither older nor newer evidence is better in itself
    score_range = (0.0, None)
    unit = "days"

    async def _ameasure(self, retrieved_ids: Any = None, contexts: Any = None, context_dates: Any = None,
                        reference_date: Any = None, k: int | None = None) -> MetricResult:
        evidence, k, top, details = self._read(retrieved_ids, contexts, context_dates,
                                               reference_date, k)
        code = _code(evidence, top)
        if code:
            return self._not_measurable(code, k, details)
        score = float(asof.median_evidence_age(top)[0])
        past = sum(1 for r in details["ranks"] if r["age"] is not None and r["age"] >= 0)
        if math.isnan(score):
            return not_measurable(
                self.name, asof.NO_DATES,
                f"Every dated document in the top {k} was published after the as-of date "
                f"{details['as_of']}: no evidence age to take a median of.", **details,
            )
        reason = (f"Median evidence age@{k} = {score:g} days over the {past} dated documents in the "
                  f"top {k} published on or before {details['as_of']}.")
        return MetricResult(self.name, score, reason, None, details)


class RecencyNDCG(_AsOfMetric):
    """Recency NDCG@k: gold NDCG whose gains decay with the document's age, halving every
    `half_life` days: g_i = rel_i * 2^(-age_i / half_life); 0 for a document from the future;
    rel_i for an undated one. IDCG is the ideal ordering of every relevant gold document with its
    own gain (its date from any retrieved copy, else from `doc_dates`; undiscounted when unknown).
    A row that retrieved nothing scores 0 (no gain; NDCG's rule), not `no_dates`."""

    name = "recency_ndcg"
    input_names = _AsOfMetric.input_names + ("gold_ids",)

    def __init__(self, k: int = 10, *, half_life: float = asof.DEFAULT_HALF_LIFE,
                 doc_dates: IdDates | None = None) -> None:
        super().__init__(k, doc_dates=doc_dates)
        self.half_life = asof.require_days(half_life, "half_life")

    def required_columns(self, columns: Collection[str]) -> list[str]:
        """context_dates (unless a doc-dates file dates the documents) and retrieved_ids
        (relevance is by id); a row without gold_ids is NaN `no_gold`."""
        return ["retrieved_ids"] if self.doc_dates is not None else ["retrieved_ids", "context_dates"]

    async def _ameasure(self, retrieved_ids: Any = None, contexts: Any = None, context_dates: Any = None,
                        reference_date: Any = None, k: int | None = None, gold_ids: Any = None) -> MetricResult:
        if retrieved_ids is None:
            raise ValueError("recency_ndcg needs retrieved_ids: relevance comes from the gold ids")
        evidence, k, top, details = self._read(retrieved_ids, None, context_dates,
                                               reference_date, k)
        details["half_life"] = self.half_life
        relevance = gold_relevance(gold_ids) if gold_ids is not None else {}
        relevant = {doc: rel for doc, rel in relevance.items() if rel > 0}
        rel_top = np.array([[relevance.get(doc, 0) for doc in evidence.docs[:k]]], dtype=np.float64)
        gains = asof.recency_gains(rel_top, top, self.half_life)[0]
        for entry, rel, doc_gain in zip(details["ranks"], rel_top[0], gains, strict=True):
            entry["relevance"] = float(rel)
            entry["gain"] = float(doc_gain)
        age_of = dict(zip(evidence.docs, evidence.ages, strict=True))
        unseen = [doc for doc in relevant if doc not in age_of]
        if self.doc_dates is not None and unseen and evidence.as_of is not None:
            filed = self.doc_dates.dates_of(unseen)
            age_of |= {doc: _age(evidence.as_of, date) for doc, date in zip(unseen, filed, strict=True)}
        ideal_rel = np.array([list(relevant.values())], dtype=np.float64)
        ideal_ages = np.array([[age_of.get(doc, math.nan) for doc in relevant]], dtype=np.float64)
        details["relevant"] = len(relevant)
        code = _code(evidence, top, relevant=len(relevant), ranked=top.shape[1])
        if code:
            return self._not_measurable(code, k, details)
        found = float(asof.dcg(gains.reshape(1, -1))[0])
        ideal = float(asof.ideal_dcg(asof.recency_gains(ideal_rel, ideal_ages, self.half_life), k)[0])
        details["dcg"], details["idcg"] = found, ideal
        if ideal <= 0:
            old = "" if bool((ideal_ages < 0).all()) else (
                f", or is so old on it (thousands of half-lives of {self.half_life:g} days) that its gain is 0")
            return not_measurable(
                self.name, asof.NO_GOLD,
                f"Every relevant document was published after the as-of date {details['as_of']}{old}: "
                "no ranking can earn a gain.", **details,
            )
        score = found / ideal
        reason = (f"Recency NDCG@{k} = {score:.3f}: DCG {found:.3f} of an ideal {ideal:.3f}, gains "
                  f"halving every {self.half_life:g} days of age ({len(relevant)} relevant documents).")
        return MetricResult(self.name, score, reason, None, details)


def _code(evidence: _Evidence, top: np.ndarray, *, relevant: int | None = None,
          ranked: int | None = None) -> str | None:
    as_of = np.array([math.nan if evidence.as_of is None else 0.0])
    counts = None if relevant is None else np.array([relevant])
    return asof.reason_codes(as_of, top, relevant=counts, ranked=None if ranked is None else np.array([ranked]))[0]


def _age(as_of: PubDate, published: PubDate | None) -> float:
    """as_of - published in days (NaN when the document's date is unknown), as `asof.evidence_ages`."""
    return math.nan if published is None else float(asof.evidence_ages(as_of.day, np.array([[published.day]]))[0, 0])
