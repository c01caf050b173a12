"""What a sentence states that the offline verifier can compare: years, dates, quantities, names,
negation and content words. Pure regex and Python.

Years come from the shared focus-time extractor, with one change for comparing: a range states its
endpoints, not every year between ("(September 1, 1933 - September 13, 2006)" states 1933 and 2006,
so "born in 1950" does not agree with it; "2007-08" states 2007 and 2008). Named periods ("World
War II") name a topic and state no year.
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# ---- years and dates --------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def stated_years(text: str) -> frozenset[int]:
    """Years `text` states: dates and years, decade and century sets, range endpoints."""
    from tempo_eval.core.extract import extract_aft

    years: set[int] = set()
    for span in extract_aft(text).spans:
        if span.kind == "period":
            continue
        if span.kind == "range" and span.years:
            years |= {min(span.years), max(span.years)}
        else:
            years |= span.years
    return frozenset(years)


def mentioned_years(text: str) -> set[int]:
    """Every year `text` talks about (ranges filled in, named periods included)."""
    from tempo_eval.core.extract import extract_aft

    return set(extract_aft(text).years)


def year_spans(text: str) -> list[tuple[int, int]]:
    from tempo_eval.core.extract import extract_aft

    return [(span.start, span.end) for span in extract_aft(text).spans]


_MONTH_NAMES = _words("january february march april may june july august september october november december")
_MONTH = {name: i + 1 for i, name in enumerate(_MONTH_NAMES)} | {
    name[:3]: i + 1 for i, name in enumerate(_MONTH_NAMES)
} | {"sept": 9}
_MONTH_RE = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH_RE}\s+(\d{{3,4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{3,4}})\b", re.IGNORECASE)


_LINK = r"(?:\s*[-–]\s*|\s+(?:to|until|till|through|and|or)\s+)"
#: the first day of a range or pair whose month and year are written once, after the second day:
#: "16 to 28 October 1962", "16 October to 28 October 1962", "24 and 29 October 1929"
_DAY_RANGE = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+{_MONTH_RE})?{_LINK}(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH_RE}\s+(\d{{3,4}})\b",
    re.IGNORECASE,
)
#: the same written month first: "October 16-28, 1962", "October 16 to October 28, 1962"
_MONTH_DAY_RANGE = re.compile(
    rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?{_LINK}(?:{_MONTH_RE}\s+)?(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{3,4}})\b",
    re.IGNORECASE,
)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE}(?![a-z])(?!\.?\s*\d)", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s*\d)", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH_RE}\s+(\d{{3,4}})\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@lru_cache(maxsize=65536)
def stated_dates(text: str) -> frozenset[tuple[int, int, int]]:
    """Full dates (year, month, day) written as "26 April 1986" or "April 26, 1986".

    A day written without its year takes the year the sentence gives it: the first day of a range
    or pair written once ("from 16 October to 28 October 1962", "16 to 28 October 1962",
    "October 16-28, 1962"), and a day of a month the same sentence writes with one year ("in late
    October 1929, with Black Thursday on 24 October")."""
    dates = set()
    for match in _DAY_MONTH_YEAR.finditer(text):
        dates.add((int(match.group(3)), _MONTH[match.group(2).lower()], int(match.group(1))))
    for match in _MONTH_DAY_YEAR.finditer(text):
        dates.add((int(match.group(3)), _MONTH[match.group(1).lower()], int(match.group(2))))
    for match in _DAY_RANGE.finditer(text):
        month = match.group(2) or match.group(4)
        dates.add((int(match.group(5)), _MONTH[month.lower()], int(match.group(1))))
    for match in _MONTH_DAY_RANGE.finditer(text):
        second_month = match.group(3) or match.group(1)
        dates.add((int(match.group(5)), _MONTH[match.group(1).lower()], int(match.group(2))))
        dates.add((int(match.group(5)), _MONTH[second_month.lower()], int(match.group(4))))
    for sentence in _SENTENCE_END.split(text):
        dates |= _anchored_days(sentence)
    return frozenset(d for d in dates if 1 <= d[2] <= 31)


def _anchored_days(sentence: str) -> set[tuple[int, int, int]]:
    """Days written without a year ("24 October", "October 24") of a month that the sentence
    writes with exactly one year ("October 1929"); a month written with several years, or none,
    anchors nothing."""
    years_of: dict[int, set[int]] = {}
    # (pattern, group of the month, group of the year)
    for pattern, month, year in ((_MONTH_YEAR, 1, 2), (_DAY_MONTH_YEAR, 2, 3),
                                 (_MONTH_DAY_YEAR, 1, 3)):
        for match in pattern.finditer(sentence):
            years = years_of.setdefault(_MONTH[match.group(month).lower()], set())
            years.add(int(match.group(year)))
    if not years_of:
        return set()
    days = [(_MONTH[m.group(2).lower()], int(m.group(1))) for m in _DAY_MONTH.finditer(sentence)]
    days += [(_MONTH[m.group(1).lower()], int(m.group(2))) for m in _MONTH_DAY.finditer(sentence)]
    return {(next(iter(years_of[month])), month, day) for month, day in days if len(years_of.get(month, ())) == 1}


def date_conflict(
    claim: str, evidence: str, known: frozenset[tuple[int, int, int]] = frozenset()
) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    """(claim date, evidence date) when the claim states a full date that neither the evidence nor
    the other premises (`known`) state, and the evidence states another full date in the same
    year ("24 May 1953" vs "29 May 1953", "14 May 1912" vs "15 April 1912") or the same day of
    the same month in another year ("20 July 1968" vs "20 July 1969": the year of a date is
    wrong even when that year is stated elsewhere, of another event); None otherwise.
    Whether both dates are those of one event is the caller's to judge."""
    theirs = stated_dates(evidence)
    for date in sorted(stated_dates(claim)):
        if date in theirs or date in known:
            continue
        same_year = sorted(theirs, key=lambda d: (d[:2] != date[:2], d))
        same_year = [d for d in same_year if d[0] == date[0]]
        if same_year:
            return date, same_year[0]
        same_day = sorted(d for d in theirs if d[1:] == date[1:])
        if same_day:
            return date, same_day[0]
    return None


def fmt_date(date: tuple[int, int, int]) -> str:
    return f"{date[2]} {_MONTH_NAMES[date[1] - 1].capitalize()} {date[0]}"


def fmt_years(years: set[int] | frozenset[int]) -> str:
    ordered = sorted(years)
    if len(ordered) > 4 and ordered[-1] - ordered[0] == len(ordered) - 1:
        return f"{ordered[0]}-{ordered[-1]}"
    return ", ".join(str(year) for year in ordered)


# ---- quantities ---------------------------------------------------------------------------------

_SCALES = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9,
    "b": 1e9, "trillion": 1e12, "tn": 1e12,
}
_NUMBER = re.compile(
    r"(?<![\w.])(?:[A-Z]{1,2}(?=[$]))?(?P<currency>[$€£¥])?\s?(?P<value>\d{1,3}(?:,\d{3})+|\d+)(?P<decimal>\.\d+)?"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|tn|[mkb])\b)?",
    re.IGNORECASE,
)
#: spelled-out counts of one or two are never "missing" on their own ("two individuals" against
#: "a man and a woman", "one month" against "a month"); larger ones are values like digits
IMPLICIT_COUNTS = frozenset({1.0, 2.0})
_UNIT = re.compile(r"(?:\s|-)?(%|[A-Za-z]+)")
#: unit words written in several ways, mapped to one ("km" and "kilometres" are one unit)
_UNIT_ALIASES = {
    "km": "kilometre", "kilometer": "kilometre", "m": "metre", "meter": "metre", "kg": "kilogram",
    "ft": "feet", "foot": "feet", "mi": "mile", "percent": "%", "per": "%", "dollar": "$", "pound": "£",
    "euro": "€", "yr": "year", "hr": "hour", "sec": "second", "min": "minute", "mph": "mph",
}
#: spelled-out numbers ("twenty-seven", "fifteen hundred", "thirteen thousand two hundred")
_SPELLED_UNITS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
_SPELLED_SCALES = {"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_SPELLED_WORD = "|".join(list(_SPELLED_UNITS) + list(_SPELLED_SCALES) + ["dozen"])
_SPELLED_HEAD = "|".join([*_SPELLED_UNITS, "dozen"])
_NUMBER_WORD = re.compile(
    rf"\b(?:{_SPELLED_HEAD})(?:(?:\s+and\s+|[\s-]+)(?:{_SPELLED_WORD}))*\b", re.IGNORECASE
)


def spelled_value(phrase: str) -> float | None:
    """The value of a spelled-out number: "twenty-seven" 27, "fifteen hundred" 1500, "thirteen
    thousand two hundred" 13200, "a dozen" 12; None when the words do not make one number."""
    words = [w for w in re.split(r"[\s-]+", phrase.lower()) if w and w != "and"]
    if words == ["dozen"]:
        return 12.0
    total, current = 0.0, 0.0
    for word in words:
        if word in _SPELLED_UNITS:
            current += _SPELLED_UNITS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in _SPELLED_SCALES:
            total += (current or 1) * _SPELLED_SCALES[word]
            current = 0.0
        else:
            return None
    return total + current
#: a number right after "No.", "#" or a capitalised name is an identifier ("No. 4", "Apollo 11")
_NUMBER_SIGN = re.compile(r"(?:\b[Nn]o\.?|\b[Nn]r\.?|#)\s*$")
_WORD_BEFORE = re.compile(r"\b([A-Z][a-z]+)\s+$")
_QUANTIFIERS = frozenset(_words("about around over under nearly almost some more less than roughly approximately only just"))


def _is_identifier(before: str) -> bool:
    if _NUMBER_SIGN.search(before):
        return True
    match = _WORD_BEFORE.search(before)
    if match is None:
        return False
    word = match.group(1).lower()
    return word not in _QUANTIFIERS and word not in _NOT_NAMES and not word.endswith("ly")


_MONTH_AFTER = re.compile(
    rf"(?:st|nd|rd|th)?(?:{_LINK}\d{{1,2}}(?:st|nd|rd|th)?)?\s+(?:of\s+)?{_MONTH_RE}(?![a-z])", re.IGNORECASE
)
_MONTH_BEFORE = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
                           r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?\s+(?:the\s+)?$")

#: "October 16-" before the 28 of "October 16-28, 1962"
_MONTH_DAY_BEFORE = re.compile(rf"\b{_MONTH_RE}\s+\d{{1,2}}(?:st|nd|rd|th)?{_LINK}$", re.IGNORECASE)


def _is_day_of_month(text: str, start: int, end: int) -> bool:
    """A number of 1-31 written as a day of a month: "16 October", "the 4th of July", "April 17",
    the 16 of "16 to 28 October"."""
    if not 1 <= int(text[start:end].replace(",", "") or 0) <= 31:
        return False
    return bool(
        _MONTH_AFTER.match(text, end)
        or _MONTH_BEFORE.search(text[max(0, start - 14) : start])
        or _MONTH_DAY_BEFORE.search(text[max(0, start - 24) : start])
    )


@lru_cache(maxsize=65536)
def _quantities(text: str) -> tuple[tuple[float, str, bool], ...]:
    taken = year_spans(text)
    found: list[tuple[float, str, bool]] = []
    for match in _NUMBER.finditer(text):
        start = match.start("value")
        if any(a <= start < b for a, b in taken):
            continue
        if not match.group("currency") and _is_identifier(text[max(0, match.start() - 16) : match.start()]):
            continue
        if not match.group("decimal") and _is_day_of_month(text, match.start("value"), match.end("value")):
            continue  # "28 October", "April 17": a day, compared as part of its date
        value = float(match.group("value").replace(",", "") + (match.group("decimal") or ""))
        scale = (match.group("scale") or "").lower()
        if scale and (len(scale) > 1 or match.group("currency")):
            value *= _SCALES[scale]
            unit = match.group("currency") or _unit_after(text, match.end())
        else:
            end = match.end("decimal") if match.group("decimal") else match.end("value")
            unit = match.group("currency") or _unit_after(text, end)
        found.append((value, unit, False))
    for match in _NUMBER_WORD.finditer(text):
        start = match.start()
        if any(a <= start < b for a, b in taken):
            continue  # "nineteen ninety-six" is a year
        value = spelled_value(match.group(0))
        if value is not None:
            found.append((value, _unit_after(text, match.end()), True))
    return tuple(found)


def mentioned_quantities(text: str) -> list[tuple[float, str]]:
    """(value, unit) for each numeral of `text` outside temporal expressions and identifiers.

    The value is scaled ("2.5bn" -> 2.5e9; "m", "k" and "b" only after a currency sign, since
    "330 m" is metres); the unit is the currency sign or the next word, lower-cased without a
    plural "s" ("12,000 people" -> "people", "7 years" -> "year"), "" when there is none.
    Numbers naming a thing ("No. 4", "Apollo 11") are not quantities.
    """
    return [(value, unit) for value, unit, _ in _quantities(text)]


def written_numbers(text: str) -> set[float]:
    """Values of the quantities written in digits, and spelled-out ones above two."""
    return {value for value, _, word in _quantities(text) if not word or value not in IMPLICIT_COUNTS}


def mentioned_numbers(text: str) -> set[float]:
    """The values of `mentioned_quantities(text)`."""
    return {value for value, _ in mentioned_quantities(text)}


def _unit_after(text: str, position: int) -> str:
    match = _UNIT.match(text, position)
    if match is None:
        return ""
    word = match.group(1).lower()
    word = word[:-1] if len(word) > 3 and word.endswith("s") else word
    if word in ("cent",) and text[match.end() : match.end() + 1] != "s":
        return "%"  # "80 per cent"
    return _UNIT_ALIASES.get(word, word)


def _significant_digits(value: float) -> int:
    mantissa = f"{abs(value):.12g}".split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return max(1, len(mantissa))


def same_value(claimed: float, stated: float) -> bool:
    """True when `claimed` is `stated`, or `stated` rounded or cut to the claim's significant
    digits within 1% ("50.5 km" for 50.46 km, "$181 million" for $181,674,817, "78,000" for
    77,984; never "300 m" for 330 m)."""
    if math.isclose(claimed, stated, rel_tol=1e-9):
        return True
    if stated == 0 or abs(claimed - stated) > 0.01 * abs(stated):
        return False
    digits = _significant_digits(claimed)
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(stated))))
    candidates = (round(stated * scale) / scale, math.floor(stated * scale) / scale)
    return any(math.isclose(claimed, c, rel_tol=1e-9) for c in candidates)


def missing_numbers(wanted: set[float], have: set[float]) -> set[float]:
    return {x for x in wanted if not any(same_value(x, y) for y in have)}


def quantity_conflicts(
    claim: list[tuple[float, str]], evidence: list[tuple[float, str]]
) -> list[tuple[tuple[float, str], tuple[float, str]]]:
    """Pairs (claim quantity, evidence quantity) with the same unit where the claim's value is
    stated nowhere in the evidence: "300 m" against "330 m", not "7 years" against "330 metres"."""
    values = {value for value, _ in evidence}
    return [
        ((value, unit), (other, other_unit))
        for value, unit in claim
        if unit and missing_numbers({value}, values)
        for other, other_unit in evidence
        if other_unit == unit
    ]


def fmt_quantities(quantities: list[tuple[float, str]]) -> str:
    return ", ".join(f"{value:g} {unit}".strip() for value, unit in quantities)


# ---- negation -----------------------------------------------------------------------------------

#: explicit negators; "no" only as a determiner ("no evidence"), never "No. 4" or "No 10"
_NEGATION = re.compile(
    r"\b(?:not|never|neither|nor|none|nobody|nothing|cannot)\b|n't\b|\bno\b(?!\.?\s*\d)(?!\.)",
    re.IGNORECASE,
)
#: "not ... until 1932" says when it happened; it negates nothing
_NOT_UNTIL = re.compile(r"\bnot\b[^.;]{0,40}?\buntil\b|\bno (?:sooner|later|more than|fewer than|less than)\b", re.IGNORECASE)


def negated(text: str) -> bool:
    """True when `text` explicitly negates its statement ("did not", "never", "no evidence")."""
    cleaned = _NOT_UNTIL.sub(" ", text)
    return bool(_NEGATION.search(cleaned))


# ---- words and names ----------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*")
STOPWORDS = frozenset(_words(
    """
    a an the of in on at to for from by with and or but as is are was were be been being it its
    this that these those he she they them his her their there here which who whom whose what when
    where while after before during about around over under into than then so also had has have do
    does did will would can could should may might must some any each all both one first its its
    until since up out off more most very just only such other own same too not no never
    """
))
#: demonyms and adjectives whose stem differs from the place name
_DEMONYMS = {
    "french": "france", "english": "england", "british": "britain", "dutch": "netherlands",
    "spanish": "spain", "swiss": "switzerland", "greek": "greece", "turkish": "turkey",
    "polish": "poland", "danish": "denmark", "swedish": "sweden", "finnish": "finland",
    "irish": "ireland", "scottish": "scotland", "welsh": "wales", "norwegian": "norway",
    "portuguese": "portugal", "belgian": "belgium", "peruvian": "peru", "chilean": "chile",
    "thai": "thailand", "filipino": "philippines", "argentine": "argentina", "icelandic": "iceland",
}
_SUFFIXES = ("ing", "ed", "es", "s", "'s", "’s")
_NAME = re.compile(r"\b[A-Z][a-zA-Z]+(?:-[A-Z][a-zA-Z]+)*\b")
_ACRONYM = re.compile(r"\b[A-Z]{2,4}\b")
_NOT_NAMES = frozenset(_words(
        "the a an he she it they we i you this that these those there here his her its their our my "
        "in on at after before during however but and so then today since when while as although "
        "because if also by from for with some many most all both each one two three what which who "
        "january february march april may june july august september october november december "
        "monday tuesday wednesday thursday friday saturday sunday "
        "first second third fourth fifth sixth seventh eighth ninth tenth last next"
))


_FOLD = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "Ae", "ß": "ss", "đ": "d", "Đ": "D",
                       "ı": "i", "œ": "oe", "Œ": "Oe", "þ": "th", "ð": "d"})


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """`text` without diacritics ("Jørn Utzon" -> "Jorn Utzon", "Skłodowska" -> "Sklodowska",
    "Compiègne" -> "Compiegne"), so names match however they are spelled."""
    import unicodedata

    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normal_word(word: str) -> str:
    """Lower-cased, demonyms mapped to the place, one inflection suffix removed."""
    low = word.lower().replace("’", "'")
    low = _DEMONYMS.get(low, low)
    for suffix in _SUFFIXES:
        if low.endswith(suffix) and len(low) - len(suffix) >= 3:
            return low[: -len(suffix)]
    return low


def content_words(text: str) -> list[str]:
    """Normalised words of `text` that carry content (stop words and bare numbers left out)."""
    return [
        normal_word(token) for token in _TOKEN.findall(fold(text))
        if token.lower() not in STOPWORDS and not token[0].isdigit()
    ]


#: words an acronym leaves out ("Union for Conservation of Nature": UCN)
_ACRONYM_GLUE = frozenset({"of", "for", "and", "the", "on", "in", "de", "&"})


class WordIndex:
    """The normalised words of a text, matched with word forms: equal, or one a prefix of the
    other sharing at least max(4, shorter length - 1) letters ("west" ~ "western", "australia" ~
    "australian", "italy" ~ "italian"; not "austria" ~ "australia")."""

    def __init__(self, text: str) -> None:
        text = fold(text)
        words = [token for token in _TOKEN.findall(text) if not token[0].isdigit()]
        # "Austria-Hungary" also states "Austria" and "Hungary"
        tokens = words + [part for word in words if "-" in word for part in word.split("-") if part]
        self.words = {normal_word(token) for token in tokens}
        self._by_head: dict[str, list[str]] = {}
        for word in self.words:
            self._by_head.setdefault(word[:4], []).append(word)
        self._initials = "".join(token[0].lower() for token in words)
        # "International Union for Conservation of Nature" is "IUCN": the linking words are skipped
        self._name_initials = "".join(token[0].lower() for token in words if token.lower() not in _ACRONYM_GLUE)
        self.acronyms = {match.group(0).lower() for match in _ACRONYM.finditer(text)}

    def has(self, word: str) -> bool:
        word = normal_word(word)
        if word in self.words:
            return True
        if len(word) < 4:
            return False
        for other in self._by_head.get(word[:4], ()):
            shorter = min(len(word), len(other))
            common = len(os.path.commonprefix((word, other)))
            if common >= max(4, shorter - 1) and (word.startswith(other) or other.startswith(word) or common >= shorter - 1):
                return True
        return False

    def has_acronym(self, acronym: str) -> bool:
        """"FC" is stated by "Football Club" (initials of consecutive words), "IUCN" by
        "International Union for Conservation of Nature" (linking words skipped)."""
        low = acronym.lower()
        return low in self.words or low in self._initials or low in self._name_initials


def names(text: str) -> set[str]:
    """Capitalised words after the first word (the first is capitalised anyway), as written."""
    text = fold(text)
    return {
        match.group(0)
        for match in _NAME.finditer(text)
        if match.start() > 0 and match.group(0).lower() not in _NOT_NAMES and not match.group(0).isupper()
    }


_NAME_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*")
_NEIGHBOUR = re.compile(r"[A-Za-z]+")


def swapped_names(claim: str, evidence: str, lacking: set[str]) -> tuple[set[str], set[str]]:
    """Names the evidence puts where the claim has a name the premises lack: "King Henry sealed"
    against "King John sealed", "a bakery on Fleet Street" against "on Pudding Lane". A swap needs
    the same neighbouring word before or after both names. Returns (claim names, evidence names)."""
    claim, evidence = fold(claim), fold(evidence)
    theirs = []
    for match in _NAME_RUN.finditer(evidence):
        if all(word.lower() in _NOT_NAMES for word in match.group(0).split()):
            continue  # "October", "The": dates are compared as dates, openers are no names
        before = _NEIGHBOUR.findall(evidence[max(0, match.start() - 30) : match.start()])
        after = _NEIGHBOUR.findall(evidence[match.end() : match.end() + 30])
        theirs.append((match.group(0), before[-1].lower() if before else "", after[0].lower() if after else ""))
    mine, swapped = set(), set()
    claim_low = claim.lower()
    for match in _NAME_RUN.finditer(claim):
        name = match.group(0)
        if any(word.lower() in _MONTH_NAMES for word in name.split()) or name.lower() in ("christmas day", "new year's day"):
            continue
        if not any(part in lacking for part in name.split()):
            continue
        before = _NEIGHBOUR.findall(claim[max(0, match.start() - 30) : match.start()])
        after = _NEIGHBOUR.findall(claim[match.end() : match.end() + 30])
        prev = before[-1].lower() if before else ""
        nxt = after[0].lower() if after else ""
        for other, other_prev, other_next in theirs:
            if other.lower() in claim_low:
                continue
            if (prev and prev == other_prev) or (nxt and nxt == other_next):
                mine.add(name)
                swapped.add(other)
    return mine, swapped


def acronyms(text: str) -> set[str]:
    return {match.group(0) for match in _ACRONYM.finditer(text) if match.group(0) not in ("AD", "BC", "CE", "BCE", "US", "UK", "EU", "GB")}


def spelled_acronyms(claim: str, index: WordIndex) -> set[str]:
    """Words of the claim's names written out where the premises write their initials: "United
    Kingdom" when the premises write "UK", "European Union" for "EU"."""
    found = set()
    for match in _NAME_RUN.finditer(fold(claim)):
        words = [word for word in match.group(0).split() if word.lower() not in ("of", "the")]
        if len(words) >= 2 and "".join(word[0] for word in words).lower() in index.acronyms:
            found.update(words)
    return found


def missing_names(claim: str, index: WordIndex) -> set[str]:
    """The claim's names (and acronyms) the premises do not state in any word form, nor as
    initials ("United Kingdom" against "UK")."""
    missing = set()
    spelled = spelled_acronyms(claim, index)
    for name in names(claim):
        if name in spelled:
            continue
        parts = name.split("-")
        if not all(index.has(part) for part in parts):
            missing.add(name)
    for acronym in acronyms(claim):
        if not index.has_acronym(acronym):
            missing.add(acronym)
    return missing
