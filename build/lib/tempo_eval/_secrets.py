"""Secrets to mask: the values of secret-named environment variables, plus every key handed to
a judge, whatever variable it came from (`register_secret`).

Anything stored in the workspace or printed (errors, logs) goes through `mask`, so a judge that
echoes its key, or an error quoting a request, never writes the key down.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

MASK = "***"
#: shorter values would mask ordinary words
MIN_SECRET_CHARS = 8

_lock = threading.Lock()
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask `value` from now on in everything stored or printed by this process."""
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


def registered_secrets() -> list[str]:
    with _lock:
        return sorted(_registered, key=len, reverse=True)  # longest first: no partial masking


def mask(text: str | None, secrets: Iterable[str]) -> str | None:
    """`text` with every one of `secrets` replaced by ***."""
    if not text:
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class _MaskingFilter(logging.Filter):
    def __init__(self, secrets: Callable[[], Iterable[str]]) -> None:
        super().__init__()
        self._secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask(message, self._secrets())
        if masked != message:
            record.msg, record.args = masked, None
        return True


def mask_log_handlers(secrets: Callable[[], Iterable[str]]) -> None:
    """Mask `secrets()` in every record the root logger's handlers write."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _MaskingFilter) for f in handler.filters):
            handler.addFilter(_MaskingFilter(secrets))
