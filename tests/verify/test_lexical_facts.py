"""Hostile cases for the lexical verifier (issue 25): invented names, numbers and dates are never
SUPPORTED; names, numbers and dates match however they are written; a claim is judged against all
its premises together; the evidence shown is the sentence that decided the verdict."""

from __future__ import annotations

import pytest

from tempo_eval.verify.base import Verdict
from tempo_eval.verify.lexical import LexicalVerifier
from tests.support.paths import ROOT

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
    assert found.verdict is S, found.reason


#: the bundled sample's two contexts for q21 (data/sample/temporal_qa.csv): neither states the 13 days
SAMPLE_CUBA = ["The Cuban Missile Crisis began on 16 October 1962, when President Kennedy was shown photographs of "
               "Soviet missile sites in Cuba.",
               "The crisis ended on 28 October 1962, when Khrushchev announced that the missiles would be dismantled."]


def test_the_sample_s_thirteen_days_are_judged_against_both_of_its_contexts(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "It lasted thirteen days, from 16 October to 28 October 1962.", SAMPLE_CUBA)
    # both dates are stated (one per context); only the count of 13 days is not
    assert found.verdict is N, found.reason
    assert "numbers not in the premises: 13" in found.reason and "date" not in found.reason


@pytest.mark.parametrize(("claim", "premise"), [
    ("The crisis lasted from 16 October 1962 to 28 October 1962.", "It lasted thirteen days, from 16 October to 28 October 1962."),
    ("The talks ran from 3 March 2004 to 9 March 2004.", "The talks ran from 3 to 9 March 2004 in Geneva."),
    ("The strike began on 4 May 1926.", "The general strike lasted from May 4 to May 12, 1926."),
])
def test_the_first_day_of_a_range_takes_the_year_written_after_the_second(lexical: LexicalVerifier, claim: str, premise: str) -> None:
    found = verdict(lexical, claim, [premise])
    assert found.verdict is S, found.reason


def test_a_day_without_its_year_takes_the_year_its_sentence_gives_the_month(lexical: LexicalVerifier) -> None:
    premise = "The crash came in late October 1929, with Black Thursday on 24 October and Black Tuesday on 29 October."
    found = verdict(lexical, "Share prices collapsed on Black Thursday, 24 October 1929.", [premise])
    assert found.verdict is S, found.reason


def test_a_name_written_out_matches_the_initials_the_premises_write(lexical: LexicalVerifier) -> None:
    premise = "The UK formally left the EU on 31 January 2020, after the referendum of June 2016."
    found = verdict(lexical, "The United Kingdom formally left the European Union on 31 January 2020.", [premise])
    assert found.verdict is S, found.reason
    other = verdict(lexical, "The United States formally left the European Union on 31 January 2020.", [premise])
    assert other.verdict is not S, other.reason


def test_the_evidence_is_the_sentence_that_decided_the_verdict(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "Old St Paul's Cathedral was lost in the fire of 1666.", FIRE)
    assert found.verdict is S and "St Paul's" in found.evidence and "Pudding Lane" not in found.evidence


def test_a_day_of_a_month_is_no_missing_number(lexical: LexicalVerifier) -> None:
    premise = "The crew, Jim Lovell, Jack Swigert and Fred Haise, returned safely to Earth on April 17, 1970."
    found = verdict(lexical, "Lovell, Swigert and Haise came home safely on April 17.", [premise])
    assert "numbers not in the premises" not in found.reason


def test_a_number_rounded_to_its_own_digits_is_the_same_value(lexical: LexicalVerifier) -> None:
    premise = "The Channel Tunnel is a 50.46-kilometre railway tunnel that connects Folkestone with Coquelles."
    assert verdict(lexical, "The Channel Tunnel, about 50.5 km long, links Folkestone with Coquelles.", [premise]).verdict is S
    assert verdict(lexical, "The Channel Tunnel, about 38 km long, links Folkestone with Coquelles.", [premise]).verdict is C


def test_a_premise_opening_with_he_does_not_excuse_a_name_when_the_premises_name_people(lexical: LexicalVerifier) -> None:
    premises = ["Albert Einstein was a German-born theoretical physicist.",
                "He received the 1921 Nobel Prize in Physics for his explanation of the photoelectric effect."]
    found = verdict(lexical, "Einstein received the 1921 Nobel Prize in Physics for his work on Brownian motion.", premises)
    assert found.verdict is not S and "Brownian" in found.reason


def test_a_bare_reference_answer_names_nobody_so_the_claim_s_names_are_not_missing(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "The Continental Congress adopted it in Philadelphia on 4 July 1776.", ["It was adopted on 4 July 1776."])
    assert found.verdict is S


@pytest.mark.slow
def test_on_hand_written_qa_answers_the_verifier_beats_the_novel_name_rule(lexical: LexicalVerifier) -> None:
    import importlib.util
    import sys

    path = ROOT / "bench" / "qa_invented.py"
    spec = importlib.util.spec_from_file_location("qa_invented", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    items = bench.load_items()
    assert len(items) >= 150
    result = bench.measure(items, lexical)
    for part in ("dev", "heldout"):
        ours, rule = result[part]["verifier"]["balanced_accuracy"], result[part]["rule"]["balanced_accuracy"]
        assert ours >= rule + 0.2 and ours >= 0.9, (part, ours, rule)


@pytest.mark.parametrize(("text", "expected"), [
    ("Thirteen days: from 16 to 28 October 1962.", {(1962, 10, 16), (1962, 10, 28)}),
    ("The strike lasted from May 4 to May 12, 1926.", {(1926, 5, 4), (1926, 5, 12)}),
    ("Fighting raged on October 16-28, 1962.", {(1962, 10, 16), (1962, 10, 28)}),
    ("He was born on 3 May. In May 1990 he left.", set()),  # another sentence gives no year
    ("On 3 May he arrived; he left in May 1990 and came back in May 1991.", set()),  # two years: none
    ("The battle of 14 October 1066 was followed on 25 December by a coronation.", {(1066, 10, 14)}),
])
def test_dates_without_their_year_take_one_only_from_their_own_sentence(text: str, expected: set) -> None:
    from tempo_eval.verify.facts import mentioned_numbers, stated_dates

    assert stated_dates(text) == expected
    assert not mentioned_numbers(text) - {13.0}  # the days are no quantities


def test_an_acronym_matches_the_name_whose_linking_words_it_skips(lexical: LexicalVerifier) -> None:
    premise = ("The International Union for Conservation of Nature downgraded the Iberian lynx from endangered "
               "to vulnerable in June 2024.")
    assert verdict(lexical, "The IUCN moved the lynx from endangered to vulnerable in June 2024.", [premise]).verdict is S
    assert verdict(lexical, "The WWF moved the lynx from endangered to vulnerable in June 2024.", [premise]).verdict is not S


KENNEDY = "President John F. Kennedy gave his speech in Berlin on 26 June 1963."
ABBEY_ROAD = "The Beatles released the album Abbey Road on 26 September 1969."


@pytest.mark.parametrize(("claim", "premise"), [
    ("Kennedy's speech in Berlin took place on 26 June 1963.", KENNEDY),  # a possessive, a partial name
    ("J. F. Kennedy gave a speech in Berlin on 26 June 1963.", KENNEDY),  # initials
    ("JOHN F. KENNEDY gave a speech in Berlin on 26 June 1963.", KENNEDY),  # case
    ("Beatles released Abbey Road on 26 September 1969.", ABBEY_ROAD),  # without "the"
    ("The Beatles released Abbey Road on September 26, 1969.", ABBEY_ROAD),  # a date written the other way
])
def test_names_and_dates_match_however_they_are_written(lexical: LexicalVerifier, claim: str, premise: str) -> None:
    found = verdict(lexical, claim, [premise])
    assert found.verdict is S, found.reason


def test_another_name_in_the_same_role_contradicts(lexical: LexicalVerifier) -> None:
    found = verdict(lexical, "The Rolling Stones released Abbey Road on 26 September 1969.", [ABBEY_ROAD])
    assert found.verdict is C and "Beatles" in found.reason, found.reason
