"""Turn Faithfulness: is what the assistant says, turn after turn, grounded in its retrieval context?

Compatible with DeepEval's `TurnFaithfulnessMetric` (checked against deepeval 4.3.1's source, see
`tests/metrics/test_turn_faithfulness_deepeval.py`), so numbers can be compared:

1. Interactions (`unit_interactions`, DeepEval's `get_unit_interactions`): a new interaction starts
   at a user turn that follows an assistant turn once a user turn has been seen. Consecutive user
   turns share an interaction, so do the assistant turns answering them; assistant turns before
   the first user turn join the first interaction; a trailing interaction without an assistant
   turn is dropped.
2. One sliding window per interaction i, holding interactions max(0, i − window_size + 1) .. i
   (`sliding_windows`). Windows overlap: a claim is checked again in each later window that
   still holds it, against that window's truths.
3. Per window: truths are the sentences of the retrieval contexts of the window's assistant turns
   (the first `truths_extraction_limit` sentences of each document when set; repeated sentences
   once); claims are the assistant turns' claims (`split_claims`: sentences split at independent
   clauses). Each claim gets yes (SUPPORTED), no (CONTRADICTED) or idk (anything else: NEUTRAL,
   NOT_SUPPORTED, PARTIALLY_SUPPORTED) from the verifier.
4. Window score = claims not "no" / claims (`window_faithfulness`); with
   `penalize_ambiguous_claims`, idk counts as unfaithful (score = yes / claims). A window with no
   claims scores 1.0 (reason `no_claims`), as DeepEval does. A window with claims but no truths
   (its assistant turns have no retrieval context) is still a window, as in DeepEval, which then
   asks its judge to compare the claims with an empty context and gets "borderline" (idk) by its
   own definitions; we give idk directly without asking the verifier (reason `no_truths`).
5. Final score = mean of the window scores. No window at all (no user turn answered by an
   assistant turn) -> 1.0 with reason `no_retrieval_context`, as DeepEval ("There were no
   retrieval contexts in your turns to evaluate, hence the score is 1"). When no assistant turn
   has a retrieval context, the score is computed as above (1.0, or 0.0 with penalize) and the
   reason code is `no_retrieval_context` too, so such a score is never mistaken for a grounded one.
6. `strict_mode`: threshold becomes 1, every window score below 1 becomes 0 (as DeepEval does),
   and the final score is 1.0 when every window is perfect, else 0.0 (DeepEval's documented
   binary score; deepeval 4.3.1's code returns the mean of the clamped window scores instead,
   which is kept in `details["mean_window_score"]`). `success = score >= threshold`.

Differences from DeepEval, on purpose: truths and claims come from our sentence splitter, not from
an LLM; `truths_extraction_limit` is applied per document, as DeepEval's documentation says
(deepeval 4.3.1's prompt asks its LLM for that many truths from the window's joined context);
reasons are written by our code from the verdicts, not by an LLM; a verifier ERROR on any claim
makes the score NaN (`judge_error` for the LLM verifier, `verifier_error` otherwise) instead of
failing the whole run.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tempo_eval.core.turn import Turn
from tempo_eval.metrics.base import NAN, Metric, MetricResult, not_measurable
from tempo_eval.verify import default_lexical_verifier
from tempo_eval.verify.base import (
    ClaimVerdict,
    Verdict,
    Verifier,
    check_verdict_count,
    failure_reason_code,
)

YES, NO, IDK = "yes", "no", "idk"
#: the settings a result's details record
_SETTINGS = ("threshold", "strict_mode", "penalize_ambiguous_claims", "truths_extraction_limit",
             "window_size")


# ---- the math and the structure: pure functions ---------------------------------------------

def unit_interactions(roles: Sequence[str]) -> list[list[int]]:
    """Group turn indices into interactions by role, exactly as DeepEval's `get_unit_interactions`."""
    units: list[list[int]] = []
    current: list[int] = []
    has_user = False
    for i, role in enumerate(roles):
        if current and roles[current[-1]] == "assistant" and role == "user" and has_user:
            units.append(current)
            current = [i]
            continue
        current.append(i)
        has_user = has_user or role == "user"
    if len(current) > 1 and roles[current[-1]] == "assistant" and has_user:
        units.append(current)
    return units


def sliding_windows(n_interactions: int, window_size: int) -> list[tuple[int, int]]:
    """(first, last) interaction index of each window, inclusive: (max(0, i − size + 1), i)."""
    return [(max(0, i - window_size + 1), i) for i in range(n_interactions)]


def yes_no_idk(verdict: Verdict) -> str:
    """SUPPORTED -> yes, CONTRADICTED -> no, anything else but ERROR -> idk."""
    if verdict == Verdict.ERROR:
        raise ValueError("an ERROR verdict has no yes/no/idk equivalent")
    if verdict == Verdict.SUPPORTED:
        return YES
    if verdict == Verdict.CONTRADICTED:
        return NO
    return IDK


def window_faithfulness(verdicts: Sequence[str], *, penalize_ambiguous_claims: bool = False) -> float:
    """Claims not "no" / claims (penalize: claims "yes" / claims); no claims -> 1.0 (DeepEval)."""
    if not verdicts:
        return 1.0
    for verdict in verdicts:
        if verdict not in (YES, NO, IDK):
            raise ValueError(f"verdict must be 'yes', 'no' or 'idk', got {verdict!r}")
    passing = (YES,) if penalize_ambiguous_claims else (YES, IDK)
    return sum(1 for v in verdicts if v in passing) / len(verdicts)


def turn_faithfulness(window_scores: Sequence[float], *, strict_mode: bool = False) -> float:
    """Mean of the window scores (1.0 when there is none); strict: 1.0 if all are 1, else 0.0.

    In strict mode the window scores are expected already clamped (`strict_window_score`).
    """
    if not window_scores:
        return 1.0
    mean = sum(window_scores) / len(window_scores)
    if strict_mode:
        return 1.0 if mean >= 1.0 else 0.0
    return mean


def strict_window_score(score: float) -> float:
    """DeepEval's strict clamp with threshold 1: anything below 1 becomes 0."""
    return score if score >= 1.0 else 0.0


# ---- the metric ------------------------------------------------------------------------------

class TurnFaithfulness(Metric):
    """Turn-level faithfulness of a conversation to the assistant turns' retrieval contexts.

    Args (DeepEval's names and defaults):
        threshold: pass mark in [0, 1] (0.5); `success = score >= threshold`.
        strict_mode: binary score, threshold 1 (see the module docstring).
        include_reason: write a reason sentence (windows keep their reason codes regardless).
        penalize_ambiguous_claims: idk claims count as unfaithful.
        truths_extraction_limit: at most this many truth sentences per document (None = all).
        window_size: interactions per sliding window (10).
        async_mode: verify the windows concurrently (True) or one after the other.
        verifier: None -> `LexicalVerifier()` (offline, deterministic); or an `NLIVerifier`
            (entailment / contradiction / neutral -> yes / no / idk) or an `LLMVerifier`.

    Input: `turns`, a list of `Turn` (or mappings / DeepEval turns with role, content and
    retrieval_context). On a conversation dataset (`conversation_id`, `turns`) the runner
    evaluates it like any metric, one conversation per row.

    Result details: `interactions` (turn indices per interaction); `windows`, one record per
    window with `index` (windows are numbered from 1), `interactions` [first, last], `turns`,
    `truths`, `claims`, `counts`
    (claims / yes / no / idk), `score` and `reason_code` ("scored", "no_claims", "no_truths",
    "error"); `claims`, every claim record of every window (`window`, `turn`, `claim`, the
    verifier's `verdict`, `label` yes / no / idk, `evidence`, `probabilities`, `reason`, `error`);
    `mean_window_score`; `verifier`; `settings`.
    """

    name = "turn_faithfulness"
    input_names = ("turns",)

    def __init__(
        self,
        threshold: float = 0.5,
        strict_mode: bool = False,
        include_reason: bool = True,
        penalize_ambiguous_claims: bool = False,
        truths_extraction_limit: int | None = None,
        window_size: int = 10,
        async_mode: bool = True,
        verifier: Verifier | None = None,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be a number in [0, 1], got {threshold!r}")
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
            raise ValueError(f"window_size must be a positive integer, got {window_size!r}")
        limit = truths_extraction_limit
        if limit is not None and (type(limit) is bool or not isinstance(limit, int) or limit < 0):
            raise ValueError(
                f"truths_extraction_limit must be None or an integer >= 0, got {limit!r}"
            )
        self.threshold = 1.0 if strict_mode else float(threshold)
        self.strict_mode = bool(strict_mode)
        self.include_reason = bool(include_reason)
        self.penalize_ambiguous_claims = bool(penalize_ambiguous_claims)
        self.truths_extraction_limit = truths_extraction_limit
        self.window_size = window_size
        self.async_mode = bool(async_mode)
        self.verifier = verifier

    def _verifier(self) -> Verifier:
        # The default stays out of `self.verifier`: public attributes are the run's identity.
        return self.verifier if self.verifier is not None else default_lexical_verifier()

    async def _ameasure(self, *, turns: Sequence[Any]) -> MetricResult:
        turns = as_turns(turns)
        verifier = self._verifier()
        interactions = unit_interactions([t.role for t in turns])
        windows = [
            _Window(index, first, last, [i for unit in interactions[first : last + 1] for i in unit])
            # windows are numbered from 1, on screen and in every download alike
            for index, (first, last) in enumerate(sliding_windows(len(interactions), self.window_size), start=1)
        ]
        for window in windows:
            window.truths = self._truths(turns, window.turn_indices)
            window.claims = self._claims(turns, window.turn_indices)

        if self.async_mode:
            await asyncio.gather(*(self._judge(window, verifier) for window in windows))
        else:
            for window in windows:
                await self._judge(window, verifier)

        details: dict[str, Any] = {
            "verifier": f"{verifier.name}:{verifier.model_id}",
            "settings": {name: getattr(self, name) for name in _SETTINGS},
            "interactions": interactions,
            "windows": [w.to_record() for w in windows],
            "claims": [{"window": w.index, **c} for w in windows for c in w.records],
        }
        errors = [c for w in windows for c in w.records if c["verdict"] == Verdict.ERROR.value]
        if errors:
            code = failure_reason_code(verifier)
            details["mean_window_score"] = None
            return not_measurable(
                self.name, code, f"The verifier failed on {len(errors)} claim(s): {errors[0]['error']}.", **details
            )

        scores = [w.score for w in windows]
        details["mean_window_score"] = sum(scores) / len(scores) if scores else 1.0
        score = turn_faithfulness(scores, strict_mode=self.strict_mode)
        has_context = any(turns[i].retrieval_context and turns[i].role == "assistant"
                          for w in windows for i in w.turn_indices)
        reason_code = None if has_context else "no_retrieval_context"
        reason = self._reason(windows, score, has_context) if self.include_reason else ""
        return MetricResult(self.name, score, reason, reason_code, details, score >= self.threshold)

    def _truths(self, turns: Sequence[Turn], indices: Sequence[int]) -> list[str]:
        from tempo_eval.core.text import split_sentences

        truths: dict[str, None] = {}
        for i in indices:
            if turns[i].role != "assistant":
                continue
            for document in turns[i].retrieval_context:
                sentences = split_sentences(document)
                if self.truths_extraction_limit is not None:
                    sentences = sentences[: self.truths_extraction_limit]
                truths.update(dict.fromkeys(sentences))
        return list(truths)

    def _claims(self, turns: Sequence[Turn], indices: Sequence[int]) -> list[tuple[int, str]]:
        from tempo_eval.core.text import split_claims

        return [(i, claim) for i in indices if turns[i].role == "assistant"
                for claim in split_claims(turns[i].content)]

    async def _judge(self, window: _Window, verifier: Verifier) -> None:
        claims = [claim for _, claim in window.claims]
        if not claims:
            window.reason_code, verdicts = "no_claims", []
        elif not window.truths:
            window.reason_code = "no_truths"
            reason = "no retrieval context in this window"
            verdicts = [ClaimVerdict(c, Verdict.NEUTRAL, reason=reason) for c in claims]
        else:
            window.reason_code = "scored"
            verdicts = await verifier.averify(claims, window.truths)
            check_verdict_count(verifier, claims, verdicts)
        window.records = [
            {
                "turn": turn_index,
                **verdict.to_record(),
                "label": None if verdict.verdict == Verdict.ERROR else yes_no_idk(verdict.verdict),
            }
            for (turn_index, _), verdict in zip(window.claims, verdicts, strict=True)
        ]
        if any(r["label"] is None for r in window.records):
            window.reason_code, window.score = "error", NAN
            return
        score = window_faithfulness(
            [r["label"] for r in window.records], penalize_ambiguous_claims=self.penalize_ambiguous_claims
        )
        window.score = strict_window_score(score) if self.strict_mode and window.records else score

    def _reason(self, windows: Sequence[_Window], score: float, has_context: bool) -> str:
        if not windows:
            return (
                "No user turn is answered by an assistant turn, so there is no retrieval context "
                "to evaluate; the score is 1.0 as in DeepEval."
            )
        labels = [r["label"] for w in windows for r in w.records]
        contradicted = [r["claim"] for w in windows for r in w.records if r["label"] == NO]
        reason = (
            f"Score {score:.2f} over {len(windows)} window(s) of up to {self.window_size} "
            f"interaction(s): {labels.count(YES)} claim verdict(s) yes, {labels.count(NO)} no, "
            f"{labels.count(IDK)} idk"
        )
        reason += " (idk counted as unfaithful)." if self.penalize_ambiguous_claims else "."
        if not has_context:
            reason += " No assistant turn has a retrieval context, so no claim could be checked."
        if contradicted:
            unique = list(dict.fromkeys(contradicted))
            reason += f' Contradicted by the retrieval context: "{unique[0]}"'
            reason += f" (and {len(unique) - 1} more)" if len(unique) > 1 else ""
        return reason


@dataclass
class _Window:
    """One sliding window while it is being judged."""

    index: int
    first: int
    last: int
    turn_indices: list[int]
    truths: list[str] = field(default_factory=list)
    claims: list[tuple[int, str]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    score: float = math.nan
    reason_code: str = ""

    def to_record(self) -> dict[str, Any]:
        labels = [r["label"] for r in self.records]
        return {
            "index": self.index,
            "interactions": [self.first, self.last],
            "turns": self.turn_indices,
            "truths": self.truths,
            "claims": self.records,
            "counts": {"claims": len(labels), YES: labels.count(YES), NO: labels.count(NO), IDK: labels.count(IDK)},
            "score": self.score,
            "reason_code": self.reason_code,
        }


def as_turns(turns: Any) -> list[Turn]:
    """`turns` as a list of `Turn`; accepts Turn, mappings and objects with role/content (DeepEval).

    A JSON text of such a list (a conversation dataset's `turns` cell read from CSV) is parsed.
    Raises TypeError for anything that is not a list of turns and ValueError for an empty list.
    """
    if isinstance(turns, str) and turns.lstrip().startswith("["):
        import json

        try:
            turns = json.loads(turns)
        except json.JSONDecodeError as error:
            raise ValueError(f"turns is not a valid JSON list of turns: {error}") from None
    if isinstance(turns, (str, bytes, Mapping, set, frozenset)) or not isinstance(turns, (list, tuple)):
        raise TypeError(f"turns must be a list of turns, got {type(turns).__name__}")
    if not turns:
        raise ValueError("turns must not be empty: a conversation needs at least one turn")
    result = []
    for i, turn in enumerate(turns):
        if isinstance(turn, Turn):
            result.append(turn)
            continue
        if isinstance(turn, Mapping):
            role, content, context = turn.get("role"), turn.get("content"), turn.get("retrieval_context")
        elif hasattr(turn, "role") and hasattr(turn, "content"):
            role, content = turn.role, turn.content
            context = getattr(turn, "retrieval_context", None)
        else:
            raise TypeError(f"turns[{i}] must be a Turn or a mapping with role and content, got {type(turn).__name__}")
        try:
            result.append(Turn(role=role, content=content, retrieval_context=context or []))
        except (TypeError, ValueError) as error:
            raise type(error)(f"turns[{i}]: {error}") from None
    return result
