"""OpenAIProvider against a real HTTP server on 127.0.0.1 (tests/support/openai_server.py)."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from enum import StrEnum

import pydantic
import pytest

from tempo_eval.llm.provider import (
    JudgeReply,
    OpenAIProvider,
    Usage,
    parse_json_content,
    retry_after_seconds,
    retry_delay,
)
from tests.support.openai_server import (
    Reply,
    Responder,
    ScriptedOpenAIServer,
    json_reply,
    last_user_message,
)
from tests.support.paths import ROOT

SECRET = "sk-test-SECRET-4f1e9c2b7a"
Serve = Callable[[Responder], ScriptedOpenAIServer]


class Grade(pydantic.BaseModel):
    relevance_score: int = pydantic.Field(ge=0, le=4)
    reason: str = ""


class Label(StrEnum):
    SUPPORTED = "SUPPORTED"
    CONTRADICTED = "CONTRADICTED"


class ClaimLabel(pydantic.BaseModel):
    claim: str
    verdict: Label


@pytest.fixture(scope="module")
def _server() -> Iterator[ScriptedOpenAIServer]:
    # One server for the module: starting one is instant, but shutting one down waits for its
    # 0.5 s poll interval.
    with ScriptedOpenAIServer(lambda request: Reply(status=500)) as server:
        yield server


@pytest.fixture
def serve(_server: ScriptedOpenAIServer) -> Serve:
    """serve(responder) -> the running server, scripted with `responder`, its log emptied."""

    def script(responder: Responder) -> ScriptedOpenAIServer:
        _server.responder = responder
        _server.requests.clear()
        return _server

    return script


def make_provider(server: ScriptedOpenAIServer, **options: object) -> OpenAIProvider:
    settings: dict[str, object] = {
        "api_key": SECRET,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "timeout": 5.0,
    }
    settings.update(options)
    return OpenAIProvider("judge-model", base_url=server.base_url, **settings)  # type: ignore[arg-type]


# -- answers ----------------------------------------------------------------------------------


def test_json_answer_is_validated_into_the_schema(serve: Serve) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 3, "reason": "on topic"}))
    reply = make_provider(server).judge("Grade this document.", Grade)
    assert reply.ok
    assert isinstance(reply.data, Grade)
    assert reply.data.relevance_score == 3
    assert reply.error is None
    assert json.loads(reply.raw or "") == {"relevance_score": 3, "reason": "on topic"}


def test_request_carries_model_temperature_zero_seed_schema_and_prompt(serve: Serve) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 1}))
    make_provider(server).judge("Is it relevant?", Grade, system="You grade documents.")
    [request] = server.requests
    assert request["model"] == "judge-model"
    assert request["temperature"] == 0
    assert request["seed"] == 0
    assert request["response_format"] == {"type": "json_object"}
    system = request["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You grade documents.")
    assert '"relevance_score"' in system["content"]  # the JSON schema is in the prompt
    assert last_user_message(request) == "Is it relevant?"


def test_json_schema_mode_sends_the_strict_schema(serve: Serve) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 2, "reason": ""}))
    reply = make_provider(server, response_format="json_schema").judge("q", Grade)
    assert reply.ok
    response_format = server.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    spec = response_format["json_schema"]
    assert spec["name"] == "Grade"
    assert spec["strict"] is True
    assert set(spec["schema"]["properties"]) == {"relevance_score", "reason"}
    assert spec["schema"]["additionalProperties"] is False


def test_none_mode_sends_no_response_format_but_keeps_the_schema_in_the_prompt(
    serve: Serve,
) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 2}))
    reply = make_provider(server, response_format="none", seed=None).judge("q", Grade)
    assert reply.ok
    request = server.requests[0]
    assert "response_format" not in request
    assert "seed" not in request
    assert '"relevance_score"' in request["messages"][0]["content"]


def test_fenced_json_block_is_accepted(serve: Serve) -> None:
    content = 'Here is my grade:\n```json\n{"relevance_score": 4, "reason": "exact"}\n```\n'
    server = serve(lambda request: Reply(content=content))
    reply = make_provider(server).judge("q", Grade)
    assert reply.ok
    assert reply.data == Grade(relevance_score=4, reason="exact")
    assert reply.raw == content


def test_malformed_json_content_is_an_invalid_json_error(serve: Serve) -> None:
    server = serve(lambda request: Reply(content='{"relevance_score": 3,'))
    provider = make_provider(server)
    reply = provider.judge("q", Grade)
    assert not reply.ok
    assert reply.data is None
    assert reply.error is not None and reply.error.startswith("invalid JSON")
    assert reply.raw == '{"relevance_score": 3,'
    assert reply.usage.failures == 1
    assert len(server.requests) == 1  # a bad answer is not retried


def test_grade_out_of_range_is_a_schema_violation(serve: Serve) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 7}))
    reply = make_provider(server).judge("q", Grade)
    assert not reply.ok
    assert reply.error is not None
    assert reply.error.startswith("schema violation: relevance_score:")
    assert "less than or equal to 4" in reply.error


def test_unknown_label_is_a_schema_violation(serve: Serve) -> None:
    answer = {"claim": "Built in 1889.", "verdict": "MAYBE"}
    server = serve(lambda request: json_reply(answer))
    reply = make_provider(server).judge("q", ClaimLabel)
    assert not reply.ok
    assert reply.error is not None and reply.error.startswith("schema violation: verdict:")
    assert "MAYBE" in reply.error


# -- usage ------------------------------------------------------------------------------------


def test_usage_sums_the_servers_token_counts_per_reply_and_cumulatively(serve: Serve) -> None:
    tokens = iter([(100, 20), (55, 3), (7, 1)])

    def responder(request: dict) -> Reply:
        prompt_tokens, completion_tokens = next(tokens)
        return json_reply(
            {"relevance_score": 1}, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )

    server = serve(responder)
    provider = make_provider(server)
    replies = [provider.judge(f"q{i}", Grade) for i in range(3)]
    assert [r.usage.prompt_tokens for r in replies] == [100, 55, 7]
    assert replies[0].usage == Usage(100, 20, 120, requests=1, failures=0)
    assert provider.usage == Usage(162, 24, 186, requests=3, failures=0)


# -- retries ----------------------------------------------------------------------------------


def test_429_is_retried_and_retry_after_is_honoured(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    replies = iter(
        [
            Reply(status=429, headers={"retry-after-ms": "30"}),
            Reply(status=429, headers={"Retry-After": "120"}),  # longer than backoff_max: capped
            json_reply({"relevance_score": 2}, prompt_tokens=5, completion_tokens=2),
        ]
    )
    server = serve(lambda request: next(replies))
    provider = make_provider(server, backoff_max=0.04)
    with caplog.at_level(logging.INFO, logger="tempo_eval.llm.provider"):
        reply = provider.judge("q", Grade)
    assert reply.ok
    assert reply.usage == Usage(5, 2, 7, requests=3, failures=0)
    assert len(server.requests) == 3
    waits = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(waits) == 2
    assert "HTTP 429; retry 1/4 in 0.030s" in waits[0]
    assert "HTTP 429; retry 2/4 in 0.040s" in waits[1]


def test_server_error_forever_ends_with_an_error_after_max_retries(serve: Serve) -> None:
    server = serve(lambda request: Reply(status=500))
    provider = make_provider(server, max_retries=3)
    reply = provider.judge("q", Grade)
    assert not reply.ok
    assert reply.error == "HTTP 500 after 3 retries"
    assert reply.raw is None
    assert len(server.requests) == 4
    assert reply.usage == Usage(requests=4, failures=1)
    assert provider.usage == Usage(requests=4, failures=1)


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(serve: Serve, status: int) -> None:
    server = serve(lambda request: Reply(status=status))
    reply = make_provider(server).judge("q", Grade)
    assert reply.error == f"HTTP {status}: scripted {status}"
    assert len(server.requests) == 1
    assert reply.usage.requests == 1


def test_timeout_is_retried_then_reported(serve: Serve) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 1}, delay=0.6))
    provider = make_provider(server, timeout=0.15, max_retries=1)
    reply = provider.judge("q", Grade)
    assert reply.error == "timeout (0.15s) after 1 retry"
    assert len(server.requests) == 2
    assert reply.usage == Usage(requests=2, failures=1)


def test_garbage_response_body_is_an_error_not_an_exception(serve: Serve) -> None:
    server = serve(lambda request: Reply(raw_body="<html>bad gateway</html>"))
    reply = make_provider(server).judge("q", Grade)
    assert reply.error is not None and reply.error.startswith("malformed response body")


def test_retry_delay_grows_exponentially_with_jitter_and_respects_caps() -> None:
    assert retry_delay(0, initial=0.5, maximum=8, rng=lambda: 1.0) == 0.5
    assert retry_delay(3, initial=0.5, maximum=8, rng=lambda: 1.0) == 4.0
    assert retry_delay(3, initial=0.5, maximum=8, rng=lambda: 0.0) == 2.0  # jitter: [base/2, base]
    assert retry_delay(10, initial=0.5, maximum=8, rng=lambda: 1.0) == 8.0
    assert retry_delay(0, initial=0.5, maximum=8, retry_after=3.0) == 3.0
    assert retry_delay(0, initial=0.5, maximum=8, retry_after=60.0) == 8.0


def test_retry_after_headers_are_read_in_seconds_milliseconds_and_dates() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


# -- concurrency and event loops --------------------------------------------------------------


def test_concurrency_bound_is_respected(serve: Serve) -> None:
    limit, calls = 3, 12
    state = {"in_flight": 0, "max": 0}
    condition = threading.Condition()

    def responder(request: dict) -> Reply:
        with condition:
            state["in_flight"] += 1
            state["max"] = max(state["max"], state["in_flight"])
            condition.notify_all()
            # hold the first requests until `limit` are in flight at once, so the test sees the
            # bound reached; later ones overlap through the short sleep below
            condition.wait_for(lambda: state["max"] >= limit, timeout=2.0)
        time.sleep(0.02)
        with condition:
            state["in_flight"] -= 1
        return json_reply({"relevance_score": int(last_user_message(request)) % 5})

    async def run_all(provider: OpenAIProvider) -> list[JudgeReply]:
        try:
            return await asyncio.gather(*(provider.ajudge(str(i), Grade) for i in range(calls)))
        finally:
            await provider.aclose()

    server = serve(responder)
    provider = make_provider(server, max_concurrency=limit)
    replies = asyncio.run(run_all(provider))
    assert [r.data.relevance_score for r in replies if r.data] == [i % 5 for i in range(calls)]
    assert state["max"] == limit
    assert provider.usage.requests == calls


def test_one_provider_serves_several_event_loops_and_closes_its_connections(serve: Serve) -> None:
    async def one(provider: OpenAIProvider) -> JudgeReply:
        return await provider.ajudge("q", Grade)

    server = serve(lambda request: json_reply({"relevance_score": 2}))
    provider = make_provider(server)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = asyncio.run(one(provider))
        second = asyncio.run(one(provider))  # a new loop: a client bound to the old one fails
        third = provider.judge("q", Grade)
        requests = provider.usage.requests
        del provider  # an HTTP client left open by a finished loop would warn when collected
        gc.collect()
    assert first.ok and second.ok and third.ok
    assert requests == 3
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_sync_judge_works_inside_a_running_event_loop(serve: Serve) -> None:
    async def caller(provider: OpenAIProvider) -> JudgeReply:
        return provider.judge("q", Grade)  # e.g. a notebook cell or an async web handler

    server = serve(lambda request: json_reply({"relevance_score": 4}))
    reply = asyncio.run(caller(make_provider(server)))
    assert reply.ok and reply.data == Grade(relevance_score=4)


# -- keys and configuration -------------------------------------------------------------------


def test_api_key_never_appears_in_repr_model_id_errors_or_logs(
    serve: Serve,
    caplog: pytest.LogCaptureFixture,
) -> None:
    leaky = json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    server = serve(lambda request: Reply(status=401, raw_body=leaky))
    provider = make_provider(server)
    with caplog.at_level(logging.DEBUG):
        reply = provider.judge("q", Grade)
    assert reply.error == "HTTP 401: Incorrect API key provided: ***"
    for text in (repr(provider), provider.model_id, str(vars(provider)), caplog.text):
        assert SECRET not in text


def test_key_comes_from_the_environment_when_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    provider = OpenAIProvider("gpt-4o-mini")
    assert provider.model_id == "openai:gpt-4o-mini"
    assert SECRET not in repr(provider)


def test_missing_key_without_base_url_is_refused() -> None:
    with pytest.raises(ValueError, match="No API key"):
        OpenAIProvider("gpt-4o-mini")


def test_local_server_needs_no_key(serve: Serve) -> None:
    server = serve(lambda request: json_reply({"relevance_score": 0}))
    provider = OpenAIProvider("local", base_url=server.base_url + "/")
    reply = provider.judge("q", Grade)
    assert reply.ok
    assert provider.model_id == f"{server.base_url}:local"


def test_model_id_drops_credentials_from_the_url() -> None:
    provider = OpenAIProvider("m", base_url="http://localhost:8000/v1?token=abc", api_key="k")
    assert provider.model_id == "http://localhost:8000/v1:m"
    # user:password in the address is refused outright (issue 19.10), without echoing it
    with pytest.raises(ValueError, match="OPENAI_API_KEY") as refused:
        OpenAIProvider("m", base_url="http://user:pw@localhost:8000/v1", api_key="k")
    assert "pw" not in str(refused.value)


@pytest.mark.parametrize(
    "options",
    [{"response_format": "xml"}, {"max_concurrency": 0}, {"max_retries": -1}, {"timeout": 0}],
)
def test_invalid_settings_are_refused(options: dict) -> None:
    with pytest.raises(ValueError):
        OpenAIProvider("m", base_url="http://localhost:1/v1", **options)


def test_parse_json_content_reports_why_it_failed() -> None:
    assert parse_json_content(' {"a": 1} ') == {"a": 1}
    assert parse_json_content('```\n{"a": 2}\n```') == {"a": 2}
    with pytest.raises(ValueError, match="invalid JSON: Expecting value"):
        parse_json_content("I think it is relevant.")


def test_importing_the_provider_does_not_import_openai() -> None:
    code = "import sys, tempo_eval.llm.provider; print('openai' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_repr_hides_credentials_embedded_in_the_base_url():
    from tempo_eval.llm.provider import OpenAIProvider

    provider = OpenAIProvider(model="m", base_url="https://proxy.example/v1?api-key=SECRETKEY123")
    text = repr(provider)
    assert "SECRETKEY123" not in text
    assert "proxy.example/v1" in text
    # a user name and password are refused, and the refusal does not repeat them (issue 19.10)
    with pytest.raises(ValueError) as refused:
        OpenAIProvider(model="m", base_url="https://user:s3cretpass@proxy.example/v1")
    assert "s3cretpass" not in str(refused.value) and "proxy.example/v1" in str(refused.value)
