"""FocusTime: the set of years a text is about, with the spans each year came from."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class YearSpan:
    """One temporal expression found in a text.

    `start`/`end` are character offsets into the source text (text[start:end] == self.text);
    `first`..`last` is the inclusive year interval it denotes; `kind` says which rule found it
    ("year", "decade", "century", "range", "open_range", "date", "relative", "period"); `capped` marks a
    range longer than the extractor's maximum, kept as its two end points only.
    """

    start: int
    end: int
    text: str
    first: int
    last: int
    kind: str
    capped: bool = False

    @property
    def years(self) -> set[int]:
        if self.capped:
            return {self.first, self.last}
        return set(range(self.first, self.last + 1))

    def covers(self, year: int) -> bool:
        """`year in self.years`, without building the set."""
        if self.capped:
            return year == self.first or year == self.last
        return self.first <= year <= self.last


_object_new = object.__new__
_set_start, _set_end, _set_text, _set_first, _set_last, _set_kind, _set_capped = (
    getattr(YearSpan, name).__set__ for name in ("start", "end", "text", "first", "last", "kind", "capped")
)


def new_span(start: int, end: int, text: str, first: int, last: int, kind: str, capped: bool) -> YearSpan:
    """The same YearSpan as `YearSpan(...)`, built without the frozen dataclass's `__init__`
    (its field-by-field checks are half the cost of a span on the extractor's hot path): its
    slots filled by their own descriptors, the cheapest way there is (0.8 us a span, where
    `object.__setattr__` per field took 1.25 us, measured)."""
    span = _object_new(YearSpan)
    _set_start(span, start)
    _set_end(span, end)
    _set_text(span, text)
    _set_first(span, first)
    _set_last(span, last)
    _set_kind(span, kind)
    _set_capped(span, capped)
    return span


@lru_cache(maxsize=8192)
def _year_set(first: int, last: int, capped: bool) -> frozenset[int]:
    """The years of a span, shared between extractions (a century is 100 int objects)."""
    return frozenset((first, last) if capped else range(first, last + 1))


def years_of_spans(spans: Sequence[YearSpan]) -> set[int]:
    """The years of a focus time: those of its spans together."""
    years: set[int] = set()
    for span in spans:  # a one-year span (most): `_year_set` would give {first}
        if span.first == span.last:
            years.add(span.first)
        else:
            years |= _year_set(span.first, span.last, span.capped)
    return years


@dataclass
class FocusTime:
    """A set of integer years plus the text spans they came from.

    Behaves like a read-only set of years for `in`, `len`, iteration, `&`, `|` and `==` against
    another FocusTime or a plain set, so metric inputs may be either.
    """

    years: set[int] = field(default_factory=set)
    spans: list[YearSpan] = field(default_factory=list)
    text: str = ""
    reference_year: int | None = None

    @classmethod
    def from_years(cls, years: Iterable[int]) -> FocusTime:
        return cls(years=set(years))

    def spans_for(self, year: int) -> list[YearSpan]:
        """The spans that put `year` into this focus time (for highlighting and evidence)."""
        return [span for span in self.spans if span.covers(year)]

    def __contains__(self, year: object) -> bool:
        return year in self.years

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self.years))

    def __len__(self) -> int:
        return len(self.years)

    def __bool__(self) -> bool:
        return bool(self.years)

    def __and__(self, other: Iterable[int]) -> set[int]:
        return self.years & as_year_set(other)

    def __or__(self, other: Iterable[int]) -> set[int]:
        return self.years | as_year_set(other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FocusTime):
            return self.years == other.years
        if isinstance(other, (set, frozenset)):
            return self.years == other
        return NotImplemented

    __hash__ = None  # mutable, like set


_SET_TYPES = (set, frozenset)
_INT_ONLY = {int}


def years_of(value: object, name: str = "focus time") -> set[int] | frozenset[int]:
    """`as_year_set` for reading only: a FocusTime's own set of years, or a set of integer
    years itself, without the copy (the metrics' hot path reads them many times a row); anything
    else goes through `as_year_set`. The caller must not change the set it gets."""
    if type(value) is FocusTime:
        return value.years
    if type(value) in _SET_TYPES and set(map(type, value)) <= _INT_ONLY:
        return value
    return as_year_set(value, name=name)


def as_year_set(value: object, *, name: str = "focus time") -> set[int]:
    """Accept a FocusTime or any iterable of integer years (not a string); return a set of ints."""
    if isinstance(value, FocusTime):
        return set(value.years)
    if type(value) in _SET_TYPES and set(map(type, value)) <= _INT_ONLY:  # the common case, at C speed
        return set(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a FocusTime or a set of integer years, got {type(value).__name__}"
        )
    years: set[int] = set()
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TypeError(f"{name} must contain integer years, found {item!r}")
        years.add(int(item))
    return years
