"""The lexical verifier: MiniLM similarity finds the evidence, year / number / negation agreement decides.

It needs no NLI checkpoint, so it is the offline fallback. It is a heuristic; its accuracy on a
labelled set is measured in `tests/test_lexical_verifier.py`, not assumed.

Rules, per claim (premises split into sentences; similarity = MiniLM cosine):
    1. no premise sentences -> NEUTRAL ("no premises");
    2. best similarity below `similarity_threshold` -> NEUTRAL (nothing in the premises is about
       the claim);
    3. among the on-topic sentences (similarity >= `similarity_threshold`) the evidence is the most
       similar one that agrees with the claim's years and numbers, else the most similar one;
    4. claim and evidence both state years and share none -> CONTRADICTED ("years differ: claim
       1500, evidence 1889"); both state numbers, the claim has one the evidence lacks and the
       evidence has one the claim lacks -> CONTRADICTED ("numbers differ: ...");
    5. similarity >= `support_threshold` and exactly one of the two is negated -> CONTRADICTED
       ("negation differs");
    6. similarity >= `support_threshold`, every claim year and number occurs in the evidence or
       elsewhere in the premises, and every capitalised name of the claim occurs in the premises
       -> SUPPORTED;
    7. otherwise NEUTRAL, with the reason that kept it from support.
Years come from the focus-time extractor (`extract_aft`); numbers are the other numerals, with
"3.5 million" == "3,500,000" and "$2.5bn" == 2.5e9.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tempo_eval._values import require_text_list
from tempo_eval.core.text import split_sentences
from tempo_eval.verify.base import ClaimVerdict, Verdict

if TYPE_CHECKING:
    from tempo_eval.verify.embeddings import Embedder

_SCALES = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9,
    "b": 1e9, "trillion": 1e12, "tn": 1e12,
}
_NUMBER = re.compile(
    r"(?<![\w.])(?P<currency>[$€£¥])?\s?(?P<value>\d{1,3}(?:,\d{3})+|\d+)(?P<decimal>\.\d+)?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|tn|[mkb])\b)?",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "dozen": 12,
}
_UNIT = re.compile(r"\s?(%|[A-Za-z]+)")
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|nobody|nothing|cannot)\b|n't\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-zA-Z]+(?:-[A-Z][a-zA-Z]+)*\b")
_WORD = re.compile(r"[a-z0-9]+")
#: capitalised words that are not names (sentence openers, titles of common things)
_NOT_NAME_WORDS = (
    "the a an he she it they we i you this that these those there here his her its their our my "
    "in on at after before during however but and so then today since when while as although "
    "because if also by from for with some many most all both each one two three what which who "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday "
    "first second third fourth fifth sixth seventh eighth ninth tenth last next"
)
#: a sentence opening with one of these leans on the previous one ("It was completed in 1889.")
ANAPHORIC_START = re.compile(r"(?:it|its|he|his|she|her|they|their|this|these|the latter|the former)\b", re.IGNORECASE)
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())


def mentioned_years(text: str) -> set[int]:
    """The years `text` talks about, from the shared focus-time extractor."""
    from tempo_eval.core.extract import extract_aft

    return set(extract_aft(text).years)


def stated_years(text: str) -> set[int]:
    """Years `text` states as dates, years, decades, centuries or ranges.

    Named periods are left out: in "World War II ended in 1950" the war names the topic, and
    its 1939-1945 must not make the claim agree with a premise saying "ended in 1945".
    """
    from tempo_eval.core.extract import extract_aft

    years: set[int] = set()
    for span in extract_aft(text).spans:
        if span.kind != "period":
            years |= span.years
    return years


def _year_spans(text: str) -> list[tuple[int, int]]:
    from tempo_eval.core.extract import extract_aft

    return [(span.start, span.end) for span in extract_aft(text).spans]


def mentioned_quantities(text: str) -> list[tuple[float, str]]:
    """(value, unit) for each numeral of `text` outside temporal expressions.

    The value is scaled ("2.5bn" -> 2.5e9; "m", "k" and "b" only after a currency sign, since
    "330 m" is metres); the unit is the currency sign or the next word, lower-cased without a
    plural "s" ("12,000 people" -> "people", "7 years" -> "year"), "" when there is none.
    """
    taken = _year_spans(text)
    quantities: list[tuple[float, str]] = []
    for match in _NUMBER.finditer(text):
        start = match.start("value")
        if any(a <= start < b for a, b in taken):
            continue
        value = float(match.group("value").replace(",", "") + (match.group("decimal") or ""))
        scale = (match.group("scale") or "").lower()
        if scale and (len(scale) > 1 or match.group("currency")):
            value *= _SCALES[scale]
            unit = match.group("currency") or ""
        else:
            unit = match.group("currency") or _unit_after(text, match.end("decimal") if match.group("decimal") else match.end("value"))
        quantities.append((value, unit))
    for match in _NUMBER_WORD.finditer(text):
        quantities.append((float(_NUMBER_WORDS[match.group(1).lower()]), _unit_after(text, match.end())))
    return quantities


def _unit_after(text: str, position: int) -> str:
    match = _UNIT.match(text, position)
    if match is None:
        return ""
    word = match.group(1).lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def mentioned_numbers(text: str) -> set[float]:
    """The values of `mentioned_quantities(text)`."""
    return {value for value, _ in mentioned_quantities(text)}


def _missing(wanted: set[float], have: set[float]) -> set[float]:
    return {x for x in wanted if not any(math.isclose(x, y, rel_tol=1e-9) for y in have)}


def _conflicts(
    claim: list[tuple[float, str]], evidence: list[tuple[float, str]]
) -> list[tuple[tuple[float, str], tuple[float, str]]]:
    """Pairs (claim quantity, evidence quantity) with the same unit where the claim's value is
    stated nowhere in the evidence: "300 m" against "330 m", not "7 years" against "330 metres"."""
    values = {value for value, _ in evidence}
    return [
        ((value, unit), (other, other_unit))
        for value, unit in claim
        if _missing({value}, values)
        for other, other_unit in evidence
        if other_unit == unit
    ]


def _fmt_quantities(quantities: list[tuple[float, str]]) -> str:
    return ", ".join(f"{value:g} {unit}".strip() for value, unit in quantities)


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def _names(text: str) -> set[str]:
    """Capitalised words after the first word (the first is capitalised anyway), lower-cased."""
    return {
        match.group(0).lower()
        for match in _NAME.finditer(text)
        if match.start() > 0 and match.group(0).lower() not in _NOT_NAMES
    }


def _fmt_years(years: set[int]) -> str:
    ordered = sorted(years)
    if len(ordered) > 4 and ordered[-1] - ordered[0] == len(ordered) - 1:
        return f"{ordered[0]}-{ordered[-1]}"
    return ", ".join(str(year) for year in ordered)


def _fmt_numbers(numbers: set[float]) -> str:
    return ", ".join(f"{number:g}" for number in sorted(numbers))


@dataclass
class _Facts:
    """Premise sentences with the years and numbers each states, and every premise word."""

    units: list[str]
    years: list[set[int]]
    numbers: list[set[float]]
    quantities: list[list[tuple[float, str]]]
    words: set[str]


class LexicalVerifier:
    """Offline verdicts from embedding similarity plus year, number and negation agreement.

    Args:
        similarity_threshold: cosine similarity from which a premise sentence is "about" the claim.
        support_threshold: cosine similarity from which an agreeing sentence supports the claim.
        embedder: anything with `embed(texts) -> unit vectors`; default the process-wide MiniLM.
    """

    name = "lexical"
    model_id = "minilm-l6-v2+years"

    def __init__(
        self,
        *,
        similarity_threshold: float = 0.5,
        support_threshold: float = 0.7,
        embedder: Embedder | None = None,
    ) -> None:
        for label, value in (("similarity_threshold", similarity_threshold), ("support_threshold", support_threshold)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1.0 <= value <= 1.0:
                raise ValueError(f"{label} must be a number in [-1, 1], got {value!r}")
        if support_threshold < similarity_threshold:
            raise ValueError(
                f"support_threshold ({support_threshold}) must be >= similarity_threshold ({similarity_threshold})"
            )
        self.similarity_threshold = float(similarity_threshold)
        self.support_threshold = float(support_threshold)
        self._embedder = embedder

    @property
    def settings(self) -> str:
        """The settings that change verdicts, for cache keys."""
        return f"similarity={self.similarity_threshold};support={self.support_threshold}"

    def _embed(self, texts: list[str]):
        embedder = self._embedder
        if embedder is None:
            from tempo_eval.verify.embeddings import default_embedder

            embedder = default_embedder()
        return embedder.embed(texts)

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """One verdict per claim (rules in the module docstring); raises VerifierUnavailable without MiniLM."""
        claims = require_text_list(claims, "claims")
        premises = require_text_list(premises, "premises")
        if not claims:
            return []
        per_premise = [split_sentences(premise) for premise in premises]
        units = [sentence for sentences in per_premise for sentence in sentences]
        if not units:
            return [ClaimVerdict(claim, Verdict.NEUTRAL, reason="no premises") for claim in claims]
        # A sentence starting with "It"/"They"/... is also embedded together with the sentence
        # before it, so "It was published in 1937." can be found for "The Hobbit was published".
        contexts = [
            f"{sentences[k - 1]} {sentence}"
            for sentences in per_premise
            for k, sentence in enumerate(sentences)
            if k > 0 and ANAPHORIC_START.match(sentence)
        ]
        context_of = [
            k > 0 and bool(ANAPHORIC_START.match(sentence))
            for sentences in per_premise
            for k, sentence in enumerate(sentences)
        ]
        import numpy as np

        vectors = self._embed(list(claims) + units + contexts)
        claim_vectors = vectors[: len(claims)]
        similarity = claim_vectors @ vectors[len(claims) : len(claims) + len(units)].T
        if contexts:
            with_context = claim_vectors @ vectors[len(claims) + len(units) :].T
            column = 0
            for j, has_context in enumerate(context_of):
                if has_context:
                    similarity[:, j] = np.maximum(similarity[:, j], with_context[:, column])
                    column += 1
        facts = _Facts(
            units=units,
            years=[stated_years(unit) for unit in units],
            numbers=[mentioned_numbers(unit) for unit in units],
            quantities=[mentioned_quantities(unit) for unit in units],
            words=set(_WORD.findall(" ".join(premises).lower())),
        )
        return [
            self._decide(claim, [float(x) for x in similarity[row]], facts)
            for row, claim in enumerate(claims)
        ]

    def _decide(self, claim: str, similarity: list[float], facts: _Facts) -> ClaimVerdict:
        units = facts.units
        ranked = sorted(range(len(units)), key=lambda j: -similarity[j])
        best = ranked[0]
        if similarity[best] < self.similarity_threshold:
            return ClaimVerdict(
                claim, Verdict.NEUTRAL, evidence=units[best],
                reason=f"no premise sentence is about the claim (best similarity {similarity[best]:.2f})",
            )
        claim_years, claim_quantities = stated_years(claim), mentioned_quantities(claim)
        claim_numbers = {value for value, _ in claim_quantities}
        on_topic = [j for j in ranked if similarity[j] >= self.similarity_threshold]

        def agrees(j: int) -> bool:
            return claim_years <= facts.years[j] and not _missing(claim_numbers, facts.numbers[j])

        def states_same_kind(j: int) -> bool:
            return bool((claim_years and facts.years[j]) or _conflicts(claim_quantities, facts.quantities[j]))

        # evidence: the closest on-topic sentence that agrees, else the closest that states a
        # year / number to compare with, else the closest
        chosen = next(
            (j for j in on_topic if agrees(j)),
            next((j for j in on_topic if states_same_kind(j)), best),
        )
        score = similarity[chosen]
        evidence, years = units[chosen], facts.years[chosen]

        def verdict(kind: Verdict, reason: str) -> ClaimVerdict:
            return ClaimVerdict(claim, kind, evidence=evidence, reason=f"{reason} (similarity {score:.2f})")

        if claim_years and years and not claim_years & years:
            return verdict(
                Verdict.CONTRADICTED,
                f"years differ: claim {_fmt_years(claim_years)}, evidence {_fmt_years(years)}",
            )
        conflicts = _conflicts(claim_quantities, facts.quantities[chosen])
        if conflicts:
            claimed = sorted({q for q, _ in conflicts})
            stated = sorted({e for _, e in conflicts})
            return verdict(
                Verdict.CONTRADICTED,
                f"numbers differ: claim {_fmt_quantities(claimed)}, evidence {_fmt_quantities(stated)}",
            )
        if score < self.support_threshold:
            return verdict(Verdict.NEUTRAL, "related but not close enough to count as support")
        if _negated(claim) != _negated(evidence):
            return verdict(Verdict.CONTRADICTED, "negation differs between claim and evidence")
        unstated_years = claim_years - set().union(*facts.years)
        if unstated_years:
            return verdict(Verdict.NEUTRAL, f"claim years not in the premises: {_fmt_years(unstated_years)}")
        unstated_numbers = _missing(claim_numbers, set().union(*facts.numbers))
        if unstated_numbers:
            return verdict(Verdict.NEUTRAL, f"claim numbers not in the premises: {_fmt_numbers(unstated_numbers)}")
        unknown_names = {name for name in _names(claim) if name not in facts.words}
        if unknown_names:
            return verdict(Verdict.NEUTRAL, f"claim names not in the premises: {', '.join(sorted(unknown_names))}")
        return verdict(Verdict.SUPPORTED, "similar and the years and numbers agree")

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """`verify` in a worker thread (embedding is CPU-bound)."""
        return await asyncio.to_thread(self.verify, claims, premises)
