"""Named historical periods and the years they cover, for focus-time extraction.

The table maps a period's name (every common spelling is its own entry) to an inclusive
`(first, last)` year interval. Spans follow the conventional dating found in standard
references (encyclopedia headwords); where historians disagree, the comment says which
convention was taken. A name is matched case-insensitively as whole words, with spaces,
hyphens and apostrophes treated loosely ("dot-com bubble" = "dotcom bubble" = "Dot com
bubble"). Names that are too vague on their own ("the pandemic", "the war", "the Depression",
"the Renaissance" used metaphorically) are deliberately absent. Eras before year 1 (BC) are
absent because focus times hold positive years only, and very long eras ("the Middle Ages")
are absent because they would be capped to their end points anyway.

Extend or override the table per extractor: `FocusTimeExtractor(periods={"Brexit transition":
(2020, 2020)})`; an entry whose normalised name (`normalize_period_name`) equals that of a
default entry replaces it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

# (first, last), names. Keep one group per period so a span is written once.
_GROUPS: tuple[tuple[tuple[int, int], tuple[str, ...]], ...] = (
    # Wars and conflicts (first and last year of fighting).
    (
        (1914, 1918),
        (
            "World War I", "World War 1", "World War One", "WWI", "WW1", "WW I", "WW-I",
            "First World War", "1st World War", "the Great War",
        ),
    ),
    (
        (1939, 1945),
        (
            "World War II", "World War 2", "World War Two", "WWII", "WW2", "WW II", "WW-II",
            "Second World War", "2nd World War",
        ),
    ),
    ((1947, 1991), ("Cold War",)),  # Truman Doctrine 1947 to the dissolution of the USSR 1991
    ((1950, 1953), ("Korean War",)),
    ((1955, 1975), ("Vietnam War", "Viet Nam War", "Second Indochina War")),
    ((1990, 1991), ("Gulf War", "First Gulf War", "Persian Gulf War", "Operation Desert Storm")),
    ((2003, 2011), ("Iraq War", "Second Gulf War", "invasion of Iraq")),
    ((1980, 1988), ("Iran-Iraq War", "Iran–Iraq War", "First Persian Gulf War")),
    ((1803, 1815), ("Napoleonic Wars",)),
    ((1861, 1865), ("American Civil War", "US Civil War", "U.S. Civil War")),
    ((1936, 1939), ("Spanish Civil War",)),
    ((1775, 1783), ("American Revolutionary War", "American War of Independence")),
    ((1812, 1815), ("War of 1812",)),
    ((1853, 1856), ("Crimean War",)),
    ((1899, 1902), ("Second Boer War", "Boer War")),  # the better known second war
    ((1618, 1648), ("Thirty Years' War",)),
    ((1756, 1763), ("Seven Years' War",)),
    ((1337, 1453), ("Hundred Years' War",)),
    ((1940, 1941), ("the Blitz",)),  # September 1940 to May 1941
    ((1933, 1945), ("the Holocaust",)),  # USHMM dating: from the Nazi rise to power to 1945
    ((1918, 1939), ("interwar period", "inter-war period", "interwar years")),
    ((1962, 1962), ("Cuban Missile Crisis",)),
    # Revolutions and political turning points.
    ((1789, 1799), ("French Revolution",)),
    ((1917, 1917), ("Russian Revolution", "Bolshevik Revolution", "October Revolution")),
    ((1760, 1840), ("Industrial Revolution", "First Industrial Revolution")),
    ((1870, 1914), ("Second Industrial Revolution",)),
    ((1966, 1976), ("Cultural Revolution",)),
    ((1958, 1962), ("Great Leap Forward",)),
    ((1989, 1989), ("fall of the Berlin Wall",)),
    ((1991, 1991), ("collapse of the Soviet Union", "dissolution of the Soviet Union")),
    ((2010, 2012), ("Arab Spring",)),
    ((2016, 2016), ("Brexit referendum",)),
    ((1948, 1994), ("apartheid era",)),
    ((1955, 1968), ("civil rights movement",)),  # Montgomery bus boycott to the 1968 Act
    ((1955, 1975), ("Space Race",)),  # Sputnik plans (1955) to Apollo-Soyuz (1975)
    ((1969, 1969), ("Apollo 11", "first Moon landing")),
    # Economic episodes.
    ((1929, 1939), ("Great Depression",)),
    ((1929, 1929), ("Wall Street Crash", "Crash of 1929")),
    ((1930, 1936), ("Dust Bowl",)),
    ((1933, 1939), ("New Deal",)),
    ((2007, 2009), (
        "Great Recession", "global financial crisis", "2008 financial crisis",
        "financial crisis of 2008", "2007-2008 financial crisis", "subprime mortgage crisis",
    )),
    ((2009, 2012), ("European debt crisis", "eurozone crisis", "euro crisis")),
    ((1995, 2001), ("dot-com bubble", "dot-com boom", "internet bubble", "tech bubble")),
    ((2000, 2002), ("dot-com crash", "dot-com bust")),
    ((1973, 1974), ("1973 oil crisis", "oil crisis of 1973")),
    ((1999, 2000), ("Y2K", "millennium bug", "Y2K bug")),
    ((2001, 2001), ("9/11", "September 11 attacks", "9/11 attacks")),
    # Epidemics.
    ((2020, 2023), (  # WHO pandemic declaration (March 2020) to the end of the emergency (May 2023)
        "COVID-19 pandemic", "COVID pandemic", "coronavirus pandemic", "COVID-19 crisis",
        "COVID crisis", "COVID era", "COVID-19 lockdown", "COVID lockdown",
    )),
    ((1918, 1920), ("Spanish flu", "1918 flu pandemic", "1918 influenza pandemic")),
    ((1346, 1353), ("Black Death",)),
    ((1845, 1852), ("Great Famine of Ireland", "Irish Famine", "Irish potato famine", "Great Irish Famine")),
    # Eras named after reigns or moods (conventional bounds).
    ((1837, 1901), ("Victorian era", "Victorian period", "Victorian age", "Victorian times")),
    ((1901, 1910), ("Edwardian era", "Edwardian period")),
    ((1714, 1837), ("Georgian era", "Georgian period")),
    ((1811, 1820), ("Regency era", "Regency period")),  # the regency proper
    ((1558, 1603), ("Elizabethan era", "Elizabethan age", "Elizabethan period")),
    ((1485, 1603), ("Tudor period", "Tudor era")),
    ((1868, 1912), ("Meiji era", "Meiji period")),
    ((1870, 1900), ("Gilded Age",)),
    ((1896, 1916), ("Progressive Era",)),
    ((1871, 1914), ("Belle Époque", "Belle Epoque")),
    ((1920, 1929), ("Roaring Twenties", "Jazz Age", "Roaring '20s", "Roaring 20s")),
    ((1920, 1933), ("Prohibition era",)),
    ((1960, 1969), ("Swinging Sixties",)),
    ((1400, 1600), ("Italian Renaissance", "Renaissance period", "Renaissance era")),
    ((1918, 1937), ("Harlem Renaissance",)),
)

#: name -> (first, last); read-only. Build your own mapping to extend it (see module docstring).
DEFAULT_PERIODS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {name: span for span, names in _GROUPS for name in names}
)

_NON_ALNUM = re.compile(r"[\W_]+")


def normalize_period_name(name: str) -> str:
    """The lookup key of a period name: lower case, letters and digits only (any script).

    "The Great War", "the great-war" and "THE  GREAT WAR" share one key, so a match can be
    looked up however the text spells the spaces, hyphens and apostrophes.
    """
    return _NON_ALNUM.sub("", name.lower())


def merge_periods(
    extra: Mapping[str, tuple[int, int]] | None = None,
    base: Mapping[str, tuple[int, int]] = DEFAULT_PERIODS,
) -> dict[str, tuple[int, int]]:
    """Validate and merge period tables: name -> (first, last).

    An entry of `extra` whose normalised name equals that of one or more `base` entries
    replaces them. Raises TypeError for a non-mapping, a non-string name or a span that is not a
    tuple of two ints, and ValueError for a name that does not start and end with a letter or
    digit, or `first > last`.
    """
    if extra is not None and not isinstance(extra, Mapping):
        raise TypeError(
            f"periods must be a mapping of name -> (first_year, last_year), got {type(extra).__name__}"
        )
    added = _checked(extra or {})
    replaced = {normalize_period_name(name) for name in added}
    merged = {name: span for name, span in _checked(base).items()
              if normalize_period_name(name) not in replaced}
    merged.update(added)
    return merged


def _checked(table: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    checked: dict[str, tuple[int, int]] = {}
    for name, span in table.items():
        if not isinstance(name, str):
            raise TypeError(f"periods: a period name must be a str, got {name!r}")
        stripped = name.strip()
        if not (stripped and stripped[0].isalnum() and stripped[-1].isalnum()):
            raise ValueError(f"periods: name {name!r} must start and end with a letter or digit")
        if not isinstance(span, tuple) or len(span) != 2 or not all(
                isinstance(y, int) and not isinstance(y, bool) for y in span):
            raise TypeError(
                f"periods: span of {name!r} must be a (first_year, last_year) tuple of ints, got {span!r}"
            )
        if span[0] > span[1]:
            raise ValueError(
                f"periods: span of {name!r} has first year {span[0]} after last year {span[1]}"
            )
        checked[stripped] = span
    return checked


def phrase_pattern(names: Iterable[str]) -> str:
    """A regex (for lower-case input, compiled case-sensitive) matching any of `names`.

    Used for period names and for the unit words that mark a number as a quantity. Inside a
    name a space matches any run of whitespace, a hyphen an optional hyphen or whitespace, an
    apostrophe an optional straight or curly one, and a dot an optional dot. The names are
    merged into a trie, so the engine tests each first character once (not once per name) and
    a longer name ("World War II") is preferred to its prefix ("World War I").
    """
    trie: dict[str, dict] = {}
    for name in {n.lower() for n in names}:
        node = trie
        for piece in phrase_pieces(name):
            node = node.setdefault(piece, {})
        node[""] = {}  # end of a name
    return _trie_regex(trie)


def phrase_pieces(name: str) -> list[str]:
    """The regex pieces of one lower-case name (see `phrase_pattern`), one per character."""
    pieces: list[str] = []
    for ch in name:
        if ch.isspace():
            if not pieces or pieces[-1] != r"\s+":
                pieces.append(r"\s+")
        elif ch == "-":
            pieces.append(r"(?:-|\s+)?")
        elif ch in "'’":
            pieces.append(r"['’]?")
        elif ch == ".":
            pieces.append(r"\.?")
        else:
            pieces.append(re.escape(ch))
    return pieces


def _trie_regex(node: dict[str, dict]) -> str:
    ends = "" in node
    branches = [piece + _trie_regex(child) for piece, child in sorted(node.items()) if piece]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if ends:  # greedy: try the longer names first, fall back to ending here
        body = (body if len(branches) > 1 else "(?:" + body + ")") + "?"
    return body
