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
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from tempo_eval.core.extract import extract_dft as _extract
from tempo_eval.core.focus import FocusTime

_memo: ContextVar[_Memo | None] = ContextVar("focus_time_memo", default=None)

#: focus times a memo keeps at most (about 1 kB each); past that it starts again empty
MAX_ENTRIES = 50_000


class _Memo(dict[tuple[str, Any], FocusTime]):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


@contextlib.contextmanager
def extraction_memo(limit: int = MAX_ENTRIES) -> Iterator[None]:
    """Within the block, each distinct text is extracted once (see the module docstring); at most
    `limit` focus times are kept (memory stays bounded on a file of any size: when the memo is
    full it is emptied and fills again). Inside an open memo, the open one goes on: the runner
    opens one for the whole run, so a text repeated across batches is extracted once too."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set(_Memo(limit))
    try:
        yield
    finally:
        _memo.reset(token)


def _extract_once(text: str, reference_date: Any) -> FocusTime:
    memo = _memo.get()
    if memo is None or type(text) is not str:
        return _extract(text, reference_date)
    key = (text, reference_date)
    try:
        return memo[key]
    except KeyError:
        if len(memo) >= memo.limit:
            memo.clear()
        found = memo[key] = _extract(text, reference_date)
        return found
    except TypeError:  # an unhashable reference date: extract without the memo
        return _extract(text, reference_date)


def extract_qft(query: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_qft`, once per distinct text inside a memo."""
    return _extract_once(query, reference_date)


def extract_dft(document: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_dft`, once per distinct text inside a memo."""
    return _extract_once(document, reference_date)


def extract_aft(answer: str, reference_date: object = None) -> FocusTime:
    """`tempo_eval.core.extract.extract_aft`, once per distinct text inside a memo."""
    return _extract_once(answer, reference_date)
