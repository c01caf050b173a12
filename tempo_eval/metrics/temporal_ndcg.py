"""Temporal NDCG@K: ranking quality with graded (temporal) relevance, in three modes.

    NDCG@K = DCG@K / IDCG@K,   DCG@K = sum_{i=1..K} gain(rel_i) / log2(i + 1)

- ``gold`` (`retrieved_ids` or `retrieved_scores`, plus `gold_ids`): a list of gold ids is binary
  relevance, a dict id -> grade graded relevance. Linear gain (the grade, as trec_eval) by default.
  IDCG is the DCG of every gold relevance sorted descending, cut at K. Retrieved ids are
  deduplicated (the first occurrence counts); `retrieved_scores` (id -> score, a run file's row)
  are ranked as trec_eval ranks them (score descending, ties by id descending, scores compared in
  float32). The value equals trec_eval's `ndcg_cut.K`. No relevant gold document -> NaN
  (`no_relevant_documents`; trec_eval reports 0.0 there, we say "not measurable"). An empty
  retrieved list with relevant gold documents -> 0.0 (nothing relevant was retrieved).
- ``focus_time`` (`qft`, `dfts`): rel_i = 4 × Jaccard(QFT, DFT_i), linear gain by default
  (`gain="exponential"` gives TempoEval-compatible numbers). IDCG is the DCG of the same
  documents sorted by rel, or of `candidate_pool` (a list of DFTs that must include every retrieved
  DFT) when given. Empty QFT -> NaN (`empty_query_time`); no relevant candidate -> 0.0. Given
  `query` / documents as texts instead, the focus times are extracted from them
  (`tempo_eval.core.extract`, relative expressions resolved against `reference_date`).
- ``llm`` (`query`, documents): the judge grades each document 0-4 with `LLM_PROMPT` (the seed's
  prompt); each grade is validated as an integer in [0, 4] (`RelevanceGrade`, in
  `tempo_eval.llm.reply_schemas`). One failed grade makes the query NaN (`judge_error`), never a
  silent 0. IDCG is the ideal ordering of the same graded documents; the judge's grades are our
  relevances, nothing it reports is used as a score.

The ideal ranking in focus-time and LLM modes uses every document passed, not only the first K
(so NDCG@j on the curve equals the metric computed with k=j). TempoEval scores `dfts[:k]` only;
pass the first K documents to reproduce its numbers. Every document passed is graded in LLM mode.

Documents as texts are `retrieved_docs` or `contexts` (the canonical dataset column; same
meaning, pass one of them). With `mode="auto"` the inputs decide: gold ids -> gold; qft/dfts ->
focus_time; query and documents -> llm when `llm` is set, else focus times extracted from the
texts. Inputs of two modes at once, or an incomplete set, raise ValueError. On a dataset (the
runner, `inputs_from_row`) the dataset's columns decide, once for every row: retrieved_ids and
gold_ids columns -> gold, else query and contexts; a row with an empty cell for that mode is NaN
(`missing_input`), never scored in another mode.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal

from tempo_eval.common import packed_details
from tempo_eval.common.values import require_text_list
from tempo_eval.core import focus_memo  # loaded with tempo_eval.core: imported here, not per row
from tempo_eval.core.extract import parse_reference_date
from tempo_eval.core.focus import FocusTime, years_of
from tempo_eval.metrics.base import (
    NAN,
    Metric,
    MetricResult,
    MissingInput,
    not_measurable,
    require_k,
    require_text,
    row_values,
)
from tempo_eval.metrics.ndcg import (
    GAIN_KINDS,
    dedupe,
    discount,
    discounted_gains,
    gain_list,
    gold_relevance,
    ndcg_curve_totals,
    rank_by_trec_eval,
)

logger = logging.getLogger(__name__)

MODES = ("auto", "gold", "focus_time", "llm")
#: the curve in `details` runs to k, but past this many ranks only to where it turns flat for good
MAX_CURVE_RANKS = 1000

#: the seed's grading prompt, verbatim; placeholders {query} and {document} (literal braces doubled)
LLM_PROMPT = """## Task
Rate the temporal relevance of this document to the query on a scale of 0-4.

## Query
{query}

## Document
{document}

## Grading Scale (G-EVAL style)
- 4: Perfect - Contains exact temporal information needed to fully answer the query
- 3: Highly Relevant - Contains most temporal information, minor gaps
- 2: Partially Relevant - Contains some temporal context but incomplete
- 1: Marginally Relevant - Mentions related time periods but doesn't directly answer
- 0: Not Relevant - No useful temporal information for this query

## Output (JSON)
{{
    "relevance_score": 0 to 4,
    "reasoning": "brief explanation of temporal relevance"
}}
"""


_GOLD_INPUTS = frozenset({"retrieved_ids", "retrieved_scores", "gold_ids"})
_TEXT_INPUTS = frozenset({"query", "retrieved_docs", "contexts"})
_MODE_INPUTS = {
    "gold": _GOLD_INPUTS,
    "focus_time": frozenset({"qft", "dfts", "candidate_pool"}) | _TEXT_INPUTS,
    "llm": _TEXT_INPUTS,
}
#: accepted by every mode
_COMMON_INPUTS = frozenset({"k", "reference_date"})
#: the inputs a dataset row gives in each mode (`TemporalNDCG.inputs_from_row`)
_ROW_INPUTS = {mode: inputs | _COMMON_INPUTS for mode, inputs in _MODE_INPUTS.items()}
#: `_ameasure`'s inputs that choose the mode, in its order (`input_names` less the settings)
_MEASURE_INPUTS = ("retrieved_ids", "gold_ids", "retrieved_scores", "qft", "dfts", "query", "retrieved_docs",
                   "contexts", "candidate_pool")
#: the mode `_checked_mode` gave for (mode setting, llm set, which inputs were given)
_CHECKED_MODES: dict[tuple[str, bool, tuple[bool, ...]], str] = {}
#: the canonical inputs a row gives, by (input_names, mode) (`TemporalNDCG.inputs_from_row`)
_ROW_NAMES: dict[tuple[tuple[str, ...], str], tuple[str, ...]] = {}
#: the dataset columns each kind of mode reads (`TemporalNDCG.required_columns`)
_GOLD_COLUMNS = frozenset({"retrieved_ids", "gold_ids"})
_TEXT_COLUMNS = ("query", "contexts")
_TEXT_COLUMN_SET = frozenset(_TEXT_COLUMNS)


class TemporalNDCG(Metric):
    """Temporal NDCG@K in gold, focus-time or LLM mode (see the module docstring).

    Args:
        k: default cutoff; `compute(..., k=...)` overrides it. A positive int, else ValueError.
        mode: "auto" (choose from the inputs), "gold", "focus_time" or "llm".
        use_focus_time, use_llm: the seed's spellings of mode="focus_time" / mode="llm".
        gain: "linear" (default; None means linear) or "exponential" (2**rel - 1).
        llm: the judge for LLM mode (`tempo_eval.llm.provider.OpenAIProvider`, or anything with
            the same `ajudge(prompt, schema)`); may also be set later: `metric.llm = provider`.
        reference_date: resolves relative expressions when focus times are extracted from texts;
            `compute(..., reference_date=...)` overrides it.

    `measure(...).details` holds `mode`, `k`, `gain`, `curve` (NDCG@1..k from one pass; past the
    end of the list DCG stays flat, so the curve is flat when the ideal comes from the same
    documents and falls when more relevant gold documents exist; for k above MAX_CURVE_RANKS it
    stops where it turns flat for good, see `_curve`), `ranks` (the top k as
    {rank, doc, relevance, gain, discounted_gain}; `doc` is the id in gold mode, the 0-based list
    index otherwise; plus `score` when ranked by scores, `years` / `overlap` in focus-time mode,
    `grade` / `reasoning` in LLM mode), `dcg` and `idcg` at k; in LLM mode also `judge` and
    `documents` (every grade, or the error for a failed one).
    """

    name = "temporal_ndcg"
    input_names = (*_MEASURE_INPUTS, "k", "reference_date")

    def __init__(
        self,
        k: int = 10,
        *,
        mode: Literal["auto", "gold", "focus_time", "llm"] = "auto",
        use_focus_time: bool = False,
        use_llm: bool = False,
        gain: Literal["linear", "exponential"] | None = None,
        llm: Any = None,
        reference_date: Any = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if use_focus_time and use_llm:
            raise ValueError("use_focus_time and use_llm exclude each other: choose one mode")
        implied = "focus_time" if use_focus_time else "llm" if use_llm else None
        if implied is not None:
            if mode not in ("auto", implied):
                raise ValueError(f"mode={mode!r} contradicts use_{implied}=True")
            mode = implied
        gain = "linear" if gain is None else gain
        if gain not in GAIN_KINDS:
            raise ValueError(f"gain must be one of {', '.join(GAIN_KINDS)} or None; got {gain!r}")
        self.k = require_k(k)
        self.mode = mode
        self.gain = gain
        self.llm = llm
        self.reference_date = reference_date

    # -- choosing the mode --------------------------------------------------------------------

    def resolved_mode(self, given: set[str] | frozenset[str]) -> str:
        """The mode for a call whose non-None inputs are `given` (ValueError when ambiguous)."""
        if self.mode != "auto":
            return self.mode
        given = set(given) - _COMMON_INPUTS
        gold, other = given & _GOLD_INPUTS, given - _GOLD_INPUTS
        if gold and other:
            raise ValueError(
                f"ambiguous inputs: {', '.join(sorted(gold))} are gold-mode inputs and "
                f"{', '.join(sorted(other))} belong to the focus-time / LLM modes; pass one set "
                "or choose with mode=..."
            )
        if gold:
            return "gold"
        if given & {"qft", "dfts", "candidate_pool"}:
            return "focus_time"
        if given:
            return "llm" if self.llm is not None else "focus_time"
        raise ValueError(
            "no inputs: pass retrieved_ids (or retrieved_scores) and gold_ids (gold mode), "
            "qft and dfts (focus-time mode), or query and retrieved_docs / contexts "
            "(LLM judge when llm is set, else focus times extracted from the texts)"
        )

    def row_mode(self, columns: Collection[str]) -> str:
        """The mode for the rows of a dataset with these columns: the set mode, or in auto mode
        gold when the dataset has retrieved_ids and gold_ids columns, else LLM when `llm` is set,
        else focus times extracted from query and contexts. Decided by the columns, never by a
        row's values, so every row of a dataset is scored the same way."""
        if self.mode != "auto":
            return self.mode
        if "retrieved_ids" in columns and "gold_ids" in columns:  # `_GOLD_COLUMNS`, without a set a row
            return "gold"
        return "llm" if self.llm is not None else "focus_time"

    def batchable(self, columns: Collection[str]) -> bool:
        """Gold and focus-time modes are offline and cheap: rows are scored a batch at a time;
        LLM mode goes row by row, concurrently."""
        return self.row_mode(columns) in ("gold", "focus_time")

    def required_columns(self, columns: Collection[str]) -> list[str]:
        """retrieved_ids and gold_ids in gold mode, query and contexts otherwise (`row_mode`).

        In auto mode without either pair, the pair the dataset has more of is named (so the error
        says which column to add)."""
        mode = self.row_mode(columns)
        present = set(columns)
        if mode == "gold" or (
            self.mode == "auto" and len(present & _GOLD_COLUMNS) > len(present & _TEXT_COLUMN_SET)
        ):
            return sorted(_GOLD_COLUMNS)
        return list(_TEXT_COLUMNS)

    def inputs_from_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A dataset row's inputs for the dataset's mode (`row_mode` of the row's keys, which are
        the dataset's columns); the other columns are left out, so a full row is never
        "ambiguous". A row without a value for its mode raises `MissingInput` naming the column
        (the runner scores it NaN "missing_input"), whatever the other columns hold."""
        return self._columns_reader(tuple(row))(row)

    def _columns_reader(self, columns: Sequence[str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        """`inputs_from_row` for rows whose keys are `columns`, the mode, the columns required
        and the inputs read worked out once (`Metric.row_reader`)."""
        mode, required, check = self.row_mode(columns), self.required_columns(columns), self._check_row
        names = _row_names(self, mode)
        why = (" (gold mode: the dataset has retrieved_ids and gold_ids columns)"
               if mode == "gold" and self.mode == "auto" else f" ({mode} mode)")

        def read(row: Mapping[str, Any]) -> dict[str, Any]:
            try:
                check(row, required)
            except MissingInput as missing:
                raise MissingInput(missing.column, f"This row has no {missing.column!r} value, "
                                   f"which {self.name} needs{why}.") from None
            return row_values(row, names)

        return read

    # -- measuring ----------------------------------------------------------------------------

    async def _ameasure(
        self,
        retrieved_ids: Sequence[str] | None = None,
        gold_ids: Sequence[str] | Mapping[str, int] | None = None,
        retrieved_scores: Mapping[str, float] | None = None,
        qft: FocusTime | set[int] | None = None,
        dfts: Sequence[FocusTime | set[int]] | None = None,
        query: str | None = None,
        retrieved_docs: Sequence[str] | None = None,
        contexts: Sequence[str] | None = None,
        candidate_pool: Sequence[FocusTime | set[int]] | None = None,
        k: int | None = None,
        reference_date: Any = None,
    ) -> MetricResult:
        k = require_k(self.k if k is None else k)
        given = (
            retrieved_ids is not None, gold_ids is not None, retrieved_scores is not None, qft is not None,
            dfts is not None, query is not None, retrieved_docs is not None, contexts is not None,
            candidate_pool is not None,
        )
        # the mode of these inputs, checked once per kind of call (rows of a dataset give the same)
        key = (self.mode, self.llm is not None, given)
        mode = _CHECKED_MODES.get(key)
        if mode is None:
            mode = _checked_mode(self, {name for name, present in zip(_MEASURE_INPUTS, given, strict=True) if present})
            _CHECKED_MODES[key] = mode
        if retrieved_docs is not None and contexts is not None:
            raise ValueError("pass retrieved_docs or contexts (the same input), not both")
        docs_name = "contexts" if contexts is not None else "retrieved_docs"
        docs = contexts if contexts is not None else retrieved_docs

        if mode == "gold":
            return self._gold(retrieved_ids, retrieved_scores, gold_ids, k)
        if mode == "llm":
            return await self._llm(query, docs, docs_name, k)
        reference = self.reference_date if reference_date is None else reference_date
        return self._focus_time(qft, dfts, query, docs, docs_name, candidate_pool, k, reference)

    # -- gold mode ----------------------------------------------------------------------------

    def _gold(self, retrieved_ids: Sequence[str] | None,
              retrieved_scores: Mapping[str, float] | None, gold_ids: Any, k: int) -> MetricResult:
        if gold_ids is None:
            raise ValueError("gold mode needs gold_ids (a list of relevant ids or a dict id -> grade)")
        if retrieved_ids is not None and retrieved_scores is not None:
            raise ValueError("pass retrieved_ids (a ranked list) or retrieved_scores (id -> score), not both")
        if retrieved_ids is None and retrieved_scores is None:
            raise ValueError("gold mode needs retrieved_ids (a ranked list) or retrieved_scores (id -> score)")
        if retrieved_scores is not None:
            ranking = rank_by_trec_eval(retrieved_scores)
            duplicates = 0
        else:
            ids = require_text_list(retrieved_ids, "retrieved_ids")
            ranking = dedupe(ids)
            duplicates = len(ids) - len(ranking)
        relevance = gold_relevance(gold_ids)
        relevances = [relevance.get(doc, 0) for doc in ranking]
        gains = gain_list(relevances, self.gain)
        ideal = gain_list(relevance.values(), self.gain)
        n_relevant = sum(1 for rel in relevance.values() if rel > 0)
        found = sum(1 for rel in relevances[:k] if rel > 0)
        details = _details("gold", k, ranking, relevances, gains, ideal, self.gain)
        details.update(
            graded=isinstance(gold_ids, Mapping),
            ranked_by="retrieved_scores" if retrieved_scores is not None else "retrieved_ids",
            retrieved=len(ranking),
            duplicates_removed=duplicates,
            relevant=n_relevant,
        )
        if retrieved_scores is not None:
            for entry in details["ranks"]:
                entry["score"] = retrieved_scores[entry["doc"]]
        if n_relevant == 0:
            return not_measurable(
                self.name,
                "no_relevant_documents",
                "The gold judgements hold no relevant document, so no ranking can score: NDCG is "
                "not measurable (trec_eval reports 0.0 here).",
                **details,
            )
        score = details["curve"][-1]
        reason = (
            f"NDCG@{k} = {score:.3f}: {found} of the top {min(k, len(ranking))} retrieved "
            f"documents are relevant ({n_relevant} relevant in the gold set); DCG {details['dcg']:.3f} "
            f"of an ideal {details['idcg']:.3f}."
        )
        if not ranking:
            reason = f"NDCG@{k} = 0.000: nothing was retrieved, and {n_relevant} relevant documents exist."
        return MetricResult(self.name, score, reason, None, details)

    # -- focus-time mode ----------------------------------------------------------------------

    def _focus_time(self, qft: Any, dfts: Any, query: str | None, docs: Any, docs_name: str,
                    candidate_pool: Any, k: int, reference: Any) -> MetricResult:
        if qft is not None and query is not None:
            raise ValueError("pass qft or query (to extract the query focus time from), not both")
        if dfts is not None and docs is not None:
            raise ValueError(f"pass dfts or {docs_name} (to extract document focus times from), not both")
        if qft is None and query is None:
            raise ValueError("focus_time mode needs qft (or query, to extract it from)")
        if dfts is None and docs is None:
            raise ValueError("focus_time mode needs dfts (or retrieved_docs / contexts, to extract them from)")

        reference_date: list[str | None] = []  # the key only when focus times were extracted
        if query is not None or docs is not None:
            ref = parse_reference_date(reference)
            reference_date.append(ref.isoformat() if ref else None)
            if query is not None:
                qft = focus_memo.extract_qft(require_text(query, "query", allow_empty=True), reference_date=ref)
            if docs is not None:
                dfts = focus_memo.extract_dfts(require_text_list(docs, docs_name), reference_date=ref)

        query_years = years_of(qft, "qft")  # read only: the memo shares focus times between rows
        doc_years = _year_sets(dfts, "dfts")
        pool_years = None if candidate_pool is None else _year_sets(candidate_pool, "candidate_pool")
        if pool_years is not None:
            _check_pool(doc_years, pool_years)

        relevances = _relevances(query_years, doc_years)
        # the linear gain of 4 x Jaccard (never negative) is the relevance itself: `gain_list` would copy it
        gains = relevances if self.gain == "linear" else gain_list(relevances, self.gain)
        ideal = gains if pool_years is None else gain_list(_relevances(query_years, pool_years), self.gain)
        curve, curve_length, dcg, idcg = _curve(k, gains, ideal)
        ranked = min(len(curve), len(doc_years))  # the ranks of the details: the curve's depth
        if query_years and idcg == 0:
            curve = [0.0]
        while len(curve) > 1 and curve[-2] == curve[-1]:  # kept to where it turns flat (fewer floats to write)
            curve.pop()
        ranked_relevances = relevances[:ranked]
        details = packed_details.details("ndcg_ft/1", [
            reference_date, int(query is not None), None if docs is None else docs_name,
            k, self.gain, curve, curve_length, ranked_relevances,
            None if gains is relevances or gains[:ranked] == ranked_relevances else gains[:ranked],
            discounted_gains(gains, ranked),
            list(map(sorted, doc_years[:ranked])),
            dcg, idcg, packed_details.year_runs(sorted(query_years)), int(pool_years is not None), len(doc_years),
        ])

        if not query_years:
            return MetricResult(
                self.name,
                NAN,
                "The query has no focus time (no year, date or period), so temporal relevance is "
                "not defined.",
                "empty_query_time",
                details,
            )
        if idcg == 0:
            where = "candidate pool" if pool_years is not None else "retrieved list"
            return MetricResult(
                self.name,
                0.0,
                f"No document in the {where} shares a year with the query "
                f"({_years_text(query_years)}): NDCG@{k} = 0.",
                None,
                details,
            )
        score = curve[-1]
        top = relevances[:k]
        overlapping = len(top) - top.count(0.0)  # relevances above 0 (none is below)
        reason = (
            f"NDCG@{k} = {score:.3f}: {overlapping} of the top {min(k, len(doc_years))} documents "
            f"share years with the query ({_years_text(query_years)}); DCG {dcg:.3f} of an "
            f"ideal {idcg:.3f}."
        )
        return MetricResult(self.name, score, reason, None, details)

    # -- llm mode -----------------------------------------------------------------------------

    async def _llm(self, query: str | None, docs: Any, docs_name: str, k: int) -> MetricResult:
        judge = self.llm
        if judge is None:
            raise ValueError("llm mode needs a judge: pass llm=... or set metric.llm = OpenAIProvider(...)")
        if not callable(getattr(judge, "ajudge", None)):
            raise TypeError(
                "metric.llm must have an async ajudge(prompt, schema) method "
                f"(tempo_eval.llm.provider.OpenAIProvider), got {type(judge).__name__}"
            )
        if query is None or docs is None:
            raise ValueError("llm mode needs query and retrieved_docs (or contexts)")
        query = require_text(query, "query")
        texts = require_text_list(docs, docs_name)
        from tempo_eval.llm.reply_schemas import RelevanceGrade  # pydantic: only where a judge asks

        replies = await asyncio.gather(  # the provider bounds how many requests are in flight
            *(judge.ajudge(LLM_PROMPT.format(query=query, document=text), RelevanceGrade) for text in texts)
        )
        documents: list[dict[str, Any]] = [
            {"doc": i, "grade": reply.data.relevance_score, "reasoning": reply.data.reasoning}
            if reply.ok else {"doc": i, "grade": None, "error": reply.error, "raw": reply.raw}
            for i, reply in enumerate(replies)
        ]
        errors = [{"doc": entry["doc"], "error": entry["error"]} for entry in documents
                  if "error" in entry]
        judge_id = getattr(judge, "model_id", None)

        if errors:
            first = errors[0]
            logger.debug("temporal_ndcg: %d judge failures for query %r", len(errors), query[:80])
            return not_measurable(
                self.name,
                "judge_error",
                f"The judge failed to grade {len(errors)} of {len(texts)} documents (document "
                f"{first['doc']}: {first['error']}); without every grade NDCG is not known.",
                mode="llm",
                k=k,
                judge=judge_id,
                documents=documents,
                errors=errors,
            )

        relevances = [entry["grade"] for entry in documents]
        gains = gain_list(relevances, self.gain)
        details = _details("llm", k, range(len(texts)), relevances, gains, gains, self.gain)
        details.update(judge=judge_id, documents=documents, retrieved=len(texts))
        for entry, document in zip(details["ranks"], documents, strict=False):
            entry["grade"] = document["grade"]
            entry["reasoning"] = document["reasoning"]
        if details["idcg"] == 0:
            details["curve"] = [0.0] * len(details["curve"])
            reason = (
                "No documents were retrieved: NDCG@{k} = 0."
                if not texts
                else f"The judge graded none of the {len(texts)} documents as relevant: NDCG@{k} = 0."
            ).format(k=k)
            return MetricResult(self.name, 0.0, reason, None, details)
        score = details["curve"][-1]
        shown = ", ".join(str(rel) for rel in relevances[:k])
        reason = (
            f"NDCG@{k} = {score:.3f}: judge grades in rank order {shown}; DCG {details['dcg']:.3f} "
            f"of an ideal {details['idcg']:.3f}."
        )
        return MetricResult(self.name, score, reason, None, details)


# ---- helpers ---------------------------------------------------------------------------------

def _row_names(metric: TemporalNDCG, mode: str) -> tuple[str, ...]:
    """The canonical inputs a row gives in `mode`, in `input_names` order."""
    key = (metric.input_names, mode)
    names = _ROW_NAMES.get(key)
    if names is None:
        names = _ROW_NAMES[key] = tuple(n for n in metric._canonical_inputs() if n in _ROW_INPUTS[mode])
    return names


def _checked_mode(metric: TemporalNDCG, given: set[str]) -> str:
    """`metric.resolved_mode(given)`; ValueError when that mode does not use every input given."""
    mode = metric.resolved_mode(given)
    unused = given - _MODE_INPUTS[mode]
    if unused:
        raise ValueError(f"{mode} mode does not use {', '.join(sorted(unused))}")
    return mode


def _details(mode: str, k: int, docs: Sequence[Any], relevances: Sequence[float],
             gains: Sequence[float], ideal_gains: Sequence[float], gain_kind: str,
             ) -> dict[str, Any]:
    """The per-rank table and the curve of the gold and LLM modes (focus-time mode packs the same
    values: layout "ndcg_ft/1" of `tempo_eval.common.packed_details`). `docs` are ids or list indices."""
    prefix, length, dcg, idcg = _curve(k, gains, ideal_gains)
    depth = len(prefix)
    ranked = zip(range(1, depth + 1), map(discount, range(1, depth + 1)), docs, relevances, gains, strict=False)
    ranks = [
        {"rank": rank, "doc": doc, "relevance": relevance, "gain": doc_gain,
         "discounted_gain": doc_gain * rank_discount}
        for rank, rank_discount, doc, relevance, doc_gain in ranked
    ]
    curve = prefix + prefix[-1:] * (length - depth)
    return {"mode": mode, "k": k, "gain": gain_kind, "curve": curve, "ranks": ranks, "dcg": dcg,
            "idcg": idcg}


def _curve(k: int, gains: Sequence[float], ideal_gains: Sequence[float]) -> tuple[list[float], int, float, float]:
    """NDCG@1..depth, the curve's length in the details, DCG and IDCG at k: the curve is computed
    to the depth of the documents present only (it is flat past them) and stored flat up to k, or
    up to MAX_CURVE_RANKS when k is larger; its last value is NDCG@k either way."""
    depth = min(k, max(len(gains), len(ideal_gains), 1))  # k is checked by the callers
    if ideal_gains is gains and not any(gains):  # no gain at all (half the rows, on the bench): NaN over 0
        return [NAN] * depth, min(k, max(depth, MAX_CURVE_RANKS)), 0.0, 0.0
    curve, dcg, idcg = ndcg_curve_totals(gains, sorted(ideal_gains, reverse=True), depth)
    return curve, min(k, max(depth, MAX_CURVE_RANKS)), dcg, idcg


def _year_sets(value: Any, name: str) -> list[set[int] | frozenset[int]]:
    """A list of focus times (FocusTime or sets of years) as sets, to read only (`years_of`); a
    set of sets is refused."""
    if isinstance(value, (set, frozenset, FocusTime)) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{name} must be a list with one focus time per document (order matters), "
            f"got {type(value).__name__}"
        )
    return [item.years if type(item) is FocusTime else years_of(item, f"{name}[{i}]") for i, item in enumerate(value)]


def _relevances(query_years: set[int] | frozenset[int], doc_years: Sequence[set[int] | frozenset[int]]) -> list[float]:
    """`year_set_relevance` of each document (4 × Jaccard, written out: the same values). An empty
    QFT is reported as not measurable by the caller; 0 keeps the table well-formed."""
    if not query_years:
        return [0.0] * len(doc_years)
    n_query = len(query_years)
    # |Q ∪ D| = |Q| + |D| - |Q ∩ D|: the same integers, without building the union
    return [4.0 * (shared / (n_query + len(years) - shared))
            for years in doc_years for shared in (len(query_years & years),)]


def _check_pool(doc_years: list[set[int]], pool_years: list[set[int]]) -> None:
    """The pool must hold every retrieved focus time (as a multiset), or IDCG is no upper bound."""
    missing = Counter(frozenset(y) for y in doc_years) - Counter(frozenset(y) for y in pool_years)
    if missing:
        index = next(i for i, years in enumerate(doc_years) if frozenset(years) in missing)
        raise ValueError(
            "candidate_pool must include the focus time of every retrieved document: "
            f"dfts[{index}] = {_years_text(doc_years[index])} is not in the pool (or is there "
            "fewer times than retrieved)"
        )


def _years_text(years: set[int]) -> str:
    ordered = sorted(years)
    if not ordered:
        return "no years"
    if len(ordered) > 6:
        return f"{len(ordered)} years, {ordered[0]}-{ordered[-1]}"
    return ", ".join(str(year) for year in ordered)
