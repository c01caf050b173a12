"""Factual Correctness: the formula, the NaN rules, the seed's example with every verifier."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tempo_eval.metrics.base import METRICS
from tempo_eval.metrics.factual_correctness import (
    PROMPTS,
    FactualCorrectness,
    fbeta_score,
    precision_recall_fbeta,
)
from tempo_eval.verify.base import Verdict
from tempo_eval.verify.llm import LLMVerifier
from tests.support.openai_server import Reply, ScriptedOpenAIServer, last_user_message
from tests.support.verifiers import DroppingVerifier, TableVerifier
from tests.verify.test_llm_verifier import (
    BAD_ANSWER,
    REFERENCE,
    judge_reply,
    judge_servers,
    provider_for,
)

GOOD_ANSWER = "The capital of France is Paris. The Eiffel Tower was completed in 1889."
BAD_CLAIM = "The Eiffel Tower was built in 1500."


@pytest.fixture
def judge_server() -> Iterator[Callable[..., ScriptedOpenAIServer]]:
    with judge_servers() as start:
        yield start


# ---- the math ----------------------------------------------------------------------------------

def test_f1_is_the_harmonic_mean() -> None:
    assert fbeta_score(0.5, 0.5) == 0.5
    assert fbeta_score(1.0, 0.5) == pytest.approx(2 / 3)


def test_beta_weights_recall() -> None:
    # F2 = 5PR / (4P + R)
    assert fbeta_score(1.0, 0.5, beta=2.0) == pytest.approx(5 * 0.5 / (4 + 0.5))
    assert fbeta_score(0.5, 1.0, beta=0.5) == pytest.approx(1.25 * 0.5 / (0.25 * 0.5 + 1.0))


def test_fbeta_is_zero_when_both_sides_are_zero_and_nan_when_either_is_nan() -> None:
    assert fbeta_score(0.0, 0.0) == 0.0
    assert fbeta_score(0.0, 1.0) == 0.0
    assert math.isnan(fbeta_score(math.nan, 1.0))
    assert math.isnan(fbeta_score(0.0, math.nan))


def test_precision_and_recall_come_from_their_own_sides_only() -> None:
    assert precision_recall_fbeta(1, 2, 3, 4) == (0.5, 0.75, pytest.approx(0.6))
    precision, recall, f1 = precision_recall_fbeta(0, 0, 1, 2)
    assert math.isnan(precision) and recall == 0.5 and math.isnan(f1)
    precision, recall, f1 = precision_recall_fbeta(1, 2, 0, 0)
    assert precision == 0.5 and math.isnan(recall) and math.isnan(f1)


# ---- the seed's example ------------------------------------------------------------------------

def test_seed_example_with_the_judge(judge_server) -> None:
    metric = FactualCorrectness(verifier=LLMVerifier(provider_for(judge_server())))
    result = metric.measure(answer=BAD_ANSWER, reference=REFERENCE)

    assert result.score == 0.5
    assert (result.details["precision"], result.details["recall"], result.details["fbeta"]) == (0.5, 0.5, 0.5)
    bad = next(c for c in result.details["claims"] if c["claim"] == BAD_CLAIM)
    assert bad["side"] == "response" and bad["verdict"] == "CONTRADICTED"
    assert bad["evidence"] == "The Eiffel Tower was completed in 1889."
    assert BAD_CLAIM in result.reason


def test_seed_good_response_with_the_judge(judge_server) -> None:
    metric = FactualCorrectness(verifier=LLMVerifier(provider_for(judge_server())))
    assert metric.compute(answer=GOOD_ANSWER, reference=REFERENCE) == 1.0


def test_seed_example_offline_with_the_default_lexical_verifier() -> None:
    metric = FactualCorrectness()
    result = metric.measure(answer=BAD_ANSWER, reference=REFERENCE)

    assert result.score == 0.5
    assert result.details["verifier"].startswith("lexical:")
    by_side = {(c["side"], c["claim"]): c["verdict"] for c in result.details["claims"]}
    assert by_side[("response", BAD_CLAIM)] == "CONTRADICTED"
    assert by_side[("response", "Paris is the capital of France.")] == "SUPPORTED"
    assert metric.compute(answer=GOOD_ANSWER, reference=REFERENCE) == 1.0


def test_details_hold_every_claim_with_its_side_verdict_and_counts() -> None:
    verifier = TableVerifier({"Paris is the capital of France.": Verdict.SUPPORTED, BAD_CLAIM: Verdict.CONTRADICTED})
    result = FactualCorrectness(verifier=verifier).measure(answer=BAD_ANSWER, reference=REFERENCE)

    assert [(c["side"], c["claim"], c["verdict"]) for c in result.details["claims"]] == [
        ("response", "Paris is the capital of France.", "SUPPORTED"),
        ("response", BAD_CLAIM, "CONTRADICTED"),
        ("reference", "Paris is the capital of France.", "SUPPORTED"),
        ("reference", "The Eiffel Tower was completed in 1889.", "NEUTRAL"),
    ]
    assert set(result.details["claims"][0]) >= {"claim", "side", "verdict", "evidence", "probabilities", "reason"}
    assert result.details["counts"] == {
        "response_claims": 2, "response_supported": 1, "response_contradicted": 1,
        "reference_claims": 2, "reference_supported": 1, "reference_contradicted": 0,
    }
    # answer claims are checked against the reference, reference claims against the answer
    assert sorted(verifier.calls) == sorted([
        (["Paris is the capital of France.", BAD_CLAIM], [REFERENCE]),
        (["Paris is the capital of France.", "The Eiffel Tower was completed in 1889."], [BAD_ANSWER]),
    ])


def test_neutral_claims_are_not_supported() -> None:
    verifier = TableVerifier({"A is true.": Verdict.SUPPORTED})  # everything else NEUTRAL
    result = FactualCorrectness(verifier=verifier).measure(answer="A is true. B is true.", reference="A is true.")
    assert result.details["precision"] == 0.5 and result.details["recall"] == 1.0
    assert result.score == pytest.approx(2 / 3)


# ---- modes --------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["precision", "PRECISION", "Precision"])
def test_precision_mode_verifies_only_the_answer_claims(mode: str) -> None:
    verifier = TableVerifier({"A is true.": Verdict.SUPPORTED})
    result = FactualCorrectness(mode=mode, verifier=verifier).measure(
        answer="A is true. B is true.", reference="C is true."
    )
    assert result.score == 0.5
    assert result.details["mode"] == "precision"
    assert result.details["recall"] is None and result.details["fbeta"] is None
    assert verifier.calls == [(["A is true.", "B is true."], ["C is true."])]


@pytest.mark.parametrize("mode", ["recall", "RECALL"])
def test_recall_mode_verifies_only_the_reference_claims(mode: str) -> None:
    verifier = TableVerifier({"C is true.": Verdict.SUPPORTED})
    result = FactualCorrectness(mode=mode, verifier=verifier).measure(
        answer="A is true.", reference="C is true. D is true. E is true. F is true."
    )
    assert result.score == 0.25
    assert result.details["precision"] is None
    assert verifier.calls == [(["C is true.", "D is true.", "E is true.", "F is true."], ["A is true."])]


def test_f1_mode_accepts_upper_case_and_uses_beta() -> None:
    verifier = TableVerifier({"A is true.": Verdict.SUPPORTED})
    result = FactualCorrectness(mode="F1", beta=2.0, verifier=verifier).measure(
        answer="A is true.", reference="A is true. B is true."
    )
    assert result.score == pytest.approx(fbeta_score(1.0, 0.5, beta=2.0))
    assert "F2" in result.reason


@pytest.mark.parametrize("mode", ["f2", "accuracy", "", None])
def test_an_unknown_mode_is_refused(mode: Any) -> None:
    with pytest.raises(ValueError, match="mode"):
        FactualCorrectness(mode=mode, verifier=TableVerifier())


@pytest.mark.parametrize("beta", [0, -1.0, math.inf, math.nan, True, "1"])
def test_beta_must_be_a_positive_finite_number(beta: Any) -> None:
    with pytest.raises(ValueError, match="beta"):
        FactualCorrectness(beta=beta, verifier=TableVerifier())


# ---- NaN rules ----------------------------------------------------------------------------------

def test_an_answer_without_claims_has_no_precision_so_f1_is_nan() -> None:
    result = FactualCorrectness(verifier=TableVerifier()).measure(answer="", reference=REFERENCE)
    assert math.isnan(result.score)
    assert result.reason_code == "no_response_claims"
    assert math.isnan(result.details["precision"]) and result.details["recall"] == 0.0


def test_a_reference_without_claims_makes_recall_nan() -> None:
    result = FactualCorrectness(mode="recall", verifier=TableVerifier()).measure(answer=BAD_ANSWER, reference="  ")
    assert math.isnan(result.score) and result.reason_code == "no_reference_claims"


def test_both_sides_empty_is_no_claims() -> None:
    result = FactualCorrectness(verifier=TableVerifier()).measure(answer="", reference="")
    assert math.isnan(result.score) and result.reason_code == "no_claims"


def test_an_empty_reference_gives_precision_zero_not_nan() -> None:
    # the answer's claims exist and none is supported: that is a measured 0, not "not measurable"
    result = FactualCorrectness(mode="precision", verifier=TableVerifier()).measure(answer=BAD_ANSWER, reference="")
    assert result.score == 0.0


def test_all_claims_contradicted_gives_zero() -> None:
    verifier = TableVerifier({"A is true.": Verdict.CONTRADICTED, "B is true.": Verdict.CONTRADICTED})
    assert FactualCorrectness(verifier=verifier).compute(answer="A is true.", reference="B is true.") == 0.0


def test_a_verifier_error_makes_the_score_nan_with_verifier_error() -> None:
    verifier = TableVerifier({"A is true.": Verdict.SUPPORTED, "B is true.": Verdict.ERROR})
    result = FactualCorrectness(verifier=verifier).measure(answer="A is true. B is true.", reference="A is true.")
    assert math.isnan(result.score)
    assert result.reason_code == "verifier_error"
    assert "scripted failure" in result.reason
    assert [c["verdict"] for c in result.details["claims"]].count("ERROR") == 1


def test_a_verifier_that_drops_a_verdict_is_refused_not_scored() -> None:
    metric = FactualCorrectness(mode="precision", verifier=DroppingVerifier())
    with pytest.raises(RuntimeError, match="verifier 'table' returned 1 verdicts for 2 claims"):
        metric.measure(answer="A is true. B is true.", reference="C is true.")


def test_a_judge_failure_makes_the_score_nan_with_judge_error(judge_server) -> None:
    def fail_on_tower(request: dict[str, Any]) -> Reply:
        return Reply(status=400) if "Tower was built" in last_user_message(request) else judge_reply(request)

    metric = FactualCorrectness(verifier=LLMVerifier(provider_for(judge_server(fail_on_tower))))
    result = metric.measure(answer=BAD_ANSWER, reference=REFERENCE)
    assert math.isnan(result.score)
    assert result.reason_code == "judge_error"
    assert "HTTP 400" in result.reason
    assert result.details["precision"] is None


def test_an_error_on_a_side_the_mode_does_not_need_cannot_happen_because_it_is_not_verified() -> None:
    verifier = TableVerifier({"A is true.": Verdict.SUPPORTED, "B is true.": Verdict.ERROR})
    result = FactualCorrectness(mode="precision", verifier=verifier).measure(answer="A is true.", reference="B is true.")
    assert result.score == 1.0


# ---- inputs -------------------------------------------------------------------------------------

def test_a_misspelt_input_is_a_type_error_not_a_score() -> None:
    metric = FactualCorrectness(verifier=TableVerifier())
    with pytest.raises(TypeError, match="response"):
        metric.compute(response=BAD_ANSWER, reference=REFERENCE)
    with pytest.raises(TypeError, match="answer must be a string"):
        metric.compute(answer=["x"], reference=REFERENCE)
    with pytest.raises(TypeError, match="reference"):
        metric.compute(answer=BAD_ANSWER)


def test_it_is_registered_and_reads_the_canonical_columns() -> None:
    assert METRICS["factual_correctness"] is FactualCorrectness
    metric = FactualCorrectness(verifier=TableVerifier())
    row = {"query": "q", "answer": "A.", "reference": "B.", "contexts": []}
    assert metric.inputs_from_row(row) == {"answer": "A.", "reference": "B."}


def test_prompts_are_exposed_beside_the_metric() -> None:
    assert "{claim}" in PROMPTS["verify"] and "{text}" in PROMPTS["decompose"]


# ---- LLM decomposition --------------------------------------------------------------------------

def test_llm_decomposition_sends_each_text_to_the_judge(judge_server) -> None:
    server = judge_server()
    verifier = TableVerifier({"Paris is the capital of France.": Verdict.SUPPORTED})
    metric = FactualCorrectness(verifier=verifier, decompose="llm", llm=provider_for(server))
    result = metric.measure(answer=BAD_ANSWER, reference=REFERENCE)

    assert result.score == 0.5
    texts = sorted(last_user_message(r).split("## Text\n")[1].split("\n\n")[0] for r in server.requests)
    assert texts == sorted([BAD_ANSWER, REFERENCE])


def test_a_failed_llm_decomposition_is_nan_with_judge_error(judge_server) -> None:
    server = judge_server(lambda request: Reply(content="{not json"))
    metric = FactualCorrectness(verifier=TableVerifier(), decompose="llm", llm=provider_for(server))
    result = metric.measure(answer=BAD_ANSWER, reference=REFERENCE)
    assert math.isnan(result.score)
    assert result.reason_code == "judge_error"
    assert "decomposition failed" in result.reason


def test_llm_decomposition_needs_a_judge_and_a_judge_needs_llm_decomposition(judge_server) -> None:
    with pytest.raises(ValueError, match="needs llm"):
        FactualCorrectness(decompose="llm", verifier=TableVerifier())
    with pytest.raises(ValueError, match="verifier=LLMVerifier"):
        FactualCorrectness(llm=provider_for(judge_server()), verifier=TableVerifier())
    with pytest.raises(ValueError, match="decompose"):
        FactualCorrectness(decompose="clauses", verifier=TableVerifier())


# ---- the NLI verifier's plumbing (tiny random checkpoint: verdicts are arbitrary) -------------

@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_nli import build_tiny_nli

    return build_tiny_nli(tmp_path_factory.mktemp("tiny_nli"))


def test_nli_verdicts_flow_into_counts_and_the_score(tiny_nli: Path) -> None:
    from tempo_eval.verify.nli import NLIVerifier

    metric = FactualCorrectness(verifier=NLIVerifier(model=str(tiny_nli), candidates="exhaustive"))
    result = metric.measure(answer=BAD_ANSWER, reference=REFERENCE)

    claims = result.details["claims"]
    assert [c["side"] for c in claims] == ["response", "response", "reference", "reference"]
    assert {c["verdict"] for c in claims} <= {"SUPPORTED", "NEUTRAL", "CONTRADICTED"}
    for claim in claims:
        assert set(claim["probabilities"]) == {"entailment", "neutral", "contradiction"}
        assert claim["evidence"] in ("Paris is the capital of France.", "The Eiffel Tower was completed in 1889.",
                                     "The Eiffel Tower was built in 1500.")
    supported = {side: sum(c["verdict"] == "SUPPORTED" for c in claims if c["side"] == side)
                 for side in ("response", "reference")}
    assert result.details["counts"]["response_supported"] == supported["response"]
    assert result.details["precision"] == supported["response"] / 2
    assert result.details["recall"] == supported["reference"] / 2
    expected = fbeta_score(supported["response"] / 2, supported["reference"] / 2)
    assert result.score == expected or (math.isnan(result.score) and math.isnan(expected))
    assert result.details["verifier"] == f"nli:{tiny_nli}"
