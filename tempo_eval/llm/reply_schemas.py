"""What a judge must return for each metric's question, as pydantic models that validate its reply.

Kept apart from the metrics so that scoring without a judge never imports pydantic (about 8 MB in
each process: the main one and every scoring worker); the judge paths import these when they ask.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


class ClaimList(BaseModel):
    """The atomic claims of a text (claim decomposition)."""

    claims: list[str] = Field(default_factory=list)


class RelevanceGrade(BaseModel):
    """One judge grade. Strictly an integer 0-4: 3.0, "3", true or 7 are schema violations."""

    relevance_score: Annotated[int, Field(strict=True, ge=0, le=4)]
    reasoning: str = ""


class JudgedClaim(BaseModel):
    claim: str
    verdict: Literal["SUPPORTED", "PARTIALLY_SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED"]
    evidence: str = ""
    reason: str = ""


class JudgedClaims(BaseModel):
    """What the judge must return for Temporal Faithfulness; any score it adds of its own is ignored."""

    claims: list[JudgedClaim] = Field(default_factory=list)
