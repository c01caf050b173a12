"""Temporal Faithfulness in its three modes, the seed's examples, and bad input."""

from __future__ import annotations

import asyncio
import math

import pytest

from tempo_eval.core.extract import extract_aft, extract_dft
from tempo_eval.core.focus import FocusTime
from tempo_eval.metrics.temporal_faithfulness import (
    TemporalFaithfulness,
    claim_faithfulness,
    focus_time_faithfulness,
    nli_temporal_verdict,
)
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tests.support.openai_server import Reply, ScriptedOpenAIServer, json_reply

SEED_ANSWER = "The crisis occurred in 2008 and continued into 2009."
SEED_CONTEXTS = ["In 2008, Lehman Brothers collapsed.", "The 2009 stimulus package helped recovery."]


# ---- pure functions ---------------------------------------------------------------------------

def test_focus_time_formula_counts_answer_years_found_in_any_context():
    assert focus_time_faithfulness({2008, 2009}, [{2008}, {2009}]) == 1.0
    assert focus_time_faithfulness({2007, 2010}, [{2008, 2009}]) == 0.0
    assert focus_time_faithfulness({2007, 2008, 2009}, [{2008}, set()]) == pytest.approx(1 / 3)


def test_focus_time_formula_is_nan_without_answer_years_and_zero_without_contexts():
    assert math.isnan(focus_time_faithfulness(set(), [{2008}]))
    assert focus_time_faithfulness({2008}, []) == 0.0


def test_claim_formula_gives_half_credit_to_partial_support():
    assert claim_faithfulness(1, 1, 4) == pytest.approx(0.375)
    assert claim_faithfulness(2, 0, 2) == 1.0
    assert math.isnan(claim_faithfulness(0, 0, 0))


def test_nli_neutral_becomes_partial_only_when_all_claim_years_are_in_the_contexts():
    assert nli_temporal_verdict(Verdict.NEUTRAL, {2008}, {2008, 2009}) is Verdict.PARTIALLY_SUPPORTED
    assert nli_temporal_verdict(Verdict.NEUTRAL, {2008, 2012}, {2008}) is Verdict.NOT_SUPPORTED
    assert nli_temporal_verdict(Verdict.SUPPORTED, {1999}, set()) is Verdict.SUPPORTED
    assert nli_temporal_verdict(Verdict.CONTRADICTED, {2008}, {2008}) is Verdict.CONTRADICTED


# ---- the seed's examples ----------------------------------------------------------------------

def test_seed_code_example_focus_time_mode_gives_one():
    aft = extract_aft(SEED_ANSWER)
    dfts = [extract_dft(ctx) for ctx in SEED_CONTEXTS]
    metric = TemporalFaithfulness()
    assert metric.compute(aft=aft, dfts=dfts) == 1.0


def test_seed_hallucination_example_gives_zero():
    metric = TemporalFaithfulness()
    score = metric.compute(
        answer="The crisis started in 2007 and ended in 2010.", contexts=SEED_CONTEXTS
    )
    assert score == 0.0


def test_focus_time_details_say_which_years_are_grounded_and_where():
    result = TemporalFaithfulness().measure(
        answer="The bank fell in 2008 and the recovery began in 2011.", contexts=SEED_CONTEXTS
    )
    assert result.score == 0.5
    years = {row["year"]: row for row in result.details["years"]}
    assert years[2008]["grounded"] and years[2008]["contexts"] == [0]
    assert not years[2011]["grounded"]
    assert years[2008]["answer_spans"] == ["2008"]
    assert "2011" in result.reason


def test_plain_year_sets_are_accepted_as_focus_times():
    assert TemporalFaithfulness().compute(aft={2008, 2009}, dfts=[{2008}, {2009}]) == 1.0
    assert TemporalFaithfulness().compute(aft=FocusTime.from_years([2001]), dfts=[{2002}]) == 0.0


def test_answer_without_years_is_nan_with_a_reason_not_zero():
    result = TemporalFaithfulness().measure(answer="It was a long time ago.", contexts=SEED_CONTEXTS)
    assert math.isnan(result.score)
    assert result.reason_code == "no_temporal_claims"


def test_reference_date_resolves_relative_years_and_is_recorded():
    result = TemporalFaithfulness(reference_date="2021-06-01").measure(
        answer="Prices rose last year.", contexts=["Prices rose sharply in 2020."]
    )
    assert result.score == 1.0
    assert result.details["reference_date"] == "2021-06-01"


def test_async_compute_matches_sync():
    metric = TemporalFaithfulness()
    score = asyncio.run(metric.acompute(answer=SEED_ANSWER, contexts=SEED_CONTEXTS))
    assert score == metric.compute(answer=SEED_ANSWER, contexts=SEED_CONTEXTS) == 1.0


# ---- bad input --------------------------------------------------------------------------------

def test_misspelt_argument_raises_type_error_with_a_suggestion():
    with pytest.raises(TypeError, match="contxts.*Did you mean 'contexts'"):
        TemporalFaithfulness().compute(answer=SEED_ANSWER, contxts=SEED_CONTEXTS)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"answer": 2008, "contexts": SEED_CONTEXTS}, TypeError),
        ({"answer": SEED_ANSWER, "contexts": "In 2008, Lehman collapsed."}, TypeError),
        ({"answer": SEED_ANSWER, "contexts": set(SEED_CONTEXTS)}, TypeError),
        ({"answer": SEED_ANSWER, "contexts": [2008]}, TypeError),
        ({"aft": {2008}, "dfts": {2008}}, TypeError),
        ({"aft": "2008", "dfts": [{2008}]}, TypeError),
        ({"answer": SEED_ANSWER}, TypeError),
        ({"answer": SEED_ANSWER, "contexts": SEED_CONTEXTS, "retrieved_docs": SEED_CONTEXTS}, TypeError),
    ],
)
def test_wrong_types_raise_clear_errors(kwargs, error):
    with pytest.raises(error):
        TemporalFaithfulness().compute(**kwargs)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be one of"):
        TemporalFaithfulness(mode="magic")


# ---- LLM mode against a real local HTTP server ------------------------------------------------

def _judge(claims):
    return lambda request: json_reply({"claims": claims})


def _provider(server):
    from tempo_eval.llm.provider import OpenAIProvider

    return OpenAIProvider(model="judge", base_url=server.base_url, api_key="sk-test", backoff_initial=0.01, max_retries=1)


def test_seed_llm_example_scores_from_the_verdicts_not_the_judges_own_score():
    claims = [
        {"claim": "The crisis occurred in 2008", "verdict": "SUPPORTED", "evidence": "In 2008, Lehman Brothers collapsed.", "reason": "stated"},
        {"claim": "continued into 2009", "verdict": "PARTIALLY_SUPPORTED", "evidence": "The 2009 stimulus...", "reason": "year only"},
    ]
    # a judge that also reports its own (wrong) score: we must ignore it
    responder = lambda request: json_reply({"claims": claims, "score": 0.1})  # noqa: E731
    with ScriptedOpenAIServer(responder) as server:
        metric = TemporalFaithfulness()
        metric.llm = _provider(server)
        result = asyncio.run(metric.ameasure(answer=SEED_ANSWER, contexts=["In 2008, Lehman Brothers collapsed.", "The 2009 stimulus..."]))
    assert result.score == pytest.approx(0.75)
    assert result.details["mode"] == "llm"
    assert [c["verdict"] for c in result.details["claims"]] == ["SUPPORTED", "PARTIALLY_SUPPORTED"]
    assert result.details["claims"][0]["evidence"] == "In 2008, Lehman Brothers collapsed."


def test_llm_mode_with_no_claims_is_nan():
    with ScriptedOpenAIServer(_judge([])) as server:
        metric = TemporalFaithfulness(llm=_provider(server))
        result = metric.measure(answer="Hello.", contexts=SEED_CONTEXTS)
    assert math.isnan(result.score) and result.reason_code == "no_temporal_claims"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=500),
        Reply(content="this is not json"),
        Reply(content='{"claims": [{"claim": "x", "verdict": "MAYBE"}]}'),
    ],
    ids=["server-error", "malformed-json", "unknown-label"],
)
def test_llm_mode_failures_end_as_nan_with_judge_error(reply):
    with ScriptedOpenAIServer(lambda request: reply) as server:
        metric = TemporalFaithfulness(llm=_provider(server))
        result = metric.measure(answer=SEED_ANSWER, contexts=SEED_CONTEXTS)
    assert math.isnan(result.score)
    assert result.reason_code == "judge_error"
    assert result.reason


# ---- NLI mode with a scripted verifier (the real ones are tested in their own files) ----------

class ScriptedVerifier:
    name = "scripted"
    model_id = "scripted-v1"

    def __init__(self, verdicts):
        self.verdicts = verdicts
        self.calls = []

    def verify(self, claims, premises):
        self.calls.append((list(claims), list(premises)))
        return [ClaimVerdict(c, self.verdicts[i], evidence=premises[0]) for i, c in enumerate(claims)]

    async def averify(self, claims, premises):
        return self.verify(claims, premises)


def test_nli_mode_checks_only_sentences_with_a_focus_time_and_maps_neutral_by_years():
    verifier = ScriptedVerifier([Verdict.SUPPORTED, Verdict.NEUTRAL, Verdict.NEUTRAL])
    answer = "Lehman Brothers collapsed in 2008. It was a bank. Stimulus came in 2009. Recovery ended in 2015."
    result = TemporalFaithfulness(verifier=verifier).measure(answer=answer, contexts=SEED_CONTEXTS)
    claims_checked = verifier.calls[0][0]
    assert claims_checked == ["Lehman Brothers collapsed in 2008.", "Stimulus came in 2009.", "Recovery ended in 2015."]
    verdicts = [c["verdict"] for c in result.details["claims"]]
    assert verdicts == ["SUPPORTED", "PARTIALLY_SUPPORTED", "NOT_SUPPORTED"]
    assert result.score == pytest.approx((1 + 0.5) / 3)
    assert result.details["verifier"] == "scripted:scripted-v1"


def test_nli_mode_verifier_error_is_nan_not_a_number():
    verifier = ScriptedVerifier([Verdict.ERROR])
    result = TemporalFaithfulness(verifier=verifier).measure(answer="It fell in 2008.", contexts=SEED_CONTEXTS)
    assert math.isnan(result.score) and result.reason_code == "verifier_error"


def test_llm_mode_without_a_judge_says_so():
    with pytest.raises(ValueError, match="needs a judge"):
        TemporalFaithfulness(mode="llm").compute(answer=SEED_ANSWER, contexts=SEED_CONTEXTS)


def test_llm_mode_tells_the_judge_the_reference_date():
    claims = [{"claim": "Prices rose last year", "verdict": "SUPPORTED"}]
    with ScriptedOpenAIServer(_judge(claims)) as server:
        metric = TemporalFaithfulness(llm=_provider(server), reference_date="2021-06-01")
        result = metric.measure(answer="Prices rose last year.", contexts=["Prices rose in 2020."])
        prompt = server.requests[0]["messages"][-1]["content"]
    assert "as of 2021-06-01" in prompt
    assert result.details["reference_date"] == "2021-06-01"


def test_default_verifier_is_not_stored_on_the_public_settings():
    metric = TemporalFaithfulness(mode="nli")
    assert metric.verifier is None
    assert "verifier=None" in repr(metric)
