"""Focus-time extraction for a batch of rows: each distinct text extracted once.

    with extraction_memo():            # the runner scores a batch of rows inside one memo
        aft = extract_aft(answer, ref)  # the same entry points as tempo_eval.core.extract

Outside a memo these are `tempo_eval.core.extract`'s functions. Inside one, the focus time of
each distinct (text, reference date) is extracted on first use and then shared by every row of
the batch that holds the same text (the same retrieved context, a query asked again): one pass
of the extractor over the batch's distinct texts. Query, document and answer focus times come
from the same extraction (see `extract_qft`), so they share one memo. The memo lives in a
context variable: it belongs to the task that opened it and ends with the `with` block.

Most of what a memo holds is packed (`tempo_eval.core.focus_pack`, by the text's hash, checked
by a digest of the text; the text not kept: about 0.25 kB an entry), so a worker can remember
every text of a large run: on 200,000 bench rows, a worker with (25,000 whole, 150,000 packed)
extracts 1.48 texts a row, each answer once and each corpus document once; the former memo
(texts kept whole only, 1.6 kB an entry) extracted 4.12 a row at the pool's half share, 1.82 at
the full one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from itertools import islice
from typing import Any

from tempo_eval.core.extract import extract_dft as _extract
from tempo_eval.core.focus import FocusTime
from tempo_eval.core.focus_pack import pack, unpack

_memo: ContextVar[_Memo | None] = ContextVar("focus_time_memo", default=None)

#: focus times of texts seen more than once that a memo keeps whole, ready to share (about
#: 1.2 kB each with the text, for a 230-character document with two years)
MAX_ENTRIES = 50_000
#: packed focus times a memo keeps (about 0.25 kB each, the text not kept): texts seen once, and
#: texts seen again that no longer fit among the whole ones
MAX_RECENT = 300_000
#: texts seen once lately, kept whole until they are packed (a row's second look at its texts)
RECENT_WHOLE = 512
#: a full part of the memo makes room by a sixteenth of its limit, its oldest entries, so it stays
#: nearly full (by half, it held three quarters of its limit on average): a corpus larger than
#: `kept` finds more of its texts whole, with the same peak memory (a worker on the 200,000 bench
#: rows, rows 120,000-160,000: 3.11 texts a row unpacked by half, 2.61 by a sixteenth)
EVICT_PART = 16

#: the bytes of a digest (`_digest`)
DIGEST_SIZE = 8


def _digest(text: str) -> bytes:
    """An 8-byte digest of the text (Python's hash of the text reversed: another string, so a
    second SipHash independent of the first): what tells a packed focus time's text from another
    text with the same hash. A packed entry is found by the 64-bit hash of (text, reference
    date), keyed afresh in each process, so another text reaches an entry only when the two share
    that hash (about 1 in 10**14 a lookup, with 300,000 entries), and is taken for it only when
    the hashes of their reversals agree too (1 in 1.8 * 10**19 more). Even with PYTHONHASHSEED
    set (the key known), texts made to collide on both would take about 2**64 tries, where a
    CRC-32 check is forged at once. Cost 0.8 us a text; a 16-byte BLAKE2b digest 1.4 us, a
    CRC-32 0.7 us (quiet machine)."""
    return hash(text[::-1]).to_bytes(DIGEST_SIZE, "little", signed=True)


class _Memo:
    """Focus times by (text, reference date), in three parts, so that texts seen once (an answer,
    which no other row repeats) do not push out the texts that come back (a corpus document
    retrieved for many queries, a query asked again), and so that many texts fit in little
    memory:

    - `kept`: texts seen again, whole (`FocusTime`s shared by every row that holds the text);
      when it holds `limit`, its oldest sixteenth (`EVICT_PART`) is packed into `packed`;
    - `recent`: texts seen once lately, whole; when it holds `RECENT_WHOLE`, its older half is
      packed into `packed` (so a row's second look at its contexts, by a second metric, finds
      the same objects);
    - `answers`: answers (`extract_aft`) seen once lately, whole; when it holds `RECENT_WHOLE`,
      its older half is dropped, not packed: a generated answer rarely comes back, and packing
      each one cost a worker a tenth of its time on the bench's rows (rows 60,000-100,000:
      11-16 us a row of 260-300 spent packing, against 23-34 with answers packed) and filled
      `packed` with texts that never come back (100,000 of a worker's 150,000 on 200,000 rows);
      an answer that does come back later is extracted again (0.02 more extractions a row);
    - `packed`: focus times packed in bytes (`tempo_eval.core.focus_pack`), by the hash of
      (text, reference date), each with a digest of its text (`_digest`) that a lookup checks:
      texts seen once a while ago, and texts pushed out of `kept`; when it holds
      `packed_limit`, its oldest sixteenth goes. A text found here is unpacked into `kept`. A text's
      hash is computed once and kept by the string, so a text found nowhere (most lookups that
      miss) costs no digest; only packing and finding a packed text do.

    A text found nowhere is extracted (once more, if it was dropped); results never depend on
    what the memo holds, only the time does: an unpacked focus time equals the extracted one.
    """

    __slots__ = ("kept", "recent", "answers", "packed", "unpacked", "limit", "packed_limit")

    def __init__(self, limit: int, packed_limit: int) -> None:
        self.kept: dict[tuple[str, Any], FocusTime] = {}
        #: the packed entries of the texts in `kept` that came from `packed`: pushed out of `kept`
        #: again, they go back as they were, not packed and digested once more
        self.unpacked: dict[tuple[str, Any], bytes | tuple[bytes, Any, bytes | FocusTime]] = {}
        self.recent: dict[tuple[str, Any], FocusTime] = {}
        self.answers: dict[tuple[str, Any], FocusTime] = {}
        self.packed: dict[int, bytes | tuple[bytes, Any, bytes | FocusTime]] = {}
        self.limit = max(1, limit)
        self.packed_limit = max(1, packed_limit)

    def __len__(self) -> int:
        return len(self.kept) + len(self.recent) + len(self.answers) + len(self.packed)

    def get(self, text: str, reference_date: Any, answer: bool = False) -> FocusTime:
        """The focus time of (text, reference date); an `answer` extracted here goes to
        `answers`, any other text to `recent`."""
        key = (text, reference_date)
        found = self.kept.get(key)
        if found is not None:
            return found
        found = self.recent.pop(key, None)
        if found is None:
            found = self.answers.pop(key, None)
        if found is None:
            found = self._unpack(key)
            if found is None:  # not seen lately: extract
                found = _extract(text, reference_date)
                if answer:
                    answers = self.answers
                    if len(answers) >= RECENT_WHOLE:  # the oldest half dropped, not packed
                        for old in list(islice(answers, RECENT_WHOLE // 2)):
                            del answers[old]
                    answers[key] = found
                    return found
                recent = self.recent
                if len(recent) >= RECENT_WHOLE:
                    self._pack_oldest(recent, RECENT_WHOLE // 2)
                recent[key] = found
                return found
        kept = self.kept  # seen again: keep it whole
        if len(kept) >= self.limit:
            self._pack_oldest(kept, self.limit // EVICT_PART)
        kept[key] = found
        return found

    def _unpack(self, key: tuple[str, Any]) -> FocusTime | None:
        """The packed focus time of (text, reference date), taken out of `packed` (its entry
        remembered in `unpacked`); None if there is none (an entry under the same hash for
        another text or date stays)."""
        slot = hash(key)
        entry = self.packed.get(slot)
        if entry is None:
            return None
        text, reference_date = key
        if type(entry) is bytes:  # the digest, then the packed focus time (no reference date)
            if reference_date is not None or entry[:DIGEST_SIZE] != _digest(text):
                return None
            found = unpack(entry, text, DIGEST_SIZE)
        else:
            digest, entry_date, focus = entry
            if entry_date != reference_date or digest != _digest(text):
                return None
            found = focus if type(focus) is FocusTime else unpack(focus, text)
        del self.packed[slot]
        self.unpacked[key] = entry
        return found

    def _pack_oldest(self, whole: dict[tuple[str, Any], FocusTime], count: int) -> None:
        """Move the `count` oldest entries of `whole` (`kept` or `recent`) into `packed`."""
        packed = self.packed
        for key in list(islice(whole, max(1, count))):
            focus = whole.pop(key)
            if len(packed) >= self.packed_limit:
                for old in list(islice(packed, self.packed_limit // EVICT_PART or 1)):
                    del packed[old]
            entry = self.unpacked.pop(key, None)
            if entry is None:
                text, reference_date = key
                packed_focus = pack(focus, text)
                if packed_focus is not None and reference_date is None:  # most: one bytes object
                    entry = _digest(text) + packed_focus
                else:  # with its date; the focus time itself when it does not pack exactly (rare)
                    entry = (_digest(text), reference_date, packed_focus or focus)
            packed[hash(key)] = entry


@contextlib.contextmanager
def extraction_memo(limit: int = MAX_ENTRIES, recent_limit: int = MAX_RECENT) -> Iterator[None]:
    """Within the block, each distinct text is extracted once; `limit` and `recent_limit` bound
    the whole and the packed focus times kept (see `_Memo`), so memory stays bounded on a file of
    any size. Inside an open memo, the open one goes on: the runner opens one for the whole run,
    so a text repeated across batches is extracted once too."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set(_Memo(limit, recent_limit))
    try:
        yield
    finally:
        _memo.reset(token)


def _extract_once(text: str, reference_date: Any, answer: bool = False) -> FocusTime:
    memo = _memo.get()
    if memo is None or type(text) is not str:
        return _extract(text, reference_date)
    try:
        return memo.get(text, reference_date, answer)
    except TypeError:  # an unhashable reference date: extract without the memo
        return _extract(text, reference_date)


def extract_qft(query: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_qft`, once per distinct text inside a memo."""
    return _extract_once(query, reference_date)


def extract_dft(document: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_dft`, once per distinct text inside a memo."""
    return _extract_once(document, reference_date)


def extract_dfts(documents: Sequence[str], reference_date: object = None) -> list[FocusTime]:
    """`extract_dft` of each document, in order: one call for a row's contexts (a row's second
    look at its contexts finds them all among the texts seen again)."""
    memo = _memo.get()
    if memo is None:
        return [_extract(text, reference_date) for text in documents]
    kept = memo.kept
    out = []
    try:
        for text in documents:
            if type(text) is str:
                found = kept.get((text, reference_date))
                out.append(found if found is not None else memo.get(text, reference_date))
            else:
                out.append(_extract_once(text, reference_date))
    except TypeError:  # an unhashable text or reference date: as `extract_dft` reads it
        return [_extract_once(text, reference_date) for text in documents]
    return out


def extract_aft(answer: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_aft`, once per distinct text inside a memo (an answer
    seen once is not packed: see `_Memo`)."""
    return _extract_once(answer, reference_date, True)
