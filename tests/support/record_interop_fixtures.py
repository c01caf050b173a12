"""Write the files analysts already have, with RAGAS, DeepEval and ranx's own save functions (run by hand).

None of these libraries is a dependency of tempo-eval; this script runs in a separate virtualenv:

    python3 -m venv /tmp/venv-interop
    /tmp/venv-interop/bin/pip install ragas==0.4.3 deepeval==4.3.1 ranx==0.3.21 datasets pandas \
        "langchain-community<0.4"   # ragas 0.4.3 imports a module langchain-community 0.4 removed
    cd /work/main && DEEPEVAL_TELEMETRY_OPT_OUT=YES /tmp/venv-interop/bin/python \
        tests/support/record_interop_fixtures.py

Every file under `tests/data/interop/` is written by the library, never by hand, except
`manifest.json` (what each file is, for the tests) and `results.trunc`, which imitates the
run file in trec_eval's own test suite (text after the tag), since trec_eval is not installable
here. No LLM is called: the RAGAS EvaluationResult is built from fixed scores with the library's
class and written with its `to_pandas()`, and the DeepEval test run comes from `deepeval.evaluate`
with the real `FaithfulnessMetric` driven by a scripted judge (truths are the sentences of the
retrieval context, claims the sentences of the output, a claim is supported when a truth says
exactly it), so its scores are known: `EXPECTED_FAITHFULNESS`.

`tests/io/test_interop_fixtures.py` loads every file and checks the mapping and the numbers.
Importing this module imports none of the libraries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "data" / "interop"

#: the single-turn RAG rows every single-turn file holds
ROWS: list[dict[str, Any]] = [
    {
        "id": "q1",
        "query": "When did the Hoover Dam open?",
        "contexts": ["[Source 1] The Hoover Dam opened in 1936.", "[Source 2] It is on the Colorado River."],
        "answer": "The Hoover Dam opened in 1936.",
        "reference": "It opened in 1936.",
        "retrieved_ids": ["d1", "d2", "d3"],
        "gold_ids": ["d1", "d2", "d3"],
    },
    {
        "id": "q2",
        "query": "Who was the UK prime minister in 2019?",
        "contexts": ["[Source 1] Boris Johnson became prime minister in July 2019."],
        "answer": "Theresa May was prime minister in 2019. Boris Johnson became prime minister in July 2019.",
        "reference": "Theresa May until July 2019, then Boris Johnson.",
        "retrieved_ids": ["d7", "d4", "d5"],
        "gold_ids": ["d4"],
    },
    {
        "id": "q3",
        "query": "When was the Berlin Wall opened?",
        "contexts": ["The Berlin Wall was opened in 1989.", "Germany reunified in 1990."],
        "answer": "The Berlin Wall was opened in 1989.",
        "reference": "In November 1989.",
        "retrieved_ids": ["d9", "d8"],
        "gold_ids": ["d8", "d9"],
    },
]

#: DeepEval's FaithfulnessMetric under the scripted judge: supported claims / claims
EXPECTED_FAITHFULNESS = {"q1": 1.0, "q2": 0.5, "q3": 1.0}
#: the fixed RAGAS scores of the EvaluationResult (one float column per metric)
RAGAS_SCORES = [
    {"faithfulness": 1.0, "answer_relevancy": 0.91},
    {"faithfulness": 0.5, "answer_relevancy": 0.62},
    {"faithfulness": 1.0, "answer_relevancy": 0.88},
]

#: conversations: (user text, retrieved documents, assistant answer) per exchange
CONVERSATIONS: list[dict[str, Any]] = [
    {
        "id": "trip",
        "exchanges": [
            ("When did the Hoover Dam open?", ["The Hoover Dam opened in 1936."], "It opened in 1936."),
            ("And the Golden Gate Bridge?", ["The Golden Gate Bridge opened in 1937."],
             "The Golden Gate Bridge opened in 1938."),
        ],
    },
    {
        "id": "history",
        "exchanges": [
            ("When was the Berlin Wall opened?", ["The Berlin Wall was opened in 1989."],
             "The Berlin Wall was opened in 1989."),
        ],
    },
]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


def _strip_label(text: str) -> str:
    return re.sub(r"^\[[^\]]*\]\s*", "", text)


# ---- RAGAS ----------------------------------------------------------------------------------

def ragas_files(manifest: dict[str, Any]) -> None:
    from ragas import EvaluationDataset
    from ragas.dataset_schema import EvaluationResult, MultiTurnSample, SingleTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    samples = [
        SingleTurnSample(
            user_input=row["query"], retrieved_contexts=row["contexts"], response=row["answer"],
            reference=row["reference"], retrieved_context_ids=row["retrieved_ids"],
            reference_context_ids=row["gold_ids"],
        )
        for row in ROWS
    ]
    dataset = EvaluationDataset(samples=samples)
    dataset.to_jsonl(str(OUT / "ragas_single.jsonl"))
    dataset.to_csv(str(OUT / "ragas_single.csv"))
    hf = dataset.to_hf_dataset()
    hf.to_csv(str(OUT / "ragas_single_hf.csv"))  # list cells written numpy-style: ['d1' 'd2' 'd3']
    hf.to_json(str(OUT / "ragas_single_hf.json"))  # JSON Lines under a .json name
    for name in ("ragas_single.jsonl", "ragas_single.csv", "ragas_single_hf.csv", "ragas_single_hf.json"):
        manifest[name] = {"kind": "dataset", "library": "ragas", "rows": "ROWS"}

    # EvaluationResult's constructor parses the traces of a real evaluation, which needs an LLM;
    # the instance gets the two fields to_pandas reads, and to_pandas itself writes the frame
    result = object.__new__(EvaluationResult)
    result.scores, result.dataset = RAGAS_SCORES, dataset
    result.to_pandas().to_csv(OUT / "ragas_result.csv", index=False)
    manifest["ragas_result.csv"] = {"kind": "ragas_result", "scores": RAGAS_SCORES}

    multi = []
    for conversation in CONVERSATIONS:
        messages: list[Any] = []
        for number, (question, documents, answer) in enumerate(conversation["exchanges"], start=1):
            messages.append(HumanMessage(content=question))
            messages.append(AIMessage(content="", tool_calls=[
                ToolCall(name="search", args={"query": question, "call": number})
            ]))
            messages.append(ToolMessage(content="\n".join(documents)))
            messages.append(AIMessage(content=answer))
        multi.append(MultiTurnSample(user_input=messages, reference=conversation["exchanges"][-1][2]))
    multi_dataset = EvaluationDataset(samples=multi)
    multi_dataset.to_jsonl(str(OUT / "ragas_multi.jsonl"))
    multi_dataset.to_csv(str(OUT / "ragas_multi.csv"))
    multi_hf = multi_dataset.to_hf_dataset()
    multi_hf.to_csv(str(OUT / "ragas_multi_hf.csv"))  # numpy reprs of the message dicts
    multi_hf.to_json(str(OUT / "ragas_multi_hf.json"))  # JSON Lines under a .json name
    multi_hf.to_parquet(str(OUT / "ragas_multi_hf.parquet"))
    for name in ("ragas_multi.jsonl", "ragas_multi.csv", "ragas_multi_hf.csv", "ragas_multi_hf.json",
                 "ragas_multi_hf.parquet"):
        manifest[name] = {"kind": "conversations", "library": "ragas", "ids": False}


# ---- DeepEval -------------------------------------------------------------------------------

def _judge() -> Any:
    from deepeval.models import DeepEvalBaseLLM

    class ScriptedJudge(DeepEvalBaseLLM):
        """Answers FaithfulnessMetric by the schema it asks for; `case` is the test case measured."""

        case: Any = None

        def __init__(self) -> None:
            super().__init__("scripted-judge")

        def load_model(self) -> Any:
            return self

        def get_model_name(self) -> str:
            return "scripted-judge"

        def generate(self, prompt: str, schema: Any = None) -> Any:
            truths = [s for doc in self.case.retrieval_context for s in sentences(_strip_label(doc))]
            claims = sentences(self.case.actual_output)
            kind = schema.__name__ if schema is not None else ""
            if "Truth" in kind:
                data: dict[str, Any] = {"truths": truths}
            elif "Claim" in kind:
                data = {"claims": claims}
            elif "Verdict" in kind:
                data = {"verdicts": [
                    {"verdict": "yes" if c in truths else "no", "reason": None if c in truths else "not in context"}
                    for c in claims
                ]}
            else:
                data = {"reason": "scripted reason"}
            return schema(**data) if schema is not None else json.dumps(data)

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            return self.generate(prompt, schema)

    return ScriptedJudge()


def deepeval_files(manifest: dict[str, Any]) -> None:
    from deepeval import evaluate
    from deepeval.dataset import ConversationalGolden, EvaluationDataset, Golden
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.test_case import ConversationalTestCase, LLMTestCase, Turn

    tmp = Path(tempfile.mkdtemp())
    goldens = EvaluationDataset(goldens=[
        Golden(input=row["query"], expected_output=row["reference"], context=row["contexts"]) for row in ROWS
    ])
    for fmt in ("json", "jsonl", "csv"):
        written = Path(goldens.save_as(fmt, str(tmp), file_name="goldens"))
        shutil.copy(written, OUT / f"deepeval_goldens.{fmt}")
        manifest[f"deepeval_goldens.{fmt}"] = {"kind": "dataset", "library": "deepeval", "goldens": True}

    cases = [
        LLMTestCase(input=row["query"], actual_output=row["answer"], expected_output=row["reference"],
                    retrieval_context=row["contexts"], name=row["id"])
        for row in ROWS
    ]
    with_cases = EvaluationDataset()
    for case in cases:
        with_cases.add_test_case(case)
    for fmt in ("json", "csv"):
        written = Path(with_cases.save_as(fmt, str(tmp), file_name="test_cases", include_test_cases=True))
        shutil.copy(written, OUT / f"deepeval_test_cases.{fmt}")
        manifest[f"deepeval_test_cases.{fmt}"] = {"kind": "dataset", "library": "deepeval", "rows": "ROWS"}

    # conversational goldens and test cases
    def turns_of(conversation: dict[str, Any]) -> list[Any]:
        turns = []
        for question, documents, answer in conversation["exchanges"]:
            turns.append(Turn(role="user", content=question))
            turns.append(Turn(role="assistant", content=answer, retrieval_context=documents))
        return turns

    conv_goldens = EvaluationDataset(goldens=[
        ConversationalGolden(scenario=f"Asking about {c['id']}", expected_outcome="Correct dates", turns=turns_of(c))
        for c in CONVERSATIONS
    ])
    for fmt in ("json", "jsonl", "csv"):
        written = Path(conv_goldens.save_as(fmt, str(tmp), file_name="conversational_goldens"))
        shutil.copy(written, OUT / f"deepeval_conversational_goldens.{fmt}")
        manifest[f"deepeval_conversational_goldens.{fmt}"] = {"kind": "conversations", "library": "deepeval", "ids": False}
    conv_cases = EvaluationDataset()
    for conversation in CONVERSATIONS:
        conv_cases.add_test_case(ConversationalTestCase(
            turns=turns_of(conversation), scenario=f"Asking about {conversation['id']}", name=conversation["id"]
        ))
    for fmt in ("json", "jsonl", "csv"):
        try:
            written = Path(conv_cases.save_as(fmt, str(tmp), file_name="conversational_test_cases",
                                              include_test_cases=True))
        except Exception as error:  # a format DeepEval cannot write for test cases
            print(f"deepeval cannot save conversational test cases as {fmt}: {error}")
            continue
        shutil.copy(written, OUT / f"deepeval_conversational_test_cases.{fmt}")
        manifest[f"deepeval_conversational_test_cases.{fmt}"] = {
            "kind": "conversations", "library": "deepeval", "ids": False
        }

    # a test run: FaithfulnessMetric with the scripted judge, saved by DeepEval itself
    judge = _judge()
    metric = FaithfulnessMetric(model=judge, threshold=0.7, include_reason=True, async_mode=False)
    original = metric.measure

    def measure(test_case: Any, *args: Any, **kwargs: Any) -> Any:
        judge.case = test_case
        return original(test_case, *args, **kwargs)

    metric.measure = measure  # type: ignore[method-assign]
    results_dir = tmp / "results"
    os.environ["DEEPEVAL_RESULTS_FOLDER"] = str(results_dir)
    cwd = os.getcwd()
    os.chdir(tmp)  # DeepEval also keeps the latest run in ./.deepeval/
    try:
        evaluate(cases, [metric], async_config=AsyncConfig(run_async=False),
                 display_config=DisplayConfig(print_results=False, show_indicator=False))
    finally:
        os.chdir(cwd)
    (run_file,) = results_dir.glob("*.json")
    shutil.copy(run_file, OUT / "deepeval_test_run.json")
    # the same run as DeepEval keeps it for `deepeval view`: under "testRunData"
    shutil.copy(tmp / ".deepeval" / ".latest_test_run.json", OUT / "deepeval_latest_test_run.json")
    for name in ("deepeval_test_run.json", "deepeval_latest_test_run.json"):
        manifest[name] = {"kind": "deepeval_run", "faithfulness": EXPECTED_FAITHFULNESS}


# ---- ranx -----------------------------------------------------------------------------------

def ranx_files(manifest: dict[str, Any]) -> None:
    from ranx import Qrels, Run

    qrels = {row["id"]: dict.fromkeys(row["gold_ids"], 1) for row in ROWS}
    scores = {row["id"]: {doc: float(len(row["retrieved_ids"]) - i) for i, doc in enumerate(row["retrieved_ids"])}
              for row in ROWS}
    reversed_scores = {q: {d: -s for d, s in docs.items()} for q, docs in scores.items()}
    Qrels(qrels).save(str(OUT / "ranx_qrels.json"))
    Qrels(qrels).save(str(OUT / "ranx_qrels.trec"), kind="trec")
    Run(scores, name="bm25").save(str(OUT / "ranx_bm25.json"))
    Run(scores, name="bm25").save(str(OUT / "ranx_bm25.trec"), kind="trec")
    Run(reversed_scores).save(str(OUT / "ranx_unnamed.trec"), kind="trec")  # tag None
    Run(reversed_scores, name="bm25").save(str(OUT / "ranx_bm25_reversed.trec"), kind="trec")  # same tag
    manifest["ranx"] = {"scores": scores, "reversed_scores": reversed_scores, "qrels": qrels}

    # like trec_eval's test/results.trunc: text after the sixth field, which trec_eval ignores
    lines = []
    for qid, docs in scores.items():
        for rank, (doc, score) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1])):
            lines.append(f"{qid} Q0 {doc} {rank} {score:g} trunc-run  extra text ignored {rank}")
    (OUT / "results.trunc").write_text("\n".join(lines) + "\n")


def main() -> int:
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
    os.environ.setdefault("ERROR_REPORTING", "NO")
    OUT.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {}
    ragas_files(manifest)
    deepeval_files(manifest)
    ranx_files(manifest)
    import deepeval
    import ragas
    import ranx

    manifest["_versions"] = {
        "ragas": ragas.__version__, "deepeval": deepeval.__version__,
        "ranx": getattr(ranx, "__version__", "0.3.21"),
        "generator": "tests/support/record_interop_fixtures.py",
    }
    manifest["_rows"] = ROWS
    manifest["_conversations"] = CONVERSATIONS
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
