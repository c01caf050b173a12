"""Pairs of many rows through a model together: the requests of rows in flight at once are
gathered and verified in one call.

    batches = CrossRowBatches(verifier.verify_many)
    verdicts = await batches.averify(claims, premises)    # from each row, concurrently

Each `averify` joins a queue kept per event loop. While no call runs, the queue is taken after
one turn of the loop (the other rows in flight add theirs first); while one runs (in a worker
thread), the requests that arrive wait and go together in the next call. So with N rows in flight
the model sees the pairs of up to N rows at once, sorted by length across them, and one row's
verdicts are those `verify` gives for it alone: each request is decided on its own pairs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Any

#: verify_many: [(claims, premises), ...] -> [[verdict per claim], ...]
VerifyMany = Callable[[Sequence[tuple[list[str], list[str]]]], list[list[Any]]]


class CrossRowBatches:
    """Gathers concurrent `averify` calls into `verify_many` calls (see the module docstring)."""

    def __init__(self, verify_many: VerifyMany) -> None:
        self._verify_many = verify_many
        self._queues: dict[asyncio.AbstractEventLoop, list[tuple[list[str], list[str], asyncio.Future[Any]]]] = {}
        self._running: set[asyncio.AbstractEventLoop] = set()
        self._lock = threading.Lock()

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            queue = self._queues.setdefault(loop, [])
            queue.append((list(claims), list(premises), future))
            start = loop not in self._running
            if start:
                self._running.add(loop)
        if start:
            loop.create_task(self._drain(loop))
        return await future

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Verify what is queued, call after call, until the queue is empty."""
        try:
            while True:
                await asyncio.sleep(0)  # the other rows in flight queue theirs
                with self._lock:
                    requests = self._queues.pop(loop, [])
                    if not requests:
                        self._running.discard(loop)
                        return
                requests = [r for r in requests if not r[2].cancelled()]
                if not requests:
                    continue
                try:
                    results = await asyncio.to_thread(self._verify_many, [(c, p) for c, p, _ in requests])
                except BaseException as error:  # every waiting row gets the failure
                    for *_, future in requests:
                        if not future.done():
                            future.set_exception(error)
                    if not isinstance(error, Exception):
                        raise
                    continue
                for (*_, future), verdicts in zip(requests, results, strict=True):
                    if not future.done():
                        future.set_result(verdicts)
        finally:
            with self._lock:
                self._running.discard(loop)
                leftover = self._queues.pop(loop, [])
            for *_, future in leftover:  # stopped (the loop is closing): nobody will verify these
                if not future.done():
                    future.cancel()
