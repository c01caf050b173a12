"""Reading the expressions that need the document date: weekdays, months and days without a
year, quarters, seasons, "last year", "two years ago", "a year earlier", "yesterday".

`DatedExpressions` holds one handler per kind of expression (the grammar in
`tempo_eval.core.grammar` finds them); a handler reads the words and the context (capitals,
cue words before, the tense of the sentence, a name around it) and asks
`tempo_eval.core.relative` for the year(s) against the reference date. Without a reference
date these handlers add nothing, except "two years later" after a year written in the text.
`FocusTimeExtractor` inherits them.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from tempo_eval.core.grammar import (
    MONTH_CUES,
    MONTH_NUMBERS,
    MONTHS,
    NUM,
    QUARTER_ORDINALS,
    SEASON_CUES,
    UNIT,
    WEEKDAY_CUES,
    WEEKDAYS,
)
from tempo_eval.core.relative import (
    has_future_cue,
    month_day_year,
    month_year,
    period_year,
    season_years,
    shift_year,
    weekday_year,
)
from tempo_eval.core.scan import UNIT_AFTER, Scan, number, previous_word

logger = logging.getLogger(__name__)

_OF_AFTER = re.compile(r"\s+of\b")
# An explicit year right before a quarter or half: "the 1988 third quarter", "fiscal 1988's first half".
_YEAR_BEFORE = re.compile(r"(?<![0-9])([12][0-9]{3})(?:['’]s)?\s+$")
_RELATIVE = re.compile(
    rf"(?:(?P<the>the)\s+)?(?P<dir>past|last|coming|next|this|current)\s+"
    rf"(?:(?P<n>{NUM})\s+)?(?P<unit>{UNIT})"
)
_ABBREVIATIONS = frozenset((
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mr",
    "mrs", "ms", "dr", "st", "gov", "sen", "rep", "gen", "no", "inc", "corp", "co", "lt", "col",
))
_LAST_SENTENCE_END = re.compile(r"(?s).*[.?!;] ")

# Words around "the fourth quarter" that make it a part of a game.
_SPORTS_WORDS = frozenset((
    "score", "scored", "scores", "scoring", "goal", "goals", "touchdown", "touchdowns", "basket",
    "baskets", "rally", "rallied", "rallying", "trailed", "trailing", "game", "games", "match",
    "overtime", "halftime", "half-time", "inning", "innings", "quarterback", "buzzer",
))
# "fall" is autumn only after these ("last fall", "in the fall"), not "after the fall".
_FALL_CUES = frozenset(("last", "this", "next", "past", "coming", "this past", "this coming",
                        "in the", "early", "late", "mid"))
# Words before "in three weeks" that make it a date, not a duration ("expires in 30 days").
_SCHEDULE_VERBS = frozenset((
    "due", "expires", "expire", "ends", "end", "starts", "start", "begins", "begin", "opens",
    "open", "closes", "close", "resumes", "resume", "returns", "return", "back", "again",
))
# Capitalised words before a weekday that name a day, not a person ("Good Friday").
_DAY_NAMES_BEFORE = frozenset(
    ("good", "black", "super", "ash", "holy", "cyber", "bloody", "easter", "palm", "maundy")
)
# Titles before a name ("Mr. Friday", "Detective Friday").
_TITLES = frozenset((
    "mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sen", "senator", "rep", "gov",
    "governor", "gen", "general", "col", "capt", "captain", "sgt", "sergeant", "lt", "det",
    "detective", "officer", "judge", "justice", "mayor", "president", "minister", "coach",
    "father", "sister", "brother", "rev", "reverend", "uncle", "aunt",
))
# Words that open a sentence before a weekday that is a date ("On Friday, the ...").
_OPENERS = frozenset((
    "on", "by", "since", "until", "till", "from", "before", "after", "through", "last", "next",
    "this", "that", "early", "late", "and", "but", "as", "at", "in", "for", "every", "each",
    "then", "also", "only", "even", "so",
))
# Words before a place or an addressee, after which a weekday is a date ("in Kabul Monday").
_PLACE_WORDS = frozenset((
    "in", "at", "from", "near", "outside", "inside", "into", "across", "around", "to",
    "toward", "towards", "told", "tells", "telling", "visited", "visits", "visiting",
))
# ", a nurse", ", the union's lawyer": an apposition after a name.
_APPOSITION = re.compile(r",[ \t]+(?:a|an|the)[ \t]")
_DATE_WORDS = frozenset((*MONTHS, *(m[:3] for m in MONTHS), "sept", *WEEKDAYS))
# Days from the reference date; the other day words ("today", "this morning") are 0.
_DAY_OFFSETS = {
    "yesterday": -1, "tomorrow": 1, "last night": -1, "last evening": -1, "over the weekend": -2,
    "last weekend": -7, "next weekend": 7,
}
_AGO = re.compile(rf"(?P<n>.+?)[\s-]+(?P<unit>{UNIT})\s+(?P<dir>ago|from\s+now|hence)")
_T = TypeVar("_T")


@lru_cache(maxsize=4096)
def _dateparser_year(phrase: str, reference: dt.date, languages: tuple[str, ...]) -> int | None:
    """The year dateparser reads in one short phrase, relative to the reference date."""
    import dateparser  # lazy: slow to import, and only rare phrasings need it

    parsed = dateparser.parse(
        phrase,
        languages=list(languages),
        settings={
            "RELATIVE_BASE": dt.datetime(reference.year, reference.month, reference.day),
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
    if parsed is None:
        logger.debug("dateparser could not read %r", phrase)
        return None
    return parsed.year


@lru_cache(maxsize=1024)  # pure; a text's parts do not depend on its context
def _month_day_parts(text: str) -> tuple[int, int, int]:
    """ "aug. 7" -> (8, 7, 0), "30th of june" -> (6, 30, 8): month, day, where the month is."""
    words = text.replace(".", " ").replace(",", " ").split()
    month_word = next(w for w in words if not w[0].isdigit() and w != "of")
    day = int(next(w for w in words if w[0].isdigit()).rstrip("stndrh"))
    return MONTH_NUMBERS[month_word], day, text.index(month_word)


def _sentence_before(scan: Scan, start: int) -> str:
    """The lower-case text of the sentence (at most 120 characters) before `start`."""
    before = scan.low[max(0, start - 120) : start]
    end = len(before)
    while True:
        last = _LAST_SENTENCE_END.match(before, 0, end)  # one C call finds the last end
        if last is None:
            return before
        cut = last.end()
        if before[cut - 2] == ".":
            # an abbreviation ("Aug. 7", "Ms. Lee", "U.S. troops") ends no sentence
            words = before[: cut - 2].rsplit(None, 1)
            if not words or len(words[-1]) == 1 or words[-1] in _ABBREVIATIONS or "." in words[-1]:
                end = cut - 2
                continue
        return before[cut:]


def _is_sports(context: str) -> bool:
    """Is the text around an expression about a game ("scored in the fourth quarter")?"""
    return not _SPORTS_WORDS.isdisjoint(context.replace(".", " ").replace(",", " ").split())


def _cue_before(scan: Scan, start: int, cues: frozenset[str] | tuple[str, ...]) -> tuple[str, int]:
    """The cue phrase (one or two words of `cues`) right before `start`, and where it starts;
    ("", start) when there is none."""
    words = scan.spaced[max(0, start - 24) : start].split()[-2:]
    for n in (2, 1):
        phrase = " ".join(words[-n:])
        if len(words) >= n and phrase in cues:
            return phrase, scan.spaced.rfind(words[-n], 0, start)
    return "", start


def _with_tense(scan: Scan, start: int, resolve: Callable[[int], _T], since: bool | None = None) -> _T:
    """`resolve(tense)` with the tense of the sentence: -1 after "since" (`since`, when the
    caller knows the word before), +1 when a cue before the expression puts it in the
    future, else 0. The sentence is read only when the two readings differ (for most dates
    they do not)."""
    if since is None:
        since = previous_word(scan.spaced, start) == "since"
    if since:
        return resolve(-1)
    plain = resolve(0)
    if plain == resolve(1):
        return plain
    return resolve(1) if has_future_cue(_sentence_before(scan, start)) else plain


def _anchored_in(scan: Scan, start: int) -> bool:
    """Is "in N days" a date (sentence-initial "In", or after "expires", "due", ...)?"""
    before = _sentence_before(scan, start)
    if not before.strip() and scan.text[start - 1] == "I":
        return True
    return previous_word(scan.spaced, start) in _SCHEDULE_VERBS


def _is_name(scan: Scan, at: int, end: int) -> bool:
    """Is the capitalised word at `at` part of a name? Before a capitalised word ("Sunday
    Times"); after a title ("Mr. Friday", "Detective Friday"); after a capitalised word that
    follows another ("Detective Sam Friday") or that opens the sentence, when a comma and an
    apposition follow ("Grace Friday, a nurse,"). After a single capitalised word inside a
    sentence it is a date: "told Reuters Friday", "attacked Kabul Monday"."""
    if _next_word_is_name(scan, end):
        return True
    words = scan.text[max(0, at - 40) : at - 1].split()
    if not words or not words[-1][:1].isupper() or words[-1].lower() in _DAY_NAMES_BEFORE:
        return False
    previous = words[-1]
    if previous.lower().rstrip(".") in _TITLES:
        return True
    if not _sentence_before(scan, at - len(previous) - 1).strip():
        # "Grace Friday, a nurse," but not "On Friday, the ministry said"
        return previous.lower() not in _OPENERS and _APPOSITION.match(scan.text, end - 1) is not None
    # "told Reuters Friday", "in Kabul Monday": a place or an addressee, then the date
    return len(words) < 2 or words[-2] not in _PLACE_WORDS


def _next_word_is_name(scan: Scan, end: int) -> bool:
    """Does a capitalised word that is no month or weekday follow ("June Carter")?"""
    text = scan.text
    if end - 1 >= len(text) or text[end - 1] != " ":
        return False
    word = text[end : end + 12].split(maxsplit=1)
    return bool(word) and word[0][:1].isupper() and word[0].lower().rstrip(".,") not in _DATE_WORDS


class DatedExpressions:
    """The handlers of the expressions resolved against the reference date (a mixin of
    `FocusTimeExtractor`, which provides `_add`, `use_dateparser` and `languages`)."""

    use_dateparser: bool
    languages: tuple[str, ...]

    def _add(self, scan: Scan, start: int, end: int, first: int, last: int, kind: str) -> None:
        raise NotImplementedError  # FocusTimeExtractor._add

    def _ago(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "two years ago", "a decade ago", "3 months from now"."""
        ref = scan.ref
        if ref is None or (scan.low[start - 1] in ",." and scan.low[start - 2].isdigit()):
            return  # no reference date, or a longer number: "2,000 years ago"
        parts = _AGO.fullmatch(text)
        if parts is None:  # cannot happen: the same shape as the grammar
            return
        n = number(parts.group("n"))
        if n is None or n > 999:
            return
        sign = -1 if parts.group("dir") == "ago" else 1
        year = shift_year(ref, sign * n, parts.group("unit"))
        if year is not None:
            self._add(scan, start, end, year, year, "relative")

    def _relative(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "last year", "this decade", "the past 5 years", "over the last three years"."""
        ref = scan.ref
        if ref is None or _OF_AFTER.match(scan.low, end):
            return  # "the last year of the war": narrative, not relative to the reference
        parts = _RELATIVE.fullmatch(text)
        if parts is None:  # cannot happen: the same shape as the grammar
            return
        the, direction, n_raw, unit = parts.group("the", "dir", "n", "unit")
        n = number(n_raw) if n_raw else None
        plural = unit.endswith("s")
        if direction in ("this", "current"):
            if n_raw or plural or (direction == "current" and not the):
                return
            year = ref.year
            if unit == "decade":
                first, last = year - year % 10, year - year % 10 + 9
            elif unit == "century":
                first, last = year - year % 100, year - year % 100 + 99
            else:
                first = last = year
            self._add(scan, start, end, first, last, "relative")
            return
        backward = direction in ("past", "last")
        if n is None:
            if n_raw or plural:
                return  # "in past years", "the coming decades": too vague
            if the and direction == "next":
                return  # "the next year he moved": narrative
            if not the and direction in ("last", "next") and unit in ("year", "month", "week", "day"):
                year = shift_year(ref, -1 if backward else 1, unit)  # calendar: "last year"
                if year is not None:
                    self._add(scan, start, end, year, year, "relative")
                return
            n = 1
        if n > 999:
            return
        other = shift_year(ref, -n if backward else n, unit)
        if other is not None:
            first, last = (other, ref.year) if backward else (ref.year, other)
            self._add(scan, start, end, first, last, "relative")

    def _month_relative(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "last March", "next May", "this June": capitalised, because "the last march" and
        "this may be" are no months."""
        ref = scan.ref
        name = scan.low[start:end].split()[-1]
        if ref is None or not scan.text[end - 1 - len(name)].isupper():
            return
        month = MONTHS.index(name) + 1
        year = month_year(ref, month, scan.low[start : start + 4].strip())
        self._add(scan, start, end, year, year, "relative")

    def _recent(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "recent years" = R-2..R; "recent weeks" (days, months) = R. "recently", "until
        recently" and "lately" are vague (days or decades): no year."""
        if text in ("recently", "lately"):
            return
        if scan.ref is not None:
            first = scan.ref.year if text.endswith(("weeks", "months", "days")) else scan.ref.year - 2
            self._add(scan, start, end, first, scan.ref.year, "relative")

    def _day(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "yesterday", "today", "this morning", "last night" (the evening before), "over the
        weekend" (the one just past), "next weekend": the year of that day."""
        if scan.ref is None:
            return
        offset = _DAY_OFFSETS.get(" ".join(text.split()), 0)
        year = shift_year(scan.ref, offset, "day")
        if year is not None:
            self._add(scan, start, end, year, year, "relative")

    def _delegate(self, scan: Scan, start: int, end: int, text: str) -> None:
        """Rare phrasings ("the day before yesterday", "a fortnight ago", "In three weeks")
        are read by dateparser, one short phrase at a time, relative to the reference date.
        "in 100 days" is a duration, not a date, unless it opens the sentence or follows a
        verb of scheduling ("expires in 30 days")."""
        if scan.ref is None or not self.use_dateparser:
            return
        if text.startswith("in ") and not _anchored_in(scan, start):
            return
        year = _dateparser_year(scan.low[start:end], scan.ref, self.languages)
        if year is not None:
            self._add(scan, start, end, year, year, "relative")

    def _weekday(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "Friday", "on Tuesday", "last Monday", "this coming Friday": the nearest such day,
        in the past unless a cue puts it in the future (`tempo_eval.core.relative`)."""
        ref = scan.ref
        if ref is None or not scan.text[start - 1].isupper():
            return  # the scan is lower-case; weekdays are written with a capital
        day = WEEKDAYS.index(text.removesuffix("'s").removesuffix("’s"))
        cue, at = _cue_before(scan, start, WEEKDAY_CUES)
        if cue in ("last", "past", "this past"):
            year = weekday_year(ref, day, -1)
        elif cue:
            year = weekday_year(ref, day, 1)  # next, coming, this, this coming
        elif _is_name(scan, start, end):
            return  # "Grace Friday", "Sunday Times"
        else:
            year = _with_tense(scan, start, lambda tense: weekday_year(ref, day, max(tense, 0)), False)
        self._add(scan, at, end, year, year, "relative")

    def _month_day(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "Aug. 7", "December 20", "6 January", "the 30th of June": the nearest occurrence."""
        ref = scan.ref
        if ref is None or UNIT_AFTER.match(scan.low, end):
            return
        month, day, at = _month_day_parts(text)
        if not scan.text[start + at - 1].isupper():
            return  # "may 5": not a month
        year = _with_tense(scan, start, lambda tense: month_day_year(ref, month, day, tense))
        if year is not None:
            self._add(scan, start, end, year, year, "relative")

    def _bare_month(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "in April", "since June", "mid-December": a capitalised month after a cue word,
        its nearest occurrence."""
        ref = scan.ref
        if ref is None or not scan.text[start - 1].isupper():
            return  # "may", "march"
        cue = previous_word(scan.spaced, start)
        if cue not in MONTH_CUES or _next_word_is_name(scan, end):
            return  # "May I ask", "April Jones", "by June Carter"
        month = MONTH_NUMBERS[text.removesuffix("'s").removesuffix("’s")]
        year = _with_tense(scan, start, lambda tense: month_year(ref, month, None, tense), cue == "since")
        self._add(scan, start, end, year, year, "relative")

    def _quarter(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "the third quarter", "third-quarter", "Q3", "the first half", "this quarter". A year
        written right before it ("the 1988 third quarter") is its year, whatever the reference date."""
        explicit = _YEAR_BEFORE.search(scan.low, max(0, start - 12), start)
        if explicit is not None and text[0] != "q":
            year = int(explicit.group(1))  # the year written in the phrase wins over the reference date
            self._add(scan, start, end, year, year, "date")
            return
        ref = scan.ref
        if ref is None:
            return
        words = text.split()
        after_first = start + len(words[0])
        hyphenated = scan.low[after_first : after_first + 1] == "-"  # "third-quarter loss": business
        if not hyphenated and text[0] != "q" and _is_sports(scan.low[max(0, start - 80) : end + 60]):
            return  # "scored in the fourth quarter"
        months = 6 if "half" in words else 3
        if text.endswith("of the year"):
            year = ref.year
        elif words[-1] == "months":  # "the first nine months": of the latest year that had them
            n = number(words[1])
            year = ref.year if n is not None and ref.month > n else ref.year - 1
        elif text == "the quarter" or text.startswith("the quarter'") or text.startswith("the quarter’"):
            year = period_year(ref, 1, 3, "last")  # the quarter just reported
        elif text[0] == "q":
            index = int(text[1])
            year = _with_tense(scan, start, lambda tense: period_year(ref, index, 3, None, tense))
        elif words[-1] == "quarter" and words[-2] in ("this", "current", "last", "previous", "next", "coming"):
            direction = {"current": "this", "previous": "last", "coming": "next"}.get(words[-2], words[-2])
            year = period_year(ref, 1, 3, direction)
        else:
            index = 2 if months == 6 and words[0] == "final" else QUARTER_ORDINALS[words[0]]
            if months == 6 and index > 2:
                return  # "the third half" is no half
            year = _with_tense(scan, start, lambda tense: period_year(ref, index, months, None, tense))
        self._add(scan, start, end, year, year, "relative")

    def _season(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "last fall", "this summer", "in the spring", "over the winter" (a winter touches
        two calendar years and gives both). A season needs a cue word before it."""
        ref = scan.ref
        if ref is None:
            return
        season = text.removesuffix("'s").removesuffix("’s")
        cue, at = _cue_before(scan, start, SEASON_CUES)
        if not cue or (season == "fall" and cue not in _FALL_CUES):
            return  # "hot springs", "after the fall", "prices fall": no season
        if cue in ("last", "past", "this past"):
            direction: str | None = "last"
        elif cue in ("next", "coming", "this coming"):
            direction = "next"
        else:
            direction = None
        first, last = _with_tense(
            scan, at, lambda tense: season_years(ref, season, direction, tense), cue.startswith("since")
        )
        self._add(scan, at if direction or cue == "this" else start, end, first, last, "relative")

    def _anaphoric(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "a year earlier", "two years later", "a week earlier": counted from the last year
        written before it in the text (a month, week or day keeps that year), else from the
        reference date."""
        words = text.replace("-", " ").split()
        n = number(" ".join(words[:-2]))
        if n is None or n > 99:
            return
        unit = words[-2]
        sign = -1 if words[-1] == "earlier" else 1
        anchor = next((s for s in reversed(scan.spans) if s.kind in ("year", "date", "range")), None)
        if anchor is not None:
            years = 10 * n if unit.startswith("decade") else n if unit.startswith("year") else 0
            year: int | None = (anchor.first if sign < 0 else anchor.last) + sign * years
        elif scan.ref is not None:
            year = shift_year(scan.ref, sign * n, unit)
        else:
            return
        if year is not None:
            self._add(scan, start, end, year, year, "relative")

    def _year_ago(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "the year-ago quarter": the same period a year before the reference date."""
        if scan.ref is not None:
            self._add(scan, start, end, scan.ref.year - 1, scan.ref.year - 1, "relative")
