"""A file that pyarrow's streaming CSV reader reads only a few blocks ahead of the batches taken.

pyarrow's `open_csv` reads its input in a background thread that runs up to 32 blocks ahead of
the batches asked for (its fixed read-ahead queue): with 4 MB blocks and a slow consumer (the
metrics score a batch in seconds), 130 MB of the file sit in memory before the first row is
scored. Handed a `PacedReader` instead of the file, that thread reads a block only when fewer
than `ahead` blocks are waiting: the caller calls `taken()` for each batch it takes.

Never a deadlock: a read waits at most `wait_s` seconds for a batch to be taken (a file whose
batches do not follow its blocks one to one is read ahead as before, only slower), and after
`finish()` (the reader is done or abandoned) a read waits for nothing and finds the file's end.
"""

from __future__ import annotations

import threading
from typing import Any

#: blocks read ahead of the batches taken: pyarrow completes a block's last row from the next
AHEAD = 4
#: the longest a read waits for a batch to be taken
WAIT_S = 30.0


class PacedReader:
    """`stream` (a binary file or a pyarrow stream), read at most `ahead` reads ahead of `taken()`."""

    def __init__(self, stream: Any, ahead: int = AHEAD, wait_s: float = WAIT_S) -> None:
        self._stream = stream
        self._permits = threading.Semaphore(ahead)
        self._wait_s = wait_s
        self._finished = False
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        if not self._finished:
            self._permits.acquire(timeout=self._wait_s)
        if self._finished:  # nobody takes the batches any more: the file ends here for the thread
            return b""
        return bytes(self._stream.read(size))

    def taken(self) -> None:
        """One batch was taken: one more block may be read."""
        self._permits.release()

    def finish(self) -> None:
        """The reader is done or abandoned: reads no longer wait, and find the end of the file
        (the thread stops instead of reading on into a queue nobody empties)."""
        self._finished = True
        self._permits.release(1 << 16)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
