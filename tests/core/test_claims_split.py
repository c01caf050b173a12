"""split_claims on labelled sentences: atomic, self-contained claims with their source offsets.

Each expected list was written by hand (66 sentences covering
coordinated verb phrases, independent clauses, semicolons, relative, when/after and participle
clauses, appositions, and sentences that must stay whole).
"""

from __future__ import annotations

import re

import pytest

from tempo_eval.core.text import atomic_claims, split_claims
from tests.support.claim_spans import claim_spans

CASES = [
    # coordinated verb phrases: the subject is carried over
    ("The fire broke out on 2 September 1666 in a bakery on Pudding Lane and burned for about four days, until 6 September 1666.",
     ["The fire broke out on 2 September 1666 in a bakery on Pudding Lane", "The fire burned for about four days, until 6 September 1666."]),
    ("The project began in 1990 and was declared complete in April 2003.", ["The project began in 1990", "The project was declared complete in April 2003."]),
    ("He was born in 1950, and moved to Paris in 1970.", ["He was born in 1950", "He moved to Paris in 1970."]),
    ("Napoleon was defeated at Waterloo in 1815 and was then exiled to Saint Helena.", ["Napoleon was defeated at Waterloo in 1815", "Napoleon was then exiled to Saint Helena."]),
    ("The company opened its first store in 1994 and moved its headquarters to Seattle in 1998.", ["The company opened its first store in 1994", "The company moved its headquarters to Seattle in 1998."]),
    ("Marie Curie won the physics prize in 1903 and received the chemistry prize in 1911.", ["Marie Curie won the physics prize in 1903", "Marie Curie received the chemistry prize in 1911."]),
    ("The bridge was designed by John Roebling and was completed by his son in 1883.", ["The bridge was designed by John Roebling", "The bridge was completed by his son in 1883."]),
    ("She studied law in Leeds and later worked as a judge in London.", ["She studied law in Leeds", "She later worked as a judge in London."]),
    ("The ship left Southampton on 10 April 1912 and sank five days later.", ["The ship left Southampton on 10 April 1912", "The ship sank five days later."]),
    ("The museum was founded in 1753 and opened to the public in 1759.", ["The museum was founded in 1753", "The museum opened to the public in 1759."]),
    ("Apollo 11 landed on the Moon on 20 July 1969 and returned to Earth on 24 July.", ["Apollo 11 landed on the Moon on 20 July 1969", "Apollo 11 returned to Earth on 24 July."]),
    ("The band formed in Liverpool in 1960 and split up in 1970.", ["The band formed in Liverpool in 1960", "The band split up in 1970."]),
    # verbs that share one object stay whole
    ("William of Normandy defeated and killed King Harold II on 14 October 1066.", ["William of Normandy defeated and killed King Harold II on 14 October 1066."]),
    ("The tower was designed and built by the company of Gustave Eiffel.", ["The tower was designed and built by the company of Gustave Eiffel."]),
    # coordinated subjects and objects stay whole
    ("Smith and Jones founded it.", ["Smith and Jones founded it."]),
    ("Armstrong and Aldrin walked on the Moon.", ["Armstrong and Aldrin walked on the Moon."]),
    ("The fire destroyed about 13,200 houses and 87 parish churches.", ["The fire destroyed about 13,200 houses and 87 parish churches."]),
    ("It was founded by Smith, Jones, and Brown in 1990.", ["It was founded by Smith, Jones, and Brown in 1990."]),
    ("He bought bread and milk and went home.", ["He bought bread and milk", "He went home."]),
    # independent clauses
    ("X happened in 2008, and Y happened in 2009.", ["X happened in 2008", "Y happened in 2009."]),
    ("The war began in 1939, but the U.S. entered it in 1941.", ["The war began in 1939", "the U.S. entered it in 1941."]),
    ("It arrived in October 1347, and by 1351 it had killed a third of Europe's population.", ["It arrived in October 1347", "by 1351 it had killed a third of Europe's population."]),
    ("The museum opened in 1900, while the library opened in 1910.", ["The museum opened in 1900", "the library opened in 1910."]),
    ("On 14 October 1066 William defeated the English army and King Harold II was killed.", ["On 14 October 1066 William defeated the English army", "King Harold II was killed."]),
    ("The storm hit the coast on Monday, and thousands of homes lost power.", ["The storm hit the coast on Monday", "thousands of homes lost power."]),
    ("The treaty was signed in 1919, yet the war had ended in 1918.", ["The treaty was signed in 1919", "the war had ended in 1918."]),
    # semicolons
    ("The tower was built in 1889; it is 330 m tall.", ["The tower was built in 1889", "it is 330 m tall."]),
    ("The museum opened in 1900; however, it closed in 1950.", ["The museum opened in 1900", "it closed in 1950."]),
    ("Paris, France; Rome, Italy.", ["Paris, France; Rome, Italy."]),
    ("The UK authorised the vaccine on 2 December 2020; the US followed on 11 December 2020.", ["The UK authorised the vaccine on 2 December 2020", "the US followed on 11 December 2020."]),
    # relative clauses
    ("Lehman Brothers filed for bankruptcy on 15 September 2008, which led to a bank rescue programme.", ["Lehman Brothers filed for bankruptcy on 15 September 2008", "This led to a bank rescue programme."]),
    ("The tower, which was completed in 1889, is in Paris.", ["The tower, which was completed in 1889, is in Paris."]),
    ("The dam burst in 1928, which killed more than 400 people.", ["The dam burst in 1928", "This killed more than 400 people."]),
    ("The law was passed in 1965, which ended literacy tests for voters.", ["The law was passed in 1965", "This ended literacy tests for voters."]),
    ("The tower, which was completed in 1889, and the museum opened in 1900.", ["The tower, which was completed in 1889, and the museum opened in 1900."]),
    ("The scientist who discovered penicillin was Alexander Fleming.", ["The scientist who discovered penicillin was Alexander Fleming."]),
    # when / after / before clauses
    ("The Berlin Wall fell in November 1989, when East Germany opened its border crossings.", ["The Berlin Wall fell in November 1989", "East Germany opened its border crossings."]),
    ("The Western Roman Empire ended in 476 AD, when Odoacer deposed Romulus Augustulus.", ["The Western Roman Empire ended in 476 AD", "Odoacer deposed Romulus Augustulus."]),
    ("Euro coins went into circulation on 1 January 2002, three years after the currency was introduced in 1999.", ["Euro coins went into circulation on 1 January 2002", "the currency was introduced in 1999."]),
    ("The team won the cup in 2005, after the captain had scored twice in the final.", ["The team won the cup in 2005", "the captain had scored twice in the final."]),
    ("The power failed at noon, before the backup generator started.", ["The power failed at noon", "the backup generator started."]),
    ("The bubble peaked on 10 March 2000, when the Nasdaq closed above 5,000.", ["The bubble peaked on 10 March 2000", "the Nasdaq closed above 5,000."]),
    ("Columbus landed in the Bahamas on 12 October 1492, after sailing from Spain in August.", ["Columbus landed in the Bahamas on 12 October 1492, after sailing from Spain in August."]),
    ("When the war ended, he returned home.", ["When the war ended, he returned home."]),
    # a time adjunct with its own date: the main clause, and the whole sentence (the order of events)
    ("The project was declared complete in April 2003, after a working draft in 2000.",
     ["The project was declared complete in April 2003", "The project was declared complete in April 2003 after a working draft in 2000."]),
    ("The tsunami struck on 26 December 2004, after a magnitude 9.1 earthquake off Sumatra.",
     ["The tsunami struck on 26 December 2004", "The tsunami struck on 26 December 2004 after a magnitude 9.1 earthquake off Sumatra."]),
    # appositions
    ("A crowd stormed the Bastille, a royal fortress and prison, on 14 July 1789.", ["A crowd stormed the Bastille on 14 July 1789.", "The Bastille was a royal fortress and prison"]),
    ("The crew visited Messina, a port in Sicily, in October 1347.", ["The crew visited Messina in October 1347.", "Messina was a port in Sicily"]),
    ("They met Ada Lovelace, a mathematician, in London in 1833.", ["They met Ada Lovelace in London in 1833.", "Ada Lovelace was a mathematician"]),
    # participle phrases
    ("Gutenberg completed his Bible in Mainz around 1455, using the press he had developed in the 1440s.", ["Gutenberg completed his Bible in Mainz around 1455", "Gutenberg using the press he had developed in the 1440s."]),
    ("The earthquake struck at dawn, killing more than 200 people.", ["The earthquake struck at dawn", "The earthquake killing more than 200 people."]),
    # single claims stay whole
    ("The Eiffel Tower was completed in 1889.", ["The Eiffel Tower was completed in 1889."]),
    ("Reactor No. 4 exploded on 26 April 1986 during a safety test.", ["Reactor No. 4 exploded on 26 April 1986 during a safety test."]),
    ("The first iPhone cost $499.", ["The first iPhone cost $499."]),
    ("And then it ended.", ["And then it ended."]),
    ("The Black Death reached Europe in October 1347, arriving at Messina in Sicily.", ["The Black Death reached Europe in October 1347", "The Black Death arriving at Messina in Sicily."]),
    ("Mount Everest is 8,849 metres high.", ["Mount Everest is 8,849 metres high."]),
    ("D-Day was 6 June 1944.", ["D-Day was 6 June 1944."]),
    ("It went on sale in the United States on 29 June 2007.", ["It went on sale in the United States on 29 June 2007."]),
    ("On 1 January 2002.", ["On 1 January 2002."]),
    # several sentences
    ("It rained. X won in 2008, and Y lost in 2009.", ["It rained.", "X won in 2008", "Y lost in 2009."]),
    ("The tower opened in 1889. It was the tallest structure until 1930, and it is still visited by millions.",
     ["The tower opened in 1889.", "It was the tallest structure until 1930", "it is still visited by millions."]),
    ("Mandela was freed in 1990 and was elected president in 1994. He served one term.",
     ["Mandela was freed in 1990", "Mandela was elected president in 1994.", "He served one term."]),
    ("The Suez Canal opened in 1869; it links the Mediterranean and the Red Sea.", ["The Suez Canal opened in 1869", "it links the Mediterranean and the Red Sea."]),
    ("The Hubble telescope was launched in 1990 and was repaired by astronauts in 1993.", ["The Hubble telescope was launched in 1990", "The Hubble telescope was repaired by astronauts in 1993."]),
    ("the wall fell in 1989 and germany was reunified in 1990.", ["the wall fell in 1989", "germany was reunified in 1990."]),
]


def test_the_labelled_set_is_large_enough() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[case[0][:40] for case in CASES])
def test_split_claims_on_a_labelled_sentence(text: str, expected: list[str]) -> None:
    assert split_claims(text) == expected


@pytest.mark.parametrize("text", [case[0] for case in CASES], ids=[case[0][:40] for case in CASES])
def test_every_claim_keeps_the_offsets_of_its_source_text(text: str) -> None:
    words = {w.lower() for w in re.findall(r"[\w'’-]+", text)}
    for claim in atomic_claims(text):
        assert 0 <= claim.start < claim.end <= len(text)
        source = {w.lower() for w in re.findall(r"[\w'’-]+", text[claim.start : claim.end])}
        own = {w.lower() for w in re.findall(r"[\w'’-]+", claim.text)}
        # every word comes from the text (a carried subject included), bar "This" and a copula
        assert own - {"this", "was", "is"} <= words
        assert len(own & source) >= len(source) / 2
    spans = claim_spans(text)
    assert spans == sorted(spans)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
