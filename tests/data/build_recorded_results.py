"""Build `recorded_results.json.gz`: focus times, metric results and stored details of a fixed, varied
set of texts and rows, as the code computed them before the per-row speed-ups of issue 27
(`tests/engine/test_recorded_results.py` checks that the code still computes exactly these):

    python tests/data/build_recorded_results.py

Run it only to add cases, with the code checked out at the commit the golden file came from
(the one that added it): regenerating it with changed code would make the test pass whatever
the change did.

The texts are every labelled text under tests/data (time expressions of every kind, answers,
claims, premises, summaries), the issue's bench rows and a few edge cases; the rows pair them
at random (fixed seed) as query, answer and contexts, with and without a reference date.
Each value is recorded as its `repr` (types, key order and floats exactly).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))  # bench/ never: its ray.py would shadow the ray package

OUT = HERE / "recorded_results.json.gz"
REFERENCE_DATES = [None, "2024-06-01", "2015-01-01", "1999-12-31"]

EDGE_TEXTS = [
    "",
    "   ",
    "No year at all here.",
    "from 1000 to 1500 the town grew",  # a capped span
    "It was built in ２０２０ and rebuilt in ٢٠٢١.",  # non-ASCII digits
    "In 1920 women won the vote; since 1999 people have moved; 1500 employees; $2000; page 1984.",
    "the 1990s, the '20s, the nineteenth century, early 1990s, mid-'90s, the first half of the 20th century",
    "2008-2010, 1914-18, 1999-00, 2020-03, from May 2008 to June 2010, between 2008 and 2010, 2008 and 2010",
    "last year, next year, two years ago, in the past 5 years, recent years, this decade, yesterday",
    "During World War II and the Cold War, and after the COVID-19 pandemic, the Iran-Iraq war.",
    "nineteen ninety-six, two thousand and eight, the year two thousand, 476 AD, AD 800, 1200 BC",
    "Q3 2004, the third quarter, fiscal 1999, last March, Friday, 12 March 2020, 2020-03-12, 12/03/2020",
    "The 1999 amendments and 2008 sales; 2014 Oak Street; 555-1234; 1.2019; post-1959 and pre-1990 buildings.",
    "Years 1850 1851 1852 and 2099, 2100, 999 and 1000.",
]


def corpus_texts() -> list[tuple[str, str | None]]:
    """(text, its own document date or None), in a fixed order, without repeats."""
    found: dict[str, str | None] = {}
    for line in (HERE / "timex_labelled.tsv").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#") or line.startswith("split\t"):
            continue
        _split, _kind, date, _years, sentence = line.split("\t")
        found.setdefault(sentence, date)
    for name, fields in (
        ("qa_invented.jsonl", ("answer", "premises")),
        ("verifier_dev.jsonl", ("claim", "premises")),
        ("summaries_labelled.jsonl", ("source", "summary")),
    ):
        for line in (HERE / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for field in fields:
                value = record.get(field)
                for text in value if isinstance(value, list) else [value]:
                    if isinstance(text, str):
                        found.setdefault(text, None)
    for text in EDGE_TEXTS:
        found.setdefault(text, None)
    return list(found.items())


def bench_rows() -> list[dict]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("evaluate_scale", ROOT / "bench" / "evaluate_scale.py")
    evaluate_scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate_scale)
    _document, make_row = evaluate_scale._document, evaluate_scale.make_row
    rng = random.Random(7)
    corpus = [_document(rng, "bridge" if d % 2 else "library") for d in range(40)]
    rows = []
    for i in range(60):
        query_id, query, answer, contexts = make_row(i, rng, corpus if i % 2 else None)
        rows.append({"query_id": query_id, "query": query, "answer": answer, "contexts": json.loads(contexts)})
    return rows


def golden_rows(texts: list[str]) -> list[dict]:
    rng = random.Random(27)
    rows = bench_rows()
    for i in range(420):
        n_contexts = rng.choice([0, 1, 2, 3, 5, 5, 8, 12])
        row = {
            "query_id": f"g{i}",
            "query": rng.choice(texts),
            "answer": rng.choice(texts),
            "contexts": [rng.choice(texts) for _ in range(n_contexts)],
        }
        if i % 3 == 0:
            row["contexts"] = row["contexts"] + [row["answer"]]  # an answer grounded in a context
        if i % 4 == 1:
            row["reference_date"] = rng.choice(REFERENCE_DATES[1:])
        rows.append(row)
    # rows the runner sees with a missing cell or odd values
    rows.append({"query_id": "na1", "query": "What happened in 1990?", "answer": None, "contexts": ["In 1990."]})
    rows.append({"query_id": "na2", "query": None, "answer": "In 1990.", "contexts": ["In 1990."]})
    rows.append({"query_id": "na3", "query": "In 1990?", "answer": "In 1990.", "contexts": float("nan")})
    rows.append({"query_id": "bad1", "query": "In 1990?", "answer": "In 1990.", "contexts": "In 1990."})
    rows.append({"query_id": "bad2", "query": "In 1990?", "answer": "In 1990.", "contexts": ["In 1990.", 7]})
    rows.append({"query_id": "bad3", "query": "In 1990?", "answer": "In 1990.", "contexts": ["x"],
                 "reference_date": "not a date"})
    rows.append({"query_id": "dup", "query": "In 1990?", "answer": "In 1990.", "contexts": ["In 1990."] * 3})
    return rows


def metric_sets() -> list[tuple[str, list]]:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    return [
        ("default", [TemporalFaithfulness(), TemporalNDCG()]),
        ("settings", [TemporalFaithfulness(reference_date="2020-01-01"),
                      TemporalNDCG(k=3, gain="exponential", reference_date="2010-06-30")]),
    ]


def result_record(result) -> list[str]:
    return [result.metric, repr(result.score), repr(result.reason), repr(result.reason_code),
            repr(result.success), repr(result.details)]


def build() -> dict:
    from tempo_eval.core.extract import FocusTimeExtractor
    from tempo_eval.engine.scoring import measure_batch

    texts = corpus_texts()
    extractor = FocusTimeExtractor()
    focus = []
    for text, own_date in texts:
        for ref in dict.fromkeys([None, "2024-06-01", own_date]):
            found = extractor.extract(text, ref)
            focus.append([text, ref, repr(sorted(found.years)), repr(found.spans), repr(found.reference_year)])
    rows = golden_rows([text for text, _ in texts])
    results = {}
    for name, metrics in metric_sets():
        scored = asyncio.run(measure_batch([(i, row, metrics) for i, row in enumerate(rows)]))
        results[name] = [[result_record(r) for r in row] for row in scored]
    return {"focus": focus, "rows": rows, "results": results}  # NaN cells as JSON's NaN


if __name__ == "__main__":
    data = build()
    OUT.write_bytes(gzip.compress(json.dumps(data, ensure_ascii=False).encode("utf-8"), 9, mtime=0))
    print(f"{OUT}: {len(data['focus'])} focus times, {len(data['rows'])} rows, {OUT.stat().st_size:,} bytes")
