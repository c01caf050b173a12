"""Sentence and claim splitting: abbreviations, numbers, initials, lists, quotes, clauses."""

from __future__ import annotations

import pytest

from tempo_eval.core.text import sentence_spans, split_claims, split_sentences
from tests.support.claim_spans import claim_spans

SENTENCE_CASES = [
    (
        "Paris is the capital of France. The Eiffel Tower was completed in 1889.",
        ["Paris is the capital of France.", "The Eiffel Tower was completed in 1889."],
    ),
    ("He moved to the U.S. in 1990. It rained.", ["He moved to the U.S. in 1990.", "It rained."]),
    ("The U.S. Army was there. It left.", ["The U.S. Army was there.", "It left."]),
    ("He lived in the U.S. The company grew.", ["He lived in the U.S.", "The company grew."]),
    ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
    ("Mrs. Brown and Prof. White came.", ["Mrs. Brown and Prof. White came."]),
    ("The church of St. Paul is old. It was rebuilt.", ["The church of St. Paul is old.", "It was rebuilt."]),
    ("Fruit, e.g. Apples, grow. Nuts do too.", ["Fruit, e.g. Apples, grow.", "Nuts do too."]),
    ("One city, i.e. Paris, won. Others lost.", ["One city, i.e. Paris, won.", "Others lost."]),
    ("It was built c. 1900 in stone. It stands.", ["It was built c. 1900 in stone.", "It stands."]),
    ("It opened on Jan. 5 in Oslo. Crowds came.", ["It opened on Jan. 5 in Oslo.", "Crowds came."]),
    ("See No. 3 on the list. It is short.", ["See No. 3 on the list.", "It is short."]),
    ("The city has 3.5 million people. It grows.", ["The city has 3.5 million people.", "It grows."]),
    ("The deal cost $2.5bn in 2019. Shares fell.", ["The deal cost $2.5bn in 2019.", "Shares fell."]),
    ("J. R. R. Tolkien wrote it in 1937. It sold well.", ["J. R. R. Tolkien wrote it in 1937.", "It sold well."]),
    ("It ended in World War I. The war ended.", ["It ended in World War I.", "The war ended."]),
    ('He said "It ended." Then he left.', ['He said "It ended."', "Then he left."]),
    ('"Stop!" she said. He stopped.', ['"Stop!" she said.', "He stopped."]),
    ('It ended. "Why?" he asked.', ["It ended.", '"Why?" he asked.']),
    ("Wait... Then it happened.", ["Wait...", "Then it happened."]),
    ("It went on… and on. Then it stopped.", ["It went on… and on.", "Then it stopped."]),
    ("Really?! Yes. Good!", ["Really?!", "Yes.", "Good!"]),
    ("It was built (in 1889). Then it was painted.", ["It was built (in 1889).", "Then it was painted."]),
    ("He works at Apple Inc. The firm grew.", ["He works at Apple Inc.", "The firm grew."]),
    ("Apple Inc. is big.", ["Apple Inc. is big."]),
    ("Bread, milk, etc. are sold. They are cheap.", ["Bread, milk, etc. are sold.", "They are cheap."]),
    ("The year was 1889. 1890 was next.", ["The year was 1889.", "1890 was next."]),
    ("- first item\n- second item", ["first item", "second item"]),
    ("* one\n• two\n+ three", ["one", "two", "three"]),
    ("1. numbered one\n2) numbered two\n(3) three", ["numbered one", "numbered two", "three"]),
    ("(a) alpha\nb) beta", ["alpha", "beta"]),
    ("- an item. With two sentences.", ["an item.", "With two sentences."]),
    ("Summary\nThe tower was built.", ["Summary", "The tower was built."]),
    ("The tower was\nbuilt in 1889.", ["The tower was\nbuilt in 1889."]),
    ("It opened in\n1889 to the public.", ["It opened in\n1889 to the public."]),
    ("First paragraph\n\nSecond paragraph", ["First paragraph", "Second paragraph"]),
    ("Line one.\r\nLine two.", ["Line one.", "Line two."]),
    ("## Results\nIt worked.", ["Results", "It worked."]),
    ("no capital. still same", ["no capital.", "still same"]),  # lower-cased text
    ("the wall fell in 1989. it was mr. smith's idea, e.g. a plan. no. 4 exploded.", ["the wall fell in 1989.", "it was mr. smith's idea, e.g. a plan.", "no. 4 exploded."]),
    ("Still one. \"Stop!\" she said.", ["Still one.", "\"Stop!\" she said."]),
    ("", []),
    ("   \n\n  ", []),
    ("...", []),
    ("No trailing punctuation", ["No trailing punctuation"]),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCE_CASES)
def test_split_sentences_handles_case(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


CLAIM_CASES = [
    ("X happened in 2008, and Y happened in 2009.", ["X happened in 2008", "Y happened in 2009."]),
    ("The tower was built in 1889; it is 330 m tall.", ["The tower was built in 1889", "it is 330 m tall."]),
    ("The war began in 1939, but the U.S. entered it in 1941.", ["The war began in 1939", "the U.S. entered it in 1941."]),
    ("Smith and Jones founded it.", ["Smith and Jones founded it."]),
    ("He was born in 1950, and moved to Paris in 1970.", ["He was born in 1950", "He moved to Paris in 1970."]),
    ("The tower, which was completed in 1889, is in Paris.", ["The tower, which was completed in 1889, is in Paris."]),
    ("The tower, which was completed in 1889, and the museum opened in 1900.", ["The tower, which was completed in 1889, and the museum opened in 1900."]),
    ("It was founded by Smith, Jones, and Brown in 1990.", ["It was founded by Smith, Jones, and Brown in 1990."]),
    ("Paris, France; Rome, Italy.", ["Paris, France; Rome, Italy."]),
    ("It rained. X won in 2008, and Y lost in 2009.", ["It rained.", "X won in 2008", "Y lost in 2009."]),
    ("The museum opened in 1900; however, it closed in 1950.", ["The museum opened in 1900", "it closed in 1950."]),
    ("And then it ended.", ["And then it ended."]),
]


@pytest.mark.parametrize(("text", "expected"), CLAIM_CASES)
def test_split_claims_splits_only_independent_clauses(text: str, expected: list[str]) -> None:
    assert split_claims(text) == expected


@pytest.mark.parametrize("text", [case[0] for case in SENTENCE_CASES + CLAIM_CASES])
def test_spans_are_trimmed_offsets_into_the_text(text: str) -> None:
    for spans in (sentence_spans(text), claim_spans(text)):
        assert spans == sorted(spans)
        for start, end in spans:
            assert 0 <= start < end <= len(text)
            piece = text[start:end]
            assert piece == piece.strip()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert end <= start  # no overlap


def test_split_sentences_is_built_on_spans() -> None:
    text = "Dr. Who came. He left in 1990.\n- an item"
    assert split_sentences(text) == [text[a:b] for a, b in sentence_spans(text)]


def test_split_sentences_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        split_sentences(None)  # type: ignore[arg-type]


def test_long_text_splits_every_sentence() -> None:
    text = " ".join(f"Sentence number {i} ends here." for i in range(2000))
    assert len(split_sentences(text)) == 2000
