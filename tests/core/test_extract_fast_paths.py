"""The extractor's fast paths (issue 27) give what its general paths give: a plain four-digit
year (`FocusTimeExtractor._plain_year`, `_plain_cue_year`) against `_year` / `_cue_year`, and the
ASCII separator pass (`scan.spaced_text`) against the one for any text, on a varied set of texts
built around every check the fast paths skip (currency, digit groups, open ranges, units, BC,
counts, ranges, cue words, separators, non-ASCII digits)."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from tempo_eval.core.extract import FocusTimeExtractor
from tempo_eval.core.scan import _spaced_unicode, spaced_text
from tests.support.paths import TESTS

GOLDEN = TESTS / "data" / "recorded_results.json.gz"

_BEFORE = [
    "", " ", "in ", "In ", "since ", "until ", "till ", "during ", "circa ", "c. ", "ca. ", "c.", "in  ", "in\n",
    "in\t", "in-", "$", "$ ", "€ ", "# ", "5 ", "555 ", "12-", "1.", "12:", "post-", "pre-", "pre–", "anti-", "the ",
    "The ", "By ", "(", "\"", "“", "\n", "-", "x-", "page ", "more than ", "No. ", "from ", "between ", ". ",
    "the year ", "mid-", "early ", "May ", "12 March ", "FY", "AD ", "２",
]
_YEARS = [
    "1971", "1999", "2000", "2099", "2100", "2999", "1000", "1200", "1990s", "1800s", "'90s", "1971-75", "1999-00",
    "2020-03", "2008-2010", "2010-2008", "2008/2009", "1914–18", "2008 to 2010", "2008 and 2010", "2020-03-12",
    "12/03/2020", "19th century", "1999.5", "476", "２０２０", "٢٠٢٠",
]
_AFTER = [
    "", ".", ",", ";", ":", "!", "?", ")", "]", "'", "’s", " ", "  ", "\t", "\n", " BC", " b.c.", " AD", " km",
    " people", " apartments", " new apartments", " polling stations", " it was", " block of", " Oak Street",
    " sales", " 555", " 12", " 2019", "%", "°", "-km", " per cent", " thousand", " to 1980", " and 1980", "–1980",
    "-", "/", "é", " brings", " years ago",
]
_FILLERS = ["", "It opened ", "Records show that it closed ", "they said. ", "Population grew to "]


def _varied_texts(n: int, seed: int) -> list[tuple[str, str | None]]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            parts.append(rng.choice(_FILLERS) + rng.choice(_BEFORE) + rng.choice(_YEARS) + rng.choice(_AFTER))
            if rng.random() < 0.5:
                parts.append(rng.choice([" ", ", ", ". ", " and ", " to ", "\n", " - "]))
        text = "".join(parts)
        if rng.random() < 0.2:
            text = text.upper() if rng.random() < 0.5 else text.capitalize()
        texts.append((text, rng.choice([None, "2024-06-15"])))
    return texts


def _general() -> FocusTimeExtractor:
    """An extractor that reads every year through the general handlers."""
    extractor = FocusTimeExtractor()
    extractor._handlers.update(year=extractor._year, cueyear=extractor._cue_year)
    return extractor


def _whole(focus) -> tuple:
    spans = [(type(s), s.start, s.end, s.text, s.first, s.last, s.kind, s.capped) for s in focus.spans]
    return sorted(focus.years), spans, focus.text, focus.reference_year


@pytest.fixture(scope="module")
def texts() -> list[tuple[str, str | None]]:
    recorded = [(text, ref) for text, ref, *_ in json.loads(gzip.decompress(GOLDEN.read_bytes()))["focus"]]
    return recorded + _varied_texts(6000, seed=27)


def test_plain_year_paths_give_what_the_general_handlers_give(texts):
    fast, general = FocusTimeExtractor(), _general()
    assert fast._handlers["year"] == fast._plain_year  # the paths under test are the ones in use
    assert fast._handlers["cueyear"] == fast._plain_cue_year
    calls = {"fast": 0, "handed on": 0, "general": 0}

    def general_call(handler):
        def call(*args, **kwargs):
            calls["general"] += 1
            return handler(*args, **kwargs)
        return call

    def plain_call(handler):
        def call(*args, **kwargs):
            before = calls["general"]
            handler(*args, **kwargs)
            calls["fast" if calls["general"] == before else "handed on"] += 1
        return call

    fast._handlers.update(year=plain_call(fast._plain_year), cueyear=plain_call(fast._plain_cue_year))
    fast._year, fast._cue_year = general_call(fast._year), general_call(fast._cue_year)
    for text, ref in texts:
        assert _whole(fast.extract(text, ref)) == _whole(general.extract(text, ref)), (text, ref)
    # both ways are taken many times: decided on the fast path, and handed to the general one
    assert calls["fast"] > 1000 and calls["handed on"] > 1000, calls


def test_plain_year_paths_still_apply_every_check():
    extract = FocusTimeExtractor().extract
    assert extract("It reopened in 1991, they said.").years == {1991}
    assert extract("By 1998 it was modernised.").years == {1998}
    assert extract("The hall has 1998 seats.").years == set()  # a unit
    assert extract("They built 1200 apartments.").years == set()  # a count
    assert extract("Call 555 1999 today.").years == set()  # a digit group
    assert extract("It cost $ 2000.").years == set()  # money
    assert extract("post-1959.").spans[0].kind == "open_range"
    assert extract("It was built in 1200 BC.").years == set()
    assert extract("in 2100.").years == set()  # past the last year


@pytest.mark.parametrize("text", [
    "plain words, no separators", "line\nbreak\tand\rmore\fand\vthis", "(brackets) [and] {braces} \"quotes\"",
    "mid-1990s and pre-WWII -- a-b 5-6 x-'90s", "", " ", "-", "a-", "\x00control\x1b",
])
def test_ascii_separator_pass_matches_the_general_one(text):
    low = " " + text.lower()
    assert spaced_text(low) == _spaced_unicode(low)
    for varied, _ in _varied_texts(300, seed=5):
        if varied.isascii():
            low = " " + varied.lower()
            assert spaced_text(low) == _spaced_unicode(low), varied
