"""A judge inventing thousands of claims (issue 19.11): the decomposition is capped by a limit that grows
with the answer's length; past it the row is not measurable, never a perfect score."""

from __future__ import annotations

import math

import pytest

from tempo_eval.core.decompose import MAX_CLAIMS_PER_ANSWER, TOO_MANY_CLAIMS, claim_limit
from tempo_eval.llm.provider import OpenAIProvider
from tests.support.openai_server import ScriptedOpenAIServer, json_reply

KEY = "sk-hostile-test-0000000000"


def _provider(base_url: str, **options: object) -> OpenAIProvider:
    settings: dict = {"api_key": KEY, "max_retries": 0}
    settings.update(options)
    return OpenAIProvider("judge", base_url=base_url, **settings)


# -- 11: invented claims and huge replies ----------------------------------------------------


def _invented_claims(count: int) -> dict:
    return {"claims": [{"claim": f"E{i} in {1900 + i % 100}.", "verdict": "SUPPORTED"} for i in range(count)]}


@pytest.mark.parametrize("count, options", [(1_000, {}), (2_500, {"max_reply_chars": 1_000_000})])
def test_a_judge_inventing_thousands_of_claims_gets_nan_not_a_perfect_score(count: int, options: dict) -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    with ScriptedOpenAIServer(lambda request: json_reply(_invented_claims(count))) as server:
        metric = TemporalFaithfulness(mode="llm", llm=_provider(server.base_url, **options))
        result = metric.measure(answer="The wall fell in 1989. It was built in 1961.",
                                contexts=["The wall fell in 1989."])
    assert math.isnan(result.score) and result.reason_code == TOO_MANY_CLAIMS
    assert f"{count:,} claims" in result.reason and f"at most {MAX_CLAIMS_PER_ANSWER}" in result.reason


def test_claims_up_to_the_limit_are_scored() -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    answer = "The wall fell in 1989."
    with ScriptedOpenAIServer(lambda request: json_reply(_invented_claims(claim_limit(answer)))) as server:
        result = TemporalFaithfulness(mode="llm", llm=_provider(server.base_url)).measure(
            answer=answer, contexts=["The wall fell in 1989."]
        )
    assert result.score == 1.0 and result.reason_code is None


def test_the_limit_grows_with_a_long_answer() -> None:
    long_answer = " ".join(f"Event {i} happened in {1900 + i}." for i in range(40))
    assert claim_limit("One sentence.") == MAX_CLAIMS_PER_ANSWER
    assert claim_limit(long_answer) == 160


def test_an_llm_decomposition_with_thousands_of_claims_is_refused() -> None:
    from tempo_eval.metrics.factual_correctness import FactualCorrectness

    invented = {"claims": [f"Fact number {i} is true." for i in range(2_500)]}
    with ScriptedOpenAIServer(lambda request: json_reply(invented)) as server:
        metric = FactualCorrectness(decompose="llm", llm=_provider(server.base_url))
        result = metric.measure(answer="Paris is in France.", reference="Paris is in France.")
    assert math.isnan(result.score) and result.reason_code == TOO_MANY_CLAIMS
    assert "2,500 claims" in result.reason

