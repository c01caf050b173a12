"""The text an extraction scans, and the cheap context checks every kind of expression uses.

A `Scan` holds the text, its lower-cased twin padded with one leading space (`low`), the same
with every separator turned into a space (`spaced`), the reference date and the spans found
so far. Offsets inside a scan index `low`, one more than in the text.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from functools import lru_cache

from tempo_eval.core.focus import YearSpan
from tempo_eval.core.grammar import SMALL_NUMBERS, TENS, UNIT_WORDS
from tempo_eval.core.periods import phrase_pattern

# A unit or a counted noun after a number makes it a quantity ("2000 km", "1500 employees").
UNIT_AFTER = re.compile(rf"[ \t]*(?:%|‰|°|-?{phrase_pattern(UNIT_WORDS)}(?![\w/]))")


@lru_cache(maxsize=1024)  # pure; the same few phrases come back
def number(word: str) -> int | None:
    """ "3" -> 3, "three" -> 3, "twenty-five" -> 25, "a" -> 1, "a couple of" -> 2, "few" -> 3."""
    word = " ".join(word.replace("-", " ").split())
    if word.isdigit():
        return int(word)
    special = {"a": 1, "an": 1, "couple of": 2, "a couple of": 2, "few": 3, "a hundred": 100}
    if word in special:
        return special[word]
    total = 0
    for part in word.split():
        value = SMALL_NUMBERS.get(part, TENS.get(part))
        if value is None:
            return None
        total += value
    return total or None


def previous_word(text: str, start: int) -> str:
    """The word before `start` (a cheap look-back on the spaced text)."""
    words = text[max(0, start - 16) : start].split()
    return words[-1] if words else ""


class Scan:
    """One extraction in progress: the text, its padded lower-cased twin, the reference date
    and the spans so far. Offsets inside the scan index `low` (one more than in `text`)."""

    __slots__ = ("text", "low", "spaced", "ref", "spans")

    def __init__(self, text: str, low: str, ref: dt.date | None) -> None:
        self.text = text
        self.low = low
        self.spaced = low  # with separators as spaces, set by the extractor
        self.ref = ref
        self.spans: list[YearSpan] = []


# Separators that never occur inside an expression become spaces in the text the grammar
# scans, and so do hyphens after a letter ("mid-1990s", "pre-WWII").
_SEPARATOR_CHARS = "\n\t\r\f\v([{\""
_NON_ASCII_SEPARATOR_CHARS = "\xa0\u2002\u2003\u2009\u202f“«"
_HYPHENS_AFTER_LETTER = [
    re.compile(dash + rf"(?<=[^\W\d_]{dash})(?=[\w'’‘])") for dash in ("-", "–", "—")
]


def lower_same_length(text: str) -> str:
    """text.lower(), keeping every character whose lower case has another length (so match
    offsets in the lower-cased text are offsets in the original)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def spaced_text(low: str) -> str:
    """`low` with every separator a space (same length, same offsets): line breaks, opening
    brackets and quotes, and hyphens after a letter ("mid-1990s" -> "mid 1990s")."""
    if not low.isascii():
        return _spaced_unicode(low)
    # one C pass rules out the five control characters at once (most texts have none)
    if not low.isprintable():
        for separator in "\n\t\r\f\v":
            if separator in low:
                low = low.replace(separator, " ")
    for separator in "([{\"":
        if separator in low:
            low = low.replace(separator, " ")
    if "-" in low:
        low = _HYPHENS_AFTER_LETTER[0].sub(" ", low)
    return low


def _spaced_unicode(low: str) -> str:
    """`spaced_text` for a text with non-ASCII characters (more separators, and dashes)."""
    for separator in _SEPARATOR_CHARS + _NON_ASCII_SEPARATOR_CHARS:
        if separator in low:  # a fast C search; most texts have few of these
            low = low.replace(separator, " ")
    for dash, hyphens in zip("-–—", _HYPHENS_AFTER_LETTER, strict=True):
        if dash in low:
            low = hyphens.sub(" ", low)
    return low


def is_digit_group(low: str, edge: int, backward: bool = False) -> bool:
    """Is the token that ends (backward) or starts at `edge` a group of digits other than a
    four-digit number ("555" in "555 2019"; not "1999" in "1998 1999", nor "q3")?"""
    step = -1 if backward else 1
    i = edge - 1 if backward else edge
    n = 0
    while 0 <= i < len(low) and low[i].isdigit():
        i += step
        n += 1
    if n == 0 or n == 4:
        return False
    return not (0 <= i < len(low) and low[i].isalpha())


#: a decimal digit other than 0-9 (full-width "２", Arabic-Indic "٢", Devanagari "२", ...)
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


def ascii_digits(text: str) -> str:
    """`text` with every Unicode decimal digit replaced by its ASCII digit ("２０２０" and
    "٢٠٢٠" -> "2020"), one character for one, so offsets into the result are offsets into
    `text`. NFKC would do the same for digits but changes the length of other characters.
    The same object is returned when there is nothing to replace."""
    if text.isascii() or _OTHER_DIGIT.search(text) is None:
        return text
    return _OTHER_DIGIT.sub(lambda match: str(unicodedata.decimal(match.group())), text)
