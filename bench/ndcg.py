"""Gold-mode NDCG@10 over 10,000 queries x 100 documents: the run kernel vs pytrec-eval-terrier.

    python bench/ndcg.py [--queries 10000] [--docs 100] [--k 10] [--repeat 3]

Scores are seeded random values on a coarse grid (many ties, broken by document id), qrels are
graded 0-3 and include documents the run never retrieved. Both tools run in this process on the
same data; pytrec's time counts building the RelevanceEvaluator and evaluate(run), ours the whole
`score_trec_runs` call (the command line's kernel, runs and qrels given as dicts). Best of
--repeat runs each. The values are checked to agree to 1e-9 (queries without a relevant
document: not judged for us, 0.0 for trec_eval). Target: ratio <= 2.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytrec_eval  # noqa: E402

from tempo_eval.compare.trec_scores import score_trec_runs  # noqa: E402


def ndcg_per_query(run: dict, qrels: dict, k: int) -> dict[str, float]:
    return score_trec_runs({"run": run}, qrels, metrics=[f"ndcg@{k}"]).per_query["run"][f"ndcg@{k}"]


def make_data(n_queries: int, n_docs: int, seed: int = 0) -> tuple[dict, dict]:
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for i in range(n_queries):
        docs = [f"doc{n}" for n in rng.sample(range(2_000_000), n_docs + n_docs // 5)]
        run[f"q{i}"] = {doc: rng.randrange(60) / 10 for doc in docs[:n_docs]}  # ~60 values: ties
        judged = rng.sample(docs[: n_docs // 2], n_docs // 5) + docs[n_docs:]  # some never retrieved
        qrels[f"q{i}"] = {doc: rng.choice((0, 0, 1, 1, 2, 3)) for doc in judged}
    return run, qrels


def best_time(function, repeat: int):
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    run, qrels = make_data(args.queries, args.docs)
    measure = f"ndcg_cut.{args.k}"
    pytrec_time, theirs = best_time(
        lambda: pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run), args.repeat
    )
    our_time, ours = best_time(lambda: ndcg_per_query(run, qrels, args.k), args.repeat)

    key = f"ndcg_cut_{args.k}"
    mismatches = 0
    for qid, value in theirs.items():
        if qid not in ours:  # not judged: no relevant document
            mismatches += value[key] != 0.0 or any(g > 0 for g in qrels[qid].values())
        else:
            mismatches += abs(ours[qid] - value[key]) > 1e-9
    mismatches += len(set(ours) - set(theirs))

    print(f"NDCG@{args.k}, {args.queries} queries x {args.docs} documents, best of {args.repeat}")
    print(f"pytrec_eval (evaluator + evaluate): {pytrec_time:.3f} s")
    print(f"tempo_eval score_trec_runs:         {our_time:.3f} s")
    print(f"ratio ours / pytrec:                {our_time / pytrec_time:.2f}  (target <= 2)")
    print(f"queries compared: {len(theirs)}, mismatches: {mismatches}")
    measured = [value for value in ours.values() if not math.isnan(value)]
    print(f"mean NDCG@{args.k} over {len(measured)} measurable queries: {sum(measured) / max(1, len(measured)):.6f}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
