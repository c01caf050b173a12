"""Hostile cases for the lexical verifier (issue 25): invented names, numbers and dates are never
SUPPORTED; names, numbers and dates match however they are written; a claim is judged against all
its premises together; the evidence shown is the sentence that decided the verdict."""

from __future__ import annotations

import pytest

from tempo_eval.verify.base import Verdict
from tempo_eval.verify.lexical import LexicalVerifier

S, C, N = Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.NEUTRAL

EIFFEL = ("The Eiffel Tower is named after the engineer Gustave Eiffel, whose company designed and built the "
          "tower for the 1889 World's Fair. The tower is 330 metres tall.")
FIRE = ["The Great Fire of London began in the early hours of 2 September 1666 in Thomas Farriner's bakery on "
        "Pudding Lane. It burned until 6 September 1666 and destroyed about 13,200 houses and 87 parish churches.",
        "Old St Paul's Cathedral was lost in the fire of 1666. Christopher Wren's new cathedral was built on the "
        "same site between 1675 and 1710."]
CUBA = ["The Cuban Missile Crisis was a 13-day confrontation. It began on 16 October 1962, when Kennedy was shown "
        "photographs of Soviet missile sites in Cuba.",
        "The crisis ended on 28 October 1962, when Khrushchev announced that the missiles would be dismantled."]


@pytest.fixture(scope="module")
def lexical() -> LexicalVerifier:
    return LexicalVerifier()


def verdict(lexical: LexicalVerifier, claim: str, premises: list[str]):
    return lexical.verify([claim], premises)[0]


def test_an_invented_designer_is_not_supported(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "The tower was designed by the architect Charles Garnier for the 1889 World's Fair.", [EIFFEL])
    assert found.verdict is N and "Garnier" in found.reason


def test_an_invented_cause_named_with_a_capital_is_not_supported(lexical: LexicalVerifier) -> None:
    premise = "Einstein received the 1921 Nobel Prize in Physics for his explanation of the photoelectric effect."
    found = verdict(lexical, "Einstein received the 1921 Nobel Prize in Physics for his work on Brownian motion.", [premise])
    assert found.verdict is not S


@pytest.mark.parametrize("claim", [
    "The Eiffel Tower is 412 metres tall.",
    "The tower is 330 metres tall and was built by 300 workers.",
])
def test_an_invented_number_is_never_supported(lexical: LexicalVerifier, claim: str) -> None:
    assert verdict(lexical, claim, [EIFFEL]).verdict is not S


def test_another_number_for_the_same_count_contradicts(lexical: LexicalVerifier) -> None:
    premise = "The building cost A$102 million, against an original estimate of A$7 million."
    found = verdict(lexical, "The building cost A$102 million, against an original estimate of A$25 million.", [premise])
    assert found.verdict is C


@pytest.mark.parametrize("claim", [
    "The fire destroyed about 13.2 thousand houses.",
    "The fire destroyed about thirteen thousand two hundred houses.",
    "The fire destroyed about 13,200 houses.",
])
def test_numbers_match_as_values(lexical: LexicalVerifier, claim: str) -> None:
    assert verdict(lexical, claim, FIRE).verdict is S


def test_a_spelled_compound_number_is_its_value(lexical: LexicalVerifier) -> None:
    premise = "Nelson Mandela was released from Victor Verster Prison on 11 February 1990 after 27 years in prison."
    found = verdict(lexical, "Mandela was released from Victor Verster Prison after twenty-seven years in prison.", [premise])
    assert found.verdict is S


@pytest.mark.parametrize(("claim", "premise"), [
    ("Jorn Utzon designed the Sydney Opera House.", "The Sydney Opera House was designed by the Danish architect Jørn Utzon."),
    ("Marie Sklodowska-Curie won the Nobel Prize in Physics in 1903.", "Marie Skłodowska-Curie won the Nobel Prize in Physics in 1903."),
    ("Einstein moved to the United States in 1933.", "Albert Einstein moved to the United States in 1933."),
    ("Sagarmatha is 8,849 metres high.", "Mount Everest, known in Nepal as Sagarmatha, is 8,849 metres high."),
])
def test_names_match_without_diacritics_in_part_and_by_alias(lexical: LexicalVerifier, claim: str, premise: str) -> None:
    assert verdict(lexical, claim, [premise]).verdict is S


def test_a_date_of_the_same_event_that_differs_contradicts(lexical: LexicalVerifier) -> None:
    premise = "RMS Titanic sank in the early morning of 15 April 1912 in the North Atlantic Ocean."
    found = verdict(lexical, "The Titanic sank on 14 May 1912 in the North Atlantic.", [premise])
    assert found.verdict is C and "15 April 1912" in found.reason


def test_a_date_of_another_event_does_not_contradict(lexical: LexicalVerifier) -> None:
    premise = "The museum's new wing opened to visitors on 3 May 1990 after a long refurbishment."
    found = verdict(lexical, "The treaty between the two rival kingdoms was signed on 9 May 1990.", [premise])
    assert found.verdict is N


def test_parts_stated_in_different_premise_sentences_are_judged_together(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "It lasted thirteen days, from 16 October to 28 October 1962.", CUBA)
    assert found.verdict is not C, found.reason


def test_the_evidence_is_the_sentence_that_decided_the_verdict(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "Old St Paul's Cathedral was lost in the fire of 1666.", FIRE)
    assert found.verdict is S and "St Paul's" in found.evidence and "Pudding Lane" not in found.evidence
