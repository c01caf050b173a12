"""One async implementation per metric; the sync API runs it to completion."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from sync code.

    Inside a running event loop (Jupyter, an async web app) `asyncio.run` is not allowed, so the
    coroutine runs on a fresh loop in a worker thread instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        # in this thread's context: what the caller set (confined reads, `tempo_eval.common.confine`) holds there
        return pool.submit(contextvars.copy_context().run, asyncio.run, coro).result()
