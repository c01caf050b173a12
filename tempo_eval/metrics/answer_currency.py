"""Answer currency: is the answer today's answer, last year's, or neither?

Answer and references are normalised SQuAD-style (lowercase, punctuation and the articles
a/an/the dropped, whitespace collapsed); an answer matches a reference when the normalised
reference occurs in the normalised answer on word boundaries (`tempo_eval.metrics.asof.mentions`).

    label = current   when the answer matches any current reference (`reference`)
            outdated  else, when it matches any outdated reference (`outdated_references`)
            other     else
    score = 1.0 for current, 0.0 otherwise

With a verifier (`AnswerCurrency(verifier=...)`: lexical, NLI or the LLM judge) a reference
matches instead when the verifier says SUPPORTED for the reference as a claim and the answer as
its premise; every reference is verified (current and outdated, in one call); a verifier failure
on any of them is NaN (`judge_error` for the judge, `verifier_error` otherwise).

No current reference -> NaN `no_reference`. The label is the result's `details["label"]` and
leads its reason (exports show it); the run's summary gives the three counts and the
outdated-answer rate: the share of `outdated` among the rows that have outdated references
(`tempo_eval.metrics.asof.currency_counts`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from tempo_eval.metrics import asof
from tempo_eval.metrics.base import Metric, MetricResult, not_measurable, require_text
from tempo_eval.verify.base import Verdict, failure_reason_code


def _references(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Sequence) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else list(value)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"{name} must hold texts, found {item!r}")
        return [item for item in items if item.strip()]
    raise TypeError(f"{name} must be a text or a list of texts, got {type(value).__name__}")


def label_from_reason(reason: Any) -> str | None:
    """The label a result's reason leads with (`current: ...`), None for any other reason (a NaN
    result, a failure): exports and stored results keep the label in the reason."""
    if not isinstance(reason, str):
        return None
    head = reason.split(":", 1)[0]
    return head if head in (asof.CURRENT, asof.OUTDATED, asof.OTHER) else None


class AnswerCurrency(Metric):
    """Answer currency (see the module docstring). `measure(...).details` holds `label`,
    `matched` (the reference the answer mentions), `references`, `outdated_references` and
    `has_outdated` (whether the row counts toward the outdated-answer rate)."""

    name = "answer_currency"
    input_names = ("answer", "reference", "outdated_references")

    def __init__(self, *, verifier: Any = None) -> None:
        self.verifier = verifier

    def required_columns(self, columns: Collection[str]) -> list[str]:
        """The answer; a row without a reference is NaN `no_reference`."""
        return ["answer"]

    async def _ameasure(self, answer: str | None = None, reference: Any = None,
                        outdated_references: Any = None) -> MetricResult:
        answer = require_text(answer, "answer", allow_empty=True)
        current = _references(reference, "reference")
        outdated = _references(outdated_references, "outdated_references")
        details: dict[str, Any] = {
            "references": current,
            "outdated_references": outdated,
            "has_outdated": bool(outdated),
        }
        if not current:
            details["label"] = None
            return not_measurable(
                self.name, asof.NO_REFERENCE,
                "The row has no current reference answer, so the answer's currency cannot be judged.",
                **details,
            )
        if self.verifier is None:
            label, matched = asof.currency_label(answer, current, outdated)
        else:
            verdicts = await self.verifier.averify([*current, *outdated], [answer])
            details["verdicts"] = [verdict.to_record() for verdict in verdicts]
            failed = [verdict for verdict in verdicts if verdict.verdict == Verdict.ERROR]
            if failed:
                details["label"] = None
                return not_measurable(
                    self.name, failure_reason_code(self.verifier),
                    f"The verifier failed on {len(failed)} reference(s): {failed[0].error}.", **details,
                )
            supported = [verdict.verdict == Verdict.SUPPORTED for verdict in verdicts]
            label, matched = asof.label_from_matches(current, outdated, supported)
        details.update(label=label, matched=matched)
        reason = {
            asof.CURRENT: f"current: the answer gives the current answer {matched!r}.",
            asof.OUTDATED: f"outdated: the answer gives {matched!r}, an answer that is no longer correct.",
            asof.OTHER: "other: the answer mentions neither a current nor an outdated reference.",
        }[label]
        return MetricResult(self.name, 1.0 if label == asof.CURRENT else 0.0, reason, None, details)
