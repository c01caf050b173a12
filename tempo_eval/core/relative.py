"""Resolution of relative time expressions against a reference date (the document's date).

Pure functions, one per rule; each returns the year(s) an expression falls in. The grammar
(`tempo_eval.core.grammar`) finds the expressions and the extractor (`tempo_eval.core.extract`)
reads their words and context; nothing here looks at text except the tense cue.

Rules (R is the reference date):

* A weekday is the nearest such day in the past, R itself included ("said Friday" in a
  Friday article is that day); "last Friday" is strictly before R; "next Friday", "this
  coming Friday", "this Friday" or a future-tense cue earlier in the sentence ("will",
  "is due to", "is expected", "hopes to", "takes effect", "to be held", "begins", ...)
  make it the nearest such day after R.
* A month name without a year ("in April") and a month and day ("Aug. 7") are their
  nearest occurrence, by days from R to the month or day; a future-tense cue picks the
  nearest occurrence not before R, "since" the nearest not after R. "last April" is the
  latest April before R's month, "next April" the first after it, "this April" is in R's year.
* A quarter ("the third quarter", "Q3", "third-quarter") or a half ("the first half") is the
  latest one that has started by R (results are reported after the fact); with a future-tense
  cue, the one that has not yet ended. "this quarter" is R's, "last quarter" the one before,
  "next quarter" the one after.
* Seasons follow the meteorological calendar of the northern hemisphere: spring March-May,
  summer June-August, autumn/fall September-November, winter December-February. A winter
  touches two calendar years and contributes both (a focus time is a set of years; the
  winter of Dec 2008 - Feb 2009 is about both). "last winter" is the latest season that
  ended before R's month, "next summer" the first that starts after it, and "this winter",
  "in the spring" the nearest occurrence (one containing R wins; a future-tense cue picks
  the nearest one not yet over).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

# Words before an expression, in the same sentence, that put it in the future: "will",
# "is due to", "are expected", "plans to", "hopes to", "takes effect", "to be held", and the
# present tense of scheduling verbs ("the trial begins Monday"); not "than expected", not
# "would".
_FUTURE_WORDS = frozenset((
    "will", "shall", "won't", "won’t", "upcoming", "scheduled", "slated", "forecast", "forecasts",
    "expect", "expects", "next", "begins", "starts", "opens", "reopens", "resumes", "expires",
))
_AFTER_BE = frozenset(("to", "due", "set", "scheduled", "expected", "planned", "slated", "poised"))
_BEFORE_TO = frozenset((
    "plan", "plans", "planning", "intend", "intends", "aim", "aims", "aiming", "going", "due",
    "expected", "set", "hope", "hopes", "hoping", "seek", "seeks", "seeking", "want", "wants",
    "vow", "vows", "vowed", "pledge", "pledges", "pledged", "promise", "promises", "promised",
))
# Present-tense phrases of coming into force: "takes effect", "comes into force".
_PAIRS = frozenset((
    ("takes", "effect"), ("take", "effect"), ("comes", "into"), ("come", "into"),
    ("goes", "into"), ("go", "into"),
))
# "is said to be", "was believed to be": a report, no future
_REPORTED = frozenset((
    "said", "believed", "thought", "reported", "known", "understood", "seems", "seemed",
    "appears", "appeared", "alleged", "rumored", "rumoured",
))
_TRIGGERS = _FUTURE_WORDS | _BEFORE_TO | {"is", "are", "be", "take", "takes", "come", "comes", "go", "goes"}

SEASON_MONTHS: dict[str, int] = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
"""The first month of each season; every season lasts three months."""


def has_future_cue(before: str) -> bool:
    """Does the lower-cased sentence text before an expression put it in the future?"""
    words = before.split()
    if "'ll " in before or "’ll " in before:
        return True  # "they'll"
    if _TRIGGERS.isdisjoint(words):
        return False  # the common case, tested in C
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if (
            word in _FUTURE_WORDS
            or (word in ("is", "are") and following in _AFTER_BE)
            or (following == "to" and word in _BEFORE_TO)
            or (word, following) in _PAIRS
            # a passive infinitive: "elections to be held in March" (not "said to be")
            or (word == "be" and i > 0 and words[i - 1] == "to" and (i < 2 or words[i - 2] not in _REPORTED))
        ):
            return True
    return False


def shift_year(day: dt.date, amount: int, unit: str) -> int | None:
    """The year of `day` moved by `amount` units (year, decade, century, month, week, day)."""
    if unit.startswith("year"):
        return day.year + amount
    if unit.startswith("decade"):
        return day.year + 10 * amount
    if unit.startswith("centur"):
        return day.year + 100 * amount
    if unit.startswith("month"):
        return day.year + (day.month - 1 + amount) // 12
    days = amount * (7 if unit.startswith("week") else 1)
    try:
        return (day + dt.timedelta(days=days)).year
    except OverflowError:
        return None


def two_digit_year(yy: int, reference_year: int | None) -> int:
    """The latest year ending in `yy` that is not after the reference year (1900s without one)."""
    if reference_year is None:
        return 1900 + yy
    year = reference_year - reference_year % 100 + yy
    return year if year <= reference_year else year - 100


@lru_cache(maxsize=4096)  # pure, and called with few distinct arguments
def weekday_year(ref: dt.date, weekday: int, direction: int) -> int:
    """The year of the weekday (0 = Monday) nearest to `ref`: direction 0 the latest on or
    before `ref`, -1 the latest strictly before it, +1 the first strictly after it."""
    if direction > 0:
        return (ref + dt.timedelta(days=(weekday - ref.weekday() - 1) % 7 + 1)).year
    back = (ref.weekday() - weekday) % 7
    if direction < 0 and back == 0:
        back = 7
    return (ref - dt.timedelta(days=back)).year


def _month_bounds(year: int, month: int) -> tuple[dt.date, dt.date]:
    first = dt.date(year, month, 1)
    following = dt.date(year + month // 12, month % 12 + 1, 1)
    return first, following - dt.timedelta(days=1)


def _distance(ref: dt.date, first: dt.date, last: dt.date) -> int:
    """Days from `ref` to the interval first..last (0 inside it)."""
    return max((first - ref).days, (ref - last).days, 0)


def _nearest(ref: dt.date, intervals: list[tuple[int, dt.date, dt.date]], tense: int) -> int:
    """The key of the interval nearest to `ref`; tense +1 keeps those not over by `ref`,
    -1 those started by it (when any is left)."""
    kept = intervals
    if tense > 0:
        kept = [i for i in intervals if i[2] >= ref] or intervals
    elif tense < 0:
        kept = [i for i in intervals if i[1] <= ref] or intervals
    # ties go to the earlier occurrence: news reports more than it announces
    return min(kept, key=lambda i: (_distance(ref, i[1], i[2]), i[1]))[0]


@lru_cache(maxsize=4096)  # pure, and called with few distinct arguments
def month_year(ref: dt.date, month: int, direction: str | None = None, tense: int = 0) -> int:
    """The year of a month named without a year. direction "last" / "next" / "this", or None
    for the nearest occurrence (tense +1: not over by `ref`, -1: started by it)."""
    if direction == "last":
        return ref.year if month < ref.month else ref.year - 1
    if direction == "next":
        return ref.year if month > ref.month else ref.year + 1
    if direction == "this":
        return ref.year
    candidates = [(year, *_month_bounds(year, month)) for year in (ref.year - 1, ref.year, ref.year + 1)]
    return _nearest(ref, candidates, tense)


@lru_cache(maxsize=4096)  # pure, and called with few distinct arguments
def month_day_year(ref: dt.date, month: int, day: int, tense: int = 0) -> int | None:
    """The year of the nearest occurrence of a month and day without a year (None if the
    day does not exist in any nearby year, e.g. April 31)."""
    candidates = []
    for year in (ref.year - 1, ref.year, ref.year + 1):
        try:
            date = dt.date(year, month, day)
        except ValueError:
            continue
        candidates.append((year, date, date))
    return _nearest(ref, candidates, tense) if candidates else None


@lru_cache(maxsize=4096)  # pure, and called with few distinct arguments
def period_year(ref: dt.date, index: int, months: int, direction: str | None = None, tense: int = 0) -> int:
    """The year of a quarter (months=3, index 1-4) or a half (months=6, index 1-2) named
    without a year. direction "this" / "last" / "next" counts from the one containing `ref`
    (index is ignored then); otherwise the latest one started by `ref`, or with tense +1 the
    first one not over by `ref`."""
    current = (ref.month - 1) // months  # 0-based index of the period containing ref
    if direction is not None:
        shift = {"this": 0, "last": -1, "next": 1}[direction]
        return ref.year + (current + shift) // (12 // months)
    target = index - 1
    if tense > 0:
        return ref.year if target >= current else ref.year + 1
    return ref.year if target <= current else ref.year - 1


def _season_bounds(season: str, year: int) -> tuple[dt.date, dt.date]:
    """The season that starts in `year` (a winter starts in December and ends in February)."""
    month = SEASON_MONTHS[season]
    first = dt.date(year, month, 1)
    end_month = month + 2
    last = _month_bounds(year + (end_month - 1) // 12, (end_month - 1) % 12 + 1)[1]
    return first, last


@lru_cache(maxsize=4096)  # pure, and called with few distinct arguments
def season_years(ref: dt.date, season: str, direction: str | None = None, tense: int = 0) -> tuple[int, int]:
    """First and last calendar year of a season named without a year. direction "last" /
    "next" / "this" or None (see the module docstring)."""
    occurrences = [(year, *_season_bounds(season, year)) for year in range(ref.year - 2, ref.year + 2)]
    this_month = dt.date(ref.year, ref.month, 1)
    if direction == "last":
        start = max(year for year, _, last in occurrences if last < this_month)
    elif direction == "next":
        start = min(year for year, first, _ in occurrences if first > ref)
    else:
        start = _nearest(ref, occurrences, tense)
    first, last = _season_bounds(season, start)
    return first.year, last.year
