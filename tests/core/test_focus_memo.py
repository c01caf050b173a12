"""The focus-time memo: each distinct text extracted once, texts seen once not pushing out
texts that come back, results never depending on what the memo holds."""

from __future__ import annotations

import tempo_eval.core.focus_memo as focus_memo
from tempo_eval.core.extract import extract_dft as plain_extract
from tempo_eval.core.focus_memo import extract_aft, extract_dft, extraction_memo


def _counting(monkeypatch) -> list[str]:
    seen: list[str] = []

    def extract(text, reference_date=None):
        seen.append(text)
        return plain_extract(text, reference_date)

    monkeypatch.setattr(focus_memo, "_extract", extract)
    return seen


def test_a_text_is_extracted_once_inside_a_memo(monkeypatch):
    seen = _counting(monkeypatch)
    with extraction_memo():
        first = extract_dft("The bridge was built in 1901.")
        again = extract_aft("The bridge was built in 1901.")
        third = extract_dft("The bridge was built in 1901.")
    assert seen == ["The bridge was built in 1901."]
    assert first is again is third
    assert first.years == {1901}


def test_texts_seen_once_do_not_push_out_texts_that_come_back(monkeypatch):
    # An answer is seen once; a corpus document comes back for many rows. With room for 3 texts
    # seen once, the old memo (emptied when full) extracted the document again after 3 answers.
    seen = _counting(monkeypatch)
    document = "The archive opened in 1950."
    with extraction_memo(limit=10, recent_limit=3):
        for i in range(20):
            extract_aft(f"Answer {i}: it reopened in {1960 + i}.")
            extract_dft(document)
    assert seen.count(document) == 1
    assert len(seen) == 21  # every answer once, the document once


def test_the_memo_stays_bounded_and_gives_the_same_focus_times(monkeypatch):
    texts = [f"Event {i} happened in {1900 + i % 90}." for i in range(50)]
    with extraction_memo(limit=4, recent_limit=5):
        for _ in range(3):
            for text in texts:
                found = extract_dft(text)
                assert found.years == plain_extract(text).years
                assert [s.text for s in found.spans] == [s.text for s in plain_extract(text).spans]
                memo = focus_memo._memo.get()
                assert len(memo.kept) <= 4 and len(memo.packed) <= 5 and len(memo.recent) <= focus_memo.RECENT_WHOLE


def test_answers_seen_once_are_dropped_not_packed(monkeypatch):
    # answers are never packed (they rarely come back); one seen again soon is found whole
    seen = _counting(monkeypatch)
    monkeypatch.setattr(focus_memo, "RECENT_WHOLE", 4)
    with extraction_memo(limit=10, recent_limit=100):
        memo = focus_memo._memo.get()
        for i in range(20):
            extract_aft(f"Answer {i}: it reopened in {1960 + i}.")
            assert len(memo.answers) <= 4 and not memo.packed
        again = extract_aft("Answer 19: it reopened in 1979.")
        assert again.years == {1979} and len(seen) == 20  # found among the recent answers
        assert extract_aft("Answer 0: it reopened in 1960.").years == {1960}
        assert len(seen) == 21  # dropped long ago: extracted again, the same focus time
        extract_dft("Answer 19: it reopened in 1979.")  # the same text as a document: found whole
        assert len(seen) == 21
