"""Builds tests/data/packed_details_cases.json: Temporal Faithfulness and Temporal NDCG results in
focus-time mode for inputs the golden rows do not reach (focus times given, a candidate pool, k
past the curve's cap, no overlap, no query time, ...), as `metric.measure` returned them before
their details were packed (`tempo_eval.common.packed_details`). Run from the repository root of the
version to record: python tests/data/build_packed_details_cases.py"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROW = {
    "query": "What happened to the bridge during the Cold War?",
    "answer": "The bridge was rebuilt in 1951. Later, in 1968, it reopened. By 1990 it was sold.",
    "contexts": [
        "According to the city archive, the bridge was rebuilt in 1951, after a long debate.",
        "Records show that it reopened in 1968, when the district was redeveloped.",
        "The tower burned down in 1850 and again in 2020.",
        "Nothing dated here.",
        "In the 1960s the market changed hands; by 1990 it closed.",
    ],
}

#: (metric, settings, inputs); sets of years are written as {"set": [...]}
CASES = [
    ("tf", {}, {"answer": ROW["answer"], "contexts": ROW["contexts"]}),
    ("tf", {}, {"answer": "No date at all.", "contexts": ROW["contexts"]}),
    ("tf", {}, {"answer": "It flourished during the 1960s and after 1990.", "retrieved_docs": ROW["contexts"]}),
    ("tf", {"reference_date": "2020-05-01"}, {"answer": "It reopened last year, in 2019.",
                                               "contexts": ["Reopened in 2019.", "Closed in 2018."]}),
    ("tf", {}, {"aft": {"set": [1991, 1990]}, "dfts": [{"set": [1990]}, {"set": [1991, 1992]}, {"set": []}]}),
    ("tf", {}, {"answer": ROW["answer"], "contexts": ["", "1951 and 1951 again: 1951."]}),
    ("ndcg", {}, {"query": ROW["query"], "contexts": ROW["contexts"]}),
    ("ndcg", {"k": 3}, {"query": ROW["query"], "contexts": ROW["contexts"]}),
    ("ndcg", {"k": 2000}, {"query": ROW["query"], "contexts": ROW["contexts"][:3]}),
    ("ndcg", {}, {"qft": {"set": [1990, 1995, 1996]}, "dfts": [{"set": [1995]}, {"set": []}, {"set": [1990, 2000]}]}),
    ("ndcg", {}, {"qft": {"set": [1990, 1995]}, "dfts": [{"set": [2001]}, {"set": [1995]}],
                  "candidate_pool": [{"set": [1995]}, {"set": [1990, 1995]}, {"set": [2001]}]}),
    ("ndcg", {}, {"query": "What happened to the bridge?", "contexts": ROW["contexts"]}),
    ("ndcg", {}, {"query": "What happened in 1700 or 2099?", "contexts": ROW["contexts"]}),
    ("ndcg", {"gain": "exponential", "k": 4}, {"query": ROW["query"], "contexts": ROW["contexts"]}),
    ("ndcg", {"reference_date": "2021-01-01"}, {"query": "What happened last year?",
                                                "retrieved_docs": ["In 2020 it closed.", "In 2019 it opened."]}),
    ("ndcg", {}, {"qft": {"set": [1968]}, "contexts": ROW["contexts"]}),
    ("ndcg", {}, {"query": ROW["query"], "contexts": []}),
    ("ndcg", {"k": 1}, {"query": "In 1951?", "contexts": ["1951", "1951", "no"]}),
]


def _inputs(spec: dict) -> dict:
    def value(v):
        if isinstance(v, dict) and set(v) == {"set"}:
            return set(v["set"])
        if isinstance(v, list):
            return [value(x) for x in v]
        return v

    return {name: value(v) for name, v in spec.items()}


def metric(name: str, settings: dict):
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    return (TemporalFaithfulness if name == "tf" else TemporalNDCG)(**settings)


def record(result) -> dict:
    from tempo_eval.store.packing import _details_json

    return {"score": repr(result.score), "reason": result.reason, "reason_code": result.reason_code,
            "details": repr(result.details), "json": _details_json(dict(result.details))}


def build() -> list:
    out = []
    for name, settings, inputs in CASES:
        out.append({"metric": name, "settings": settings, "inputs": inputs,
                    "expected": record(metric(name, settings).measure(**_inputs(inputs)))})
    return out


if __name__ == "__main__":
    sys.path.insert(0, ".")
    target = Path(__file__).parent / "packed_details_cases.json"
    target.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {target}")
