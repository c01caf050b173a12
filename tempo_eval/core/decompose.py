"""Optional LLM claim decomposition: the judge rewrites a text as a list of atomic claims.

The default decomposition is `tempo_eval.core.text.split_claims` (regex, offline, with character
offsets). This one asks the judge instead, which also splits compound sentences and resolves
pronouns ("It was completed in 1889" -> "The Eiffel Tower was completed in 1889"), at the cost of
one judge call per text and claims that no longer map to character spans.

A failed call raises `DecompositionError` (the metrics turn it into NaN with reason
`judge_error`); there is no silent fallback to another decomposition.

A judge can also invent claims: 2,500 for a three-sentence answer, each one "supported", inflate
any claim-counting score. A judge's list is accepted only up to `claim_limit(text)` claims:
`MAX_CLAIMS_PER_ANSWER` (64), or `CLAIMS_PER_SENTENCE` (4) per sentence of the text when that is
more. A longer list raises `TooManyClaims` (reason code `judge_too_many_claims`), never a score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


#: the fewest claims a judge's list may hold for any text before it counts as invented
MAX_CLAIMS_PER_ANSWER = 64
#: how many claims per sentence of the text a judge's list may hold (a long text allows more)
CLAIMS_PER_SENTENCE = 4
#: reason code of a result whose judge listed more claims than `claim_limit` allows
TOO_MANY_CLAIMS = "judge_too_many_claims"


def claim_limit(text: str) -> int:
    """The most claims a judge may list for `text`: max(64, 4 x its sentences)."""
    from tempo_eval.core.text import split_claims

    return max(MAX_CLAIMS_PER_ANSWER, CLAIMS_PER_SENTENCE * len(split_claims(text)))


def too_many_claims_reason(count: int, limit: int) -> str:
    """The sentence a `judge_too_many_claims` result carries."""
    return (
        f"The judge listed {count:,} claims for this text; at most {limit:,} are accepted "
        f"({MAX_CLAIMS_PER_ANSWER}, or {CLAIMS_PER_SENTENCE} per sentence of the text), so the "
        "claims are taken as invented and the row is not scored"
    )


class DecompositionError(RuntimeError):
    """The judge could not decompose the text; the message says why (HTTP error, invalid JSON, ...).

    `reason_code` is the code the metric's NaN result carries."""

    reason_code = "judge_error"


class TooManyClaims(DecompositionError):
    """The judge listed more claims than `claim_limit` allows for the text."""

    reason_code = TOO_MANY_CLAIMS


async def adecompose_claims(text: str, provider: OpenAIProvider) -> list[str]:
    """The atomic claims of `text` according to the judge, in the judge's order.

    Blank text -> [] without a call; blank and repeated claims are dropped. Raises
    `DecompositionError` when the judge call fails, `TooManyClaims` when it lists more than
    `claim_limit(text)` claims.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        return []
    # pydantic is imported only where a judge is asked
    from tempo_eval.llm.reply_schemas import ClaimList

    reply = await provider.ajudge(DECOMPOSE_PROMPT.format(text=text), ClaimList, system=DECOMPOSE_SYSTEM)
    if not reply.ok:
        raise DecompositionError(f"claim decomposition failed: {reply.error}")
    claims = (claim.strip() for claim in reply.data.claims)
    claims = list(dict.fromkeys(claim for claim in claims if claim))
    limit = claim_limit(text)
    if len(claims) > limit:
        raise TooManyClaims(too_many_claims_reason(len(claims), limit))
    return claims
