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
