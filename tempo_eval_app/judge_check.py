"""Is the LLM judge reachable? One cheap request before a run starts, so a wrong endpoint, model
or key is reported at once instead of as an error on every row."""

from __future__ import annotations

import pydantic


class _Ping(pydantic.BaseModel):
    ok: bool


PING_PROMPT = 'Reply with the JSON object {"ok": true} and nothing else.'


def check_judge(base_url: str, model: str, api_key: str | None, *, timeout: float = 20.0) -> tuple[bool, str]:
    """(reachable, what happened): one tiny completion with no retries; any answer in the
    expected shape counts as reachable. The message names the endpoint and the failure, and ends
    with the provider's warning when there is one (a key sent over plain http to another machine)."""
    from tempo_eval.llm.provider import OpenAIProvider

    where = base_url.strip() or "the default endpoint"
    try:
        provider = OpenAIProvider(model=model, base_url=base_url.strip() or None, api_key=api_key,
                                  timeout=timeout, max_retries=0, max_concurrency=1)
    except ValueError as exc:
        return False, f"The judge cannot be set up: {exc}."
    reply = provider.judge(PING_PROMPT, _Ping)
    warning = f" Warning: {provider.warning}" if provider.warning else ""
    if reply.ok:
        return True, f"The judge {model} at {where} answered a test request.{warning}"
    return False, f"The judge {model} at {where} did not answer a test request: {reply.error}.{warning}"
