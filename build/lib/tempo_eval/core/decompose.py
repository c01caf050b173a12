"""Optional LLM claim decomposition: the judge rewrites a text as a list of atomic claims.

The default decomposition is `tempo_eval.core.text.split_claims` (regex, offline, with character
offsets). This one asks the judge instead, which also splits compound sentences and resolves
pronouns ("It was completed in 1889" -> "The Eiffel Tower was completed in 1889"), at the cost of
one judge call per text and claims that no longer map to character spans.

A failed call raises `DecompositionError` (the metrics turn it into NaN with reason
`judge_error`); there is no silent fallback to another decomposition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from tempo_eval._async import run_sync

if TYPE_CHECKING:
    from tempo_eval.llm.provider import OpenAIProvider

DECOMPOSE_SYSTEM = "You break texts into atomic factual claims without adding or dropping information."

DECOMPOSE_PROMPT = """## Task
Break the text into atomic claims: short, self-contained statements of one fact each.

- Keep every fact the text states, including dates, numbers and names, exactly as written.
- Replace pronouns with what they refer to, so each claim can be checked on its own.
- Do not add facts, opinions or explanations that the text does not state.
- Leave out questions, greetings and statements with no factual content.
- If the text states no fact, return an empty list.

## Text
{text}

## Output (JSON)
{{"claims": ["...", "..."]}}
"""


class ClaimList(BaseModel):
    claims: list[str] = Field(default_factory=list)


class DecompositionError(RuntimeError):
    """The judge could not decompose the text; the message says why (HTTP error, invalid JSON, ...)."""


async def adecompose_claims(text: str, provider: OpenAIProvider) -> list[str]:
    """The atomic claims of `text` according to the judge, in the judge's order.

    Blank text -> [] without a call; blank and repeated claims are dropped. Raises
    `DecompositionError` when the judge call fails.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        return []
    reply = await provider.ajudge(DECOMPOSE_PROMPT.format(text=text), ClaimList, system=DECOMPOSE_SYSTEM)
    if not reply.ok:
        raise DecompositionError(f"claim decomposition failed: {reply.error}")
    claims = (claim.strip() for claim in reply.data.claims)
    return list(dict.fromkeys(claim for claim in claims if claim))


def decompose_claims(text: str, provider: OpenAIProvider) -> list[str]:
    """Sync `adecompose_claims`."""
    return run_sync(adecompose_claims(text, provider))
