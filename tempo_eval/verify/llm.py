"""The LLM verifier: an OpenAI-compatible judge decides SUPPORTED / NEUTRAL / CONTRADICTED per claim.

    verifier = LLMVerifier(OpenAIProvider("gpt-4o-mini"))
    verdicts = verifier.verify(["Paris is in France."], ["Paris is the capital of France."])

How claims are sent (`claims_per_call`):

- 1 (default): one judge call per claim, all claims of a `verify` call concurrently
  (`asyncio.gather`; the provider bounds how many requests are in flight). A failed call makes
  only that claim's verdict ERROR, and the judge sees one question at a time, which small models
  answer more reliably.
- n > 1: claims go in batches of n, one call per batch (cheaper: the premises are sent once per
  batch). The judge answers with one verdict per claim number; a failed call makes the claims of
  that batch ERROR, and a claim number the judge left out (or answered twice) makes that claim
  ERROR.

The judge returns a verdict, an evidence quote from the premises and a one-sentence reason; the
schema is validated by the provider (lower-case verdicts are accepted). With no premises there is
nothing to check against: every claim is NEUTRAL and no call is made.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator

from tempo_eval.common.run_sync import run_sync
from tempo_eval.common.values import require_text_list
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tempo_eval.verify.llm_prompts import VERIFY_BATCH_PROMPT, VERIFY_PROMPT, VERIFY_SYSTEM

if TYPE_CHECKING:
    from tempo_eval.llm.provider import OpenAIProvider

JudgeVerdict = Literal["SUPPORTED", "NEUTRAL", "CONTRADICTED"]


class ClaimJudgement(BaseModel):
    """The judge's answer for one claim."""

    verdict: JudgeVerdict
    evidence: str = ""
    reason: str = ""
    #: the judge's own confidence in its verdict, when it gives one
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("verdict", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        # "supported" and " Supported " mean the same; anything else still fails validation
        return value.strip().upper() if isinstance(value, str) else value


class NumberedClaimJudgement(ClaimJudgement):
    claim_number: int


class BatchJudgement(BaseModel):
    """The judge's answer for a batch of numbered claims."""

    verdicts: list[NumberedClaimJudgement] = Field(default_factory=list)


class LLMVerifier:
    """Verifier backed by an LLM judge (an `OpenAIProvider` or anything with the same `ajudge`).

    Args:
        provider: the judge; its `model_id` identifies this verifier in cache keys.
        claims_per_call: 1 (default) = one call per claim, failures isolated per claim;
            n > 1 = batches of n claims per call, cheaper (see the module docstring).
    """

    name = "llm"

    def __init__(self, provider: OpenAIProvider, *, claims_per_call: int = 1) -> None:
        if isinstance(claims_per_call, bool) or not isinstance(claims_per_call, int) or claims_per_call < 1:
            raise ValueError(f"claims_per_call must be an integer >= 1, got {claims_per_call!r}")
        self.provider = provider
        self.claims_per_call = claims_per_call
        self.model_id: str = provider.model_id

    @property
    def settings(self) -> str:
        """The settings that change verdicts, for cache keys: prompt, batching and sampling."""
        prompt = VERIFY_PROMPT if self.claims_per_call == 1 else VERIFY_BATCH_PROMPT
        digest = hashlib.sha256((VERIFY_SYSTEM + prompt).encode("utf-8")).hexdigest()[:12]
        sampling = getattr(self.provider, "settings", "")
        return f"prompt={digest};claims_per_call={self.claims_per_call};{sampling}"

    def __repr__(self) -> str:
        return f"LLMVerifier(model_id={self.model_id!r}, claims_per_call={self.claims_per_call})"

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        return run_sync(self.averify(claims, premises))

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """One verdict per claim, in order. Never raises for judge failures (ERROR verdicts)."""
        claims = require_text_list(claims, "claims")
        premises = [p for p in require_text_list(premises, "premises") if p.strip()]
        if not claims:
            return []
        if not premises:
            reason = "no premises to check the claim against"
            return [ClaimVerdict(claim, Verdict.NEUTRAL, reason=reason) for claim in claims]
        premise_text = "\n".join(f"[{i + 1}] {p.strip()}" for i, p in enumerate(premises))
        if self.claims_per_call == 1:
            return list(await asyncio.gather(*(self._one(c, premise_text) for c in claims)))
        batches = [
            claims[start : start + self.claims_per_call]
            for start in range(0, len(claims), self.claims_per_call)
        ]
        results = await asyncio.gather(*(self._batch(b, premise_text) for b in batches))
        return [verdict for batch in results for verdict in batch]

    async def _one(self, claim: str, premise_text: str) -> ClaimVerdict:
        prompt = VERIFY_PROMPT.format(premises=premise_text, claim=claim)
        reply = await self.provider.ajudge(prompt, ClaimJudgement, system=VERIFY_SYSTEM)
        if not reply.ok:
            return _error(claim, reply.error or "the judge returned no answer")
        return _verdict(claim, reply.data)

    async def _batch(self, claims: list[str], premise_text: str) -> list[ClaimVerdict]:
        numbered = "\n".join(f"{i + 1}. {claim}" for i, claim in enumerate(claims))
        prompt = VERIFY_BATCH_PROMPT.format(premises=premise_text, claims=numbered)
        reply = await self.provider.ajudge(prompt, BatchJudgement, system=VERIFY_SYSTEM)
        if not reply.ok:
            error = reply.error or "the judge returned no answer"
            return [_error(claim, error) for claim in claims]
        by_number: dict[int, list[NumberedClaimJudgement]] = {}
        for item in reply.data.verdicts:
            by_number.setdefault(item.claim_number, []).append(item)
        verdicts = []
        for number, claim in enumerate(claims, start=1):
            answers = by_number.get(number, [])
            gave = f"{len(answers)} verdicts" if answers else "no verdict"
            verdicts.append(_verdict(claim, answers[0]) if len(answers) == 1
                            else _error(claim, f"the judge gave {gave} for claim {number}"))
        return verdicts


def _verdict(claim: str, judgement: ClaimJudgement) -> ClaimVerdict:
    return ClaimVerdict(
        claim,
        Verdict(judgement.verdict),
        evidence=judgement.evidence.strip() or None,
        reason=judgement.reason.strip() or None,
        confidence=judgement.confidence,
    )


def _error(claim: str, error: str) -> ClaimVerdict:
    return ClaimVerdict(claim, Verdict.ERROR, error=error)
