"""Is a bare four-digit number a count or an address rather than a year?

The grammar already rejects a number before a known unit or counted noun ("2000 km", "1500
employees", `grammar.UNIT_WORDS`) and after a label ("page 1984", "Flight 1549"). These checks
catch the open class the word lists cannot: any plural noun after the number ("1200
apartments", "1050 survivors", "2015 polling stations"), a street block ("the 1600 block of")
and a street address ("2014 Oak Street"). They look at the original text right after the
number (a count noun is written in lower case; "the 2012 Olympics" keeps its year).

A year modifies plural nouns too ("2008 sales", "the 2004 elections"), and a year that opens
a sentence is its subject ("2020 brings ..."); `YEAR_NOUNS` and `NOT_NOUNS` keep those.
"""

from __future__ import annotations

import re

# Plural nouns a year often modifies: "the 2008 results", "2016 elections".
YEAR_NOUNS = frozenset((
    "sales", "revenues", "earnings", "profits", "losses", "results", "figures", "accounts",
    "elections", "polls", "primaries", "midterms", "games", "olympics", "playoffs", "finals",
    "championships", "series", "standings", "rankings", "statistics", "stats", "numbers",
    "estimates", "forecasts", "projections", "levels", "prices", "rates", "returns", "taxes",
    "budgets", "protests", "riots", "attacks", "bombings", "floods", "fires",
    "wildfires", "storms", "hurricanes", "graduates", "models", "rules", "standards",
    "guidelines", "targets", "awards", "oscars", "grammys", "emmys", "celebrations", "events",
    "reports", "filings", "accords", "agreements", "talks", "negotiations", "reforms",
    "cuts", "increases", "hikes", "winners", "editions", "issues", "holidays", "festivities",
))
# Words ending in "s" that are no plural noun, or verbs after a year as subject ("2020 looks").
NOT_NOUNS = frozenset((
    "was", "has", "does", "this", "thus", "plus", "always", "perhaps", "besides", "towards",
    "afterwards", "whereas", "news", "marks", "brings", "begins", "ends", "looks", "seems",
    "remains", "promises", "means", "proves", "sees", "starts", "represents", "becomes",
    "holds", "offers", "gives", "shows", "comes", "goes", "makes", "takes", "needs", "turns",
    "appears", "follows", "continues", "features", "includes", "lies",
))
# Modifiers between a count and its noun ("1200 new apartments"); adjectives in -ing, -ed,
# -al, -ive, -ous, -ic count as well ("2015 polling stations").
_MODIFIERS = frozenset(("new", "more", "other", "extra", "additional", "small", "large", "armed"))
_MODIFIER_ENDINGS = ("ing", "ed", "al", "ive", "ous", "ic", "ful")
_DETERMINERS = frozenset(("the", "its", "his", "her", "their", "our", "my", "your", "this", "that"))

_WORDS_AFTER = re.compile(r"[ \t]+([a-z][a-z]*)(?:[ \t]+([a-z][a-z]*))?(?![\w'’-])")
_STREET_AFTER = re.compile(
    r"[ \t]+(?:[A-Z][a-z]+[ \t]+){1,2}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Drive"
    r"|Dr|Way|Place|Court|Terrace|Parkway)(?![\w])"
)


def is_plural_noun(word: str) -> bool:
    """A cheap test for a lower-case plural noun: ends in "s", not in "ss", "us" or "is"
    ("business", "status", "crisis"), and no known function word or verb."""
    return (
        len(word) >= 4
        and word[-1] == "s"
        and not word.endswith(("ss", "us", "is"))
        and word not in NOT_NOUNS
    )


def _counted(word: str) -> bool:
    return is_plural_noun(word) and word not in YEAR_NOUNS


def is_count_or_address(text: str, start: int, end: int) -> bool:
    """Is the number at `start`..`end` of `text` a count of a plural noun ("1200 apartments",
    "2015 polling stations"), a street block ("1600 block of") or a house number ("2014 Oak
    Street")? After a determiner ("the 1999 amendments", "his 1984 novels") a number before
    a plural is a year. Cheap: the two words after the number and the word before."""
    words = _WORDS_AFTER.match(text, end)
    if words is None:
        return _STREET_AFTER.match(text, end) is not None
    first, second = words.group(1, 2)
    if first == "block" and second == "of":
        return True
    if not (_counted(first) or (
        second and (first in _MODIFIERS or first.endswith(_MODIFIER_ENDINGS)) and _counted(second)
    )):
        return False
    before = text[max(0, start - 7) : start].split()
    return not before or before[-1].lower() not in _DETERMINERS


def opens_sentence(text: str, start: int) -> bool:
    """Does the word at `start` of `text` open a sentence (a year as subject: "2020 brings")?"""
    before = text[max(0, start - 4) : start].rstrip()
    return not before or before[-1] in ".!?"
