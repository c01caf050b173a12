"""Focus-time extraction for a batch of rows: each distinct text extracted once.

    with extraction_memo():            # the runner scores a batch of rows inside one memo
        aft = extract_aft(answer, ref)  # the same entry points as tempo_eval.core.extract

Outside a memo these are `tempo_eval.core.extract`'s functions. Inside one, the focus time of
each distinct (text, reference date) is extracted on first use and then shared by every row of
the batch that holds the same text (the same retrieved context, a query asked again): one pass
of the extractor over the batch's distinct texts. Query, document and answer focus times come
from the same extraction (see `extract_qft`), so they share one memo. The memo lives in a
context variable: it belongs to the task that opened it and ends with the `with` block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from itertools import islice
from typing import Any

from tempo_eval.core.extract import extract_dft as _extract
from tempo_eval.core.focus import FocusTime

_memo: ContextVar[_Memo | None] = ContextVar("focus_time_memo", default=None)

#: focus times a memo keeps at most in each of its two parts (about 1.6 kB each, with the text):
#: texts seen more than once, and texts seen once lately
MAX_ENTRIES = 50_000
#: texts seen once that a memo keeps (for a second sighting) at most
MAX_RECENT = 20_000


class _Memo:
    """Focus times by (text, reference date), in two parts, so that texts seen once (an answer,
    which no other row repeats) do not push out the texts that come back (a corpus document
    retrieved for many queries, a query asked again):

    - `recent`: texts seen once lately; emptied when it holds `recent_limit`;
    - `kept`: texts seen again while in `recent`; when it holds `limit`, its older half goes.

    A text repeated after `recent` was emptied is extracted once more; results never depend on
    what the memo holds, only the time does.
    """

    __slots__ = ("kept", "recent", "limit", "recent_limit")

    def __init__(self, limit: int, recent_limit: int) -> None:
        self.kept: dict[tuple[str, Any], FocusTime] = {}
        self.recent: dict[tuple[str, Any], FocusTime] = {}
        self.limit = limit
        self.recent_limit = recent_limit

    def __len__(self) -> int:
        return len(self.kept) + len(self.recent)

    def get(self, text: str, reference_date: Any) -> FocusTime:
        key = (text, reference_date)
        found = self.kept.get(key)
        if found is not None:
            return found
        found = self.recent.pop(key, None)
        if found is not None:  # seen twice: keep it
            kept = self.kept
            if len(kept) >= self.limit:
                for old in list(islice(kept, len(kept) // 2 or 1)):
                    del kept[old]
            kept[key] = found
            return found
        found = _extract(text, reference_date)
        if len(self.recent) >= self.recent_limit:
            self.recent.clear()
        self.recent[key] = found
        return found


@contextlib.contextmanager
def extraction_memo(limit: int = MAX_ENTRIES, recent_limit: int = MAX_RECENT) -> Iterator[None]:
    """Within the block, each distinct text is extracted once (see the module docstring); at most
    `limit` focus times of texts seen more than once and `recent_limit` of texts seen once are
    kept (see `_Memo`: memory stays bounded on a file of any size). Inside an open memo, the open
    one goes on: the runner opens one for the whole run, so a text repeated across batches is
    extracted once too."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set(_Memo(limit, recent_limit))
    try:
        yield
    finally:
        _memo.reset(token)


def _extract_once(text: str, reference_date: Any) -> FocusTime:
    memo = _memo.get()
    if memo is None or type(text) is not str:
        return _extract(text, reference_date)
    try:
        return memo.get(text, reference_date)
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
            found = kept.get((text, reference_date)) if type(text) is str else None
            out.append(found if found is not None else _extract_once(text, reference_date))
    except TypeError:  # an unhashable text or reference date: as `extract_dft` reads it
        return [_extract_once(text, reference_date) for text in documents]
    return out


def extract_aft(answer: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_aft`, once per distinct text inside a memo."""
    return _extract_once(answer, reference_date)
