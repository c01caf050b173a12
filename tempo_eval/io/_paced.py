"""A file that pyarrow's streaming CSV reader reads only a few blocks ahead of the batches taken.

pyarrow's `open_csv` reads its input in a background thread that runs up to 32 blocks ahead of
the batches asked for (its fixed read-ahead queue): with 4 MB blocks and a slow consumer (the
metrics score a batch in seconds), 130 MB of the file sit in memory before the first row is
scored. Handed a `PacedReader` instead of the file, that thread reads a block only when it is
fewer than `ahead` blocks ahead of the batches taken, or when the caller has waited `STUCK_S` for
a batch (a batch that needs more blocks: no deadlock, whatever the file):

    paced.asking(True); batch = reader.read_next_batch(); paced.asking(False); paced.taken()

(`paced_batches` does all of it: the reading module resumes it once a batch.)

After `finish()` (the reader is done or abandoned) a read waits for nothing and finds the end.
At exit every reader is finished and its thread let out of Python first: a thread still inside
Python code when the interpreter ends aborts the process (an error part way through a file).
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

#: blocks read ahead of the batches taken
AHEAD = 4
#: how long the caller waits for a batch before the reading thread may read on regardless
STUCK_S = 0.5
#: the readers not yet finished
_LIVE: weakref.WeakSet[PacedReader] = weakref.WeakSet()


class PacedReader:
    """`stream` (a binary file or a pyarrow stream), read at most `ahead` reads ahead of `taken()`."""

    def __init__(self, stream: Any, ahead: int = AHEAD, stuck_s: float = STUCK_S) -> None:
        self._stream = stream
        self._ahead = ahead
        self._stuck_s = stuck_s
        self._turn = threading.Condition()
        self._reads = 0
        self._taken = 0
        self._asking_since: float | None = None
        self._finished = False
        self._inside = 0  # reads under way
        self.closed = False
        _LIVE.add(self)

    def _may_read(self) -> bool:
        if self._finished or self._reads - self._taken < self._ahead:
            return True
        return self._asking_since is not None and time.monotonic() - self._asking_since >= self._stuck_s

    def read(self, size: int = -1) -> bytes:
        with self._turn:
            while not self._turn.wait_for(self._may_read, timeout=self._stuck_s / 4):
                pass
            self._reads += 1
            if self._finished:  # nobody takes the batches any more: the file ends here for the thread
                return b""
            self._inside += 1
        try:
            return bytes(self._stream.read(size))
        finally:
            with self._turn:
                self._inside -= 1
                self._turn.notify_all()

    def asking(self, waiting: bool) -> None:
        """The caller waits for a batch (True) or no longer (False): once it has waited `stuck_s`,
        reads go on."""
        with self._turn:
            self._asking_since = time.monotonic() if waiting else None
            self._turn.notify_all()

    def taken(self) -> None:
        """One batch was taken: one more block may be read."""
        with self._turn:
            self._taken += 1
            self._turn.notify_all()

    def finish(self) -> None:
        """The reader is done or abandoned: reads no longer wait, and find the end of the file
        (the thread stops instead of reading on into a queue nobody empties)."""
        with self._turn:
            self._finished = True
            self._turn.notify_all()
        _LIVE.discard(self)

    def left(self, timeout: float) -> bool:
        """Wait until no read is under way (at most `timeout` seconds); True when none is."""
        with self._turn:
            return self._turn.wait_for(lambda: self._inside == 0, timeout=timeout)

    def close(self) -> None:  # with `read` and `closed`, all pyarrow asks of a file it reads
        self.closed = True


def paced_batches(stream: Any, open_reader: Callable[..., Any], **options: Any) -> Iterator[Any]:
    """The record batches of pyarrow's streaming reader `open_reader(paced, **options)` (e.g.
    `pyarrow.csv.open_csv`) over `stream` read through a `PacedReader`: the reader opened and each
    batch asked for and taken here (the protocol above), in one resumption a batch; the reader is
    finished when the batches end or are abandoned (`close()`). pyarrow's errors pass through."""
    paced = PacedReader(stream)
    try:
        paced.asking(True)  # it reads the first blocks
        try:
            reader = open_reader(paced, **options)
        finally:
            paced.asking(False)
        while True:
            paced.asking(True)
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            finally:
                paced.asking(False)
            paced.taken()
            yield batch
    finally:
        paced.finish()


@atexit.register
def _finish_all() -> None:
    readers = list(_LIVE)
    for reader in readers:
        reader.finish()
    deadline = time.monotonic() + 2.0
    for reader in readers:
        reader.left(max(0.0, deadline - time.monotonic()))
    if readers:
        time.sleep(0.05)  # the thread's way back out of the read, into pyarrow
