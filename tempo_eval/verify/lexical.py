"""The lexical verifier: offline verdicts from MiniLM similarity, word coverage and the agreement of
years, dates, numbers, names and negation, turned into a calibrated probability.

It needs no NLI checkpoint, so it is the offline fallback (CI, the demo, users without the model).
Its accuracy is measured by `bench/verifier_accuracy.py` on `tests/data/verifier_dev.jsonl`.

Per claim:
    1. the claim is split into atomic parts (`split_claims`, subject carried over); each part is
       judged on its own and the verdicts combine: any CONTRADICTED part -> CONTRADICTED, every
       part SUPPORTED -> SUPPORTED, else NEUTRAL;
    2. premises are split into sentences; a sentence longer than 40 words (lower-cased text
       without full stops) is cut into overlapping 24-word windows, so a "no" far away in a
       2,000-character "sentence" never reads as negating the claim;
    3. the candidates are the four units most similar to the part (MiniLM cosine; a sentence
       opening with "It"/"They" is also embedded with the sentence before it);
    4. for each candidate the features of `FEATURES` are computed (similarity, share of the part's
       content words the evidence and the premises state in any word form, names the premises
       lack, years / dates / numbers that agree or conflict, named entities swapped, negation
       that differs) and a softmax regression fitted on the training split of the labelled set
       (`lexical_model.json`) gives P(SUPPORTED), P(NEUTRAL), P(CONTRADICTED);
    5. a part that states a name, number, year or full date no premise states is never SUPPORTED
       (names match without diacritics, in part, in any word form; numbers as values with units,
       spelled-out ones included; years, dates and numbers are compared with all the premises
       together, and a date conflicts only on a unit stating half the part's other words);
    6. each candidate gets the most probable allowed label, CONTRADICTED being allowed only when a
       conflict was found (different year, date, number or named entity, or an explicit negation
       of the same statement); a contradiction on a unit at least as similar as any supporting
       one wins, else support, else the claim is NEUTRAL on the most similar unit; `confidence` is the
       calibrated probability of the label (a unit in conflict with the claim decides between
       CONTRADICTED and NEUTRAL only); among supporting units the evidence shown is the one
       stating most of the part's words.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempo_eval.common.values import require_text_list
from tempo_eval.core.text import split_claims, split_sentences
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tempo_eval.verify.facts import (
    WordIndex,
    content_words,
    date_conflict,
    fmt_date,
    fmt_quantities,
    fmt_years,
    mentioned_numbers,
    mentioned_quantities,
    missing_names,
    missing_numbers,
    names,
    negated,
    normal_word,
    quantity_conflicts,
    stated_dates,
    stated_years,
    swapped_names,
    written_numbers,
)

if TYPE_CHECKING:
    from tempo_eval.verify.embeddings import Embedder

__all__ = ["ANAPHORIC_START", "FEATURES", "MODEL_PATH", "SUMMARY", "LexicalVerifier"]

#: a sentence opening with one of these leans on the previous one ("It was completed in 1889.")
ANAPHORIC_START = re.compile(r"(?:it|its|he|his|she|her|they|their|this|these|the latter|the former)\b", re.IGNORECASE)
MODEL_PATH = Path(__file__).with_name("lexical_model.json")
#: what the verifier does, in one line: the dashboard's description and `available_verifiers`'
SUMMARY = (
    "Offline: MiniLM similarity picks the candidate evidence sentences, then a softmax model "
    "calibrated on a labelled set weighs word coverage and the agreement of years, dates, numbers, "
    "names and negation into a verdict with its probability."
)
CLASSES = ("SUPPORTED", "NEUTRAL", "CONTRADICTED")
FEATURES = (
    "similarity",
    "coverage_evidence",
    "coverage_premises",
    "names_missing",
    "years_agree",
    "years_missing",
    "numbers_missing",
    "conflict",
    "conflict_x_coverage",
    "entity_conflict",
    "entity_x_coverage",
    "negation_differs",
    "negation_x_coverage",
    "facts_unstated",
    "quantities_agree",
)
_LONG_SENTENCE_WORDS = 40
_WINDOW_WORDS, _WINDOW_STRIDE = 24, 12
_CANDIDATES = 4
#: a unit without conflict supports the claim when P(SUPPORTED) is at least this and at least
#: P(NEUTRAL). Set by hand (0.5 and 0.4 tried) looking at the train split, the hand-labelled sets
#: of tests/verify/test_lexical_verifier.py and the bundled sample, so the sample is not held out from it
_SUPPORT_MIN = 0.4
_CLAUSE_BREAK = re.compile(r"[,;:]\s+|\s+(?:and|but|while|whereas)\s+")
_SUBJECT_GLUE = frozenset({"the", "a", "an", "of", "de", "von", "van", "der", "la", "le"})


@functools.cache
def _default_model() -> dict[str, Any]:
    from tempo_eval.verify.calibration import load_model

    return load_model(MODEL_PATH)


@dataclass
class _Unit:
    """One premise sentence (or window of a long one) with what it states."""

    text: str
    context: str  # the unit plus the sentence before it when it opens with "It"/"They"
    orphan: bool  # opens with "It"/"He"/... and nothing before it says who
    fragment: bool  # a bare answer with no verb ("On 1 January 2002."): it states only its facts
    years: frozenset[int]
    quantities: list[tuple[float, str]]
    index: WordIndex


@dataclass
class _Premises:
    units: list[_Unit]
    index: WordIndex
    years: frozenset[int]
    numbers: set[float]
    dates: frozenset[tuple[int, int, int]]
    named: bool  # the premises write some capitalised name


@dataclass
class Judgement:
    """The features of one (claim part, evidence unit) pair and what they say."""

    features: list[float]
    evidence: str
    conflict: str | None  # the conflict's description, None when there is none
    support_note: str
    #: names, numbers, years or dates of the claim that no premise states: never SUPPORTED then
    unstated: str | None = None
    coverage: float = 0.0  # share of the claim's content words the evidence states


def _word_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _units_of(premise: str) -> list[tuple[str, str, bool]]:
    """(unit, context, orphan) for one premise: sentences, long ones as overlapping windows."""
    sentences = split_sentences(premise)
    units: list[tuple[str, str, bool]] = []
    for k, sentence in enumerate(sentences):
        anaphoric = bool(ANAPHORIC_START.match(sentence))
        context = f"{sentences[k - 1]} {sentence}" if anaphoric and k > 0 else sentence
        spans = _word_spans(sentence)
        if len(spans) <= _LONG_SENTENCE_WORDS:
            units.append((sentence, context, anaphoric and k == 0))
            continue
        for start in range(0, max(1, len(spans) - _WINDOW_STRIDE), _WINDOW_STRIDE):
            window = spans[start : start + _WINDOW_WORDS]
            text = sentence[window[0][0] : window[-1][1]]
            units.append((text, text, False))
    return units


def _is_fragment(text: str) -> bool:
    """A short unit without a verb that states a year, date or number: a bare answer."""
    from tempo_eval.core.text import _is_verb

    words = re.findall(r"[A-Za-z][A-Za-z'’-]*|\d+", text)
    has_fact = bool(stated_years(text) or mentioned_quantities(text))
    return has_fact and len(words) <= 8 and not any(_is_verb(word) for word in words)


def _subject_words(claim: str) -> set[str]:
    """The words of the claim's leading noun phrase ("The Western Roman Empire", "Lehman Brothers")."""
    words = []
    for token in re.findall(r"[A-Za-z][A-Za-z'’-]*", claim):
        if token[0].isupper() or token.lower() in _SUBJECT_GLUE:
            words.append(token)
        else:
            break
    return set(words)


def _coverage(words: list[str], index: WordIndex) -> float:
    if not words:
        return 1.0
    return sum(1 for word in words if index.has(word)) / len(words)


def _closest_clause(claim_words: list[str], text: str) -> str:
    """The clause of `text` sharing most content words with the claim (where a negation counts)."""
    pieces = [p for p in _CLAUSE_BREAK.split(text) if p.strip()]
    if len(pieces) <= 1:
        return text
    wanted = set(claim_words)

    def overlap(piece: str) -> int:
        return len(wanted & {normal_word(w) for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", piece)})

    best = max(range(len(pieces)), key=lambda i: overlap(pieces[i]))
    return pieces[best] if overlap(pieces[best]) else text


def _unstated(claim: str, lacking: set[str], premises: _Premises) -> tuple[set[int], set[float], set, list[str]]:
    """What the claim states that no premise does: (years, numbers, dates, notes for the reason)."""
    numbers_as_years = {int(n) for n in premises.numbers if float(n).is_integer()}
    years = set(stated_years(claim) - premises.years) - numbers_as_years
    numbers = missing_numbers(written_numbers(claim), premises.numbers | {float(y) for y in premises.years})
    dates = set(stated_dates(claim) - premises.dates)
    notes = [f"{what} not in the premises: {text}" for what, found, text in (
        ("names", lacking, ", ".join(sorted(lacking))),
        ("years", years, fmt_years(years)),
        ("numbers", numbers, ", ".join(f"{n:g}" for n in sorted(numbers))),
        ("dates", dates, ", ".join(fmt_date(d) for d in sorted(dates))),
    ) if found]
    return years, numbers, dates, notes


#: a date in the claim differs from one in the evidence about the same event when the evidence
#: states at least this share of the claim's other content words
_SAME_EVENT_COVERAGE = 0.5


def judge(claim: str, similarity: float, unit: _Unit, premises: _Premises) -> Judgement:
    """The features of `claim` against one evidence unit (see FEATURES), with the conflict found.

    The claim's years, dates and numbers are compared with all the premises together: a fact
    stated in another premise sentence is no conflict ("from 16 October to 28 October 1962" when
    the end date is in the next context)."""
    words = content_words(claim)
    claim_names = names(claim)
    lacking = missing_names(claim, premises.index)
    if unit.orphan:  # "It ended in 476 AD": the claim's subject is what "It" stands for
        subject = _subject_words(claim)
        lacking -= subject
        subject_words = {normal_word(w) for w in subject}
        words = [w for w in words if w not in subject_words] or words
    claim_years = stated_years(claim)
    claim_quantities = mentioned_quantities(claim)
    missing_years = claim_years - unit.years
    coverage_evidence = _coverage(words, unit.index)
    if unit.fragment:
        lacking = set()  # a bare answer ("On 3 March 1931.") names nothing: the question did
    # premises that open with "It"/"He" and name nobody ("It was adopted on 4 July 1776.") are a
    # bare answer to a question we do not see: the claim's names cannot be missing from them; its
    # years, dates and numbers still must agree
    bare_answer = unit.orphan and not premises.named
    unstated_years, unstated_numbers, unstated_dates, notes = _unstated(
        claim, set() if bare_answer else lacking, premises
    )
    conflicts: list[str] = []
    year_conflict = bool(claim_years and unit.years and not claim_years & unit.years and unstated_years)
    if year_conflict:
        conflicts.append(f"years differ: claim {fmt_years(claim_years)}, evidence {fmt_years(unit.years)}")
    dates = date_conflict(claim, unit.text, premises.dates)
    if dates and not unit.fragment and coverage_evidence < _SAME_EVENT_COVERAGE:
        dates = None  # another date of another event in the same sentence
    if dates:
        conflicts.append(f"dates differ: claim {fmt_date(dates[0])}, evidence {fmt_date(dates[1])}")
    quantities = [
        pair for pair in quantity_conflicts(claim_quantities, unit.quantities)
        if missing_numbers({pair[0][0]}, premises.numbers)
    ]
    if quantities:
        claimed = sorted({q for q, _ in quantities})
        stated = sorted({e for _, e in quantities})
        conflicts.append(f"numbers differ: claim {fmt_quantities(claimed)}, evidence {fmt_quantities(stated)}")
    mine, swapped = swapped_names(claim, unit.text, lacking)
    entity_conflict = bool(swapped)
    if entity_conflict:
        conflicts.append(f"names differ: claim {', '.join(sorted(mine))}, evidence {', '.join(sorted(swapped))}")
    negation = negated(claim) != negated(_closest_clause(words, unit.text))
    if negation:
        conflicts.append("one of claim and evidence negates the statement")
    if unit.fragment:
        # a bare answer states only its date or number: agreeing on it is all it can support
        agrees = bool(claim_years) and not missing_years and not dates and not quantities
        coverage_evidence = 1.0 if agrees else 0.0
    conflict = 1.0 if year_conflict or dates or quantities else 0.0
    claim_values = {value for value, _ in claim_quantities}
    unit_values = {value for value, _ in unit.quantities}
    quantities_agree = bool(claim_values) and not missing_numbers(claim_values, unit_values)
    features = [
        similarity,
        coverage_evidence,
        _coverage(words, premises.index),
        len(lacking) / max(1, len(claim_names)),
        1.0 if claim_years and not missing_years else 0.0,
        1.0 if unstated_years else 0.0,
        1.0 if unstated_numbers else 0.0,
        conflict,
        conflict * coverage_evidence,
        1.0 if entity_conflict else 0.0,
        (1.0 if entity_conflict else 0.0) * coverage_evidence,
        1.0 if negation else 0.0,
        (1.0 if negation else 0.0) * coverage_evidence,
        1.0 if notes else 0.0,
        1.0 if quantities_agree else 0.0,
    ]
    note = f"similarity {similarity:.2f}, {coverage_evidence:.0%} of its words in the evidence"
    if notes:
        note += "; " + "; ".join(notes)
    return Judgement(features, unit.text, "; ".join(conflicts) or None, note,
                     unstated="; ".join(notes) or None, coverage=coverage_evidence)


def decide(claim: str, judgement: Judgement, model: dict[str, Any]) -> ClaimVerdict:
    """The verdict and calibrated confidence of one claim part from its judgement."""
    from tempo_eval.verify.calibration import predict_proba

    probabilities = predict_proba(model, judgement.features)
    if judgement.conflict:
        # a unit that conflicts with the claim never supports it
        against = probabilities["CONTRADICTED"] / max(1e-12, probabilities["CONTRADICTED"] + probabilities["NEUTRAL"])
        label, confidence = ("CONTRADICTED", against) if against >= 0.5 else ("NEUTRAL", 1.0 - against)
    elif judgement.unstated is None and probabilities["SUPPORTED"] >= max(probabilities["NEUTRAL"], _SUPPORT_MIN):
        label, confidence = "SUPPORTED", probabilities["SUPPORTED"]
    else:
        # no conflict a reviewer could check: "not supported" is all the model may say
        label, confidence = "NEUTRAL", 1.0 - probabilities["SUPPORTED"]
    if label == "CONTRADICTED":
        reason = f"{judgement.conflict} ({judgement.support_note})"
    elif label == "SUPPORTED":
        reason = f"the evidence states it ({judgement.support_note})"
    elif judgement.unstated is not None:
        reason = f"the premises do not state it: {judgement.unstated} ({judgement.support_note})"
    else:
        reason = f"the premises do not settle it ({judgement.support_note})"
    return ClaimVerdict(claim, Verdict(label), evidence=judgement.evidence, reason=reason,
                        confidence=min(1.0, max(0.0, confidence)))


def _decisiveness(model: dict[str, Any], judgement: Judgement) -> float:
    from tempo_eval.verify.calibration import predict_proba

    probabilities = predict_proba(model, judgement.features)
    return probabilities["SUPPORTED"] + (probabilities["CONTRADICTED"] if judgement.conflict else 0.0)


def _best_verdict(claim: str, candidates: list[Judgement], model: dict[str, Any]) -> ClaimVerdict:
    """Support anywhere wins (the premises state the claim), then a contradiction, else NEUTRAL
    on the most similar unit: as the NLI verifier aggregates its candidates."""
    verdicts = [decide(claim, judgement, model) for judgement in candidates]
    similarity = [judgement.features[0] for judgement in candidates]
    supported = [k for k, v in enumerate(verdicts) if v.verdict is Verdict.SUPPORTED]
    contradicted = [k for k, v in enumerate(verdicts) if v.verdict is Verdict.CONTRADICTED]
    # a contradiction on a unit at least as close to the claim outweighs support found elsewhere
    if contradicted and (not supported or similarity[contradicted[0]] >= similarity[supported[0]]):
        return max((verdicts[k] for k in contradicted), key=lambda v: v.confidence or 0.0)
    if supported:
        # the evidence shown is the sentence that states most of the claim, not merely the one the
        # model is surest of ("St Paul's ... 1710" is shown with the St Paul's sentence)
        best = max(supported, key=lambda k: (round(candidates[k].coverage, 6), similarity[k]))
        return verdicts[best]
    return verdicts[0]


def combine(claim: str, parts: list[ClaimVerdict]) -> ClaimVerdict:
    """One verdict for a claim from the verdicts of its atomic parts."""
    contradicted = [p for p in parts if p.verdict is Verdict.CONTRADICTED]
    if len(parts) == 1:
        deciding = parts[0]
    elif contradicted:
        deciding = max(contradicted, key=lambda p: p.confidence or 0.0)
    elif all(p.verdict is Verdict.SUPPORTED for p in parts):
        deciding = min(parts, key=lambda p: p.confidence or 0.0)
    else:
        deciding = min((p for p in parts if p.verdict is not Verdict.SUPPORTED), key=lambda p: p.confidence or 0.0)
    reason = deciding.reason if len(parts) == 1 else f'part "{deciding.claim}": {deciding.reason}'
    return ClaimVerdict(claim, deciding.verdict, evidence=deciding.evidence, reason=reason, confidence=deciding.confidence)


class LexicalVerifier:
    """Offline verdicts with a calibrated confidence (see the module docstring).

    Args:
        embedder: anything with `embed(texts) -> unit vectors`; default the process-wide MiniLM.
        model: a fitted softmax model (`calibration.fit_softmax`); default `lexical_model.json`.
        split: judge the atomic parts of compound claims separately (default True).
    """

    name = "lexical"
    model_id = "minilm-l6-v2+calibrated-v4"

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        model: dict[str, Any] | None = None,
        split: bool = True,
    ) -> None:
        self._embedder = embedder
        self._model = model
        self.split = bool(split)

    @property
    def model(self) -> dict[str, Any]:
        return self._model if self._model is not None else _default_model()

    def check_available(self) -> tuple[bool, str]:
        """(True, what it does) when it can run here, else (False, why): without an embedder of
        its own it needs the [nli] extra's packages (looked up, not imported)."""
        from tempo_eval.verify.base import missing_extra

        missing = None if self._embedder is not None else missing_extra(self.name)
        return (True, SUMMARY) if missing is None else (False, missing)

    @property
    def settings(self) -> str:
        """The settings that change verdicts, for cache keys."""
        import hashlib
        import json

        digest = hashlib.sha256(json.dumps(self.model, sort_keys=True).encode()).hexdigest()[:12]
        return f"model={digest};split={int(self.split)}"

    def _embed(self, texts: list[str]):
        embedder = self._embedder
        if embedder is None:
            from tempo_eval.verify.embeddings import default_embedder

            embedder = default_embedder()
        return embedder.embed(texts)

    def _premises(self, premises: list[str]) -> _Premises:
        raw = [unit for premise in premises for unit in _units_of(premise)]
        units = [
            _Unit(text, context, orphan, _is_fragment(text), stated_years(text), mentioned_quantities(text), WordIndex(context))
            for text, context, orphan in raw
        ]
        joined = " ".join(premises)
        return _Premises(
            units=units,
            index=WordIndex(joined),
            years=frozenset().union(*(u.years for u in units)) if units else frozenset(),
            numbers=written_numbers(joined) | mentioned_numbers(joined),
            dates=stated_dates(joined),
            named=bool(names(joined)),
        )

    def judgements(self, claims: Sequence[str], premises: Sequence[str]) -> list[list[Judgement]]:
        """For each claim (no splitting), the judgements against its candidate evidence units."""
        claims = list(claims)
        facts = self._premises(list(premises))
        if not facts.units or not claims:
            return [[] for _ in claims]
        texts = [unit.text for unit in facts.units]
        contexts = [unit.context for unit in facts.units]
        extra = sorted({c for c, t in zip(contexts, texts, strict=True) if c != t})
        vectors = self._embed(claims + texts + extra)
        claim_vectors = vectors[: len(claims)]
        similarity = claim_vectors @ vectors[len(claims) : len(claims) + len(texts)].T
        if extra:
            position = {c: i for i, c in enumerate(extra)}
            context_similarity = claim_vectors @ vectors[len(claims) + len(texts) :].T
            for j, (context, text) in enumerate(zip(contexts, texts, strict=True)):
                if context != text:
                    column = context_similarity[:, position[context]]
                    similarity[:, j] = [max(a, b) for a, b in zip(similarity[:, j], column, strict=True)]
        result = []
        for row, claim in enumerate(claims):
            scores = [float(x) for x in similarity[row]]
            ranked = sorted(range(len(scores)), key=lambda j: -scores[j])[:_CANDIDATES]
            result.append([judge(claim, scores[j], facts.units[j], facts) for j in ranked])
        return result

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """One verdict per claim; raises VerifierUnavailable without MiniLM."""
        claims = require_text_list(claims, "claims")
        premises = require_text_list(premises, "premises")
        if not claims:
            return []
        if not any(p.strip() for p in premises):
            return [ClaimVerdict(claim, Verdict.NEUTRAL, reason="no premises", confidence=1.0) for claim in claims]
        parts_of = [(split_claims(claim) or [claim]) if self.split else [claim] for claim in claims]
        flat = [part for parts in parts_of for part in parts]
        judged = self.judgements(flat, premises)
        model = self.model
        part_verdicts = [
            _best_verdict(part, candidates, model) if candidates
            else ClaimVerdict(part, Verdict.NEUTRAL, reason="no premises", confidence=1.0)
            for part, candidates in zip(flat, judged, strict=True)
        ]
        verdicts, start = [], 0
        for claim, parts in zip(claims, parts_of, strict=True):
            verdicts.append(combine(claim, part_verdicts[start : start + len(parts)]))
            start += len(parts)
        return verdicts

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """`verify` in a worker thread (embedding is CPU-bound)."""
        return await asyncio.to_thread(self.verify, claims, premises)
