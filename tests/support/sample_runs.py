"""Two stored runs of the sample (focus-time metrics, no model): the bundled answers, and the same
answers with some years changed: q1 and q3 made wrong, q2 and q7 put right, q6 left without a year."""

from __future__ import annotations

import json
from pathlib import Path

from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics import TemporalFaithfulness, TemporalNDCG
from tempo_eval.store.runs import RunStore

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "temporal_qa.jsonl"
#: query id -> (old text, new text) in the candidate's answer
CHANGES = {
    "q1": ("1666", "1766"),
    "q2": ("1987", "1989"),
    "q3": ("2 December 2020", "2 December 2021"),
    "q7": ("1251", "1215"),
}
#: the candidate's answer of q6 has no year at all: its faithfulness is not measurable
NO_YEAR = {"q6": "The bubble peaked in the spring, when the Nasdaq closed above 5,000."}


def changed_sample(directory: Path) -> Path:
    """The sample with the answers' years changed as `CHANGES` and `NO_YEAR` say."""
    lines = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        qid = row["query_id"]
        if qid in CHANGES:
            old, new = CHANGES[qid]
            assert old in row["answer"], (qid, old)
            row["answer"] = row["answer"].replace(old, new)
        if qid in NO_YEAR:
            row["answer"] = NO_YEAR[qid]
        lines.append(json.dumps(row))
    path = directory / "temporal_qa_changed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def metrics() -> list:
    return [TemporalFaithfulness(), TemporalNDCG(use_focus_time=True)]


def make_sample_runs(store: RunStore, directory: Path) -> tuple[int, int]:
    """Store the baseline (the sample) and the candidate (`changed_sample`); their run ids."""
    evaluate(load_dataset(str(SAMPLE)), metrics(), store=store, run_name="sample baseline")
    evaluate(load_dataset(str(changed_sample(directory))), metrics(), store=store, run_name="years changed")
    runs = store.list_runs().set_index("name")
    return int(runs.at["sample baseline", "id"]), int(runs.at["years changed", "id"])
