"""Record DeepEval's TurnFaithfulnessMetric scores on scripted conversations (run by hand).

DeepEval is not a dependency of tempo-eval; this script runs in a separate virtualenv:

    python3 -m venv /work/venv-deepeval && /work/venv-deepeval/bin/pip install deepeval
    cd /work/main && DEEPEVAL_TELEMETRY_OPT_OUT=YES /work/venv-deepeval/bin/python \
        tests/support/record_deepeval_turn_faithfulness.py

It drives DeepEval's real metric (windows, interactions, scoring, strict mode, penalize) with a
scripted `DeepEvalBaseLLM` that answers every prompt deterministically and offline:

- truths: the sentences of the reference context in reading order, the first N when the prompt
  asks for N (DeepEval's prompt asks for N truths from the window's joined context);
- claims: the sentences of the assistant output;
- verdicts: `oracle_verdict(claim, truths)` for each claim;
- reasons: fixed sentences.

Sentences are split by a naive regex here (not by tempo-eval's splitter), so the comparison also
checks that both sides see the same claims. The cases, settings and DeepEval's scores go to
`tests/data/deepeval_turn_faithfulness.json`; `tests/metrics/test_turn_faithfulness_deepeval.py` runs our
metric with a verifier scripted by the same oracle and compares. Importing this module does not
import deepeval.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "deepeval_turn_faithfulness.json"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def naive_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


def fact_key(sentence: str) -> str:
    """The subject of a fact sentence "<subject> is/was/has <...>." (the text before the verb)."""
    match = re.match(r"(.+?)\s+(?:is|was|has|are|were)\s", sentence)
    return (match.group(1) if match else sentence).strip().lower()


def oracle_verdict(claim: str, truths: list[str]) -> str:
    """yes: a truth says exactly the claim; no: a truth says something else about the same
    subject; idk: no truth is about the claim's subject."""
    if claim in truths:
        return "yes"
    if any(fact_key(truth) == fact_key(claim) for truth in truths):
        return "no"
    return "idk"


def _u(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content, "retrieval_context": []}


def _a(content: str, *context: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "retrieval_context": list(context)}


PARIS = "Paris is the capital of France. The Eiffel Tower is in Paris. The Seine is a river."
TOWER = "The Eiffel Tower was completed in 1889. The tower is 330 metres tall."
ROME = "Rome is the capital of Italy. The Colosseum is in Rome."
BERLIN = "Berlin is the capital of Germany. The Wall was opened in 1989."

#: name, settings (our constructor's keyword arguments), turns
CASES: list[dict[str, Any]] = [
    {
        "name": "single_interaction_all_supported",
        "settings": {},
        "turns": [_u("Tell me about Paris."), _a("Paris is the capital of France. The Seine is a river.", PARIS)],
    },
    {
        "name": "single_interaction_one_contradiction",
        "settings": {},
        "turns": [
            _u("When was the tower completed?"),
            _a("The Eiffel Tower was completed in 1500. The tower is 330 metres tall. The Louvre is a museum.", TOWER),
        ],
    },
    {
        "name": "three_interactions_overlapping_windows",
        "settings": {},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France.", PARIS),
            _u("The tower?"), _a("The Eiffel Tower was completed in 1900.", TOWER),
            _u("Rome?"), _a("Rome is the capital of Italy. The Colosseum is in Milan.", ROME),
        ],
    },
    {
        "name": "window_size_one",
        "settings": {"window_size": 1},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France.", PARIS),
            _u("The tower?"), _a("The Eiffel Tower was completed in 1900.", TOWER),
            _u("Rome?"), _a("Rome is the capital of Italy. The Colosseum is in Milan.", ROME),
        ],
    },
    {
        "name": "window_size_two_four_interactions",
        "settings": {"window_size": 2},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France.", PARIS),
            _u("The tower?"), _a("The tower is 330 metres tall.", TOWER),
            _u("Rome?"), _a("Rome is the capital of Spain.", ROME),
            _u("Berlin?"), _a("Berlin is the capital of Germany. The Wall was opened in 1989.", BERLIN),
        ],
    },
    {
        "name": "assistant_turn_without_context",
        "settings": {"window_size": 1},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France.", PARIS),
            _u("Any tip?"), _a("The Louvre is a museum. Paris is the capital of Spain."),
            _u("Rome?"), _a("Rome is the capital of Italy.", ROME),
        ],
    },
    {
        "name": "penalize_ambiguous_claims",
        "settings": {"penalize_ambiguous_claims": True},
        "turns": [
            _u("Paris?"),
            _a("Paris is the capital of France. The Louvre is a museum. The metro is old.", PARIS),
            _u("Rome?"), _a("Rome is the capital of Italy. The pasta is good.", ROME),
        ],
    },
    {
        "name": "strict_mode_some_windows_imperfect",
        "settings": {"strict_mode": True, "window_size": 1},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France.", PARIS),
            _u("Rome?"), _a("Rome is the capital of Spain. The Colosseum is in Rome.", ROME),
        ],
    },
    {
        "name": "strict_mode_all_perfect",
        "settings": {"strict_mode": True},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France. The Louvre is a museum.", PARIS),
            _u("Rome?"), _a("The Colosseum is in Rome.", ROME),
        ],
    },
    {
        "name": "truths_extraction_limit_hides_support",
        "settings": {"truths_extraction_limit": 1, "window_size": 1},
        "turns": [
            _u("Paris?"), _a("Paris is the capital of France. The Seine is a river.", PARIS),
            _u("Tower?"), _a("The tower is 300 metres tall. The Eiffel Tower was completed in 1889.", TOWER),
        ],
    },
    {
        "name": "no_retrieval_context_anywhere",
        "settings": {},
        "turns": [_u("Hi"), _a("Paris is the capital of France."), _u("Rome?"), _a("Rome is in Italy.")],
    },
    {
        "name": "no_retrieval_context_penalized",
        "settings": {"penalize_ambiguous_claims": True},
        "turns": [_u("Hi"), _a("Paris is the capital of France.")],
    },
    {
        "name": "only_user_turns_no_window",
        "settings": {},
        "turns": [_u("Hello?"), _u("Anyone there?")],
    },
    {
        "name": "leading_assistant_consecutive_users_trailing_user",
        "settings": {"window_size": 2},
        "turns": [
            _a("The Seine is a river.", PARIS),
            _u("Paris?"), _u("And France?"),
            _a("Paris is the capital of Spain.", PARIS),
            _a("The Eiffel Tower is in Paris.", PARIS),
            _u("Rome?"), _a("Rome is the capital of Italy.", ROME),
            _u("Thanks!"),
        ],
    },
    {
        "name": "several_documents_repeated_context",
        "settings": {"threshold": 0.9},
        "turns": [
            _u("Paris and the tower?"),
            _a("Paris is the capital of France. The Eiffel Tower was completed in 1889.", PARIS, TOWER),
            _u("And Rome?"),
            _a("Rome is the capital of Italy. The tower is 300 metres tall.", PARIS, ROME),
        ],
    },
    {
        "name": "assistant_turn_with_no_claims",
        "settings": {"window_size": 1},
        "turns": [_u("Hi"), _a("", PARIS), _u("Paris?"), _a("Paris is the capital of Germany.", PARIS)],
    },
]


def _section(prompt: str, header: str, end: str = "\n\nJSON:") -> str:
    start = prompt.index(header) + len(header)
    return prompt[start : prompt.index(end, start)].strip("\n")


def _scripted_model() -> Any:
    from deepeval.models import DeepEvalBaseLLM

    class ScriptedJudge(DeepEvalBaseLLM):
        """Answers DeepEval's turn-faithfulness prompts deterministically (see the module docstring)."""

        def __init__(self) -> None:
            super().__init__("scripted-judge")

        def load_model(self) -> Any:
            return self

        def get_model_name(self) -> str:
            return "scripted-judge"

        def generate(self, prompt: str, schema: Any = None) -> Any:
            data = self.answer(prompt)
            return schema(**data) if schema is not None else json.dumps(data)

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            return self.generate(prompt, schema)

        def answer(self, prompt: str) -> dict[str, Any]:
            if "from the REFERENCE CONTEXT" in prompt:
                context = _section(prompt, "REFERENCE CONTEXT:")
                truths = [s for doc in context.split("\n\n") for s in naive_sentences(doc)]
                wanted = re.search(r"Extract (\d+|one) factual", prompt)
                if wanted:
                    limit = 1 if wanted.group(1) == "one" else int(wanted.group(1))
                    truths = truths[:limit]
                return {"truths": truths}
            if "Extract every factual-sounding claim" in prompt:
                return {"claims": naive_sentences(_section(prompt, "ASSISTANT OUTPUT:"))}
            if "For each claim, determine whether" in prompt:
                context = _section(prompt, "REFERENCE CONTEXT:", "\n\nCLAIMS:")
                truths = [t for t in context.split("\n\n") if t.strip()]
                claims = ast.literal_eval(_section(prompt, "CLAIMS:"))
                verdicts = []
                for claim in claims:
                    verdict = oracle_verdict(claim, truths)
                    verdicts.append({"verdict": "borderline" if verdict == "idk" else verdict,
                                     "reason": None if verdict == "yes" else f"scripted {verdict}"})
                return {"verdicts": verdicts}
            if "final explanation" in prompt or "concise justification" in prompt:
                return {"reason": "scripted reason"}
            raise AssertionError(f"unexpected prompt: {prompt[:200]!r}")

    return ScriptedJudge()


def record() -> dict[str, Any]:
    import deepeval
    from deepeval.metrics import TurnFaithfulnessMetric
    from deepeval.test_case import ConversationalTestCase, Turn

    judge = _scripted_model()
    results = []
    for case in CASES:
        turns = [
            Turn(role=t["role"], content=t["content"], retrieval_context=t["retrieval_context"] or None)
            for t in case["turns"]
        ]
        recorded = {}
        for async_mode in (False, True):
            metric = TurnFaithfulnessMetric(model=judge, async_mode=async_mode, **case["settings"])
            metric.measure(ConversationalTestCase(turns=turns), _show_indicator=False)
            recorded[async_mode] = metric
        sync_metric, async_metric = recorded[False], recorded[True]
        assert sync_metric.score == async_metric.score, case["name"]
        results.append(
            {
                **case,
                "deepeval": {
                    "score": float(sync_metric.score),
                    "success": bool(sync_metric.success),
                    "threshold": float(sync_metric.threshold),
                    # sync mode keeps the windows in order (async appends as they finish)
                    "window_scores": [float(w.score) for w in getattr(sync_metric, "_window_scores", [])],
                },
            }
        )
        print(f"{case['name']:55s} score={sync_metric.score:.4f} success={sync_metric.success}")
    return {"deepeval_version": deepeval.__version__, "generator": "tests/support/record_deepeval_turn_faithfulness.py", "cases": results}


def _keep_window_scores() -> None:
    """Let the metric remember its per-window scores (DeepEval only keeps them in verbose logs)."""
    from deepeval.metrics import TurnFaithfulnessMetric

    original = TurnFaithfulnessMetric._calculate_score

    def calculate(self: Any, scores: list[Any]) -> float:
        self._window_scores = list(scores)
        return original(self, scores)

    TurnFaithfulnessMetric._calculate_score = calculate


def main() -> int:
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
    os.environ.setdefault("ERROR_REPORTING", "NO")
    _keep_window_scores()
    data = record()
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
