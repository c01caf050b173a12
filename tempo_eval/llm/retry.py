"""How long to wait before retrying a judge request: the server's Retry-After hint, or exponential
backoff with jitter. Pure functions; the provider's retry loop uses them."""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's requested wait from `retry-after-ms` or `Retry-After` (seconds or HTTP date).

    None when absent or unreadable. Header lookup is case-insensitive for httpx-style headers.
    """
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            milliseconds = float(value)
        except ValueError:
            milliseconds = math.nan
        if math.isfinite(milliseconds) and milliseconds >= 0:
            return milliseconds / 1000.0
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def retry_delay(
    attempt: int,
    *,
    initial: float,
    maximum: float,
    retry_after: float | None = None,
    rng: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number `attempt + 1` (attempt counts from 0).

    With a server hint: min(retry_after, maximum). Otherwise exponential backoff with jitter:
    base = min(maximum, initial * 2**attempt), delay uniform in [base / 2, base], so concurrent
    callers that failed together do not retry together.
    """
    if retry_after is not None:
        return min(retry_after, maximum)
    base = min(maximum, initial * 2.0**attempt)
    return base * (0.5 + 0.5 * rng())


def plural_retries(count: int) -> str:
    return "1 retry" if count == 1 else f"{count} retries"
