"""Factual Correctness: does the answer state the reference's facts, and only those?

Both texts are decomposed into claims. Answer (response) claims are verified against the
reference, reference claims against the answer:

    precision = supported answer claims / answer claims
    recall    = supported reference claims / reference claims
    F-beta    = (1 + beta²) · precision · recall / (beta² · precision + recall)

Only SUPPORTED counts as supported; NEUTRAL, CONTRADICTED (and PARTIALLY_SUPPORTED or
NOT_SUPPORTED, should a verifier return them) do not. Edge cases:

- no answer claims -> precision NaN; no reference claims -> recall NaN;
- F-beta is NaN if either side is NaN, and 0.0 when both are 0;
- a verifier ERROR on a claim the mode needs -> NaN (`judge_error` for the LLM verifier,
  `verifier_error` otherwise); a failed LLM decomposition -> NaN (`judge_error`).

Modes (case-insensitive): "f1" (default; F-beta with `beta`, 1 by default), "precision", "recall".
Only the side a mode needs is verified ("precision" verifies answer claims only, "recall" reference
claims only), so the other side is reported as None in the details, not as a number.

RAGAS calls the answer `response`; we use the product's column name `answer`. Unlike RAGAS, whose
recall mixes answer-side true positives with reference-side false negatives, recall here only looks
at reference claims.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tempo_eval.core.decompose import DECOMPOSE_PROMPT, DecompositionError, adecompose_claims
from tempo_eval.metrics.base import NAN, Metric, MetricResult, not_measurable, require_text
from tempo_eval.verify import default_lexical_verifier
from tempo_eval.verify.base import (
    ClaimVerdict,
    Verdict,
    Verifier,
    check_verdict_count,
    failure_reason_code,
)
from tempo_eval.verify.llm_prompts import VERIFY_PROMPT

if TYPE_CHECKING:
    from tempo_eval.llm.provider import OpenAIProvider

MODES = ("f1", "precision", "recall")
DECOMPOSITIONS = ("sentences", "llm")

#: the judge prompts this metric uses: claim decomposition (decompose="llm") and, with an
#: `LLMVerifier`, verification (premises = the reference for answer claims, the answer for
#: reference claims). They live beside the code that sends them.
PROMPTS = {"decompose": DECOMPOSE_PROMPT, "verify": VERIFY_PROMPT}


# ---- the math: pure functions ---------------------------------------------------------------

def fbeta_score(precision: float, recall: float, beta: float = 1.0) -> float:
    """(1 + beta²)·P·R / (beta²·P + R); NaN if P or R is NaN; 0.0 when both are 0."""
    if math.isnan(precision) or math.isnan(recall):
        return NAN
    if precision == 0 and recall == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def precision_recall_fbeta(
    supported_answer_claims: int,
    answer_claims: int,
    supported_reference_claims: int,
    reference_claims: int,
    beta: float = 1.0,
) -> tuple[float, float, float]:
    """(precision, recall, F-beta) from claim counts; a side with no claims is NaN."""
    precision = supported_answer_claims / answer_claims if answer_claims else NAN
    recall = supported_reference_claims / reference_claims if reference_claims else NAN
    return precision, recall, fbeta_score(precision, recall, beta)


# ---- the metric ------------------------------------------------------------------------------

class FactualCorrectness(Metric):
    """Claim-level precision / recall / F-beta of the answer against the reference.

    Args:
        mode: "f1" (default), "precision" or "recall", any case ("F1", "PRECISION", "RECALL").
        beta: F-beta weight (> 0); beta > 1 favours recall. Only used in "f1" mode.
        verifier: who decides SUPPORTED / NEUTRAL / CONTRADICTED. None -> `LexicalVerifier()`
            (offline and deterministic: MiniLM similarity picks the evidence sentences, a
            calibrated softmax model over word coverage and year / date / number / name /
            negation agreement decides; its accuracy is measured, not assumed). Pass an
            `NLIVerifier` or an `LLMVerifier` for the model-based verdicts.
        decompose: "sentences" (default; `split_claims`: sentences split at independent
            clauses, offline) or "llm" (the judge writes atomic claims; needs `llm`).
        llm: the judge (`OpenAIProvider`) for decompose="llm".

    Inputs: `answer` and `reference` (strings; empty is allowed and means "no claims").

    Result details: `precision`, `recall`, `fbeta` (None for a side the mode does not compute);
    `claims`, one record per claim with `side` ("response" = answer claim checked against the
    reference, "reference" = reference claim checked against the answer), `claim`, `verdict`,
    `evidence`, `probabilities`, `reason`, `error`; `counts` (claims, supported and contradicted
    per side); `mode`, `beta`, `decompose`, `verifier`.
    """

    name = "factual_correctness"
    input_names = ("answer", "reference")

    def __init__(
        self,
        mode: str = "f1",
        beta: float = 1.0,
        verifier: Verifier | None = None,
        decompose: str = "sentences",
        llm: OpenAIProvider | None = None,
    ) -> None:
        if not isinstance(mode, str) or mode.lower() not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)} (any case); got {mode!r}")
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not (0 < beta < math.inf):
            raise ValueError(f"beta must be a positive finite number, got {beta!r}")
        if decompose not in DECOMPOSITIONS:
            raise ValueError(f"decompose must be one of {', '.join(DECOMPOSITIONS)}; got {decompose!r}")
        if decompose == "llm" and llm is None:
            raise ValueError("decompose='llm' needs llm=... (the judge that writes the claims)")
        if decompose != "llm" and llm is not None:
            raise ValueError(
                "llm is only used with decompose='llm'; to verify claims with the judge, "
                "pass verifier=LLMVerifier(llm)"
            )
        self.mode = mode.lower()
        self.beta = float(beta)
        self.verifier = verifier
        self.decompose = decompose
        self.llm = llm

    def _verifier(self) -> Verifier:
        # The default stays out of `self.verifier`: public attributes are the run's identity.
        return self.verifier if self.verifier is not None else default_lexical_verifier()

    async def _claims(self, text: str) -> list[str]:
        if self.decompose == "llm":
            return await adecompose_claims(text, self.llm)
        from tempo_eval.core.text import split_claims

        return split_claims(text)

    async def _ameasure(self, *, answer: str, reference: str) -> MetricResult:
        answer = require_text(answer, "answer", allow_empty=True)
        reference = require_text(reference, "reference", allow_empty=True)
        verifier = self._verifier()
        details: dict[str, Any] = {
            "mode": self.mode,
            "beta": self.beta,
            "decompose": self.decompose,
            "verifier": f"{verifier.name}:{verifier.model_id}",
        }
        need_answer_side = self.mode in ("f1", "precision")
        need_reference_side = self.mode in ("f1", "recall")
        try:
            answer_claims, reference_claims = await asyncio.gather(
                self._claims(answer) if need_answer_side else _no_claims(),
                self._claims(reference) if need_reference_side else _no_claims(),
            )
        except DecompositionError as error:  # TooManyClaims has its own code
            return not_measurable(self.name, error.reason_code, f"{error}.", **details)

        answer_verdicts, reference_verdicts = await asyncio.gather(
            _verify(verifier, answer_claims, reference),
            _verify(verifier, reference_claims, answer),
        )
        records = [{"side": "response", **v.to_record()} for v in answer_verdicts]
        records += [{"side": "reference", **v.to_record()} for v in reference_verdicts]
        counts = {
            "response_claims": len(answer_verdicts) if need_answer_side else None,
            "response_supported": _count(answer_verdicts, Verdict.SUPPORTED) if need_answer_side else None,
            "response_contradicted": _count(answer_verdicts, Verdict.CONTRADICTED) if need_answer_side else None,
            "reference_claims": len(reference_verdicts) if need_reference_side else None,
            "reference_supported": _count(reference_verdicts, Verdict.SUPPORTED) if need_reference_side else None,
            "reference_contradicted": _count(reference_verdicts, Verdict.CONTRADICTED) if need_reference_side else None,
        }
        details.update(claims=records, counts=counts)

        errors = [v for v in (*answer_verdicts, *reference_verdicts) if v.verdict == Verdict.ERROR]
        if errors:
            code = failure_reason_code(verifier)
            details.update(precision=None, recall=None, fbeta=None)
            reason = f"The verifier failed on {len(errors)} claim(s): {errors[0].error}."
            return not_measurable(self.name, code, reason, **details)

        precision, recall, fbeta = precision_recall_fbeta(
            counts["response_supported"] or 0, counts["response_claims"] or 0,
            counts["reference_supported"] or 0, counts["reference_claims"] or 0, self.beta,
        )
        details.update(
            precision=precision if need_answer_side else None,
            recall=recall if need_reference_side else None,
            fbeta=fbeta if self.mode == "f1" else None,
        )
        score = {"f1": fbeta, "precision": precision, "recall": recall}[self.mode]
        if math.isnan(score):
            code, reason = _empty_reason(need_answer_side and not answer_claims, need_reference_side and not reference_claims)
            return not_measurable(self.name, code, reason, **details)
        return MetricResult(self.name, score, self._reason(details), None, details)

    def _reason(self, details: dict[str, Any]) -> str:
        counts = details["counts"]
        parts = []
        if details["precision"] is not None:
            parts.append(
                f"precision {details['precision']:.2f} ({counts['response_supported']} of "
                f"{counts['response_claims']} answer claims supported by the reference)"
            )
        if details["recall"] is not None:
            parts.append(
                f"recall {details['recall']:.2f} ({counts['reference_supported']} of "
                f"{counts['reference_claims']} reference claims supported by the answer)"
            )
        if details["fbeta"] is not None:
            label = "F1" if self.beta == 1.0 else f"F{self.beta:g}"
            parts.append(f"{label} {details['fbeta']:.2f}")
        reason = "; ".join(parts) + "."
        contradicted = [r["claim"] for r in details["claims"]
                        if r["side"] == "response" and r["verdict"] == Verdict.CONTRADICTED.value]
        if contradicted:
            reason += f' Contradicted by the reference: "{contradicted[0]}"'
            reason += f" (and {len(contradicted) - 1} more)" if len(contradicted) > 1 else ""
        return reason[0].upper() + reason[1:]


async def _no_claims() -> list[str]:
    return []


async def _verify(verifier: Verifier, claims: Sequence[str], premise: str) -> list[ClaimVerdict]:
    if not claims:
        return []
    verdicts = await verifier.averify(list(claims), [premise])
    check_verdict_count(verifier, claims, verdicts)
    return verdicts


def _count(verdicts: Sequence[ClaimVerdict], verdict: Verdict) -> int:
    return sum(1 for v in verdicts if v.verdict == verdict)


def _empty_reason(no_answer_claims: bool, no_reference_claims: bool) -> tuple[str, str]:
    if no_answer_claims and no_reference_claims:
        return "no_claims", "Neither the answer nor the reference states a claim."
    if no_answer_claims:
        return "no_response_claims", "The answer states no claim, so precision is undefined."
    return "no_reference_claims", "The reference states no claim, so recall is undefined."
