"""Turn Faithfulness: interactions, sliding windows, window scores, settings, verifiers.

The numbers here are computed by hand from DeepEval's rules; `tests/metrics/test_turn_faithfulness_deepeval.py`
compares with scores recorded from DeepEval itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tempo_eval.core.turn import Turn
from tempo_eval.metrics.base import METRICS
from tempo_eval.metrics.turn_faithfulness import (
    TurnFaithfulness,
    as_turns,
    sliding_windows,
    strict_window_score,
    turn_faithfulness,
    unit_interactions,
    window_faithfulness,
    yes_no_idk,
)
from tempo_eval.verify.base import Verdict
from tempo_eval.verify.llm import LLMVerifier
from tests.support.openai_server import Reply, ScriptedOpenAIServer, last_user_message
from tests.support.verifiers import DroppingVerifier, TableVerifier
from tests.verify.test_llm_verifier import REFERENCE, judge_reply, judge_servers, provider_for


@pytest.fixture
def judge_server() -> Iterator[Callable[..., ScriptedOpenAIServer]]:
    with judge_servers() as start:
        yield start


def user(text: str) -> Turn:
    return Turn("user", text)


def assistant(text: str, *context: str) -> Turn:
    return Turn("assistant", text, list(context))


YES = (Verdict.SUPPORTED, None)
NO = (Verdict.CONTRADICTED, None)


# ---- interactions and windows (pure) -----------------------------------------------------------

@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        ("UA", [[0, 1]]),
        ("UAUA", [[0, 1], [2, 3]]),
        ("UUAA", [[0, 1, 2, 3]]),  # consecutive users and the assistant turns answering them
        ("AUA", [[0, 1, 2]]),  # an assistant turn before any user joins the first interaction
        ("UAU", [[0, 1]]),  # a trailing user turn without an answer is dropped
        ("U", []),
        ("AA", []),  # no user at all: no interaction
        ("UUU", []),
        ("UAAUAUUA", [[0, 1, 2], [3, 4], [5, 6, 7]]),
    ],
)
def test_unit_interactions_follow_deepeval(roles: str, expected: list[list[int]]) -> None:
    names = ["user" if r == "U" else "assistant" for r in roles]
    assert unit_interactions(names) == expected


def test_one_sliding_window_per_interaction() -> None:
    assert sliding_windows(4, 2) == [(0, 0), (0, 1), (1, 2), (2, 3)]
    assert sliding_windows(3, 10) == [(0, 0), (0, 1), (0, 2)]
    assert sliding_windows(3, 1) == [(0, 0), (1, 1), (2, 2)]
    assert sliding_windows(0, 10) == []


def test_window_score_counts_claims_that_are_not_no() -> None:
    assert window_faithfulness(["yes", "no", "idk"]) == pytest.approx(2 / 3)
    assert window_faithfulness(["no", "no"]) == 0.0


def test_penalize_counts_idk_as_unfaithful() -> None:
    assert window_faithfulness(["yes", "no", "idk"], penalize_ambiguous_claims=True) == pytest.approx(1 / 3)
    assert window_faithfulness(["idk"], penalize_ambiguous_claims=True) == 0.0


def test_a_window_without_claims_scores_one() -> None:
    assert window_faithfulness([]) == 1.0
    assert window_faithfulness([], penalize_ambiguous_claims=True) == 1.0


def test_an_unknown_window_verdict_is_refused() -> None:
    with pytest.raises(ValueError, match="maybe"):
        window_faithfulness(["yes", "maybe"])


def test_final_score_is_the_mean_and_strict_makes_it_binary() -> None:
    assert turn_faithfulness([1.0, 0.5, 0.0]) == 0.5
    assert turn_faithfulness([]) == 1.0
    assert turn_faithfulness([1.0, 0.0], strict_mode=True) == 0.0
    assert turn_faithfulness([1.0, 1.0], strict_mode=True) == 1.0
    assert strict_window_score(0.99) == 0.0 and strict_window_score(1.0) == 1.0


def test_verdicts_map_to_yes_no_idk() -> None:
    assert yes_no_idk(Verdict.SUPPORTED) == "yes"
    assert yes_no_idk(Verdict.CONTRADICTED) == "no"
    for verdict in (Verdict.NEUTRAL, Verdict.NOT_SUPPORTED, Verdict.PARTIALLY_SUPPORTED):
        assert yes_no_idk(verdict) == "idk"
    with pytest.raises(ValueError):
        yes_no_idk(Verdict.ERROR)


# ---- the metric with scripted verdicts (hand-computed) -----------------------------------------

CTX1 = "Paris is the capital of France. The Seine is a river."
CTX2 = "Rome is the capital of Italy. The Tiber is a river."
CTX3 = "Berlin is the capital of Germany."


def three_interactions() -> list[Turn]:
    return [
        user("Paris?"), assistant("Paris is the capital of France.", CTX1),
        user("Rome?"), assistant("Rome is the capital of Spain. The Tiber is long.", CTX2),
        user("Berlin?"), assistant("Berlin is the capital of Germany.", CTX3),
    ]


TABLE = {
    "Paris is the capital of France.": (Verdict.SUPPORTED, "Paris is the capital of France."),
    "Rome is the capital of Spain.": (Verdict.CONTRADICTED, "Rome is the capital of Italy."),
    "Berlin is the capital of Germany.": (Verdict.SUPPORTED, "Berlin is the capital of Germany."),
}  # "The Tiber is long." -> NEUTRAL (idk)


def test_overlapping_windows_recheck_earlier_claims() -> None:
    result = TurnFaithfulness(verifier=TableVerifier(TABLE)).measure(turns=three_interactions())
    windows = result.details["windows"]
    # window 0: [yes]; window 1: [yes, no, idk]; window 2: [yes, no, idk, yes]
    assert [w["score"] for w in windows] == [1.0, pytest.approx(2 / 3), 0.75]
    assert result.score == pytest.approx((1 + 2 / 3 + 0.75) / 3)
    assert [w["interactions"] for w in windows] == [[0, 0], [0, 1], [0, 2]]
    assert windows[2]["counts"] == {"claims": 4, "yes": 2, "no": 1, "idk": 1}
    assert result.success is True


def test_window_size_limits_what_each_window_sees() -> None:
    result = TurnFaithfulness(window_size=2, verifier=TableVerifier(TABLE)).measure(turns=three_interactions())
    windows = result.details["windows"]
    assert [w["interactions"] for w in windows] == [[0, 0], [0, 1], [1, 2]]
    assert [w["turns"] for w in windows] == [[0, 1], [0, 1, 2, 3], [2, 3, 4, 5]]
    # window 2 no longer holds Paris: [no, idk, yes]
    assert [w["score"] for w in windows] == [1.0, pytest.approx(2 / 3), pytest.approx(2 / 3)]
    assert result.score == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)


def test_truths_are_the_context_sentences_of_the_windows_assistant_turns() -> None:
    verifier = TableVerifier(TABLE)
    result = TurnFaithfulness(window_size=1, verifier=verifier).measure(turns=three_interactions())
    assert result.details["windows"][1]["truths"] == ["Rome is the capital of Italy.", "The Tiber is a river."]
    assert (["Rome is the capital of Spain.", "The Tiber is long."],
            ["Rome is the capital of Italy.", "The Tiber is a river."]) in verifier.calls


def test_penalize_ambiguous_claims_in_the_metric() -> None:
    metric = TurnFaithfulness(window_size=1, penalize_ambiguous_claims=True, verifier=TableVerifier(TABLE))
    result = metric.measure(turns=three_interactions())
    assert [w["score"] for w in result.details["windows"]] == [1.0, 0.0, 1.0]
    assert result.score == pytest.approx(2 / 3)
    assert "idk counted as unfaithful" in result.reason


def test_truths_extraction_limit_is_per_document() -> None:
    table = {"The Seine is a river.": (Verdict.SUPPORTED, "The Seine is a river.")}
    turns = [user("Rivers?"), assistant("The Seine is a river.", CTX1, CTX2)]
    verifier = TableVerifier(table)
    limited = TurnFaithfulness(truths_extraction_limit=1, penalize_ambiguous_claims=True, verifier=verifier)
    result = limited.measure(turns=turns)
    assert result.details["windows"][0]["truths"] == ["Paris is the capital of France.", "Rome is the capital of Italy."]
    assert result.score == 0.0  # the supporting sentence is beyond the limit: idk, penalized
    unlimited = TurnFaithfulness(penalize_ambiguous_claims=True, verifier=TableVerifier(table))
    assert unlimited.compute(turns=turns) == 1.0


def test_a_truths_limit_of_zero_leaves_no_truths() -> None:
    result = TurnFaithfulness(truths_extraction_limit=0, verifier=TableVerifier(TABLE)).measure(
        turns=three_interactions()[:2]
    )
    assert result.details["windows"][0]["truths"] == []
    assert result.details["windows"][0]["reason_code"] == "no_truths"


def test_repeated_context_gives_each_truth_once() -> None:
    turns = [user("a"), assistant("Paris is the capital of France.", CTX1, CTX1),
             user("b"), assistant("Paris is the capital of France.", CTX1)]
    result = TurnFaithfulness(verifier=TableVerifier(TABLE)).measure(turns=turns)
    assert result.details["windows"][1]["truths"] == ["Paris is the capital of France.", "The Seine is a river."]


def test_an_assistant_turn_without_context_still_makes_a_window_whose_claims_are_idk() -> None:
    turns = [user("Paris?"), assistant("Paris is the capital of France.", CTX1),
             user("Tip?"), assistant("Rome is the capital of Spain.")]
    verifier = TableVerifier({"Rome is the capital of Spain.": NO, **TABLE})
    result = TurnFaithfulness(window_size=1, verifier=verifier).measure(turns=turns)
    second = result.details["windows"][1]
    assert second["reason_code"] == "no_truths"
    assert [c["label"] for c in second["claims"]] == ["idk"]
    assert second["score"] == 1.0
    # the verifier is not asked about a window with nothing to check against
    assert all(claims != ["Rome is the capital of Spain."] for claims, _ in verifier.calls)
    assert result.reason_code is None  # other turns have context


def test_a_window_without_claims_scores_one_with_reason_no_claims() -> None:
    turns = [user("Hi"), assistant("", CTX1), user("Rome?"), assistant("Rome is the capital of Spain.", CTX2)]
    result = TurnFaithfulness(window_size=1, verifier=TableVerifier(TABLE)).measure(turns=turns)
    assert [(w["reason_code"], w["score"]) for w in result.details["windows"]] == [("no_claims", 1.0), ("scored", 0.0)]
    assert result.score == 0.5


def test_no_window_scores_one_with_reason_no_retrieval_context() -> None:
    verifier = TableVerifier()
    result = TurnFaithfulness(verifier=verifier).measure(turns=[user("Hello?"), user("Anyone?")])
    assert result.score == 1.0
    assert result.reason_code == "no_retrieval_context"
    assert result.details["windows"] == [] and result.details["claims"] == []
    assert verifier.calls == []
    assert "no retrieval context" in result.reason


def test_no_context_anywhere_is_flagged_and_scored_as_deepeval_does() -> None:
    turns = [user("Hi"), assistant("Paris is the capital of France.")]
    plain = TurnFaithfulness(verifier=TableVerifier()).measure(turns=turns)
    assert (plain.score, plain.reason_code) == (1.0, "no_retrieval_context")
    penalized = TurnFaithfulness(penalize_ambiguous_claims=True, verifier=TableVerifier()).measure(turns=turns)
    assert (penalized.score, penalized.reason_code) == (0.0, "no_retrieval_context")


def test_strict_mode_is_binary_with_threshold_one() -> None:
    metric = TurnFaithfulness(strict_mode=True, threshold=0.2, window_size=1, verifier=TableVerifier(TABLE))
    result = metric.measure(turns=three_interactions())
    assert metric.threshold == 1.0
    assert [w["score"] for w in result.details["windows"]] == [1.0, 0.0, 1.0]  # clamped per window
    assert result.score == 0.0 and result.success is False
    assert result.details["mean_window_score"] == pytest.approx(2 / 3)  # deepeval 4.3.1's number
    perfect = TurnFaithfulness(strict_mode=True, verifier=TableVerifier(TABLE)).measure(turns=three_interactions()[:2])
    assert perfect.score == 1.0 and perfect.success is True


def test_success_compares_the_score_with_the_threshold() -> None:
    turns = three_interactions()
    score = TurnFaithfulness(verifier=TableVerifier(TABLE)).compute(turns=turns)
    assert TurnFaithfulness(threshold=score, verifier=TableVerifier(TABLE)).measure(turns=turns).success is True
    assert TurnFaithfulness(threshold=0.9, verifier=TableVerifier(TABLE)).measure(turns=turns).success is False


def test_sync_and_async_modes_agree() -> None:
    concurrent = TurnFaithfulness(verifier=TableVerifier(TABLE)).measure(turns=three_interactions())
    sequential = TurnFaithfulness(async_mode=False, verifier=TableVerifier(TABLE)).measure(turns=three_interactions())
    assert concurrent.score == sequential.score
    assert concurrent.details["windows"] == sequential.details["windows"]


def test_details_list_every_claim_with_window_turn_label_and_evidence() -> None:
    result = TurnFaithfulness(verifier=TableVerifier(TABLE)).measure(turns=three_interactions())
    claims = result.details["claims"]
    assert len(claims) == 1 + 3 + 4
    contradicted = [c for c in claims if c["label"] == "no"]
    # windows are numbered from 1: the second and third windows hold turn 3 (0-based)
    assert {(c["window"], c["turn"]) for c in contradicted} == {(2, 3), (3, 3)}
    assert [w["index"] for w in result.details["windows"]] == [1, 2, 3]
    assert contradicted[0]["verdict"] == "CONTRADICTED"
    assert contradicted[0]["evidence"] == "Rome is the capital of Italy."
    assert result.details["interactions"] == [[0, 1], [2, 3], [4, 5]]
    assert result.details["settings"]["window_size"] == 10
    assert "Rome is the capital of Spain." in result.reason


def test_include_reason_false_leaves_the_reason_empty() -> None:
    result = TurnFaithfulness(include_reason=False, verifier=TableVerifier(TABLE)).measure(turns=three_interactions())
    assert result.reason == ""
    assert result.details["windows"][0]["reason_code"] == "scored"


def test_a_verifier_error_makes_the_score_nan_with_verifier_error() -> None:
    verifier = TableVerifier({**TABLE, "Berlin is the capital of Germany.": (Verdict.ERROR, None)})
    result = TurnFaithfulness(verifier=verifier).measure(turns=three_interactions())
    assert math.isnan(result.score)
    assert result.reason_code == "verifier_error"
    assert result.details["windows"][2]["reason_code"] == "error"
    assert math.isnan(result.details["windows"][2]["score"])
    assert result.details["windows"][0]["score"] == 1.0


def test_a_verifier_that_drops_a_verdict_is_refused_not_scored() -> None:
    metric = TurnFaithfulness(async_mode=False, verifier=DroppingVerifier())
    with pytest.raises(RuntimeError, match="verifier 'table' returned 0 verdicts for 1 claims"):
        metric.measure(turns=three_interactions())


# ---- inputs -------------------------------------------------------------------------------------

def test_turns_can_be_mappings_or_deepeval_like_objects() -> None:
    class DeepEvalTurn:
        def __init__(self, role: str, content: str, retrieval_context: list[str] | None = None) -> None:
            self.role, self.content, self.retrieval_context = role, content, retrieval_context

    as_dicts = [{"role": "user", "content": "Paris?"},
                {"role": "assistant", "content": "Paris is the capital of France.", "retrieval_context": [CTX1]}]
    as_objects = [DeepEvalTurn("user", "Paris?", None), DeepEvalTurn("assistant", "Paris is the capital of France.", [CTX1])]
    expected = [user("Paris?"), assistant("Paris is the capital of France.", CTX1)]
    assert as_turns(as_dicts) == expected
    assert as_turns(as_objects) == expected
    assert TurnFaithfulness(verifier=TableVerifier(TABLE)).compute(turns=as_dicts) == 1.0


def test_bad_turns_are_refused_with_the_position() -> None:
    metric = TurnFaithfulness(verifier=TableVerifier())
    with pytest.raises(ValueError, match="must not be empty"):
        metric.compute(turns=[])
    with pytest.raises(TypeError, match="list of turns"):
        metric.compute(turns="hello")
    with pytest.raises(ValueError, match=r"turns\[1\].*role"):
        metric.compute(turns=[{"role": "user", "content": "a"}, {"role": "system", "content": "b"}])
    with pytest.raises(TypeError, match=r"turns\[0\]"):
        metric.compute(turns=[42])
    with pytest.raises(TypeError, match="conversation"):
        metric.compute(conversation=[])


@pytest.mark.parametrize(
    ("setting", "value"),
    [("threshold", 1.5), ("threshold", -0.1), ("window_size", 0), ("window_size", 2.0),
     ("truths_extraction_limit", -1), ("truths_extraction_limit", 1.5)],
)
def test_invalid_settings_are_refused(setting: str, value: Any) -> None:
    with pytest.raises(ValueError, match=setting):
        TurnFaithfulness(**{setting: value})


def test_it_is_registered_under_its_name() -> None:
    assert METRICS["turn_faithfulness"] is TurnFaithfulness
    assert TurnFaithfulness.input_names == ("turns",)


# ---- real verifiers ------------------------------------------------------------------------------

CONVERSATION = [
    user("When was the tower completed?"),
    assistant("The Eiffel Tower was completed in 1500. Paris is the capital of France. The Louvre is a museum.",
              REFERENCE),
]


def test_with_the_judge_supported_contradicted_neutral_become_yes_no_idk(judge_server) -> None:
    server = judge_server()
    result = TurnFaithfulness(verifier=LLMVerifier(provider_for(server))).measure(turns=CONVERSATION)
    assert [c["label"] for c in result.details["claims"]] == ["no", "yes", "idk"]
    assert result.score == pytest.approx(2 / 3)
    assert result.details["claims"][0]["evidence"] == "The Eiffel Tower was completed in 1889."
    assert len(server.requests) == 3
    assert "[1] Paris is the capital of France.\n[2] The Eiffel Tower was completed in 1889." in last_user_message(
        server.requests[0]
    )


def test_a_judge_failure_makes_the_score_nan_with_judge_error(judge_server) -> None:
    def fail_on_louvre(request: dict[str, Any]) -> Reply:
        return Reply(status=400) if "Louvre" in last_user_message(request) else judge_reply(request)

    result = TurnFaithfulness(verifier=LLMVerifier(provider_for(judge_server(fail_on_louvre)))).measure(
        turns=CONVERSATION
    )
    assert math.isnan(result.score) and result.reason_code == "judge_error"
    assert "HTTP 400" in result.reason


def test_with_the_lexical_verifier_offline() -> None:
    result = TurnFaithfulness().measure(turns=CONVERSATION)
    labels = {c["claim"]: c["label"] for c in result.details["claims"]}
    assert labels["The Eiffel Tower was completed in 1500."] == "no"
    assert labels["Paris is the capital of France."] == "yes"
    assert result.details["verifier"].startswith("lexical:")


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_nli import build_tiny_nli

    return build_tiny_nli(tmp_path_factory.mktemp("tiny_nli"))


def test_with_the_nli_verifier_entailment_contradiction_neutral_become_yes_no_idk(tiny_nli: Path) -> None:
    from tempo_eval.verify.nli import NLIVerifier

    verifier = NLIVerifier(model=str(tiny_nli), candidates="exhaustive")
    turns = [*CONVERSATION, user("And Rome?"), assistant("Rome is the capital of Italy.", CTX2)]
    result = TurnFaithfulness(verifier=verifier).measure(turns=turns)

    expected_label = {"SUPPORTED": "yes", "CONTRADICTED": "no", "NEUTRAL": "idk"}
    for claim in result.details["claims"]:
        assert claim["label"] == expected_label[claim["verdict"]]
        assert set(claim["probabilities"]) == {"entailment", "neutral", "contradiction"}
    windows = result.details["windows"]
    assert [w["counts"]["claims"] for w in windows] == [3, 4]
    for window in windows:
        labels = [c["label"] for c in window["claims"]]
        assert window["score"] == window_faithfulness(labels)
    assert result.score == pytest.approx(sum(w["score"] for w in windows) / 2)


def test_context_given_only_on_a_user_turn_does_not_count_as_retrieval_context():
    from tempo_eval.core.turn import Turn
    from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness

    turns = [
        Turn("user", "When did the Wall fall?", ["The Wall fell in 1989."]),
        Turn("assistant", "It fell in 1975."),
    ]
    result = TurnFaithfulness(verifier=_NeverCalled()).measure(turns=turns)
    assert result.reason_code == "no_retrieval_context"


class _NeverCalled:
    name = "never"
    model_id = "never"

    def verify(self, claims, premises):
        raise AssertionError("no truths: the verifier must not be asked")

    async def averify(self, claims, premises):
        return self.verify(claims, premises)
