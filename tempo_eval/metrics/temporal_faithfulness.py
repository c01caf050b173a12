"""Temporal Faithfulness: are the answer's temporal claims grounded in the retrieved documents?

Three modes, one formula family:

- ``focus_time``: score = |AFT ∩ ∪ DFT_i| / |AFT|  (answer years found in any context).
- ``llm``: the judge extracts the answer's temporal claims and labels each SUPPORTED,
  PARTIALLY_SUPPORTED, NOT_SUPPORTED or CONTRADICTED; we compute
  score = (supported + 0.5 × partially_supported) / total. The judge's own score is never used.
- ``nli``: the temporal claims are the answer's sentences or clauses that carry a focus time; each is
  checked against the context sentences by a verifier (the local NLI model by default).
  Entailment -> SUPPORTED, contradiction -> CONTRADICTED, neutral -> PARTIALLY_SUPPORTED when all
  the claim's years occur in the contexts, else NOT_SUPPORTED. Same formula as ``llm``.

No temporal claim (empty AFT) -> NaN with reason ``no_temporal_claims``. An empty list of
contexts (``contexts: []``) -> NaN with reason ``missing_input``, in every mode: there is nothing to
ground the answer against, and a 0.0 would read as an unfaithful answer.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from tempo_eval.common import packed_details
from tempo_eval.common.values import require_text_list
from tempo_eval.core import focus_memo  # loaded with tempo_eval.core: imported here, not per row
from tempo_eval.core.decompose import TOO_MANY_CLAIMS, claim_limit, too_many_claims_reason
from tempo_eval.core.extract import parse_reference_date
from tempo_eval.core.focus import FocusTime, years_of
from tempo_eval.metrics.base import (
    MISSING_INPUT,
    NAN,
    Metric,
    MetricResult,
    not_measurable,
    require_text,
)
from tempo_eval.verify import default_nli_verifier
from tempo_eval.verify.base import ClaimVerdict, Verdict, failure_reason_code

MODES = ("auto", "focus_time", "llm", "nli")

LLM_PROMPT = """## Task
You check whether the temporal claims of an answer are grounded in the retrieved context.

1. Extract every temporal claim from the answer: each statement that gives a date, a year, a period,
   a duration or an order of events in time. Quote or closely paraphrase the answer.
2. Verify each claim against the context only (not your own knowledge) and label it:
   - SUPPORTED: the context states it.
   - PARTIALLY_SUPPORTED: the context supports part of it (e.g. the year but not the event, or one of two dates).
   - NOT_SUPPORTED: the context does not mention it.
   - CONTRADICTED: the context states something incompatible (e.g. a different year for the same event).
3. For each claim give the context sentence that decides it (empty if none) and a one-sentence reason.

If the answer makes no temporal claim, return an empty list.

## Context
{context}

## Answer
{answer}

## Output (JSON)
{{"claims": [{{"claim": "...", "verdict": "SUPPORTED | PARTIALLY_SUPPORTED | NOT_SUPPORTED | CONTRADICTED", "evidence": "...", "reason": "..."}}]}}
"""

_JUDGE_VERDICTS = ("SUPPORTED", "PARTIALLY_SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED")


# ---- the math: pure functions ---------------------------------------------------------------

def focus_time_faithfulness(aft: set[int], dfts: Sequence[set[int]]) -> float:
    """|AFT ∩ ∪ DFT_i| / |AFT|; NaN when AFT is empty."""
    if not aft:
        return NAN
    context_years = set().union(*dfts) if dfts else set()
    return len(aft & context_years) / len(aft)


def claim_faithfulness(supported: int, partially_supported: int, total: int) -> float:
    """(supported + 0.5 × partially_supported) / total; NaN when there is no claim."""
    if total == 0:
        return NAN
    return (supported + 0.5 * partially_supported) / total


def nli_temporal_verdict(verdict: Verdict, claim_years: set[int], context_years: set[int]) -> Verdict:
    """Map a three-way verdict to the temporal four-way one (see the module docstring)."""
    if verdict in (Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.ERROR):
        return verdict
    if claim_years and claim_years <= context_years:
        return Verdict.PARTIALLY_SUPPORTED
    return Verdict.NOT_SUPPORTED


# ---- the metric ------------------------------------------------------------------------------

class TemporalFaithfulness(Metric):
    """Temporal Faithfulness in focus-time, LLM or NLI mode.

    `mode="auto"` (default) uses the judge when `llm` is set (also when set later, as
    `metric.llm = provider`), the verifier when `verifier` is set, and focus times otherwise.
    Inputs: `answer` and `contexts` (alias `retrieved_docs`) as texts, or already extracted `aft`
    and `dfts` (FocusTime or sets of years) in focus-time mode. `reference_date` resolves relative
    expressions ("last year") and is recorded in the details.
    """

    name = "temporal_faithfulness"
    input_names = ("answer", "contexts", "retrieved_docs", "aft", "dfts", "reference_date")

    def __init__(
        self,
        mode: Literal["auto", "focus_time", "llm", "nli"] = "auto",
        *,
        llm: Any = None,
        verifier: Any = None,
        reference_date: Any = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        self.mode = mode
        self.llm = llm
        self.verifier = verifier
        self.reference_date = reference_date

    def resolved_mode(self) -> str:
        if self.mode != "auto":
            return self.mode
        if self.llm is not None:
            return "llm"
        if self.verifier is not None:
            return "nli"
        return "focus_time"

    def batchable(self, columns: Collection[str]) -> bool:
        """Focus-time mode is offline and cheap: rows are scored a batch at a time."""
        return self.resolved_mode() == "focus_time"

    async def _ameasure(
        self,
        answer: str | None = None,
        contexts: Sequence[str] | None = None,
        retrieved_docs: Sequence[str] | None = None,
        aft: FocusTime | set[int] | None = None,
        dfts: Sequence[FocusTime | set[int]] | None = None,
        reference_date: Any = None,
    ) -> MetricResult:
        if contexts is not None and retrieved_docs is not None:
            raise TypeError("pass either contexts or retrieved_docs, not both (they are the same input)")
        texts = contexts if contexts is not None else retrieved_docs
        name = "contexts" if contexts is not None else "retrieved_docs"
        if texts is not None:
            texts = require_text_list(texts, name)
        if answer is not None:
            answer = require_text(answer, "answer", allow_empty=True)
        reference = reference_date if reference_date is not None else self.reference_date

        mode = self.resolved_mode()
        documents, documents_name = (dfts, "dfts") if mode == "focus_time" and dfts is not None else (texts, name)
        if isinstance(documents, (list, tuple)) and not documents:
            # nothing to ground against: not measurable, never a 0.0 (the loader warns the same)
            return not_measurable(
                self.name,
                MISSING_INPUT,
                f"{documents_name} is an empty list: there is no retrieved context to check the "
                "answer's temporal claims against.",
                mode=mode,
            )
        if mode == "focus_time":
            return self._focus_time(answer, texts, aft, dfts, reference)
        if answer is None or texts is None:
            raise TypeError(f"{mode} mode needs answer and contexts (texts), got neither or one")
        if mode == "llm":
            return await self._llm(answer, texts, reference)
        return await self._nli(answer, texts, reference)

    # -- focus-time mode --
    def _focus_time(self, answer, texts, aft, dfts, reference) -> MetricResult:
        ref = parse_reference_date(reference)
        if aft is None:
            if answer is None:
                raise TypeError("focus_time mode needs aft or answer")
            aft = focus_memo.extract_aft(answer, reference_date=ref)
        if dfts is None:
            if texts is None:
                raise TypeError("focus_time mode needs dfts or contexts")
            dfts = focus_memo.extract_dfts(texts, reference_date=ref)
        elif isinstance(dfts, (set, frozenset, FocusTime)) or not isinstance(dfts, (list, tuple)):
            raise TypeError("dfts must be a list with one focus time per document, not a single set")

        # read only (`years_of`): the memo shares focus times between rows
        answer_years = years_of(aft, "aft")
        context_years = [d.years if type(d) is FocusTime else years_of(d, f"dfts[{i}]") for i, d in enumerate(dfts)]
        ordered = sorted(answer_years)
        answer_spans, context_spans, missing = _year_grounding(aft, dfts, ordered, context_years)
        details = packed_details.details("tf/1", [
            ref.isoformat() if ref else None, ordered, list(map(sorted, context_years)), answer_spans, context_spans,
        ])
        if not answer_years:
            return MetricResult(self.name, NAN, "The answer mentions no year or period.", "no_temporal_claims", details)
        grounded = len(ordered) - len(missing)
        # `focus_time_faithfulness(answer_years, context_years)`, counted in the grounding above
        score = grounded / len(answer_years)
        reason = f"{grounded} of {len(answer_years)} answer years appear in the contexts"
        if missing:
            reason += f"; not found: {', '.join(map(str, missing))}"
        return MetricResult(self.name, score, reason + ".", None, details)

    # -- llm mode --
    async def _llm(self, answer: str, texts: list[str], reference: Any) -> MetricResult:
        if self.llm is None:
            raise ValueError("llm mode needs a judge: TemporalFaithfulness(llm=OpenAIProvider(...))")
        if not hasattr(self.llm, "ajudge"):
            raise TypeError(f"llm must be a judge provider with ajudge(), got {type(self.llm).__name__}")
        ref = parse_reference_date(reference)
        context = "\n".join(f"[{i + 1}] {text}" for i, text in enumerate(texts))
        prompt = LLM_PROMPT.format(context=context, answer=answer)
        if ref is not None:
            # relative expressions ("last year") must be judged against the recorded date, not the model's "now"
            prompt += f"\nRead relative time expressions as of {ref.isoformat()}.\n"
        # pydantic is imported only where a judge is asked
        from tempo_eval.llm.reply_schemas import JudgedClaims

        reply = await self.llm.ajudge(prompt, JudgedClaims)
        base = {
            "mode": "llm",
            "judge": getattr(self.llm, "model_id", None),
            "reference_date": ref.isoformat() if ref else None,
        }
        if not reply.ok:
            return not_measurable(
                self.name, "judge_error", f"The judge failed: {reply.error}", **base, raw=reply.raw
            )
        limit = claim_limit(answer)
        if len(reply.data.claims) > limit:  # invented claims would inflate the score
            return not_measurable(
                self.name, TOO_MANY_CLAIMS,
                too_many_claims_reason(len(reply.data.claims), limit) + ".", **base,
            )
        verdicts = [
            ClaimVerdict(c.claim, Verdict(c.verdict), evidence=c.evidence or None, reason=c.reason or None)
            for c in reply.data.claims
        ]
        return self._claims_result(verdicts, base)

    # -- nli mode --
    async def _nli(self, answer: str, texts: list[str], reference: Any) -> MetricResult:
        from tempo_eval.core.extract import extract_aft, extract_dft
        from tempo_eval.core.text import split_claims

        # The default stays out of `self.verifier`: public attributes are the run's identity.
        verifier = self.verifier if self.verifier is not None else default_nli_verifier()
        ref = parse_reference_date(reference)
        claims = [c for c in split_claims(answer) if extract_aft(c, reference_date=ref).years]
        context_years = set().union(*(extract_dft(doc, reference_date=ref).years for doc in texts))
        base = {
            "mode": "nli",
            "verifier": f"{verifier.name}:{verifier.model_id}",
            "reference_date": ref.isoformat() if ref else None,
        }
        if not claims:
            return not_measurable(
                self.name, "no_temporal_claims", "The answer has no sentence with a year or period.", **base
            )
        raw = await verifier.averify(claims, texts)
        verdicts = []
        for claim, verdict in zip(claims, raw, strict=True):
            years = extract_aft(claim, reference_date=ref).years
            mapped = nli_temporal_verdict(verdict.verdict, years, context_years)
            # the verifier's confidence holds for its own label only
            confidence = verdict.confidence if mapped == verdict.verdict else None
            verdicts.append(replace(verdict, claim=claim, verdict=mapped, confidence=confidence))
        return self._claims_result(verdicts, base, verifier)

    def _claims_result(
        self, verdicts: list[ClaimVerdict], base: Mapping[str, Any], verifier: Any = None
    ) -> MetricResult:
        records = [v.to_record() for v in verdicts]
        details = {**base, "claims": records}
        failed = [v for v in verdicts if v.verdict is Verdict.ERROR]
        if failed:
            return not_measurable(
                self.name,
                failure_reason_code(verifier) if verifier is not None else "judge_error",
                f"{len(failed)} of {len(verdicts)} claims could not be verified: {failed[0].error}",
                **details,
            )
        if not verdicts:
            return not_measurable(
                self.name, "no_temporal_claims", "The answer makes no temporal claim.", **details
            )
        counts = {label: sum(v.verdict.value == label for v in verdicts) for label in _JUDGE_VERDICTS}
        details["counts"] = counts
        score = claim_faithfulness(
            counts["SUPPORTED"], counts["PARTIALLY_SUPPORTED"], len(verdicts)
        )
        reason = (
            f"{counts['SUPPORTED']} supported, {counts['PARTIALLY_SUPPORTED']} partially supported, "
            f"{counts['NOT_SUPPORTED']} not supported, {counts['CONTRADICTED']} contradicted "
            f"of {len(verdicts)} temporal claims."
        )
        return MetricResult(self.name, score, reason, None, details)


def _year_grounding(
    aft, dfts, ordered: list[int], context_years: list[set[int]],
) -> tuple[list[list[str]], list[list[list[str]]], list[int]]:
    """Per answer year (`ordered`): the spans it came from in the answer, and in each context that
    holds it; and the years no context holds (layout "tf/1" of `tempo_eval.common.packed_details`)."""
    context_spans, missing = [], []
    in_any = set().union(*context_years)
    indexed = list(enumerate(context_years))
    for year in ordered:
        if year not in in_any:  # most ungrounded years: no context to look through
            context_spans.append([])
            missing.append(year)
            continue
        context_spans.append([_span_texts(dfts[i], year) for i, years in indexed if year in years])
    return _spans_by_year(aft, ordered), context_spans, missing


def _spans_by_year(focus: Any, ordered: list[int]) -> list[list[str]]:
    """`_span_texts(focus, year)` of each year of `ordered` (distinct), in one pass over the spans."""
    if type(focus) is not FocusTime:
        return [_span_texts(focus, year) for year in ordered]
    found: dict[int, list[str]] = {year: [] for year in ordered}
    for span in focus.spans:  # `YearSpan.covers`, written out as in `_span_texts`
        first, last = span.first, span.last
        if first == last or span.capped:
            for year in (first,) if first == last else (first, last):
                texts = found.get(year)
                if texts is not None:
                    texts.append(span.text)
        else:
            for year in ordered:
                if first <= year <= last:
                    found[year].append(span.text)
    return list(found.values())


def _span_texts(focus: Any, year: int) -> list[str]:
    """The texts of `focus.spans_for(year)`; `YearSpan.covers` written out for a plain FocusTime
    (a few spans a year, looked up for every answer year of every row)."""
    if type(focus) is FocusTime:
        return [
            span.text for span in focus.spans
            if (year == span.first or year == span.last if span.capped else span.first <= year <= span.last)
        ]
    if isinstance(focus, FocusTime):
        return [span.text for span in focus.spans_for(year)]
    return []
