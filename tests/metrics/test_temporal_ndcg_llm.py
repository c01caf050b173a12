"""TemporalNDCG in LLM mode: the real OpenAIProvider against a scripted chat-completions server."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import Callable

import pytest

from tempo_eval.llm.provider import OpenAIProvider
from tempo_eval.llm.reply_schemas import RelevanceGrade
from tempo_eval.metrics.temporal_ndcg import LLM_PROMPT, TemporalNDCG
from tests.support.openai_server import Reply, ScriptedOpenAIServer, json_reply, last_user_message

D3 = 0.6309297535714575  # 1 / log2(3)
D4 = 0.5  # 1 / log2(4)
QUERY = "When did the Berlin Wall fall?"
DOCS = [
    "The Berlin Wall was built in 1961.",
    "The Berlin Wall fell on 9 November 1989.",
    "Berlin is the capital of Germany.",
]


def _document_of(request: dict) -> str:
    prompt = last_user_message(request)
    return prompt.split("## Document\n", 1)[1].split("\n\n## Grading Scale", 1)[0]


def _grading(grades: dict[str, object], **reply_kwargs) -> Callable[[dict], Reply]:
    """A judge that answers each document with its scripted relevance_score."""

    def respond(request: dict) -> Reply:
        document = _document_of(request)
        return json_reply({"relevance_score": grades[document], "reasoning": f"about: {document[:12]}"}, **reply_kwargs)

    return respond


def _provider(server: ScriptedOpenAIServer, **kwargs) -> OpenAIProvider:
    settings = {"max_retries": 1, "backoff_initial": 0.0, "backoff_max": 0.0} | kwargs
    return OpenAIProvider("judge-model", base_url=server.base_url, api_key="test", **settings)


def test_llm_grades_give_ndcg_from_our_formula():
    grades = {DOCS[0]: 1, DOCS[1]: 4, DOCS[2]: 0}
    with ScriptedOpenAIServer(_grading(grades)) as server:
        metric = TemporalNDCG(use_llm=True)
        metric.llm = _provider(server)  # the seed sets the judge after construction
        result = metric.measure(query=QUERY, retrieved_docs=DOCS, k=3)
    # grades [1, 4, 0]: DCG@3 = 1 + 4*D3 = 3.5237190; IDCG@3 = 4 + 1*D3 = 4.6309298
    assert result.score == pytest.approx((1 + 4 * D3) / (4 + D3))
    details = result.details
    assert details["mode"] == "llm"
    assert details["curve"] == pytest.approx([1 / 4, (1 + 4 * D3) / (4 + D3), (1 + 4 * D3) / (4 + D3)])
    assert [r["grade"] for r in details["ranks"]] == [1, 4, 0]
    assert details["ranks"][1]["reasoning"] == "about: The Berlin W"
    assert details["ranks"][1]["discounted_gain"] == pytest.approx(4 * D3)
    assert details["judge"].endswith(":judge-model")
    assert len(server.requests) == 3


def test_prompt_is_the_seed_prompt_with_query_and_document():
    with ScriptedOpenAIServer(_grading(dict.fromkeys(DOCS[:1], 2))) as server:
        TemporalNDCG(use_llm=True, llm=_provider(server)).compute(query=QUERY, retrieved_docs=DOCS[:1], k=1)
    prompt = last_user_message(server.requests[0])
    assert prompt == LLM_PROMPT.format(query=QUERY, document=DOCS[0])
    assert prompt.startswith("## Task\nRate the temporal relevance of this document to the query on a scale of 0-4.")
    assert "- 1: Marginally Relevant - Mentions related time periods but doesn't directly answer\n" in prompt
    assert prompt.rstrip().endswith('{\n    "relevance_score": 0 to 4,\n    "reasoning": "brief explanation of temporal relevance"\n}')


def test_auto_mode_uses_the_judge_when_one_is_set_and_accepts_contexts():
    grades = {DOCS[0]: 0, DOCS[1]: 3}
    with ScriptedOpenAIServer(_grading(grades)) as server:
        result = TemporalNDCG(k=2, llm=_provider(server)).measure(query=QUERY, contexts=DOCS[:2])
    # grades [0, 3]: DCG@2 = 3*D3; IDCG@2 = 3
    assert result.details["mode"] == "llm"
    assert result.score == pytest.approx(D3)


def test_ideal_uses_every_graded_document_not_only_the_top_k():
    grades = {DOCS[0]: 0, DOCS[1]: 0, DOCS[2]: 4}
    with ScriptedOpenAIServer(_grading(grades)) as server:
        result = TemporalNDCG(use_llm=True, llm=_provider(server)).measure(query=QUERY, retrieved_docs=DOCS, k=2)
    # the only relevant document is at rank 3: NDCG@2 = 0, although two documents were shown
    assert result.score == 0.0
    assert len(server.requests) == 3
    assert [d["grade"] for d in result.details["documents"]] == [0, 0, 4]


def test_no_document_graded_relevant_scores_zero_with_a_reason():
    with ScriptedOpenAIServer(_grading(dict.fromkeys(DOCS, 0))) as server:
        result = TemporalNDCG(use_llm=True, llm=_provider(server)).measure(query=QUERY, retrieved_docs=DOCS)
    assert result.score == 0.0
    assert "none of the 3 documents" in result.reason


@pytest.mark.parametrize(
    ("bad_grade", "expected_in_error"),
    [(7, "less than or equal to 4"), (2.5, "valid integer"), ("3", "valid integer"), (True, "valid integer")],
)
def test_invalid_grade_makes_the_query_nan_judge_error(bad_grade, expected_in_error):
    grades = {DOCS[0]: 2, DOCS[1]: bad_grade, DOCS[2]: 1}
    with ScriptedOpenAIServer(_grading(grades)) as server:
        result = TemporalNDCG(use_llm=True, llm=_provider(server)).measure(query=QUERY, retrieved_docs=DOCS)
    assert math.isnan(result.score)
    assert result.reason_code == "judge_error"
    assert result.details["errors"][0]["doc"] == 1
    assert expected_in_error in result.details["errors"][0]["error"]
    assert "document 1" in result.reason
    # the grades that did arrive are kept for the drill-down
    assert [d["grade"] for d in result.details["documents"]] == [2, None, 1]


def test_malformed_json_makes_the_query_nan_judge_error():
    def respond(request: dict) -> Reply:
        if _document_of(request) == DOCS[2]:
            return Reply(content='{"relevance_score": 3, "reasoning": ')
        return json_reply({"relevance_score": 3, "reasoning": "ok"})

    with ScriptedOpenAIServer(respond) as server:
        result = TemporalNDCG(use_llm=True, llm=_provider(server)).measure(query=QUERY, retrieved_docs=DOCS)
    assert math.isnan(result.score)
    assert result.reason_code == "judge_error"
    assert result.details["errors"] == [{"doc": 2, "error": result.details["errors"][0]["error"]}]
    assert "invalid JSON" in result.details["errors"][0]["error"]


def test_http_500_after_retries_makes_the_query_nan_judge_error():
    def respond(request: dict) -> Reply:
        if _document_of(request) == DOCS[0]:
            return Reply(status=500)
        return json_reply({"relevance_score": 1, "reasoning": "ok"})

    with ScriptedOpenAIServer(respond) as server:
        result = TemporalNDCG(use_llm=True, llm=_provider(server)).measure(query=QUERY, retrieved_docs=DOCS)
    assert math.isnan(result.score)
    assert result.reason_code == "judge_error"
    assert "HTTP 500" in result.details["errors"][0]["error"]
    assert result.details["errors"][0]["doc"] == 0


def test_documents_are_graded_concurrently():
    in_flight = 0
    most = 0
    lock = threading.Lock()

    def respond(request: dict) -> Reply:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        time.sleep(0.3)  # hold the request open so that concurrent ones overlap
        with lock:
            in_flight -= 1
        return json_reply({"relevance_score": 2, "reasoning": "ok"})

    with ScriptedOpenAIServer(respond) as server:
        score = TemporalNDCG(use_llm=True, llm=_provider(server, max_concurrency=4)).compute(
            query=QUERY, retrieved_docs=DOCS * 2
        )
    assert score == 1.0
    assert 1 < most <= 4


def test_acompute_as_in_the_seed():
    grades = {DOCS[0]: 4, DOCS[1]: 2}
    with ScriptedOpenAIServer(_grading(grades)) as server:
        metric = TemporalNDCG(use_llm=True)
        metric.llm = _provider(server)
        score = asyncio.run(metric.acompute(query=QUERY, retrieved_docs=DOCS[:2], k=5))
    assert score == 1.0


def test_relevance_grade_schema_is_a_strict_integer_0_to_4():
    assert RelevanceGrade.model_validate({"relevance_score": 4}).reasoning == ""
    schema = RelevanceGrade.model_json_schema()
    assert schema["properties"]["relevance_score"] == {
        "maximum": 4, "minimum": 0, "title": "Relevance Score", "type": "integer"
    }
    for bad in (5, -1, 3.0, "2", None):
        with pytest.raises(ValueError):
            RelevanceGrade.model_validate(json.loads(json.dumps({"relevance_score": bad})))


def test_judge_without_ajudge_is_a_type_error():
    with pytest.raises(TypeError, match="ajudge"):
        TemporalNDCG(use_llm=True, llm=object()).compute(query=QUERY, retrieved_docs=DOCS)
