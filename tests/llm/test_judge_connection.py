"""The connection to a judge server that misbehaves (issue 19, points 7 and 10): a reply trickled a byte at
a time is cut off at the timeout; credentials in the judge address are refused; the key never follows a
redirect to another origin; a key sent over plain HTTP to another machine is warned about; oversized and
compressed reply bodies are refused."""

from __future__ import annotations

import json
import logging
import time

import pydantic
import pytest

from tempo_eval.llm.provider import OpenAIProvider
from tests.support.openai_server import Reply, ScriptedOpenAIServer, json_reply

KEY = "sk-hostile-test-0000000000"


class Grade(pydantic.BaseModel):
    relevance_score: int


def _provider(base_url: str, **options: object) -> OpenAIProvider:
    settings: dict = {"api_key": KEY, "max_retries": 0}
    settings.update(options)
    return OpenAIProvider("judge", base_url=base_url, **settings)


# -- 7: the timeout bounds the whole request -------------------------------------------------


@pytest.mark.parametrize("trickle_body", [False, True], ids=["headers", "body"])
def test_a_reply_trickled_a_byte_at_a_time_is_cut_off_at_the_timeout(trickle_body: bool) -> None:
    # a byte every 50 ms never trips a per-read timeout of 1 s; the server gives up after 6 s
    import openai  # noqa: F401 - imported before the clock starts: the first import takes ~1 s

    trickled = Reply(content='{"relevance_score": 3}', trickle=0.05, trickle_body=trickle_body, trickle_for=6.0)
    with ScriptedOpenAIServer(lambda request: trickled) as server:
        started = time.monotonic()
        reply = _provider(server.base_url, timeout=1.0).judge("grade", Grade)
        elapsed = time.monotonic() - started
    assert not reply.ok and "timeout (1s)" in (reply.error or "")
    assert elapsed < 4.0, f"the 1 s timeout took {elapsed:.1f}s"


def test_each_retry_gets_its_own_whole_timeout() -> None:
    import openai  # noqa: F401 - imported before the clock starts

    trickled = Reply(content='{"relevance_score": 3}', trickle=0.05, trickle_for=3.0)
    with ScriptedOpenAIServer(lambda request: trickled) as server:
        started = time.monotonic()
        reply = _provider(server.base_url, timeout=0.5, max_retries=1, backoff_initial=0.0).judge("grade", Grade)
        elapsed = time.monotonic() - started
    assert not reply.ok and "timeout (0.5s) after 1 retry" in (reply.error or "")
    assert reply.usage.requests == 2 and elapsed < 2.8


def test_a_slow_but_whole_reply_inside_the_timeout_still_counts() -> None:
    trickled = Reply(content='{"relevance_score": 3}', trickle=0.001, trickle_body=True)
    with ScriptedOpenAIServer(lambda request: trickled) as server:
        reply = _provider(server.base_url, timeout=5.0).judge("grade", Grade)
    assert reply.ok and reply.data.relevance_score == 3  # type: ignore[union-attr]


# -- 10: credentials, redirects, plain http --------------------------------------------------


@pytest.mark.parametrize(
    "address", ["http://user:pw@127.0.0.1:{port}/v1", "http://:pw@127.0.0.1:{port}/v1", "http://user@127.0.0.1:{port}/v1"]
)
def test_credentials_in_the_judge_address_are_refused_before_any_request(address: str) -> None:
    with ScriptedOpenAIServer(lambda request: json_reply({"relevance_score": 1})) as server:
        url = address.format(port=server.base_url.split(":")[2].split("/")[0])
        with pytest.raises(ValueError, match="OPENAI_API_KEY") as refused:
            OpenAIProvider("judge", base_url=url)
        assert server.requests == []
    message = str(refused.value)
    assert "user name or password" in message and "API key field" in message
    assert "pw" not in message.replace("password", "")


def test_credentials_in_openai_base_url_are_refused_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://alice:hunter2@judge.example/v1")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL") as refused:
        OpenAIProvider("judge", api_key=KEY)
    assert "hunter2" not in str(refused.value)


def test_a_redirect_to_another_origin_is_followed_without_the_key(caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedOpenAIServer(lambda request: json_reply({"relevance_score": 2})) as elsewhere:
        target = f"{elsewhere.base_url}/chat/completions"
        redirect = Reply(status=307, raw_body="", headers={"Location": target})
        with ScriptedOpenAIServer(lambda request: redirect) as judge, caplog.at_level(logging.WARNING):
            reply = _provider(judge.base_url).judge("grade", Grade)
        assert judge.request_headers[0].get("authorization") == f"Bearer {KEY}"
        assert len(elsewhere.requests) == 1  # the other port is another origin
        sent = elsewhere.request_headers[0]
    assert "authorization" not in sent
    assert KEY not in json.dumps(sent)
    assert reply.ok  # the other server needs no key here
    assert "another origin" in caplog.text and KEY not in caplog.text


def test_a_redirect_on_the_same_origin_keeps_the_key() -> None:
    with ScriptedOpenAIServer(lambda request: json_reply({"relevance_score": 2})) as judge:
        first = {"done": False}

        def responder(request: dict) -> Reply:
            if not first["done"]:
                first["done"] = True
                return Reply(status=307, raw_body="", headers={"Location": f"{judge.base_url}/chat/completions?moved=1"})
            return json_reply({"relevance_score": 2})

        judge.responder = responder
        reply = _provider(judge.base_url).judge("grade", Grade)
    assert reply.ok and [h.get("authorization") for h in judge.request_headers] == [f"Bearer {KEY}"] * 2


@pytest.mark.parametrize(
    "address, warned",
    [
        ("http://judge.example:8000/v1", True),
        ("http://10.1.2.3/v1", True),
        ("https://judge.example/v1", False),
        ("http://localhost:8000/v1", False),
        ("http://127.0.0.1:8000/v1", False),
        ("http://[::1]:8000/v1", False),
    ],
)
def test_a_key_over_plain_http_to_another_machine_is_warned_about(
    address: str, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        provider = OpenAIProvider("judge", base_url=address, api_key=KEY)
    if warned:
        assert provider.warning is not None and "plain http" in provider.warning
        assert "plain http" in caplog.text
    else:
        assert provider.warning is None and "plain http" not in caplog.text
    assert KEY not in caplog.text


def test_no_warning_when_no_key_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OpenAIProvider("judge", base_url="http://judge.example/v1").warning is None


@pytest.mark.parametrize("omit_length", [False, True], ids=["declared", "counted"])
def test_a_reply_body_over_the_byte_cap_is_refused_while_reading(omit_length: bool) -> None:
    body = json.dumps({"choices": [{"message": {"content": "x" * 3_000_000}}]})
    with ScriptedOpenAIServer(lambda request: Reply(raw_body=body, omit_length=omit_length)) as server:
        provider = _provider(server.base_url, max_reply_bytes=1_000_000, max_retries=3)
        reply = provider.judge("grade", Grade)
    assert not reply.ok and "max_reply_bytes" in (reply.error or "") and "1,000,000" in (reply.error or "")
    assert reply.usage.requests == 1  # a reply too large is not asked for again


def test_a_compressed_reply_is_refused() -> None:
    import gzip

    bomb = gzip.compress(b" " * 10_000_000)  # 10 MB of spaces in about 10 KB
    with ScriptedOpenAIServer(lambda request: Reply(raw_body=bomb, headers={"Content-Encoding": "gzip"})) as server:
        reply = _provider(server.base_url).judge("grade", Grade)
    assert not reply.ok and "compressed" in (reply.error or "")
    assert server.request_headers[0].get("accept-encoding") == "identity"
