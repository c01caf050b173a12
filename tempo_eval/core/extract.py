"""Focus-time extraction: which years a query (QFT), a document (DFT) or an answer (AFT) is about.

`extract_qft`, `extract_dft` and `extract_aft` share one default `FocusTimeExtractor`; build
your own for another reference date, span cap or period table. The result is a `FocusTime`:
the set of years plus one `YearSpan` per expression (character offsets into the text, the
inclusive year interval, the rule that found it). English only, but digits may be any Unicode
decimal digits (full-width "２０２０", Arabic-Indic "٢٠٢٠"): they read as 0-9. The rules:

Explicit years
    A standalone four-digit number from 1000 to 2099 is a year ("built in 1500" -> 1500),
    unless it is a quantity or a label: after a currency sign or code ("$2,000", "€1500",
    "USD 1500"), before a unit or a counted noun ("2000 km", "1500 employees", "1999 people",
    "2020 kg", "1500 USD", "2000 years"), after a quantifier or a label ("more than 2000",
    "nearly 1500", "page 1984", "room 1200", "No. 1999", "flight 2020", "Model 1950"),
    before any other lower-case plural noun, also after a modifier ("1200 apartments", "2015
    polling stations"; not after a determiner or before a noun a year modifies: "the 1999
    amendments", "2008 sales"), before "block of" or a street name ("2014 Oak Street"), or
    inside a longer number ("1.2019", "2019.5", "555-1234", "555 2019"). After "since", "until", "during",
    "circa" or a sentence-initial "In", a year stays a year before a noun ("In 1920 women won
    the vote", "since 1999 people have ..."). Years from 1 to 999 need an era marker in
    capitals ("476 AD", "AD 800", "800 CE") or "the year 800". BC years yield nothing
    (focus times hold positive years): "1200 BC", "the 5th century BC".
Decades
    "the 1990s", "1990's", "the '90s", "90s", "the nineties", "the nineteen-sixties". A
    two-digit decade is the latest such decade that starts no later than the reference year
    ("the '20s" is 2020-2029 on 2024-06-01, 1920-1929 on 2015-01-01); without a reference
    date it is in the 1900s. "her 90s", "the low 90s" (ages, temperatures) are no decades;
    a decade word needs the article ("in her twenties" is an age). "the 2000s" is the
    decade 2000-2009 (as a century it would be mostly future years).
Centuries
    "the 19th century", "19th-century", "the nineteenth century" and "the 1800s" are
    1800-1899: the Nth century runs from (N-1)00 to (N-1)99, and "the X00s" is a century for
    the 1000s to the 1900s ("the 1900s" = 1900-1999). "the 18th and 19th centuries" is
    1700-1899.
Early / mid / late, first / second half
    Thirds of a decade: early 0-3, mid 4-6, late 7-9 ("early 1990s" = 1990-1993, "mid-'90s"
    = 1994-1996). Thirds of a century: early 00-33, mid 34-66, late 67-99. Halves ("the
    first half of the 20th century"): 0-4 / 5-9 and 00-49 / 50-99.
Ranges
    "2008-2010", "2008–2010", "2008—2010", "2008/2009", "from 2008 to 2010",
    "between 2008 and 2010", "2008 through 2010", "2008 until 2010" -> every year from the
    first to the last. A two-digit end continues the century ("1914-18" = 1914-1918) or is a
    season across a century boundary ("1999-00" = 1999-2000, if that spans at most 10
    years); otherwise "2020-03" is a year and a month (2020). A reversed range ("2010-2008")
    is no range: its two years are kept as two single years; so are "2008 and 2010" without
    "between". Dates and decades joined the same way are ranges too ("from May 2008 to June
    2010" = 2008-2010, "the 1980s to the 1990s" = 1980-1999). Any span whose last year minus
    first year exceeds `max_span_years` (default 300) keeps only its two end points and is
    flagged `capped` ("from 1000 to 1500" -> {1000, 1500}).
Dates
    "May 2019", "Sept. 2019", "12 March 2020", "March 12, 2020", "12th of March, 2020",
    "2020-03-12", "12/03/2020", "12.03.2020", "FY2019", "Nov '19" (a two-digit year resolves
    like a two-digit decade) -> the year.
Relative expressions (only with a reference date: without one they yield nothing, and
nothing ever depends on today's date)
    With R the reference year: "this year" = R, "last year" = R-1, "next year" = R+1;
    "two years ago" / "2 years ago" = R-2 and "3 years from now" = R+3 (also with decades,
    centuries, months, weeks and days: the year of that date); "in the past 5 years",
    "over the last three years", "the next 10 years" = R-5..R, R-3..R, R..R+10 -- a window
    of N years ending (or starting) on the reference date touches those calendar years;
    "the past year" = R-1..R, "the last decade" / "the past decade" = R-10..R, "the last
    few years" = R-3..R; "recent years" = R-2..R ("recently", "lately" are vague: no year); "this decade" /
    "this century" = the calendar decade / century of R; "yesterday", "today", "tomorrow",
    "last month", "next week" = the year of that day; "last March", "next May" (capitalised)
    = the year of that month. Narrative phrasings are left alone: "the next year he moved",
    "the last year of the war", "the previous year", "the following year".
    What news and reports write, read by `tempo_eval.core.dated` and resolved by
    `tempo_eval.core.relative` (its docstring has the rules): weekdays ("Friday", "last Monday", "this coming Tuesday"; the nearest such
    day, in the past unless "next" or a future tense); a month and day ("Aug. 7", "6
    January") and a month after a cue word ("in April", "since June", "mid-December"): the
    nearest occurrence; quarters and halves ("the third quarter", "third-quarter", "Q3",
    "the first half"; not in a sentence about a game; "the third quarter of 2004" and "fiscal
    1999" take their year); seasons ("last fall", "in the spring"; a winter gives both its
    years); "a year earlier" / "two years later" (from a year written before it in the text,
    else from R; "a week earlier" keeps that year); "the year-ago quarter", "the year-earlier
    period" = R-1; "the same period last year" through "last year"; "the quarter" (the one
    just reported) and "the first nine months" (of the latest year that had them); "recent
    weeks" = R; "this morning", "last night", "over the weekend" = the year of that day. Weekdays and months must be capitalised ("may", "the march" are no months), and
    are no dates inside a name ("June Carter", "Sunday Times", "Mr. Friday", "the nurse Grace
    Friday", "Grace Friday, a nurse,"); after a place or an addressee they are dates ("told
    Reuters Friday", "in Kabul Monday").
    A duration is no date: "in 100 days", "for 100 days", "within 30 days", "the 100-day
    plan". "In three weeks" opening a sentence, or after a verb of scheduling ("expires in 30
    days"), is one; such rarer phrasings ("the day before yesterday", "a fortnight ago", "in
    three weeks") go to dateparser, one short phrase at a time, with the reference date as
    `RELATIVE_BASE`; `use_dateparser=False` skips them.
Spelled-out years (they need no reference date)
    "nineteen ninety-six", "eighteen fifteen", "nineteen oh five", "twenty nineteen", "two
    thousand and eight", "the year two thousand" -> the year; not before a unit or a larger
    number word ("two thousand and eight people", "twenty twenty-five thousand").
Named periods
    From the table in `tempo_eval.core.periods` (the World Wars in all common spellings, the
    Cold War, the Great Depression, the Victorian era, the COVID-19 pandemic, ...), matched
    case-insensitively as whole names: not as the tail of a hyphenated name ("the Iran-Iraq
    war" is not the Iraq War; "anti-Vietnam War" still is the Vietnam War). Extended or
    overridden with `periods=`.

Where expressions overlap, the longest, most specific reading wins ("from 2008 to 2010" is
one range span, "May 2019" one date span, "the 2008 financial crisis" one period span).
One precompiled pattern (`tempo_eval.core.grammar`) scans the text once; see `Grammar` there
for how it stays within a small factor of a bare year regex.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable, Mapping, Sequence

from tempo_eval.core.counts import is_count_or_address, opens_sentence
from tempo_eval.core.dated import DatedExpressions
from tempo_eval.core.focus import FocusTime, YearSpan, new_span, years_of_spans
from tempo_eval.core.grammar import DECADE_WORDS, ORDINAL_KEYS, compiled_grammar
from tempo_eval.core.periods import DEFAULT_PERIODS, merge_periods, normalize_period_name
from tempo_eval.core.relative import two_digit_year
from tempo_eval.core.scan import (
    UNIT_AFTER,
    Scan,
    ascii_digits,
    is_digit_group,
    lower_same_length,
    previous_word,
    spaced_text,
)
from tempo_eval.core.spelled import spelled_year

__all__ = ["FocusTimeExtractor", "extract_aft", "extract_dft", "extract_qft", "parse_reference_date"]

_set_field = object.__setattr__

MIN_YEAR = 1
MAX_YEAR = 2099

# --------------------------------------------------------------------------------------------
# Context checks, run on a match only, on a few characters around it (lower-cased text).

_CURRENCY_SIGNS = frozenset("$€£¥₹#№")
# A year between these and punctuation (or the text's end) is a year whatever else is around it
# (`_plain_year`): none of the checks on a year's neighbours can read anything into them.
_CUE_WORDS = frozenset(("in", "since", "until", "till", "during", "circa", "c.", "ca."))
_PLAIN_AFTER = frozenset((*",.;:!?)", ""))
_OPEN_DASHES = frozenset("-‐–")  # a dash before a year can make it an open range ("post-1959")
#: "post-1959", "pre-1990": open ranges after / before the year (docs/metrics.md, Focus time)
_OPEN_PREFIX = re.compile(r"(?<![a-z])(?:post|pre)[-‐–]$")
_RANGE_END = re.compile(r"[0-9]+$")
_DIGIT = re.compile(r"[0-9]")
_BC_AFTER = re.compile(r"\s*(?:bce?\b|b\.c\.)")
_CONNECTOR = re.compile(r"\s*(?:-|–|—|to|through|thru|until|till|and)\s+(?:the\s+)?|\s*[-–—]\s*")
# Words before "90s" or "twenties" that make it an age or a temperature ("her 90s").
_AGE_WORDS = frozenset(
    ("her", "his", "their", "my", "your", "our", "its", "low", "high", "upper", "lower")
)
_MODIFIED = re.compile(
    r"(?:(?P<mod>early|mid|late)|(?P<half>first|second|latter)\s+half\s+of)(?:\s*-\s*|\s+)"
    r"(?:the\s+)?(?P<epoch>.+)"
)
_CENTURY_WORDS = re.compile(r"\s*(?:-|–|—|\sand\s|\sto\s|\sor\s)\s*|\s+")
_NUMBER_WORD_AFTER = re.compile(r"[\s-]+(?:hundred|thousand|million|billion)\b")
_PREFIXES = frozenset(("pre", "post", "anti", "mid", "non", "ex", "neo", "pro"))


# --------------------------------------------------------------------------------------------
# Reference dates


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_reference_date(value: object) -> dt.date | None:
    """The reference date for relative expressions, as a `datetime.date` (or None).

    Accepts None, a `date`, a `datetime` (its date is used; the time zone is ignored) or an
    ISO string "YYYY-MM-DD" (an ISO date-time string "YYYY-MM-DDTHH:MM[:SS]" is accepted
    too, its date is used). Raises TypeError for any other type and ValueError for a string
    that is not such a date.
    """
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        if _ISO_DATE.fullmatch(text) or (_ISO_DATE.match(text) and text[10:11] in ("T", " ")):
            try:
                return dt.datetime.fromisoformat(text).date()
            except ValueError:
                pass
        raise ValueError(f"reference_date must be an ISO date 'YYYY-MM-DD', got {value!r}")
    raise TypeError(
        "reference_date must be a datetime.date, a datetime.datetime, an ISO 'YYYY-MM-DD' "
        f"string or None, got {type(value).__name__}"
    )


# --------------------------------------------------------------------------------------------
# Small pure helpers


def _narrow(first: int, length: int, mod: str | None, half: str | None) -> tuple[int, int]:
    """Narrow a decade (length 10) or century (length 100) to a third or a half."""
    if mod:
        thirds = {"early": (0, 3), "mid": (4, 6), "late": (7, 9)}
        if length == 100:
            thirds = {"early": (0, 33), "mid": (34, 66), "late": (67, 99)}
        lo, hi = thirds[mod]
        return first + lo, first + hi
    if half:
        if half == "first":
            return first, first + length // 2 - 1
        return first + length // 2, first + length - 1
    return first, first + length - 1


def _range_cue(text: str, start: int) -> int | None:
    """Where "from" or "between" (optionally with "the years") starts before `start`."""
    words = text[max(0, start - 24) : start].split()
    while words and words[-1] in ("the", "year", "years"):
        words.pop()
    if words and words[-1] in ("from", "between"):
        return text.rfind(words[-1], 0, start)
    return None


def _epoch(text: str, reference_year: int | None) -> tuple[int, int] | None:
    """First year and length of a decade or century: "1990s" -> (1990, 10), "the 1800s" and
    "19th century" -> (1800, 100), "'90s" and "the nineties" -> the latest such decade not
    after the reference year (1990 without one), "nineteen-sixties" -> (1960, 10)."""
    if text.endswith("century"):
        n = _ordinal(text.rsplit(None, 1)[0])
        return ((n - 1) * 100, 100) if 1 <= n <= 21 else None
    if text[:4].isdigit():
        first = int(text[:4])
        return (first, 100) if first % 100 == 0 and first < 2000 else (first, 10)
    if text[0].isdigit() or text[0] in "'’‘":
        return two_digit_year(10 * int(text.lstrip("'’‘")[0]), reference_year), 10
    digit = DECADE_WORDS[re.split(r"[-\s]", text)[-1].removeprefix("nineteen")]
    if text.startswith("nineteen"):
        return 1900 + 10 * digit, 10
    return two_digit_year(10 * digit, reference_year), 10


def _ordinal(raw: str) -> int:
    """ "19th" -> 19, "nineteenth" -> 19, "twenty-first" -> 21."""
    if raw[0].isdigit():
        return int(raw[:-2])
    return ORDINAL_KEYS["".join(raw.replace("-", " ").split())]


def _in_compound(scan: Scan, start: int) -> bool:
    """Is the expression the tail of a hyphenated name ("Iran-Iraq war")? A lower-case
    prefix ("anti-", "post-", "pre-") is not a name."""
    if start < 3 or scan.low[start - 1] not in "-–—" or not scan.low[start - 2].isalpha():
        return False
    prefix = scan.low[max(0, start - 16) : start - 1].split()[-1]
    return prefix not in _PREFIXES and scan.text[start - 2 - len(prefix)].isupper()


# --------------------------------------------------------------------------------------------


class FocusTimeExtractor(DatedExpressions):
    """Extract the focus time (a set of years with their source spans) of a text.

    `reference_date` anchors relative expressions ("last year"); `extract(text,
    reference_date=...)` overrides it per call. `max_span_years` caps long spans (when
    last - first exceeds it only the two end points are kept and the span is flagged
    `capped`). `periods` extends or overrides the named-period table (name -> (first, last),
    see `tempo_eval.core.periods`). `use_dateparser=False` skips the few rare relative
    phrasings that are delegated to dateparser; `languages` is passed to it. The grammar
    itself is English. The module docstring lists every rule.
    """

    def __init__(self, reference_date: object = None, *, max_span_years: int = 300,
                 periods: Mapping[str, tuple[int, int]] | None = None, use_dateparser: bool = True,
                 languages: Sequence[str] = ("en",)) -> None:
        if isinstance(max_span_years, bool) or not isinstance(max_span_years, int):
            raise TypeError(f"max_span_years must be an int, got {type(max_span_years).__name__}")
        if max_span_years < 1:
            raise ValueError(f"max_span_years must be at least 1, got {max_span_years}")
        if isinstance(languages, str) or not isinstance(languages, Sequence) or not all(
                isinstance(x, str) for x in languages):
            raise TypeError("languages must be a sequence of language codes such as ('en',)")
        self.reference_date = parse_reference_date(reference_date)
        self.max_span_years = max_span_years
        self.use_dateparser = bool(use_dateparser)
        self.languages = tuple(languages)
        table = merge_periods(periods) if periods is not None else dict(DEFAULT_PERIODS)
        self.periods: dict[str, tuple[int, int]] = table
        self._period_spans = {normalize_period_name(name): span for name, span in table.items()}
        self._grammar = compiled_grammar(tuple(sorted(table)))
        self._handlers: dict[str, Callable[[Scan, int, int, str], None]] = {
            # absolute expressions (this module)
            "skip": _skip, "period": self._period, "ndate": self._numeric_date, "date": self._named_date,
            "month": self._named_date, "century": self._century, "era": self._era, "decade": self._decade,
            "modified": self._modified, "year": self._plain_year, "cueyear": self._plain_cue_year,
            "fy": self._fiscal_year, "theyear": self._the_year, "spelled": self._spelled,
            # against the reference date (`tempo_eval.core.dated`)
            "ago": self._ago, "relative": self._relative, "month_relative": self._month_relative,
            "recent": self._recent, "day": self._day, "delegate": self._delegate, "weekday": self._weekday,
            "bare_month": self._bare_month, "quarter": self._quarter, "season": self._season,
            "anaphoric": self._anaphoric, "yearago": self._year_ago,
        }

    # ---------------------------------------------------------------- public

    def extract(self, text: str, reference_date: object = None) -> FocusTime:
        """The focus time of `text`: the years it is about and the spans they come from.

        Raises TypeError when `text` is not a str; an empty or blank text gives an empty
        FocusTime. `reference_date` (date, datetime, ISO string) overrides the extractor's.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        ref = self.reference_date if reference_date is None else parse_reference_date(reference_date)
        # Full-width and other non-ASCII digits read as ASCII ones, one character for one, so
        # every offset still indexes `text`; the spans keep the original characters.
        work = ascii_digits(text)
        # One leading space: every match starts with the separator before its expression.
        scan = Scan(work, " " + lower_same_length(work), ref)
        scan.spaced = spaced = spaced_text(scan.low)
        handlers = self._handlers
        grammar = self._grammar
        kinds = grammar.known_kinds
        for match in grammar.scan.finditer(spaced):
            start, end = match.span()
            start += 1  # the expression, after its space
            found = spaced[start:end]
            kind = kinds.get(found) or grammar.kind_of(found)
            if kind is not None:
                handlers[kind](scan, start, end, found)
        spans = self._join_ranges(scan) if len(scan.spans) > 1 else scan.spans
        if work is not text:
            for span in spans:
                _set_field(span, "text", text[span.start : span.end])  # as `new_span` builds it
        return FocusTime(years_of_spans(spans), spans, text, ref.year if ref else None)

    # ---------------------------------------------------------------- absolute expressions

    def _add(self, scan: Scan, start: int, end: int, first: int, last: int, kind: str) -> None:
        if first < MIN_YEAR or last > MAX_YEAR or first > last:
            return
        # start/end index the padded lower-case text; the span indexes the original.
        capped = last - first > self.max_span_years
        text = scan.text[start - 1 : end - 1]
        scan.spans.append(new_span(start - 1, end - 1, text, first, last, kind, capped))

    def _plain_year(self, scan: Scan, start: int, end: int, text: str) -> None:
        """`_year` for its commonest shape, four digits alone ("By 1998 it", "in 1991."),
        without the checks that cannot apply to them; any other shape goes to `_year`."""
        low = scan.low
        if end - start != 4 or low[start - 1] in _OPEN_DASHES or (
                start >= 2 and (low[start - 2].isdigit() or low[start - 2] in _CURRENCY_SIGNS)):
            return self._year(scan, start, end, text)
        after = low[end : end + 1]
        if after == " ":
            if low[end + 1 : end + 2].isdigit():
                return self._year(scan, start, end, text)  # "1998 1999", "555 2019"
            source = scan.text
            if is_count_or_address(source, start - 1, end - 1) and not opens_sentence(source, start - 1):
                return
        elif after not in _PLAIN_AFTER:
            return self._year(scan, start, end, text)
        year = int(text)
        if year <= MAX_YEAR:
            scan.spans.append(new_span(start - 1, end - 1, scan.text[start - 1 : end - 1], year, year, "year", False))

    def _plain_cue_year(self, scan: Scan, start: int, end: int, text: str) -> None:
        """`_cue_year` for its commonest shape, a cue word, one space and four digits before
        punctuation ("in 1991,"), where no check finds anything; any other goes to `_cue_year`."""
        if text[-5:-4] != " " or text[:-5] not in _CUE_WORDS or scan.low[end : end + 1] not in _PLAIN_AFTER:
            return self._cue_year(scan, start, end, text)
        year = int(text[-4:])
        if year <= MAX_YEAR:
            scan.spans.append(new_span(end - 5, end - 1, scan.text[end - 5 : end - 1], year, year, "year", False))

    def _year(self, scan: Scan, start: int, end: int, text: str, cued: bool = False) -> None:
        """A year or a year range; a bare number before a plural noun or a street name is a
        count or an address (`tempo_eval.core.counts`), unless a cue word ("since") or the
        sentence start makes it a year."""
        low = scan.low
        first = int(low[start : start + 4])
        if first > MAX_YEAR:
            return
        if start >= 2 and low[start - 1] == " " and low[start - 2] in _CURRENCY_SIGNS:
            return  # "$ 2000"
        if start >= 2 and low[start - 2].isdigit():
            if low[start - 1] in "-–—./:":
                return  # inside a longer number: "555-1234", "1.2019", "12:2020"
            if low[start - 1] == " " and is_digit_group(low, start - 1, backward=True):
                return  # digit groups of a phone number: "555 2019"
        if end + 1 < len(low) and low[end] == " " and is_digit_group(low, end + 1):
            return
        if end == start + 4:
            prefix = _OPEN_PREFIX.search(low, max(0, start - 6), start)
            if prefix is not None:  # "post-1959", "pre-1990": an open range, its year only
                self._add(scan, prefix.start(), end, first, first, "open_range")
                return
            if not cued and is_count_or_address(scan.text, start - 1, end - 1) and not opens_sentence(scan.text, start - 1):
                return  # "1200 apartments", "the 1600 block of", "2014 Oak Street"
            self._add(scan, start, end, first, first, "year")
            return
        tail = _RANGE_END.search(low, start + 4, end)
        if tail is None:  # cannot happen: the grammar ends a range with digits
            return
        connector = low[start + 4 : tail.start()].strip()
        if len(tail.group()) == 2:  # two-digit end: same century, or a season across one
            yy = int(tail.group())
            last = first - first % 100 + yy
            if last <= first:
                last += 100
            if yy > first % 100 or last - first <= 10:
                self._add(scan, start, end, first, last, "range")
            else:  # "2020-03": a year and a month
                self._add(scan, start, end, first, first, "date" if 1 <= yy <= 12 else "year")
            return
        last = int(tail.group())
        cue = _range_cue(scan.spaced, start)
        if connector == "and" and (cue is None or low[cue] != "b"):
            last = 0  # "2008 and 2010" is two years, not a range ("between" makes it one)
        if first <= last <= MAX_YEAR:
            self._add(scan, start if cue is None else cue, end, first, last, "range")
        else:  # a reversed range or a pair: two separate years
            self._add(scan, start, start + 4, first, first, "year")
            self._add(scan, tail.start(), end, int(tail.group()), int(tail.group()), "year")

    def _cue_year(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "since 1999", "in 1920": the cue word keeps a year a year before a unit
        ("since 1999 people have ..."), except a lower-case "in", which is too common
        ("in 1500 households") -- only a sentence-initial "In" counts."""
        low = scan.low
        digits = _DIGIT.search(scan.spaced, start)
        if digits is None:  # cannot happen: the grammar requires a year
            return
        if _BC_AFTER.match(low, end):
            return  # "in 1200 BC": years before the common era are not represented
        if low[start : start + 2] == "in" and UNIT_AFTER.match(low, end):
            before = low[max(0, start - 3) : start].strip()
            if scan.text[start - 1] != "I" or (before and before[-1] not in ".!?"):
                return
        self._year(scan, digits.start(), end, scan.spaced[digits.start() : end], cued=True)

    def _numeric_date(self, scan: Scan, start: int, end: int, text: str) -> None:
        separators = [ch for ch in text if ch in "-/."]
        if separators[0] != separators[1]:
            return  # "2020-03/12" is no date
        parts = [int(x) for x in text.split(separators[0])]
        if parts[0] > 31:  # year first
            year, month, day = parts
            valid = 1 <= month <= 12 and 1 <= day <= 31
        else:
            a, b, year = parts
            valid = 1 <= a <= 31 and 1 <= b <= 31 and (a <= 12 or b <= 12)
        if valid and year <= MAX_YEAR:
            self._add(scan, start, end, year, year, "date")

    def _named_date(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "12 March 2020", "March 12, 2020", "May 2019", "Nov '19"; "6 January" has no
        year and is resolved against the reference date."""
        raw = text
        if not (raw[-4:].isdigit() or raw[-3] in "'’"):  # "Aug. 7", "6 January": no year
            self._month_day(scan, start, end, text)
            return
        if raw[-3] in "'’":
            year = two_digit_year(int(raw[-2:]), scan.ref.year if scan.ref else None)
        else:
            year = int(raw[-4:])
            if year > MAX_YEAR or UNIT_AFTER.match(scan.low, end):
                return
        self._add(scan, start, end, year, year, "date")

    def _period(self, scan: Scan, start: int, end: int, text: str) -> None:
        if _in_compound(scan, start):
            return  # "the Iran-Iraq war" is not the Iraq War: names match whole
        span = self._period_spans.get(normalize_period_name(text))
        if span is not None:
            self._add(scan, start, end, span[0], span[1], "period")

    def _era(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "476 AD", "AD 800", "800 CE": the marker must be in capitals ("2 ad campaigns")."""
        number = re.search(r"[0-9]+", text)
        if number is None:  # cannot happen: the grammar requires digits
            return
        year = int(number.group())
        original = scan.text[start - 1 : end - 1]
        if any(tag in original for tag in ("AD", "A.D.", "CE", "C.E.")):
            self._add(scan, start, end, year, year, "year")
        elif 1000 <= year <= MAX_YEAR and original[0].isdigit():  # "1500 ad": just the year
            self._add(scan, start, start + number.end(), year, year, "year")

    def _fiscal_year(self, scan: Scan, start: int, end: int, text: str) -> None:
        year = int(text[-4:])
        if year <= MAX_YEAR:
            self._add(scan, start, end, year, year, "year")

    def _the_year(self, scan: Scan, start: int, end: int, text: str) -> None:
        year = int(text.rsplit(None, 1)[-1])
        if 100 <= year <= MAX_YEAR:
            self._add(scan, start, end, year, year, "year")

    def _century(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "the 19th century", "nineteenth-century", "the 18th and 19th centuries"."""
        if _BC_AFTER.match(scan.low, end):
            return
        words = _CENTURY_WORDS.split(text)
        ordinals = [w for w in words if w and not w.startswith("centur")]
        if ordinals[0][0].isdigit():
            numbers = [_ordinal(w) for w in ordinals]
        else:  # "twenty-first": rejoin the words split on the hyphen
            numbers = [_ordinal("-".join(ordinals))]
        n1, n2 = numbers[0], numbers[-1]
        if 1 <= n1 <= n2 <= 21:
            self._add(scan, start, end, max(1, (n1 - 1) * 100), (n2 - 1) * 100 + 99, "century")

    def _decade(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "1990s", "the '90s", "the nineties"; "the 1800s" is a century."""
        raw = text
        previous = previous_word(scan.spaced, start)
        if raw[0].isdigit() and not raw[:4].isdigit() and previous in _AGE_WORDS:
            return  # "in her 90s", "the low 90s": an age or a temperature
        if raw[0].isalpha() and not raw.startswith("nineteen") and previous != "the":
            return  # "in her twenties": an age
        epoch = _epoch(raw, scan.ref.year if scan.ref else None)
        if epoch is not None:
            first, length = epoch
            kind = "century" if length == 100 else "decade"
            self._add(scan, start, end, first, first + length - 1, kind)

    def _modified(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "early 1990s" (0-3), "mid-'90s" (4-6), "late 19th century" (67-99), "the first
        half of the 20th century" (00-49)."""
        parts = _MODIFIED.fullmatch(text)
        if parts is None:  # cannot happen: the same shape as the grammar
            return
        mod, half, text = parts.group("mod", "half", "epoch")
        if _BC_AFTER.match(scan.low, end):
            return
        two_digits = text[0].isdigit() and not text[:4].isdigit()
        if two_digits and previous_word(scan.spaced, start) in _AGE_WORDS:
            return  # "in her early 90s"
        epoch = _epoch(text, scan.ref.year if scan.ref else None)
        if epoch is not None:
            first, last = _narrow(epoch[0], epoch[1], mod, half)
            kind = "century" if epoch[1] == 100 else "decade"
            self._add(scan, start, end, max(1, first), last, kind)

    def _spelled(self, scan: Scan, start: int, end: int, text: str) -> None:
        """ "nineteen ninety-six", "two thousand and eight": a year in words (it needs no
        reference date). Not before a unit ("two thousand and eight people") nor a larger
        number word; "two thousand" alone only as "the year two thousand"."""
        if UNIT_AFTER.match(scan.low, end) or _NUMBER_WORD_AFTER.match(scan.low, end):
            return
        year = spelled_year(text)
        if year is None or (text == "two thousand" and previous_word(scan.spaced, start) != "year"):
            return
        self._add(scan, start, end, year, year, "year")

    # ---------------------------------------------------------------- compound ranges

    def _join_ranges(self, scan: Scan) -> list[YearSpan]:
        """Join "<date or decade> to <date or decade>" (and "between X and Y") into one range."""
        spans = scan.spans
        for earlier, later in zip(spans, spans[1:], strict=False):
            if later.start - earlier.end <= 16:
                break
        else:  # most texts: no two spans close enough to join
            return spans
        joinable = ("year", "date", "decade", "century")
        low = scan.low
        out: list[YearSpan] = []
        for span in spans:
            prev = out[-1] if out else None
            if (
                prev is not None
                and prev.kind in joinable
                and span.kind in joinable
                and span.start - prev.end <= 16
                and prev.first <= span.first
                and prev.last <= span.last
                and _CONNECTOR.fullmatch(low, prev.end + 1, span.start + 1)
            ):
                # span offsets index the original text, one less than the padded `low`
                gap = low[prev.end + 1 : span.start + 1].split()
                cue = _range_cue(scan.spaced, prev.start + 1)
                if not gap or gap[0] != "and" or (cue is not None and low[cue] == "b"):
                    start = prev.start if cue is None else cue - 1
                    first, last = prev.first, span.last
                    out[-1] = YearSpan(
                        start, span.end, scan.text[start : span.end], first, last, "range",
                        last - first > self.max_span_years,
                    )
                    continue
            out.append(span)
        return out


def _skip(scan: Scan, start: int, end: int, text: str) -> None:
    """Labelled numbers ("page 1984"): matched only so that nothing reads a year in them."""


# --------------------------------------------------------------------------------------------
# Module-level entry points: one shared default extractor.


_default: FocusTimeExtractor | None = None
_default_lock = threading.Lock()


def _default_extractor() -> FocusTimeExtractor:
    # Built once under a lock: the verifier's threads all reach here at the first row, and an
    # lru_cache would let each of them build the grammar (6 builds, up to 0.9 s CPU, measured).
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = FocusTimeExtractor()
    return _default


def extract_qft(query: str, reference_date: object = None) -> FocusTime:
    """Query focus time: the years a query asks about (rules in the module docstring)."""
    return _default_extractor().extract(query, reference_date)


def extract_dft(document: str, reference_date: object = None) -> FocusTime:
    """Document focus time: the years a retrieved document talks about."""
    return _default_extractor().extract(document, reference_date)


def extract_aft(answer: str, reference_date: object = None) -> FocusTime:
    """Answer focus time: the years a generated answer talks about."""
    return _default_extractor().extract(answer, reference_date)
