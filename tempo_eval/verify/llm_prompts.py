"""The LLM verifier's prompts (`tempo_eval.verify.llm`), apart from its pydantic reply models so
that what fingerprints them (Factual Correctness's prompt versions) does not import pydantic."""

VERIFY_SYSTEM = (
    "You are a careful fact checker. You judge claims only against the premises you are given, "
    "never against your own knowledge."
)

VERIFY_PROMPT = """## Task
Decide whether the premises support the claim.

- SUPPORTED: the premises state the claim or it follows directly from them.
- CONTRADICTED: the premises state something incompatible with the claim (for example a different
  year, number, place or person for the same fact).
- NEUTRAL: the premises neither support nor contradict the claim.

Judge only by the premises. Quote, in "evidence", the premise sentence that decides the verdict
exactly as written (empty for NEUTRAL when nothing is relevant), and give a one-sentence reason.

## Premises
{premises}

## Claim
{claim}

## Output (JSON)
{{"verdict": "SUPPORTED | NEUTRAL | CONTRADICTED", "evidence": "...", "reason": "..."}}
"""

VERIFY_BATCH_PROMPT = """## Task
For each numbered claim, decide whether the premises support it.

- SUPPORTED: the premises state the claim or it follows directly from them.
- CONTRADICTED: the premises state something incompatible with the claim (for example a different
  year, number, place or person for the same fact).
- NEUTRAL: the premises neither support nor contradict the claim.

Judge each claim on its own and only by the premises. Give exactly one verdict per claim, with the
claim's number. Quote, in "evidence", the premise sentence that decides the verdict exactly as
written (empty for NEUTRAL when nothing is relevant), and give a one-sentence reason.

## Premises
{premises}

## Claims
{claims}

## Output (JSON)
{{"verdicts": [{{"claim_number": 1, "verdict": "SUPPORTED | NEUTRAL | CONTRADICTED", "evidence": "...", "reason": "..."}}]}}
"""
