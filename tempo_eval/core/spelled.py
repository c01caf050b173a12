"""Years written in words: "nineteen ninety-six", "eighteen fifteen", "two thousand and eight"."""

from __future__ import annotations

from functools import lru_cache

from tempo_eval.core.grammar import SMALL_NUMBERS
from tempo_eval.core.grammar import TENS as _TENS

_UNITS = {word: n for word, n in SMALL_NUMBERS.items() if n < 10}
_TEENS = {word: n for word, n in SMALL_NUMBERS.items() if n >= 10}


def _below_hundred(words: list[str]) -> int | None:
    """ "ninety six" -> 96, "fifteen" -> 15, "oh five" -> 5, "eight" -> 8; else None."""
    if len(words) == 1:
        word = words[0]
        return _TEENS.get(word, _TENS.get(word, _UNITS.get(word)))
    if len(words) == 2:
        head, unit = words
        if head == "oh" and unit in _UNITS:
            return _UNITS[unit]
        if head in _TENS and unit in _UNITS:
            return _TENS[head] + _UNITS[unit]
    return None


@lru_cache(maxsize=1024)  # pure; the same few phrases come back
def spelled_year(text: str) -> int | None:
    """The year a phrase spells out, or None.

    "nineteen ninety-six" = 1996, "eighteen fifteen" = 1815, "nineteen oh five" = 1905,
    "nineteen hundred" = 1900, "twenty nineteen" = 2019, "two thousand" = 2000,
    "two thousand and eight" = 2008, "two thousand ten" = 2010. The century word is eleven to
    twenty; "twenty hundred" and "twenty five" (a count) are no years.
    """
    words = text.lower().replace("-", " ").split()
    if words[:2] == ["two", "thousand"]:
        rest = words[2:]
        if rest[:1] == ["and"]:
            rest = rest[1:]
            if not rest:
                return None
        if not rest:
            return 2000
        tail = _below_hundred(rest)
        return None if tail is None or (len(rest) == 2 and rest[0] == "oh") else 2000 + tail
    if len(words) < 2 or words[0] not in _TEENS and words[0] != "twenty":
        return None
    century = _TEENS.get(words[0], 20)
    if century < 11:
        return None
    rest = words[1:]
    if rest == ["hundred"]:
        return None if century == 20 else century * 100
    tail = _below_hundred(rest)
    if tail is None or tail < 10 and rest[0] != "oh":
        return None  # "twenty five" is a count
    return century * 100 + tail
