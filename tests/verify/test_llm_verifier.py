"""LLMVerifier with the real OpenAIProvider against a scripted judge on 127.0.0.1.

`judge_reply` answers the verifier's and the decomposer's prompts the way a careful judge would on
simple fact sentences; the metric tests import it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tempo_eval.common.run_sync import run_sync
from tempo_eval.core.decompose import DecompositionError, adecompose_claims
from tempo_eval.llm.provider import OpenAIProvider
from tempo_eval.verify.base import Verdict, Verifier
from tempo_eval.verify.llm import VERIFY_SYSTEM, LLMVerifier
from tests.support.openai_server import (
    Reply,
    Responder,
    ScriptedOpenAIServer,
    json_reply,
    last_user_message,
)


def decompose_claims(text: str, provider: OpenAIProvider) -> list[str]:
    """Sync `adecompose_claims` (what the product's sync wrapper did before it went unused)."""
    return run_sync(adecompose_claims(text, provider))


REFERENCE = "Paris is the capital of France. The Eiffel Tower was completed in 1889."
BAD_ANSWER = "Paris is the capital of France. The Eiffel Tower was built in 1500."

# ---- a scripted judge -------------------------------------------------------------------------

_STOP = frozenset({"the", "a", "an", "of", "in", "on", "at", "is", "was", "were", "are", "by", "to", "and", "it", "its"})


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]+|\d+", text.lower()))


def _years(text: str) -> set[str]:
    return set(re.findall(r"\b(?:1\d{3}|20\d{2})\b", text))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def judge_claim(claim: str, premise_sentences: list[str]) -> dict[str, str]:
    """Same words -> SUPPORTED; same subject words but a different year -> CONTRADICTED; else NEUTRAL."""
    for premise in premise_sentences:
        if _words(premise) == _words(claim):
            return {"verdict": "SUPPORTED", "evidence": premise, "reason": "The premise states it."}
    for premise in premise_sentences:
        shared = (_words(claim) & _words(premise)) - _STOP
        claim_years, premise_years = _years(claim), _years(premise)
        if len(shared) >= 2 and claim_years and premise_years and not claim_years & premise_years:
            return {"verdict": "CONTRADICTED", "evidence": premise, "reason": "The premise gives another year."}
    return {"verdict": "NEUTRAL", "evidence": "", "reason": "The premises do not address it."}


def _section(prompt: str, header: str) -> str:
    match = re.search(rf"## {header}\n(.*?)\n\n## ", prompt, re.S)
    assert match, f"no {header!r} section in {prompt[:300]!r}"
    return match.group(1)


def premise_sentences(prompt: str) -> list[str]:
    lines = _section(prompt, "Premises").splitlines()
    return [s for line in lines for s in sentences(re.sub(r"^\[\d+\]\s*", "", line))]


def judge_reply(request: dict[str, Any]) -> Reply:
    """Answer a verification (single or batched) or a decomposition prompt."""
    prompt = last_user_message(request)
    if "## Claims\n" in prompt:
        premises = premise_sentences(prompt)
        numbered = re.findall(r"^(\d+)\. (.*)$", _section(prompt, "Claims"), re.M)
        return json_reply(
            {"verdicts": [{"claim_number": int(n), **judge_claim(c, premises)} for n, c in numbered]}
        )
    if "## Claim\n" in prompt:
        return json_reply(judge_claim(_section(prompt, "Claim").strip(), premise_sentences(prompt)))
    if "## Text\n" in prompt:
        return json_reply({"claims": sentences(_section(prompt, "Text"))})
    raise AssertionError(f"unexpected prompt {prompt[:200]!r}")


@contextlib.contextmanager
def judge_servers() -> Iterator[Callable[..., ScriptedOpenAIServer]]:
    """start(responder=judge_reply) -> a running server (127.0.0.1); all are stopped at the end."""
    servers: list[ScriptedOpenAIServer] = []

    def start(responder: Responder = judge_reply) -> ScriptedOpenAIServer:
        server = ScriptedOpenAIServer(responder).__enter__()
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.__exit__(None, None, None)


@pytest.fixture
def judge_server() -> Iterator[Callable[..., ScriptedOpenAIServer]]:
    with judge_servers() as start:
        yield start


def provider_for(server: ScriptedOpenAIServer, **options: Any) -> OpenAIProvider:
    settings: dict[str, Any] = {"api_key": "test", "max_retries": 1, "backoff_initial": 0.0, "backoff_max": 0.0}
    return OpenAIProvider("judge", base_url=server.base_url, **{**settings, **options})


# ---- per-claim calls --------------------------------------------------------------------------

def test_each_claim_gets_the_judges_verdict_evidence_and_reason(judge_server) -> None:
    server = judge_server()
    verifier = LLMVerifier(provider_for(server))

    verdicts = verifier.verify(sentences(BAD_ANSWER), [REFERENCE])

    assert [v.verdict for v in verdicts] == [Verdict.SUPPORTED, Verdict.CONTRADICTED]
    assert verdicts[1].claim == "The Eiffel Tower was built in 1500."
    assert verdicts[1].evidence == "The Eiffel Tower was completed in 1889."
    assert verdicts[1].reason == "The premise gives another year."
    assert verdicts[0].error is None and verdicts[1].error is None


def test_one_call_per_claim_with_the_premises_numbered_and_the_system_prompt(judge_server) -> None:
    server = judge_server()
    LLMVerifier(provider_for(server)).verify(["A claim.", "Another claim.", "A third."], ["First.", "Second."])

    assert len(server.requests) == 3
    prompts = sorted(last_user_message(r) for r in server.requests)
    assert all("[1] First.\n[2] Second." in p for p in prompts)
    assert {_section(p, "Claim").strip() for p in prompts} == {"A claim.", "Another claim.", "A third."}
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(VERIFY_SYSTEM)
    assert server.requests[0]["temperature"] == 0


def test_per_claim_calls_are_in_flight_together(judge_server) -> None:
    barrier = threading.Barrier(4, timeout=10)

    def wait_for_all(request: dict[str, Any]) -> Reply:
        try:
            barrier.wait()  # passes only if all four requests are open at once
        except threading.BrokenBarrierError:
            return Reply(status=400)
        return judge_reply(request)

    server = judge_server(wait_for_all)
    verdicts = LLMVerifier(provider_for(server, max_concurrency=4)).verify(
        [f"Claim number {i}." for i in range(4)], [REFERENCE]
    )
    assert [v.verdict for v in verdicts] == [Verdict.NEUTRAL] * 4


def test_a_failed_call_makes_only_that_claim_an_error(judge_server) -> None:
    def fail_on_tower(request: dict[str, Any]) -> Reply:
        if "Tower" in _section(last_user_message(request), "Claim"):
            return Reply(status=400)
        return judge_reply(request)

    server = judge_server(fail_on_tower)
    verdicts = LLMVerifier(provider_for(server)).verify(sentences(BAD_ANSWER), [REFERENCE])

    assert verdicts[0].verdict == Verdict.SUPPORTED
    assert verdicts[1].verdict == Verdict.ERROR
    assert "HTTP 400" in verdicts[1].error


def test_a_verdict_outside_the_schema_is_an_error_not_a_guess(judge_server) -> None:
    server = judge_server(lambda request: json_reply({"verdict": "MAYBE", "evidence": "", "reason": ""}))
    [verdict] = LLMVerifier(provider_for(server)).verify(["X."], ["Y."])
    assert verdict.verdict == Verdict.ERROR
    assert "schema violation" in verdict.error


def test_a_lower_case_verdict_is_accepted_and_blank_evidence_becomes_none(judge_server) -> None:
    server = judge_server(lambda request: json_reply({"verdict": " contradicted ", "evidence": " ", "reason": "r"}))
    [verdict] = LLMVerifier(provider_for(server)).verify(["X."], ["Y."])
    assert verdict.verdict == Verdict.CONTRADICTED
    assert verdict.evidence is None and verdict.reason == "r"


def test_no_premises_gives_neutral_without_asking_and_no_claims_gives_nothing(judge_server) -> None:
    server = judge_server()
    verifier = LLMVerifier(provider_for(server))
    assert verifier.verify([], [REFERENCE]) == []
    verdicts = verifier.verify(["A claim."], ["", "  "])
    assert [v.verdict for v in verdicts] == [Verdict.NEUTRAL]
    assert server.requests == []


# ---- batched calls ----------------------------------------------------------------------------

def test_batches_send_claims_per_call_and_keep_the_claim_order(judge_server) -> None:
    def reversed_order(request: dict[str, Any]) -> Reply:
        body = json.loads(judge_reply(request).content)
        return json_reply({"verdicts": body["verdicts"][::-1]})

    server = judge_server(reversed_order)
    claims = sentences(BAD_ANSWER) + ["Paris is the capital of France."]
    verdicts = LLMVerifier(provider_for(server), claims_per_call=2).verify(claims, [REFERENCE])

    assert len(server.requests) == 2
    assert [v.claim for v in verdicts] == claims
    assert [v.verdict for v in verdicts] == [Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.SUPPORTED]
    assert verdicts[1].evidence == "The Eiffel Tower was completed in 1889."


def test_a_claim_the_batch_answer_leaves_out_or_repeats_is_an_error(judge_server) -> None:
    def sloppy(request: dict[str, Any]) -> Reply:
        first = {"claim_number": 1, "verdict": "SUPPORTED", "evidence": "", "reason": ""}
        third = {"claim_number": 3, "verdict": "NEUTRAL", "evidence": "", "reason": ""}
        return json_reply({"verdicts": [first, third, third]})  # 2 missing, 3 twice

    server = judge_server(sloppy)
    verdicts = LLMVerifier(provider_for(server), claims_per_call=3).verify(["a.", "b.", "c."], ["p."])
    assert [v.verdict for v in verdicts] == [Verdict.SUPPORTED, Verdict.ERROR, Verdict.ERROR]
    assert "no verdict for claim 2" in verdicts[1].error
    assert "2 verdicts for claim 3" in verdicts[2].error


def test_a_failed_batch_call_makes_its_claims_errors_and_leaves_other_batches(judge_server) -> None:
    def fail_first_batch(request: dict[str, Any]) -> Reply:
        if "1. a." in last_user_message(request):
            return Reply(content="not json at all")
        return judge_reply(request)

    server = judge_server(fail_first_batch)
    verdicts = LLMVerifier(provider_for(server), claims_per_call=2).verify(
        ["a.", "b.", "Paris is the capital of France."], [REFERENCE]
    )
    assert [v.verdict for v in verdicts] == [Verdict.ERROR, Verdict.ERROR, Verdict.SUPPORTED]
    assert "invalid JSON" in verdicts[0].error


# ---- identity, settings, sync/async -----------------------------------------------------------

def test_identity_follows_the_provider_and_satisfies_the_protocol(judge_server) -> None:
    provider = provider_for(judge_server())
    verifier = LLMVerifier(provider)
    assert isinstance(verifier, Verifier)
    assert verifier.name == "llm"
    assert verifier.model_id == provider.model_id
    assert verifier.settings != LLMVerifier(provider, claims_per_call=5).settings


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_claims_per_call_must_be_a_positive_integer(judge_server, bad: Any) -> None:
    with pytest.raises(ValueError, match="claims_per_call"):
        LLMVerifier(provider_for(judge_server()), claims_per_call=bad)


def test_claims_must_be_a_list_of_strings(judge_server) -> None:
    verifier = LLMVerifier(provider_for(judge_server()))
    with pytest.raises(TypeError, match="claims"):
        verifier.verify("one claim", [REFERENCE])
    with pytest.raises(TypeError, match=r"premises\[0\]"):
        verifier.verify(["x"], [None])


def test_averify_works_inside_a_running_event_loop(judge_server) -> None:
    verifier = LLMVerifier(provider_for(judge_server()))

    async def inside() -> list[Any]:
        return [await verifier.averify(["Paris is the capital of France."], [REFERENCE]),
                verifier.verify(["Paris is the capital of France."], [REFERENCE])]

    from_async, from_sync = asyncio.run(inside())
    assert from_async == from_sync
    assert from_async[0].verdict == Verdict.SUPPORTED


def test_make_verifier_builds_an_llm_verifier_with_its_settings(judge_server) -> None:
    from tempo_eval.verify import make_verifier

    server = judge_server()
    verifier = make_verifier(
        "llm", model="judge", base_url=server.base_url, api_key="test", cache=False,
        claims_per_call=2, max_concurrency=3,
    )
    assert isinstance(verifier, LLMVerifier)
    assert verifier.claims_per_call == 2 and verifier.provider.max_concurrency == 3


# ---- LLM claim decomposition ------------------------------------------------------------------

def test_decomposition_returns_the_judges_claims_without_blanks_or_repeats(judge_server) -> None:
    server = judge_server(lambda request: json_reply({"claims": ["A.", " ", "B.", "A. "]}))
    assert decompose_claims("Some text.", provider_for(server)) == ["A.", "B."]
    assert "## Text\nSome text." in last_user_message(server.requests[0])


def test_decomposition_of_blank_text_asks_nothing(judge_server) -> None:
    server = judge_server()
    assert asyncio.run(adecompose_claims("  \n", provider_for(server))) == []
    assert server.requests == []


def test_a_failed_decomposition_raises_with_the_judges_error(judge_server) -> None:
    server = judge_server(lambda request: Reply(status=401))
    with pytest.raises(DecompositionError, match="HTTP 401"):
        decompose_claims("Some text.", provider_for(server))


def test_cached_llm_verdicts_are_reused_and_errors_are_asked_again(judge_server) -> None:
    from tempo_eval.verify.cache import CachedVerifier

    failing = {"on": True}

    def flaky(request: dict[str, Any]) -> Reply:
        if failing["on"] and "Tower" in _section(last_user_message(request), "Claim"):
            return Reply(status=400)
        return judge_reply(request)

    server = judge_server(flaky)
    verifier = CachedVerifier(LLMVerifier(provider_for(server)))
    first = verifier.verify(sentences(BAD_ANSWER), [REFERENCE])
    assert [v.verdict for v in first] == [Verdict.SUPPORTED, Verdict.ERROR]
    failing["on"] = False
    server.requests.clear()
    second = verifier.verify(sentences(BAD_ANSWER), [REFERENCE])
    assert [v.verdict for v in second] == [Verdict.SUPPORTED, Verdict.CONTRADICTED]
    assert len(server.requests) == 1  # only the claim that failed is asked again
    assert verifier.name == "llm"


def test_a_change_of_judge_temperature_changes_the_cache_key_settings():
    from tempo_eval.llm.provider import OpenAIProvider
    from tempo_eval.verify.llm import LLMVerifier

    cold = LLMVerifier(OpenAIProvider(model="m", base_url="http://127.0.0.1:9/v1", temperature=0.0))
    warm = LLMVerifier(OpenAIProvider(model="m", base_url="http://127.0.0.1:9/v1", temperature=0.7))
    assert cold.settings != warm.settings
    assert "temperature=0.7" in warm.settings
