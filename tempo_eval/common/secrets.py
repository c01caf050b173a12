"""Secrets to mask: the values of secret-named environment variables, plus every key handed to
a judge, whatever variable it came from (`register_secret`); and secret *names* (`is_secret_name`),
whose settings never reach the store (`strip_secrets`).

Anything stored in the workspace or printed (errors, logs) goes through `mask`, so a judge that
echoes its key, or an error quoting a request, never writes the key down. The dashboard also
registers the secrets of its settings file (`named_secrets`: the sign-in's `client_secret` and
`cookie_secret`) and masks every log record of its process (`mask_every_log_record`).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

MASK = "***"
#: shorter values would mask ordinary words
MIN_SECRET_CHARS = 8

_SECRET_PARTS = frozenset(
    {"key", "apikey", "token", "secret", "secrets", "password", "passwd", "credential",
     "credentials", "authorization", "bearer"}
)

_lock = threading.Lock()
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask `value` from now on in everything stored or printed by this process."""
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


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
        secrets = self._secrets()
        message = record.getMessage()
        masked = mask(message, secrets)
        if masked != message:
            record.msg, record.args = masked, None
        # the traceback attached to the record quotes requests and arguments too: formatters
        # print record.exc_text when it is set, so it is formatted here, masked
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_text = mask(record.exc_text, secrets)  # None and "" stay as they are
        record.stack_info = mask(record.stack_info, secrets)
        return True


def mask_log_handlers(secrets: Callable[[], Iterable[str]]) -> None:
    """Mask `secrets()` in every record the root logger's handlers write."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _MaskingFilter) for f in handler.filters):
            handler.addFilter(_MaskingFilter(secrets))


def mask_every_log_record(secrets: Callable[[], Iterable[str]]) -> None:
    """Mask `secrets()` in every log record this process makes from now on, whichever logger and
    handler write it: also the loggers that do not pass their records up to the root logger's
    handlers (Streamlit's own, each with its own handler, made again when its settings change).
    The record is masked once, as it is made (a record below its logger's level is never made)."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "_masks_secrets", False):
        return
    masking = _MaskingFilter(secrets)

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        masking.filter(record)
        return record

    masked_record._masks_secrets = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(masked_record)


# ---- secret names and the values to mask ---------------------------------------------------

@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for names like `api_key`, `apiKey`, `OPENAI_API_KEY`, `access_token`, `client_secret`.

    The name is split into words at `_`, `-`, `.`, spaces and camelCase humps; it is secret when
    one word is key / token / secret / password / credential(s) / authorization / bearer
    (`max_tokens` and `k` are not).
    """
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name))
    parts = {part.lower() for part in re.split(r"[\s_\-.]+", spaced) if part}
    return bool(parts & _SECRET_PARTS)


def strip_secrets(value: Any) -> Any:
    """A copy of `value` with every mapping entry whose key is a secret name removed (recursively)."""
    if isinstance(value, Mapping):
        return {k: strip_secrets(v) for k, v in value.items() if not is_secret_name(str(k))}
    if isinstance(value, (list, tuple)):
        return [strip_secrets(v) for v in value]
    return value


def named_secrets(value: Any) -> list[str]:
    """The values of every entry of `value` whose key is a secret name (recursively, as
    `strip_secrets` removes them): e.g. the `client_secret` and `cookie_secret` of a settings
    file's `[auth]` section, to `register_secret`. Only text values long enough to mask."""
    if isinstance(value, Mapping):
        return [found for key, item in value.items()
                for found in ([item] if is_secret_name(str(key)) and isinstance(item, str)
                              and len(item) >= MIN_SECRET_CHARS else named_secrets(item))]
    if isinstance(value, (list, tuple)):
        return [found for item in value for found in named_secrets(item)]
    return []


def url_passwords(url: str) -> list[str]:
    """The passwords a database URL holds: its user-info password (as written and decoded), and
    the value of any secret-named query parameter (`?password=...`)."""
    from urllib.parse import unquote

    base, _, query = url.partition("?")
    found = []
    userinfo, at, _ = base.partition("://")[2].rpartition("@")
    if at and ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    for item in query.split("&") if query else ():
        name, _, value = item.partition("=")
        if is_secret_name(unquote(name)):
            found.append(value)
    return [v for raw in found for v in {raw, unquote(raw)} if v]


def masked_url(url: str) -> str:
    """A database URL as messages show it: the user-info password and secret-named query values
    as ***, however they are written (a password holding `@`, `/` or `:` included)."""
    base, mark, query = url.partition("?")
    scheme, found, rest = base.partition("://")
    if found:
        userinfo, at, host = rest.rpartition("@")
        if at:
            user, colon, _ = userinfo.partition(":")
            base = f"{scheme}://{user}{':' + MASK if colon else ''}@{host}"
    items = [f"{item.partition('=')[0]}={MASK}" if is_secret_name(item.partition("=")[0]) else item
             for item in query.split("&")] if query else []
    return base + mark + "&".join(items)


#: environment variables holding a database URL whose password is a secret
_URL_VARIABLES = ("TEMPO_EVAL_DB",)


def secret_values() -> list[str]:
    """Values of environment variables named like secrets (short ones would mask ordinary words),
    the password of the workspace database's URL (`TEMPO_EVAL_DB`), and every key given to a
    judge in this process, whatever variable it came from."""
    found = {v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_CHARS}
    found.update(v for name in _URL_VARIABLES for v in url_passwords(os.environ.get(name, ""))
                 if len(v) >= MIN_SECRET_CHARS)
    with _lock:
        found.update(_registered)
    return sorted(found, key=len, reverse=True)  # longest first: a key inside another is masked whole


def redact(text: str | None, secrets: Iterable[str] | None = None) -> str | None:
    """`text` with every secret (default: `secret_values()`) replaced by ***."""
    return mask(text, secret_values() if secrets is None else secrets)
