"""The verifier protocol: given claims and premises, decide per claim and keep the evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


class Verdict(StrEnum):
    SUPPORTED = "SUPPORTED"
    PARTIALLY_SUPPORTED = "PARTIALLY_SUPPORTED"
    NEUTRAL = "NEUTRAL"
    NOT_SUPPORTED = "NOT_SUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    #: the verifier failed on this claim (judge error, model error); scores become NaN
    ERROR = "ERROR"


#: verdicts the dashboard calls hallucinations
HALLUCINATED = frozenset({Verdict.NOT_SUPPORTED, Verdict.CONTRADICTED})


@dataclass
class ClaimVerdict:
    """One claim's verdict with what it rests on.

    `probabilities` (NLI) maps "entailment"/"neutral"/"contradiction" to floats; `reason` is the
    judge's explanation or the lexical verifier's rule; `error` is set when verdict is ERROR.
    """

    claim: str
    verdict: Verdict
    evidence: str | None = None
    probabilities: dict[str, float] | None = None
    reason: str | None = None
    error: str | None = None

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["verdict"] = self.verdict.value
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ClaimVerdict:
        return cls(**{**record, "verdict": Verdict(record["verdict"])})


@runtime_checkable
class Verifier(Protocol):
    """Decides SUPPORTED / NEUTRAL / CONTRADICTED for each claim against a list of premises.

    `name` ("nli", "llm", "lexical") and `model_id` identify the verifier in cache keys.
    """

    name: str
    model_id: str

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]: ...

    async def averify(
        self, claims: Sequence[str], premises: Sequence[str]
    ) -> list[ClaimVerdict]: ...


def check_verdict_count(
    verifier: Verifier, claims: Sequence[str], verdicts: Sequence[ClaimVerdict]
) -> None:
    """Raise RuntimeError unless `verifier` returned one verdict per claim (a broken verifier)."""
    if len(verdicts) != len(claims):
        raise RuntimeError(
            f"verifier {verifier.name!r} returned {len(verdicts)} verdicts for {len(claims)} claims"
        )


def failure_reason_code(verifier: Verifier) -> str:
    """The NaN reason code for a claim the verifier could not decide: the judge's or the model's."""
    return "judge_error" if verifier.name == "llm" else "verifier_error"


class VerifierUnavailable(RuntimeError):
    """The verifier cannot run here (checkpoint missing, no network, package absent).

    The message is one clear sentence meant for the user; callers may fall back to another
    verifier.
    """
