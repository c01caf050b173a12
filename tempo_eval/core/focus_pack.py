"""A focus time packed into a few bytes, for the memo's texts that may not come back.

    packed = pack(focus_time, text)     # None when it cannot be packed exactly
    again = unpack(packed, text)        # equal to focus_time: years, spans, text, reference year

A `FocusTime` of a 230-character document with two years holds about 1.3 kB (its spans, its set
of years, its text); packed, it is 14 bytes a span plus 2: each span's offsets, years, kind and
cap, and the reference year. The text itself is not kept: `unpack` takes it again (the memo finds
it by a digest of the text), cuts each span's text from it and recomputes the years from the
spans as the extractor does (`years_of_spans`). `pack` gives None for a focus time that would
not come back identical (a span whose text is not the text's slice, a kind or number out of the
format's range); the memo keeps those whole.
"""

from __future__ import annotations

import struct

from tempo_eval.core.focus import FocusTime, new_span, years_of_spans

#: the kinds a span may have (`YearSpan.kind`), by their index in the packed form
KINDS = ("year", "decade", "century", "range", "open_range", "date", "relative", "period")
_KIND_INDEX = {kind: index for index, kind in enumerate(KINDS)}

_HEAD = struct.Struct("<H")  # the reference year, 0 for none
_SPAN = struct.Struct("<IIHHB")  # start, end, first, last, kind index * 2 + capped
#: the format of a whole focus time by its number of spans (out-of-range numbers raise struct.error)
_FORMATS: dict[int, struct.Struct] = {}


def pack(focus: FocusTime, text: str) -> bytes | None:
    """`focus` (the focus time of `text`) in bytes, or None if `unpack` would not give it back."""
    reference_year = focus.reference_year
    if reference_year is None:
        reference_year = 0
    elif type(reference_year) is not int or reference_year < 1:
        return None
    values = [reference_year]
    for span in focus.spans:
        start, end, capped = span.start, span.end, span.capped
        kind = _KIND_INDEX.get(span.kind)
        if kind is None or type(capped) is not bool or span.text != text[start:end] or start > end:
            return None
        values += (start, end, span.first, span.last, kind * 2 + capped)
    if focus.years != years_of_spans(focus.spans):  # not as the extractor makes them
        return None
    n = len(focus.spans)
    form = _FORMATS.get(n)
    if form is None:
        form = struct.Struct(_HEAD.format + _SPAN.format[1:] * n)
        if n <= 64:  # the few sizes that come back
            _FORMATS[n] = form
    try:
        return form.pack(*values)
    except struct.error:  # an offset or a year out of the format's range
        return None


def unpack(packed: bytes, text: str, offset: int = 0) -> FocusTime:
    """The focus time `pack` packed, for the same `text` (from `offset` in `packed`)."""
    reference_year = _HEAD.unpack_from(packed, offset)[0] or None
    spans = []
    for start, end, first, last, kind in _SPAN.iter_unpack(packed[offset + _HEAD.size :]):
        spans.append(new_span(start, end, text[start:end], first, last, KINDS[kind >> 1], kind & 1 == 1))
    return FocusTime(years_of_spans(spans), spans, text, reference_year)
