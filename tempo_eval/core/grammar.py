"""The grammar of focus-time expressions: the vocabulary, and one scanning pattern built from it.

`terminals` lists every alternative of the grammar as (kind, literal prefix pieces, regex
tail); `Grammar` merges them into one trie-shaped pattern that scans a text once, and decides
afterwards which kind each match is. What a match means is decided by the extractor's
handlers (`tempo_eval.core.extract` for absolute expressions, `tempo_eval.core.dated` for those
that need the document date, resolved in `tempo_eval.core.relative`); named periods come from
`tempo_eval.core.periods`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from tempo_eval.core.periods import phrase_pattern, phrase_pieces

# --------------------------------------------------------------------------------------------
# Vocabulary

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
MONTH_WORDS = (
    *MONTHS, "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
)
#: month name or abbreviation -> its number (1-12)
MONTH_NUMBERS = {word: next(n for n, m in enumerate(MONTHS, 1) if m.startswith(word[:3])) for word in MONTH_WORDS}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SMALL_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
NUMBER_WORDS = (*SMALL_NUMBERS, *TENS, "a", "an", "a couple of", "a hundred")
ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "twenty-first": 21,
}
ORDINAL_KEYS = {word.replace("-", ""): n for word, n in ORDINAL_WORDS.items()}
DECADE_WORDS = {
    "twenties": 2, "thirties": 3, "forties": 4, "fifties": 5, "sixties": 6, "seventies": 7,
    "eighties": 8, "nineties": 9,
}
# Words after a number that make it a quantity, not a year ("2000 km", "1500 employees").
UNIT_WORDS = (
    "percent", "per", "cent", "pct", "km", "kms", "kilometer", "kilometers", "kilometre",
    "kilometres", "meter", "meters", "metre", "metres", "m", "cm", "mm", "nm", "miles", "mile",
    "mi", "ft", "feet", "foot", "inch", "inches", "yard", "yards", "yds", "kg", "kgs", "kilo",
    "kilos", "kilogram", "kilograms", "g", "gram", "grams", "mg", "lb", "lbs", "pound",
    "pounds", "ounce", "ounces", "oz", "ton", "tons", "tonne", "tonnes", "mph", "kph", "km/h",
    "l", "liter", "liters", "litre", "litres", "ml", "gallon", "gallons", "barrel", "barrels",
    "acre", "acres", "hectare", "hectares", "ha", "sq", "square", "cubic", "hour", "hours",
    "hr", "hrs", "minute", "minutes", "min", "mins", "second", "seconds", "sec", "secs", "day",
    "days", "week", "weeks", "month", "months", "year", "years", "yr", "yrs", "decade",
    "decades", "centuries", "times", "people", "persons", "individuals", "adults", "men",
    "women", "children", "kids", "babies", "employees", "workers", "staff", "members",
    "students", "pupils", "teachers", "users", "customers", "clients", "visitors", "tourists",
    "residents", "inhabitants", "citizens", "voters", "votes", "soldiers", "troops",
    "officers", "deaths", "dead", "casualties", "victims", "cases", "patients", "participants",
    "respondents", "subjects", "samples", "units", "items", "pieces", "copies", "books",
    "words", "pages", "lines", "rooms", "beds", "seats", "cars", "vehicles", "houses", "homes",
    "households", "families", "jobs", "calories", "kcal", "points", "pts", "euro", "euros",
    "dollar", "dollars", "usd", "eur", "gbp", "cad", "aud", "jpy", "chf", "yen", "yuan",
    "rupee", "rupees", "peso", "pesos", "franc", "francs", "bitcoin", "bitcoins", "btc",
    "shares", "stocks", "bits", "bytes", "kb", "mb", "gb", "tb", "hz", "khz", "mhz", "ghz",
    "watt", "watts", "w", "kw", "kwh", "mw", "mwh", "gw", "volt", "volts", "v", "amp", "amps",
    "degree", "degrees", "rpm", "pixels", "px", "dpi", "tickets", "signatures", "species",
    "languages", "companies", "firms", "schools", "hospitals", "stores", "shops", "branches",
    "locations", "sites", "countries", "cities", "towns", "villages", "farms", "animals",
    "cattle", "sheep", "birds", "trees", "plants", "ships", "planes", "aircraft", "flights",
    "passengers", "laps", "goals", "runs", "steps", "applicants", "bc", "bce", "b.c.",
    "spectators", "fans", "volunteers", "delegates", "protesters", "demonstrators",
    "refugees", "migrants", "prisoners", "inmates", "recruits", "nurses", "doctors",
    "athletes", "players", "supporters", "guests", "viewers", "readers", "subscribers",
    "shareholders", "investors", "contracts", "loans", "projects", "accounts", "requests",
)
# Words before a number that make it a label or a quantity ("page 1984", "more than 2000");
# abbreviations with a dot ("p.", "No.") are added to the grammar separately.
LABEL_WORDS = (
    "page", "pages", "room", "rooms", "number", "nr", "flight", "route", "highway",
    "interstate", "bus", "tel", "phone", "fax", "apt", "apartment", "suite", "platform", "seat",
    "gate", "model", "exit", "article", "section", "chapter", "track", "channel", "volume",
    "ward", "locker", "extension", "usd", "eur", "gbp", "chf", "jpy", "cad", "aud", "inr", "rs", "more than",
    "less than", "fewer than", "at least", "at most", "nearly", "almost", "approximately",
    "roughly", "totaling", "totalling", "a total of",
)

UNIT = r"(?:years?|decades?|centur(?:y|ies)|months?|weeks?|days?)"
NUM_TAIL = r"(?:[-\s](?:one|two|three|four|five|six|seven|eight|nine))?"  # twenty-five
NUM = rf"(?:[0-9]{{1,3}}|{phrase_pattern(NUMBER_WORDS)}{NUM_TAIL}|few|couple\s+of)"
MONTH = phrase_pattern(MONTH_WORDS) + r"\.?"
YEAR_OR_YY = r"(?:[12][0-9]{3}|['’][0-9]{2})(?![0-9])"
# A year and an optional range end; atomic, so a range followed by a unit is not re-read as
# its first year alone ("1500 to 2000 employees" is no year at all).
YEAR_CORE = (
    r"[12][0-9]{3}(?>(?:(?:\s*[-–—]\s*|/|\s+(?:to|through|thru|until|till|and)\s+)"
    r"[12][0-9]{3}(?![0-9])|[-–—/][0-9]{2}(?![0-9]))?)"
    # not part of a longer number or word ("2019.5", "1990s"), not a decade ("1990's")
    r"(?![0-9a-z]|[.,][0-9]|[-–—/][0-9]|(?<=0)['’]s)"
)
NOT_UNIT = rf"(?![ \t]*(?:%|‰|°|-?{phrase_pattern(UNIT_WORDS)}(?![\w/])))"


class _Trie:
    """A trie of regex pieces (literal characters first); a node may end alternatives, each
    with its remaining regex."""

    __slots__ = ("children", "ends")

    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.ends: list[str] = []

    def add(self, pieces: Sequence[str], tail: str) -> None:
        node = self
        for piece in pieces:
            node = node.children.setdefault(piece, _Trie())
        node.ends.append(tail)

    def alternatives(self) -> list[str]:
        # Longer literal prefixes first, then the alternatives that end here, in order added.
        alts = [piece + _group(child.alternatives()) for piece, child in self.children.items()]
        return alts + self.ends


def _group(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


def _terminals(period_names: Sequence[str]) -> list[tuple[str, list[str], str]]:
    """Every alternative of the grammar as (kind, literal pieces, regex tail).

    When two alternatives could match at the same position, the scan takes the one with the
    longer literal prefix, then the one listed first; so more specific readings are listed
    first (a period name before a year, a numeric date before a year-month).
    """
    terminals: list[tuple[str, list[str], str]] = []

    def phrases(kind: str, words: Sequence[str], tail: str = r"(?!\w)") -> None:
        for word in dict.fromkeys(w.lower() for w in words):
            terminals.append((kind, phrase_pieces(word), tail))

    def regex(kind: str, prefix: str, rest: str) -> None:
        terminals.append((kind, [re.escape(ch) for ch in prefix], rest))

    ago_tail = rf"[\s-]+{UNIT}\s+(?:ago|from\s+now|hence)(?!\w)"
    # Named periods first: "the 2008 financial crisis" is a period, not the year 2008.
    phrases("period", period_names, r"(?!\w|/[0-9])")
    # The most frequent expression first. Its guards leave "2020-03-12" to the numeric date
    # and "1990s" to the decade, and reject "2000 km", "1500 employees" and "1200 BC".
    regex("year", "", YEAR_CORE + NOT_UNIT)
    # Digit runs are possessive ({1,2}+): an expression starts at a word start, so giving
    # digits back could only produce a wrong reading, and trying costs time on every number.
    # The separators of a numeric date must agree; the handler checks it.
    regex("ndate", "", r"[12][0-9]{3}[-/.][0-9]{1,2}+[-/.][0-9]{1,2}+(?![0-9])")
    regex("ndate", "", r"[0-9][0-9]?+[-/.][0-9]{1,2}+[-/.][12][0-9]{3}(?![0-9])")
    # "12 March 2020", and without a year "6 January" (one alternative: numbers are frequent)
    regex("date", "", rf"[0-9][0-9]?+(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}"
          rf"(?:,?\s+{YEAR_OR_YY}|(?!\w)(?!\.?,?\s*(?:[0-9]|['’][0-9])))")
    regex("century", "", r"[0-9][0-9]?+(?:st|nd|rd|th)(?:\s*(?:-|–|—|and|to|or)\s*[0-9]{1,2}+"
          r"(?:st|nd|rd|th))?[\s-]+centur(?:y|ies)(?!\w)")
    regex("ago", "", r"[0-9][0-9]{0,2}+" + ago_tail)
    regex("era", "", r"[0-9][0-9]{0,3}+\s*(?:ad|a\.d\.|ce|c\.e\.)(?!\w)")
    regex("decade", "", r"[12][0-9][0-9]0(?:s|['’]s)(?!\w)")  # 1990s, the 1800s
    regex("decade", "", r"[0-9]0(?:s|['’]s)(?!\w)")  # 90s
    regex("decade", "", r"['’‘][0-9]0(?:s|['’]s)(?!\w)")  # '90s
    # Labelled numbers: consumed, so nothing reads a year in them. (Money needs no rule: a
    # number glued to "$" or "€" does not start a word; "$ 2000" is checked by the year rule.)
    label_tail = r"\s*#?\s*[0-9][0-9,.]*+"
    phrases("skip", LABEL_WORDS, label_tail)
    for abbreviation in ("p", "pp", "no", "nos", "nr", "tel", "ext", "apt", "rs"):
        regex("skip", abbreviation, r"\." + label_tail)
    # A year after these stays a year even before a unit ("since 1999 people have ...").
    for cue in ("in", "since", "until", "till", "during", "circa"):
        regex("cueyear", cue, rf"\s+{YEAR_CORE}")
    for cue in ("ca", "c"):
        regex("cueyear", cue, rf"\.\s*{YEAR_CORE}")
    # "May 2019", "March 12, 2020", and without a year "Aug. 7" (resolved by the handler)
    phrases("month", MONTH_WORDS, rf"\.?(?:\s+[0-9][0-9]?+(?:st|nd|rd|th)?(?:,?\s+{YEAR_OR_YY}"
            r"|(?![0-9\w])(?!\.?,?\s*(?:[0-9]|['’][0-9])))|,?\s+" + YEAR_OR_YY + ")")
    phrases("century", list(ORDINAL_WORDS), r"[\s-]+centur(?:y|ies)(?!\w)")
    regex("era", "ad", r"\s*[0-9][0-9]{0,3}(?![0-9])")  # AD 800
    regex("era", "a", r"\.d\.\s*[0-9][0-9]{0,3}(?![0-9])")
    regex("fy", "fy", r"\s?[12][0-9]{3}(?![0-9])")
    regex("decade", "nineteen", r"[-\s]?(?:twenties|thirties|forties|fifties|sixties|seventies"
          r"|eighties|nineties)(?!\w)")
    phrases("decade", list(DECADE_WORDS))
    # "early 1990s", "mid-'90s", "late 19th century", "the first half of the 20th century"
    epoch = (
        r"(?:[12][0-9][0-9]0(?:s|['’]s)|['’‘]?[0-9]0(?:s|['’]s)"
        r"|(?:nineteen[-\s]?)?(?:twenties|thirties|forties|fifties|sixties|seventies|eighties"
        rf"|nineties)|(?:[0-9][0-9]?(?:st|nd|rd|th)|{phrase_pattern(list(ORDINAL_WORDS))})"
        r"[\s-]+century)(?!\w)"
    )
    phrases("modified", ["early", "mid", "late", "first half of", "second half of",
                         "latter half of"], rf"(?:\s*-\s*|\s+)(?:the\s+)?{epoch}")
    # Relative expressions, each starting with its cue word.
    phrases("ago", list(TENS), NUM_TAIL + ago_tail)
    phrases("ago", [w for w in NUMBER_WORDS if w not in TENS], ago_tail)
    phrases("relative", ["past", "last", "coming", "next", "this", "current", "the past",
                         "the last", "the coming", "the next", "the current"],
            rf"\s+(?:{NUM}\s+)?{UNIT}(?!\w)")
    phrases("month_relative", ["last", "next", "this"], rf"\s+{phrase_pattern(MONTHS)}(?!\w)")
    regex("recent", "recent", r"(?:ly|\s+(?:years|months|weeks|days))(?!\w)")
    regex("recent", "lately", r"(?!\w)")
    phrases("day", ["yesterday", "today", "tomorrow", "tonight", "this morning", "this afternoon",
                    "this evening", "last night", "last evening", "this weekend", "last weekend",
                    "next weekend", "over the weekend"])
    _dated_terminals(phrases, regex)
    # Rarer phrasings, read by dateparser.
    regex("delegate", "the", r"\s+day\s+(?:before\s+yesterday|after\s+tomorrow)(?!\w)")
    phrases("delegate", NUMBER_WORDS, r"\s+fortnights?\s+ago(?!\w)")
    regex("delegate", "in", rf"\s+{NUM}\s+(?:days?|weeks?|months?|fortnights?)(?!\w)")
    regex("theyear", "the", r"\s+year\s+[0-9]{3,4}(?![0-9])")
    return terminals


# Cue words before a month name without a day or year ("in April", "since June", "mid-May").
MONTH_CUES = frozenset((
    "in", "since", "by", "until", "till", "through", "from", "of", "during", "before", "after",
    "and", "or", "to", "early", "late", "mid",
))
# Words before a season ("last fall", "in the spring", "over the winter").
SEASON_CUES = frozenset((
    "last", "this", "next", "past", "coming", "this past", "this coming", "in", "in the",
    "during", "during the", "over", "over the", "through", "through the", "throughout",
    "throughout the", "by", "by the", "until", "until the", "before", "before the", "after",
    "after the", "since", "since the", "into", "into the", "for the", "early", "late", "mid",
))
# Words before a weekday that set its direction ("last Friday", "this coming Monday").
WEEKDAY_CUES = frozenset(("last", "next", "this", "this coming", "this past", "coming", "past"))
QUARTER_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "final": 4,
                    "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
# Spelled-out years: "nineteen ninety-six", "eighteen fifteen", "twenty nineteen".
SPELLED_CENTURIES = (
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)
_UNITS = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEENS = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
_TENS_WORD = r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
_TWO_DIGIT_WORDS = rf"(?:{_TENS_WORD}(?:[-\s]{_UNITS})?|{_TEENS}|oh[-\s]{_UNITS}|hundred)"


def _dated_terminals(phrases: Callable[..., None], regex: Callable[[str, str, str], None]) -> None:
    """Expressions that need the reference date (resolved in `tempo_eval.core.relative`), and
    spelled-out years. The handlers check capitals (the scan is lower-case): "Friday", "May"."""
    no_year_after = r"(?!\.?,?\s*(?:[0-9]|['’][0-9]))"
    # Cue words before a weekday, a month or a season are checked by the handlers, which
    # look back: one copy of each pattern in the scan, not one per cue word.
    phrases("weekday", WEEKDAYS, r"(?:['’]s)?(?!\w)")
    # a month name alone: its handler wants a capital and a cue word before it ("in April");
    # the cue is not part of the match, so "of October Revolution" stays a period name
    phrases("bare_month", MONTHS, rf"(?:['’]s)?(?!\w){no_year_after}")
    # "the third quarter", "third-quarter", "the first half", "Q3"; "of 2004" leaves the
    # year to the year rule ("the third quarter of 2004").
    not_of = r"(?!\w)(?!\s+of\b)"
    phrases("quarter", list(QUARTER_ORDINALS),
            rf"[\s-]+(?:quarter|half)(?:\s+of\s+the\s+year)?{not_of}")
    phrases("quarter", ["this", "last", "next", "the current", "the previous", "the coming"],
            rf"\s+quarter{not_of}")
    regex("quarter", "q", r"[1-4](?!\w)(?!\s+(?:of\s+)?(?:fy|fiscal|[12][0-9]{3}|['’][0-9]))")
    phrases("season", ["spring", "summer", "autumn", "winter", "fall"],
            r"(?:['’]s)?(?!\w)(?!\s+(?:of\b|[0-9]|['’][0-9]))")
    phrases("spelled", SPELLED_CENTURIES, rf"[-\s]+{_TWO_DIGIT_WORDS}(?![\w-])")
    phrases("spelled", ["two thousand"],
            rf"(?:\s+and)?(?:[-\s]+(?:{_TENS_WORD}(?:[-\s]{_UNITS})?|{_TEENS}|{_UNITS}))?(?![\w-])")
    # "a year earlier", "two years later": against a year just written, else the reference
    anaphoric = r"[\s-]+(?:years?|decades?|months?|weeks?|days?)\s+(?:earlier|later)(?!\w)"
    phrases("anaphoric", list(TENS), NUM_TAIL + anaphoric)
    phrases("anaphoric", [w for w in NUMBER_WORDS if w not in TENS], anaphoric)
    regex("anaphoric", "", r"[0-9][0-9]?+" + anaphoric)
    regex("yearago", "year", r"\s+(?:ago|earlier)(?!\w)")  # "the year-ago/year-earlier quarter"
    # "the quarter" (the one just reported), "the first nine months" (of this year)
    regex("quarter", "the", r"\s+quarter(?:['’]s)?(?![\w-])(?!\s+of\b)")
    phrases("quarter", ["first"], r"\s+(?:two|three|four|five|six|seven|eight|nine|ten|eleven"
            r"|[2-9]|1[01])\s+months(?!\w)")


class Grammar:
    """The compiled grammar: one scanning pattern, and one pattern per kind of expression.

    Why it is fast (a hard requirement: within a small factor of a bare year regex):

    * Expressions start at word starts. The text is scanned with one space prepended and the
      other separators (line breaks, brackets, quotes, a hyphen after a letter) turned into
      spaces, so every match starts with the space before its expression. A pattern that
      starts with a literal character lets the engine jump from space to space with a fast
      character search instead of trying alternatives at every character.
    * All alternatives are merged into one trie on their literal prefixes -- their cue words:
      a digit, "last", "the", a month, a period name -- so at a space the engine follows the
      next characters down the trie and gives up on an ordinary word after a comparison or
      two. Alternatives that start with a digit share one branch and use possessive digit
      runs, so a number is not re-read once per alternative.
    * The scanning pattern has no capturing groups (a match object costs time for every group
      in the pattern). Which kind a match is gets decided afterwards by full-matching its text
      against the kinds that can start with its first two characters, and remembered per text
      (`known_kinds`; a text's kind does not depend on its context).
    * Context checks ("2000 km", "her 90s", "from ... to") look at a few characters around a
      match, never at the whole text.
    """

    def __init__(self, period_names: Sequence[str]) -> None:
        self.terminals = _terminals(period_names)
        scan = _Trie()
        by_kind: dict[str, _Trie] = {}
        for kind, pieces, tail in self.terminals:
            scan.add(pieces, tail)
            by_kind.setdefault(kind, _Trie()).add(pieces, tail)
        self.scan = re.compile(" " + _group(_root_alternatives(scan)))
        # compiled when first needed: most texts need only a few kinds
        self._kind_sources = {kind: _group(t.alternatives()) for kind, t in by_kind.items()}
        self._kind_patterns: dict[str, re.Pattern[str]] = {}
        self._first = [_first_test(pieces, tail) for _, pieces, tail in self.terminals]
        self._candidates: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        #: matched text -> kind; a text's kind does not depend on its context
        self.known_kinds: dict[str, str] = {}

    def kind_of(self, text: str) -> str | None:
        """Which kind of expression a match of `scan` is: the first kind, in priority order,
        whose own pattern matches all of it."""
        for kind, pattern in self._candidates_for(text[:2]):
            if pattern.fullmatch(text) is not None:
                if len(self.known_kinds) > 100_000:  # bounded memory on endless streams
                    self.known_kinds.clear()
                self.known_kinds[text] = kind
                return kind
        return None

    def _pattern(self, kind: str) -> re.Pattern[str]:
        pattern = self._kind_patterns.get(kind)
        if pattern is None:
            pattern = self._kind_patterns[kind] = re.compile(self._kind_sources[kind])
        return pattern

    def _candidates_for(self, head: str) -> list[tuple[str, re.Pattern[str]]]:
        """The kinds (with their patterns) that can start with the two characters `head`."""
        found = self._candidates.get(head)
        if found is None:
            kinds: dict[str, None] = {}
            for (kind, _, _), (first, second) in zip(self.terminals, self._first, strict=True):
                if first(head[:1]) and (second is None or head[1:2] == second):
                    kinds[kind] = None
            # Most frequent first: no other kind reads the text of a year, and a period name
            # that is also another expression (a bare year) is read as that expression.
            order = sorted(kinds, key=lambda kind: (kind != "year", kind == "period"))
            found = self._candidates[head] = [(kind, self._pattern(kind)) for kind in order]
        return found


def _root_alternatives(trie: _Trie) -> list[str]:
    """The trie's top level, with everything that starts with a digit under one [0-9] branch
    (a literal digit or a class like [12] becomes a look-behind), so a space before a word
    costs one comparison per first letter, not one per digit alternative."""
    letters: list[str] = []
    digits: list[str] = []
    for piece, child in trie.children.items():
        if piece.isdigit():
            digits.append(f"(?<={piece})" + _group(child.alternatives()))
        else:
            letters.append(piece + _group(child.alternatives()))
    others: list[str] = []
    for tail in trie.ends:
        if tail.startswith("[0-9]"):
            digits.append(tail[len("[0-9]") :])
        elif tail.startswith("[12]"):
            digits.append("(?<=[12])" + tail[len("[12]") :])
        else:
            others.append(tail)
    return [*letters, "[0-9]" + _group(digits), *others]


def _first_test(pieces: list[str], tail: str) -> tuple[Callable[[str], bool], str | None]:
    """What the first character of an alternative must be, and its second if it is literal."""
    if pieces:
        first = re.sub(r"\\(.)", r"\1", pieces[0])
        second = None
        if len(pieces) > 1 and len(re.sub(r"\\(.)", r"\1", pieces[1])) == 1:
            second = re.sub(r"\\(.)", r"\1", pieces[1])
        return first.__eq__, second
    charset = re.compile(tail[: tail.index("]", 2) + 1])  # tails without a prefix open with a class
    return (lambda ch: charset.match(ch) is not None), None


@lru_cache(maxsize=16)
def compiled_grammar(period_names: tuple[str, ...]) -> Grammar:
    return Grammar(period_names)
