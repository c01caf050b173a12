"""The LLM judge: one chat completion per question, answered as JSON and validated against a schema.

    provider = OpenAIProvider("gpt-4o-mini")                      # key from OPENAI_API_KEY
    provider = OpenAIProvider("qwen2.5", base_url="http://localhost:8000/v1")   # no key needed
    reply = await provider.ajudge(prompt, Grade, system="You grade documents.")
    if reply.ok:
        reply.data.relevance_score                                # a validated `Grade`
    else:
        reply.error                                               # "HTTP 500 after 4 retries"

Any OpenAI-compatible endpoint works (`base_url`). What the provider guarantees:

- Determinism where the server allows it: temperature 0 and a fixed seed by default.
- The schema's JSON schema is always in the system message; `response_format` adds
  `{"type": "json_object"}` (default, widely supported), strict `json_schema` structured output,
  or nothing ("none", for servers that support neither).
- The answer is parsed as JSON (a ```json fenced block is accepted) and validated with
  `schema.model_validate`. A reply holding two or more answers (fenced blocks, or JSON values one
  after another) is an error, never silently the first. A reply longer than `max_reply_chars`
  is an error and is kept only up to that size; the HTTP body is read at most `max_reply_bytes`
  bytes (counted as they arrive, so a runaway server cannot fill the memory). Every failure (HTTP error, timeout, invalid JSON, schema violation)
  comes back as `JudgeReply.error`, never as an exception, so one bad item never sinks a run.
- `timeout` bounds each whole request, headers and body: a server that trickles its reply a byte
  at a time is cut off at the timeout (the client's own timeouts only bound each read).
- At most `max_concurrency` requests in flight per event loop.
- Retries with exponential backoff and jitter on 408, 429, 5xx, timeouts and connection errors,
  honouring `Retry-After` / `retry-after-ms` (capped by `backoff_max`); 400, 401, 403, 404 and
  other client errors fail at once. The openai client's own retries are off, so every request
  sent is counted in `Usage.requests`.
- Token usage is taken from each response's `usage` field, per reply and cumulative.
- The API key never appears in `repr`, `model_id`, errors or logs, nor in the reply content
  handed on (a judge that echoes it gets it masked as ***); it is registered with
  `tempo_eval.common.secrets`, so the store masks it too, whatever variable it came from.
- A base URL holding credentials (`http://user:pw@host/v1`) is refused (the key goes in
  OPENAI_API_KEY or `api_key`); the key is never sent to another origin than the base URL's
  (a redirect elsewhere is followed without it); a key sent over plain http to another machine
  gets a logged warning, also in `provider.warning` for the dashboard to show.

`openai` is imported only when a request is made.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import threading
from collections.abc import AsyncGenerator
from dataclasses import astuple, dataclass, field
from typing import TYPE_CHECKING, Any

import pydantic

from tempo_eval.common.extras import require_extra
from tempo_eval.common.run_sync import run_sync
from tempo_eval.common.secrets import register_secret
from tempo_eval.llm.endpoint import (
    CompressedReply,
    ReplyTooLarge,
    check_base_url,
    http_event_hooks,
    plain_http_warning,
    public_url,
)
from tempo_eval.llm.retry import plural_retries, retry_after_seconds, retry_delay

if TYPE_CHECKING:
    from openai import AsyncOpenAI

logger = logging.getLogger(__name__)

#: accepted values of `OpenAIProvider(response_format=...)`
RESPONSE_FORMATS = ("json_schema", "json_object", "none")
#: where requests go when neither `base_url` nor OPENAI_BASE_URL is given
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: sent as the key to local servers that need none (the openai client refuses an empty key)
PLACEHOLDER_API_KEY = "not-needed"
#: the longest reply content accepted, in characters: a verdict with its evidence and reason is
#: a few hundred; anything near this is a runaway generation that would bloat the workspace
DEFAULT_MAX_REPLY_CHARS = 100_000
#: the largest HTTP reply body read, in bytes: room for `DEFAULT_MAX_REPLY_CHARS` characters
#: written as JSON escapes (up to 12 bytes each) and the envelope; past it the reading stops
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
#: HTTP statuses worth retrying: request timeout, rate limit, server errors
_RETRYABLE_STATUS = frozenset({408, 429})


@dataclass
class Usage:
    """Token usage summed from the responses' `usage` fields, plus request and failure counts.

    `requests` counts HTTP requests actually sent, retries included; `failures` counts judge
    calls that ended with an error. Servers that omit `usage` add 0 tokens (not a guess).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0
    failures: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(*(mine + theirs for mine, theirs in zip(astuple(self), astuple(other), strict=True)))


@dataclass
class JudgeReply:
    """One judge call's outcome.

    `data` is the answer validated against the schema (None on failure); `error` a short reason
    when it failed ("HTTP 500 after 4 retries", "invalid JSON: ...", "schema violation: ...");
    `raw` the message content as received, when there was one; `usage` this call's usage.
    """

    data: pydantic.BaseModel | None
    error: str | None
    raw: str | None
    usage: Usage = field(default_factory=Usage)

    @property
    def ok(self) -> bool:
        return self.error is None and self.data is not None


# ---------------------------------------------------------------------------------------------
# Pure helpers: prompt, parsing, validation


@functools.lru_cache(maxsize=256)
def schema_instruction(schema: type[pydantic.BaseModel]) -> str:
    """The system-message text that asks for one JSON object matching `schema`."""
    schema_json = json.dumps(schema.model_json_schema(), ensure_ascii=False)
    return (
        "Answer with a single JSON object that conforms to this JSON schema:\n"
        f"{schema_json}\n"
        "Output only the JSON object, with no text before or after it."
    )


_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)


def parse_json_content(content: str) -> Any:
    """Parse a judge's message as JSON.

    The whole message is tried first; if it is not JSON, the ```json (or bare ```) fenced block
    in it. Raises `ValueError` ("invalid JSON: <why>") when neither parses, and ("ambiguous
    reply: ...") when the message holds two or more answers: several fenced blocks, or JSON
    values one after another (which of them the judge meant cannot be told).
    """
    text = content.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as whole_error:
        fences = _FENCE.findall(text)
        if not fences:
            if whole_error.msg == "Extra data" and _json_values(text) > 1:
                raise ValueError(
                    f"ambiguous reply: it holds {_json_values(text)} JSON values one after another; "
                    "expected exactly one answer"
                ) from None
            raise ValueError(f"invalid JSON: {_describe_json_error(whole_error)}") from None
        if len(fences) > 1:
            raise ValueError(
                f"ambiguous reply: it holds {len(fences)} fenced blocks; expected exactly one answer"
            ) from None
        try:
            return json.loads(fences[0].strip())
        except json.JSONDecodeError as fence_error:
            raise ValueError(
                f"invalid JSON in fenced block: {_describe_json_error(fence_error)}"
            ) from None


def _json_values(text: str) -> int:
    """How many JSON values follow one another in `text` (whitespace between), counting up to
    the first thing that is not one."""
    decoder = json.JSONDecoder()
    count, position = 0, 0
    while position < len(text):
        try:
            _, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            break
        count += 1
        while position < len(text) and text[position].isspace():
            position += 1
    return count


def _describe_json_error(error: json.JSONDecodeError) -> str:
    return f"{error.msg} (line {error.lineno} column {error.colno})"


def validate_content(
    content: str, schema: type[pydantic.BaseModel]
) -> tuple[pydantic.BaseModel | None, str | None]:
    """(validated model, None) or (None, reason) for a judge's message content."""
    try:
        payload = parse_json_content(content)
    except ValueError as error:
        return None, str(error)
    try:
        return schema.model_validate(payload), None
    except pydantic.ValidationError as error:
        return None, f"schema violation: {_describe_validation_error(error)}"


def _describe_validation_error(error: pydantic.ValidationError, limit: int = 3) -> str:
    problems = []
    for item in error.errors()[:limit]:
        where = ".".join(str(part) for part in item["loc"]) or "(root)"
        problems.append(f"{where}: {item['msg']} (got {item.get('input')!r})")
    more = error.error_count() - limit
    if more > 0:
        problems.append(f"and {more} more")
    return "; ".join(problems)


# ---------------------------------------------------------------------------------------------
# The provider


class _Secret:
    """Holds the API key so that repr(), vars() and tracebacks show '***', never the key."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "'***'"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # unpickled in another process (a Ray worker), the key is masked there too
        return _unpickle_secret, (self.value,)


def _unpickle_secret(value: str) -> _Secret:
    if value != PLACEHOLDER_API_KEY:
        register_secret(value)
    return _Secret(value)


@dataclass
class _LoopResources:
    """What is bound to one event loop: the HTTP client (its connection pool) and the semaphore."""

    client: AsyncOpenAI
    semaphore: asyncio.Semaphore
    closer: AsyncGenerator[None, None] | None = None


class _CallFailed(Exception):
    """Internal: the request part of a judge call failed for good; `str(self)` is the reason."""


class OpenAIProvider:
    """An OpenAI-compatible chat-completions judge that answers in validated JSON.

    Args:
        model: the model name sent to the server ("gpt-4o-mini", "qwen2.5-7b-instruct", ...).
        base_url: an OpenAI-compatible endpoint ("http://localhost:8000/v1"); None means
            OPENAI_BASE_URL if set, else the OpenAI API.
        api_key: the key; else OPENAI_API_KEY; else, for a `base_url` (local servers often need
            none), a placeholder. With neither key nor base_url: ValueError.
        timeout: seconds per HTTP request, the whole of it (connecting, sending, headers and
            body); a timeout is retried.
        max_retries: retries after the first request (so at most max_retries + 1 requests).
        max_concurrency: requests in flight at once, per event loop.
        temperature, seed: sent with every request (seed omitted when None).
        response_format: "json_object" (default), "json_schema" (strict structured output) or
            "none" (schema in the prompt only).
        backoff_initial, backoff_max: exponential backoff bounds in seconds (see `retry_delay`).
        max_reply_chars: the longest reply content accepted; a longer one is an error and
            `JudgeReply.raw` keeps only its first `max_reply_chars` characters.
        max_reply_bytes: the largest HTTP reply body read; a larger one is an error (not retried).

    Each event loop gets its own `AsyncOpenAI` client (its connections are bound to the loop) and
    semaphore, created on first use and closed when the loop shuts down (asyncio.run) or on
    `aclose()`. The sync `judge` runs `ajudge` on a fresh loop, so its client lives for one call.
    """

    def __init__(
        self, model: str, base_url: str | None = None, api_key: str | None = None, *,
        timeout: float = 60.0, max_retries: int = 4, max_concurrency: int = 8,
        temperature: float = 0.0, seed: int | None = 0, response_format: str = "json_object",
        backoff_initial: float = 0.5, backoff_max: float = 8.0,
        max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        require_extra("openai", "judge", "The judge")
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"response_format must be one of {', '.join(RESPONSE_FORMATS)}; got {response_format!r}"
            )
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        for name, value, least in (("max_retries", max_retries, 0), ("max_concurrency", max_concurrency, 1),
                                   ("max_reply_chars", max_reply_chars, 1), ("max_reply_bytes", max_reply_bytes, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
        if not (backoff_initial >= 0 and backoff_max >= 0):
            raise ValueError(
                f"backoff_initial and backoff_max must be >= 0, got {backoff_initial!r}, {backoff_max!r}"
            )

        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if self.base_url is not None:
            check_base_url(self.base_url, source="base_url" if base_url else "OPENAI_BASE_URL")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ValueError("No API key: pass api_key=... or set OPENAI_API_KEY")
            key = PLACEHOLDER_API_KEY
        self._api_key = _Secret(key)
        #: why the key is at risk on the way to the judge (plain http to another machine), or None
        self.warning: str | None = None
        if key != PLACEHOLDER_API_KEY:
            register_secret(key)
            self.warning = plain_http_warning(self.base_url or DEFAULT_BASE_URL)
            if self.warning:
                logger.warning("judge %s: %s", model, self.warning)
        self.model_id = f"openai:{model}" if self.base_url is None else f"{public_url(self.base_url)}:{model}"
        self.timeout = float(timeout)
        self.max_retries, self.max_concurrency = max_retries, max_concurrency
        self.temperature, self.seed, self.response_format = temperature, seed, response_format
        self.backoff_initial, self.backoff_max = backoff_initial, backoff_max
        self.max_reply_chars, self.max_reply_bytes = max_reply_chars, max_reply_bytes

        self._lock = threading.Lock()  # guards _usage and _loops across threads
        self._usage = Usage()
        self._loops: dict[asyncio.AbstractEventLoop, _LoopResources] = {}

    def __repr__(self) -> str:
        return (
            f"OpenAIProvider(model={self.model!r}, "
            f"base_url={public_url(self.base_url) if self.base_url else None!r}, "
            f"response_format={self.response_format!r}, max_concurrency={self.max_concurrency})"
        )

    @property
    def settings(self) -> str:
        """The sampling settings that change answers; part of verdict-cache keys and run identity."""
        return f"temperature={self.temperature};seed={self.seed};response_format={self.response_format}"

    @property
    def usage(self) -> Usage:
        """Cumulative usage over the provider's life: a snapshot, safe to keep and compare."""
        with self._lock:
            return self._usage

    # -- public calls --------------------------------------------------------------------------

    def judge(
        self, prompt: str, schema: type[pydantic.BaseModel], *, system: str | None = None
    ) -> JudgeReply:
        """Sync `ajudge`; works inside a running event loop too (see `run_sync`)."""
        # run_sync runs a fresh loop through asyncio.run, whose shutdown closes that loop's client.
        return run_sync(self.ajudge(prompt, schema, system=system))

    async def ajudge(
        self, prompt: str, schema: type[pydantic.BaseModel], *, system: str | None = None
    ) -> JudgeReply:
        """Ask the judge; the answer is validated against `schema`. Never raises for judge failures.

        Raises TypeError only for a programming error: `schema` not a pydantic model class or
        `prompt` not a string.
        """
        if not (isinstance(schema, type) and issubclass(schema, pydantic.BaseModel)):
            raise TypeError(f"schema must be a pydantic BaseModel subclass, got {schema!r}")
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")

        call_usage = Usage()
        content: str | None = None
        data: pydantic.BaseModel | None = None
        error: str | None = None
        try:
            try:
                completion = await self._complete(prompt, schema, system, call_usage)
            except _CallFailed as failure:
                error = str(failure)
            else:
                content, error = _message_content(completion)
                if content is not None:
                    content = self._redact(content)  # a judge echoing the key: never hand it on
                if content is not None and len(content) > self.max_reply_chars:
                    error = (
                        f"the reply holds {len(content):,} characters; at most "
                        f"{self.max_reply_chars:,} are accepted (max_reply_chars)"
                    )
                    content = content[: self.max_reply_chars]
                if error is None:
                    data, error = validate_content(content, schema)
                    if error is not None and _finish_reason(completion) == "length":
                        error += " (the answer was cut off: finish_reason=length)"
        finally:
            if error is not None:
                error = self._redact(error)
                call_usage.failures = 1
                logger.warning("judge %s failed: %s", self.model_id, error)
            with self._lock:
                self._usage = self._usage + call_usage
        return JudgeReply(data=data, error=error, raw=content, usage=call_usage)

    async def aclose(self) -> None:
        """Close the HTTP client of the running event loop, if this provider made one."""
        with self._lock:
            resources = self._loops.pop(asyncio.get_running_loop(), None)
        if resources is not None and resources.closer is not None:
            await resources.closer.aclose()  # its `finally` closes the client

    # -- internals -----------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        key = self._api_key.value
        if key and key != PLACEHOLDER_API_KEY:
            text = text.replace(key, "***")
        return text

    async def _resources(self) -> _LoopResources:
        """This loop's client and semaphore, created on first use."""
        loop = asyncio.get_running_loop()
        with self._lock:
            resources = self._loops.get(loop)
            if resources is not None:
                return resources
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            base_url = self.base_url or DEFAULT_BASE_URL
            client = AsyncOpenAI(
                api_key=self._api_key.value,
                base_url=base_url,
                timeout=self.timeout,  # per read/write/connect; `_complete` bounds the whole request
                max_retries=0,  # our retry policy is the only one, so every request is counted
                http_client=DefaultAsyncHttpxClient(
                    verify=_shared_ssl_context(),
                    timeout=self.timeout,
                    event_hooks=http_event_hooks(base_url, self.max_reply_bytes),
                ),
            )
            resources = _LoopResources(client, asyncio.Semaphore(self.max_concurrency))
            self._loops[loop] = resources
        # An async generator started on this loop is closed by `loop.shutdown_asyncgens()`, which
        # asyncio.run calls before closing the loop: that is where the client gets closed.
        resources.closer = self._close_at_loop_shutdown(loop, resources)
        await resources.closer.__anext__()
        return resources

    async def _close_at_loop_shutdown(
        self, loop: asyncio.AbstractEventLoop, resources: _LoopResources
    ) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                if self._loops.get(loop) is resources:
                    del self._loops[loop]
            await resources.client.close()

    def _request_arguments(self, prompt: str, schema: type[pydantic.BaseModel], system: str | None) -> dict[str, Any]:
        instruction = schema_instruction(schema)
        system_text = f"{system.rstrip()}\n\n{instruction}" if system else instruction
        messages = [{"role": "system", "content": system_text}, {"role": "user", "content": prompt}]
        arguments: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.seed is not None:
            arguments["seed"] = self.seed
        if self.response_format == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        elif self.response_format == "json_schema":
            arguments["response_format"] = _strict_response_format(schema)
        return arguments

    async def _complete(self, prompt: str, schema: type[pydantic.BaseModel], system: str | None,
                        usage: Usage) -> Any:
        """The chat completion, after retries; raises `_CallFailed` with the reason otherwise."""
        import openai

        arguments = self._request_arguments(prompt, schema, system)
        resources = await self._resources()
        last_failure = "no request sent"
        retry_hint: float | None = None  # the server's Retry-After for the last failure
        for attempt in range(self.max_retries + 1):
            if attempt:
                delay = retry_delay(attempt - 1, initial=self.backoff_initial, maximum=self.backoff_max,
                                    retry_after=retry_hint)
                logger.info("judge %s: %s; retry %d/%d in %.3fs", self.model_id, last_failure, attempt,
                            self.max_retries, delay)
                await asyncio.sleep(delay)
            retry_hint = None
            usage.requests += 1
            try:
                async with resources.semaphore, asyncio.timeout(self.timeout):
                    # the client's timeouts bound each read, not a reply trickled a byte at a time
                    completion = await resources.client.chat.completions.create(**arguments)
            except (TimeoutError, openai.APITimeoutError):
                last_failure = f"timeout ({self.timeout:g}s)"
            except openai.APIStatusError as error:
                status = error.status_code
                if status not in _RETRYABLE_STATUS and status < 500:
                    raise _CallFailed(f"HTTP {status}: {_status_detail(error)}") from None
                last_failure = f"HTTP {status}"
                retry_hint = retry_after_seconds(error.response.headers)
            except (ReplyTooLarge, CompressedReply) as error:  # from the client's event hooks
                raise _CallFailed(str(error)) from None
            except openai.APIConnectionError as error:
                last_failure = f"connection error: {error}"
            except openai.OpenAIError as error:
                raise _CallFailed(f"API error: {type(error).__name__}: {error}") from None
            except ValueError as error:  # a 200 response whose body is not JSON (proxies, HTML)
                raise _CallFailed(f"malformed response body: {error}") from None
            else:
                _add_token_usage(usage, completion)
                return completion
        raise _CallFailed(f"{last_failure} after {plural_retries(self.max_retries)}")


@functools.cache
def _shared_ssl_context() -> Any:
    """One TLS context for every client: building one loads the CA bundle (~70 ms each time)."""
    import httpx2

    return httpx2.create_ssl_context()


@functools.lru_cache(maxsize=256)
def _strict_response_format(schema: type[pydantic.BaseModel]) -> dict[str, Any]:
    """`{"type": "json_schema", "json_schema": {"name", "schema", "strict": True}}` for `schema`.

    Built by the openai client's own converter, which makes the schema strict-mode compatible
    (additionalProperties false, every property required).
    """
    from openai.lib import type_to_response_format_param

    return dict(type_to_response_format_param(schema))


def _status_detail(error: Any) -> str:
    """The server's error message from an APIStatusError, short."""
    body = error.body
    message: Any = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    if not message:
        message = body if isinstance(body, str) and body else error.message
    text = str(message)
    return text if len(text) <= 300 else text[:297] + "..."


def _add_token_usage(usage: Usage, completion: Any) -> None:
    reported = getattr(completion, "usage", None)
    if reported is None:
        return
    usage.prompt_tokens += reported.prompt_tokens or 0
    usage.completion_tokens += reported.completion_tokens or 0
    usage.total_tokens += reported.total_tokens or 0


def _message_content(completion: Any) -> tuple[str | None, str | None]:
    """(content, None) or (None/partial, reason) from a chat completion."""
    choices = getattr(completion, "choices", None)
    if not choices:
        return None, "empty response: no choices"
    message = choices[0].message
    if message is None:
        return None, "empty response: no message"
    content = message.content
    if not content or not content.strip():
        refusal = getattr(message, "refusal", None)
        if refusal:
            return content, f"the model refused: {refusal}"
        return content, f"empty response (finish_reason={choices[0].finish_reason})"
    return content, None


def _finish_reason(completion: Any) -> str | None:
    choices = getattr(completion, "choices", None)
    return choices[0].finish_reason if choices else None
