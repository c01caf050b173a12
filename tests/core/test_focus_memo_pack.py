"""The focus-time memo's packed part: a focus time the memo gives back (whole, from the texts
seen lately, or unpacked after it was pushed out) is exactly the one a fresh extraction gives,
and a memo entry stays small."""

from __future__ import annotations

import gc
import gzip
import json
import pickle
import tracemalloc

import pytest

import tempo_eval.core.focus_memo as focus_memo
from tempo_eval.core.extract import FocusTimeExtractor
from tempo_eval.core.extract import extract_dft as plain_extract
from tempo_eval.core.focus import FocusTime, YearSpan
from tempo_eval.core.focus_memo import (
    extract_aft,
    extract_dft,
    extract_dfts,
    extract_qft,
    extraction_memo,
)
from tempo_eval.core.focus_pack import pack, unpack
from tests.support.paths import TESTS

GOLDEN = TESTS / "data" / "recorded_results.json.gz"


@pytest.fixture(scope="module")
def recorded() -> list[list]:
    """(text, reference date, years, spans, reference year) of 3,427 texts (tests/engine/test_recorded_results.py)."""
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))["focus"]


def _whole(focus: FocusTime) -> tuple:
    """Everything a focus time holds, spans field by field (their types too)."""
    spans = [
        (type(s), s.start, s.end, s.text, s.first, s.last, s.kind, type(s.capped), s.capped)
        for s in focus.spans
    ]
    return type(focus), type(focus.years), sorted(focus.years), spans, focus.text, focus.reference_year


def test_every_recorded_focus_time_packs_and_unpacks_to_itself(recorded):
    extractor = FocusTimeExtractor()
    packed_count = 0
    for text, ref, *_ in recorded:
        fresh = extractor.extract(text, ref)
        packed = pack(fresh, text)
        if packed is not None:
            packed_count += 1
            assert _whole(unpack(packed, text)) == _whole(fresh), (text, ref)
    assert packed_count == len(recorded)  # none needs the whole object kept


def test_what_cannot_come_back_identical_is_not_packed():
    text = "It opened in 1950."
    odd_kind = FocusTime({1950}, [YearSpan(13, 17, "1950", 1950, 1950, "guess")], text)
    assert pack(odd_kind, text) is None
    other_text = FocusTime({1950}, [YearSpan(13, 17, "1951", 1950, 1950, "year")], text)
    assert pack(other_text, text) is None
    other_years = FocusTime({1950, 1951}, [YearSpan(13, 17, "1950", 1950, 1950, "year")], text)
    assert pack(other_years, text) is None
    far = FocusTime({1950}, [YearSpan(13, 17, "1950", 1950, 1950, "year")], text, reference_year=70_000)
    assert pack(far, text) is None
    assert pack(plain_extract(text), text) is not None


@pytest.mark.parametrize("limits", [(1, 1), (3, 7), (50, 2000)])
def test_memo_hits_are_fresh_extractions_after_any_eviction(recorded, monkeypatch, limits):
    # Tiny parts: every text goes through each of them (seen once lately, pushed out and packed,
    # unpacked when it comes back, kept whole, pushed out of those again) and some are dropped.
    monkeypatch.setattr(focus_memo, "RECENT_WHOLE", 2)
    extractor = FocusTimeExtractor()
    items = [(text, ref) for text, ref, *_ in recorded[:400]]
    fresh = {(text, ref): _whole(extractor.extract(text, ref)) for text, ref in items}
    lookups = (extract_dft, extract_aft, extract_qft)
    with extraction_memo(*limits):
        for turn in range(4):
            for i, (text, ref) in enumerate(items):
                copy = pickle.loads(pickle.dumps(text))  # another row's str object, same text
                found = lookups[(i + turn) % 3](copy, ref)
                assert _whole(found) == fresh[text, ref], (turn, text, ref)
                assert found.text == text
            pairs = [(text, ref) for text, ref in items[turn::5]]
            for (text, ref), found in zip(pairs, [extract_dfts([t], r)[0] for t, r in pairs], strict=True):
                assert _whole(found) == fresh[text, ref]
            memo = focus_memo._memo.get()
            assert len(memo.kept) <= limits[0] and len(memo.packed) <= limits[1] and len(memo.recent) <= 2


def test_a_text_pushed_out_is_unpacked_not_extracted_again(monkeypatch):
    seen: list[str] = []

    def counting(text, reference_date=None):
        seen.append(text)
        return plain_extract(text, reference_date)

    monkeypatch.setattr(focus_memo, "_extract", counting)
    monkeypatch.setattr(focus_memo, "RECENT_WHOLE", 4)
    documents = [f"Archive record {i}: the hall was rebuilt in {1900 + i}." for i in range(40)]
    with extraction_memo(limit=6, recent_limit=1000):
        for _ in range(5):
            for document in documents:
                assert extract_dft(document).years == {1900 + documents.index(document)}
    assert len(seen) == len(documents)  # each once: the others were unpacked


def _memo_bytes(texts: list[str], limit: int, recent_limit: int, looks: int) -> tuple[float, int]:
    """Bytes the memo holds per entry (the texts themselves not counted: the rows hold them),
    after `looks` looks in a row at each text; and the number of entries."""
    gc.collect()
    tracemalloc.start()
    try:
        with extraction_memo(limit, recent_limit):
            for text in texts:  # as a row's metrics look at its texts, one after the other
                for _ in range(looks):
                    extract_dft(text)
            memo = focus_memo._memo.get()
            entries = len(memo)
            held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return held / entries, entries


def test_memo_memory_per_entry_stays_bounded():
    # documents of the bench's shape (about 230 characters, two years each)
    texts = [
        f"According to the city archive, the tower {i} changed hands in {1850 + i % 170}, after a long "
        f"debate among the councillors about its cost and purpose. Records show that it was sold in "
        f"{1851 + i % 169}, when the surrounding district was redeveloped."
        for i in range(6000)
    ]
    plain_extract(texts[0])  # the grammar and its caches, before counting
    # seen once each: packed, a digest and 14 bytes a span (the last RECENT_WHOLE whole: they add
    # about 90 bytes an entry here)
    per_packed, entries = _memo_bytes(texts, limit=10, recent_limit=10_000, looks=1)
    assert entries == len(texts)
    print(f"packed {per_packed:.0f} B an entry")
    assert per_packed < 330, per_packed
    # seen twice each: kept whole, the text's key shared with the focus time
    per_whole, entries = _memo_bytes(texts, limit=10_000, recent_limit=10, looks=2)
    assert entries >= len(texts)
    print(f"whole {per_whole:.0f} B an entry")
    assert per_whole < 1300, per_whole
    # bounded: never more entries than the limits allow, whatever the number of texts
    _, entries = _memo_bytes(texts, limit=500, recent_limit=1000, looks=2)
    assert entries <= 500 + 1000 + focus_memo.RECENT_WHOLE


def test_a_packed_entry_of_another_text_under_the_same_hash_is_not_taken(monkeypatch):
    # a chance collision of the 64-bit hash: the digest tells the texts apart (dated or not)
    monkeypatch.setattr(focus_memo, "RECENT_WHOLE", 2)
    first, other = "The hall was rebuilt in 1911.", "The hall was rebuilt in 1922."
    for ref in (None, "2020-01-01"):
        with extraction_memo(limit=1, recent_limit=100):
            memo = focus_memo._memo.get()
            for text in (first, "a", "b", "c"):  # `first` pushed out of the whole ones: packed
                extract_dft(text, ref)
            slot = hash((first, ref))
            assert slot in memo.packed
            memo.packed[hash((other, ref))] = memo.packed.pop(slot)
            assert extract_dft(other, ref).years == {1922}
