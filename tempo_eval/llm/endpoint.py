"""Where the judge's requests go, and what its HTTP traffic may do: the checks the provider applies.

- `check_base_url`: a base URL holding a user name or password (`http://user:pw@host/v1`) is
  refused. The client would send them as Basic auth, and a server that echoes them would get them
  stored in the workspace; the key belongs in OPENAI_API_KEY (or the key field).
- `plain_http_warning`: the text of a warning when a key would go over plain http to a host that
  is not this machine (localhost, 127.0.0.0/8, ::1); None otherwise.
- `http_event_hooks`: httpx event hooks, run on every request and response, redirects included:
  * the Authorization header leaves only for the base URL's origin (or its https upgrade on the
    same host); a redirect to another origin is followed without it;
  * replies are asked for uncompressed, a compressed one is refused, and the body is read at
    most `max_bytes` bytes (`ReplyTooLarge` beyond that: declared or counted as it arrives).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

logger = logging.getLogger(__name__)

#: host names that are this machine: a key sent there over http does not cross a network
LOCAL_HOSTS = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class ReplyTooLarge(Exception):
    """The judge server's reply body is larger than the provider accepts; `str(self)` says so."""


class CompressedReply(Exception):
    """The judge server compressed a reply although none was asked for."""


def public_url(url: str) -> str:
    """`url` without user info, query or fragment (they may hold credentials) or trailing '/'."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def check_base_url(url: str, *, source: str = "base_url") -> None:
    """Raise ValueError (naming `source` and where the key goes) for a URL that is not
    http(s)://host/... or that holds a user name or password."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        raise ValueError(f"{source} {public_url(url)!r} is not a valid URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{source} must be an http:// or https:// address with a host, like "
            f"http://localhost:8000/v1; got {public_url(url)!r}"
        )
    if "@" in parts.netloc:
        raise ValueError(
            f"{source} {public_url(url)!r} holds a user name or password (user:password@host); "
            "credentials are not accepted in the judge address, where they would be sent as Basic "
            "auth and could end up in the workspace. Remove them from the address and put the key "
            "in the OPENAI_API_KEY environment variable (command line: --api-key-env NAME), or in "
            "the dashboard's API key field"
        )


def is_local_host(host: str | None) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if not host:
        return False
    host = host.strip("[]").lower().rstrip(".")
    if host in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plain_http_warning(url: str) -> str | None:
    """Why sending a key to `url` is unsafe (plain http to another machine), or None."""
    parts = urlsplit(url)
    if parts.scheme != "http" or is_local_host(parts.hostname):
        return None
    return (
        f"The API key is sent over plain http to {parts.hostname}: anyone on the network path can "
        f"read it. Use an https:// address for {public_url(url)}, or a judge on this machine."
    )


def _origin(url: Any) -> tuple[str, str, int | None]:
    """(scheme, host, port) of an httpx URL, with the scheme's default port filled in."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, (url.host or "").lower(), port


def may_receive_key(base: Any, target: Any) -> bool:
    """Whether a request to httpx URL `target` may carry the key meant for `base`'s origin:
    the same origin, or the https upgrade of an http base on the same host."""
    base_origin, target_origin = _origin(base), _origin(target)
    if target_origin == base_origin:
        return True
    return base_origin[0] == "http" and target_origin[0] == "https" and base_origin[1] == target_origin[1]


def _capped_stream(stream: Any, limit: int) -> Any:
    """An httpx async byte stream over `stream` that raises `ReplyTooLarge` once more than
    `limit` bytes came."""
    import httpx2

    class CappedStream(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            received = 0
            async for chunk in stream:
                received += len(chunk)
                if received > limit:
                    raise ReplyTooLarge(_too_large(f"more than {limit:,}", limit))
                yield chunk

        async def aclose(self) -> None:
            await stream.aclose()

    return CappedStream()


def _too_large(size: str, limit: int) -> str:
    return (
        f"the judge server's reply body holds {size} bytes; at most {limit:,} are read "
        "(max_reply_bytes)"
    )


def http_event_hooks(
    base_url: str, max_bytes: int
) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """httpx `event_hooks` for a client whose requests go to `base_url` (see the module docstring)."""
    import httpx2

    base = httpx2.URL(base_url)

    async def on_request(request: Any) -> None:
        request.headers["Accept-Encoding"] = "identity"
        if not may_receive_key(base, request.url):
            request.headers.pop("Authorization", None)
            logger.warning(
                "judge: a redirect leads to %s, another origin than %s; it is followed without "
                "the API key", public_url(str(request.url)), public_url(base_url),
            )

    async def on_response(response: Any) -> None:
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise CompressedReply(
                f"the judge server sent a compressed reply (Content-Encoding: {encoding}) "
                "although an uncompressed one was asked for"
            )
        declared = response.headers.get("Content-Length", "")
        if declared.strip().isdigit() and int(declared) > max_bytes:
            raise ReplyTooLarge(_too_large(f"{int(declared):,}", max_bytes))
        response.stream = _capped_stream(response.stream, max_bytes)

    return {"request": [on_request], "response": [on_response]}
