"""As-of metrics on an MS MARCO-sized run against NDCG on the same run: the time ratio.

    python bench/asof.py [--queries 7000] [--docs 1000] [--doc-dates 8800000] [--k 10] [--repeat 3]

The run holds --queries x --docs documents drawn from a corpus of --doc-dates ids, each dated
in a doc-dates file of that many `docid<TAB>date` lines (ISO dates; one in 50 blank, one in 200
a year, one in 500 an RFC 2822 date: the per-value fallback is exercised). Every query has an
as-of date (a query-dates file) and a few graded qrels, some never retrieved.

Timed, best of --repeat:
- NDCG: `score_trec_runs({"run": run}, qrels, metrics=["ndcg@K"])`, the kernel `compare --metric ndcg@K` uses;
- as-of, given the run as the streaming TREC reader keeps it (each query's top k rows grouped by
  query, best first: the ranking NDCG also needs) and the qrels as columns: streaming the
  doc-dates file (keeping the lines of the top-k and judged documents), reading the query-dates
  file, looking up the dates of the top-k and of the relevant documents, and
  future leak, stale evidence, median age and Recency NDCG at k for every query
  (`tempo_eval.metrics.asof_columns.run_asof_scores`).
Printed: both times, the ratio as-of / NDCG with and without reading the doc-dates file, and
the peak memory each allocated (numpy via tracemalloc, pyarrow via its pool). Target: ratio <= 1.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from tempo_eval.compare.trec_scores import score_trec_runs  # noqa: E402
from tempo_eval.core.pubdates import read_id_dates  # noqa: E402
from tempo_eval.metrics.asof_columns import run_asof_scores, top_docids  # noqa: E402


def write_dates(path: Path, ids: list[str], days: np.ndarray, rng: np.random.Generator) -> None:
    texts = np.datetime_as_string(days.astype("datetime64[D]"), unit="D").astype(object)
    kind = rng.integers(0, 1000, len(ids))
    texts[kind < 20] = ""
    years = np.char.mod("%d", days.astype("datetime64[D]").astype("datetime64[Y]").astype(int) + 1970).astype(object)
    texts[(kind >= 20) & (kind < 25)] = years[(kind >= 20) & (kind < 25)]
    rfc = (kind >= 25) & (kind < 27)
    texts[rfc] = [f"Fri, 06 Jan {y} 10:00:00 +0100" for y in years[rfc]]
    with open(path, "w") as handle:
        handle.write("\n".join(f"{doc}\t{text}" for doc, text in zip(ids, texts, strict=True)))
        handle.write("\n")


def make_data(n_queries: int, n_docs: int, n_corpus: int, folder: Path, seed: int = 0):
    rng = np.random.default_rng(seed)
    corpus = [f"D{n}" for n in range(n_corpus)]
    doc_days = rng.integers(14_000, 19_700, n_corpus)  # 2008 .. 2023
    write_dates(folder / "doc-dates.tsv", corpus, doc_days, rng)
    query_days = rng.integers(18_000, 19_700, n_queries)
    with open(folder / "query-dates.tsv", "w") as handle:
        handle.write("".join(
            f"q{i}\t{np.datetime64(int(d), 'D')}\n" for i, d in enumerate(query_days)
        ))
    picks = rng.integers(0, n_corpus, (n_queries, n_docs))
    scores = np.round(rng.random((n_queries, n_docs)) * 60) / 10
    run, qrels = {}, {}
    for q in range(n_queries):
        docs = [corpus[i] for i in picks[q]]
        run[f"q{q}"] = dict(zip(docs, scores[q].tolist(), strict=False))
        judged = docs[:3] + [corpus[int(rng.integers(0, n_corpus))]]
        qrels[f"q{q}"] = {doc: int(rng.integers(0, 4)) for doc in judged}
    return run, qrels


def run_columns(run: dict, qrels: dict, k: int):
    """The run as the streaming TREC reader keeps it: each query's top k rows, grouped by query
    code, best first (score descending as float32, ties by id descending), and qrels columns."""
    import pyarrow as pa

    qids = list(run)
    codes, docids = [], []
    for code, qid in enumerate(qids):
        ranked = sorted(run[qid].items(), key=lambda item: (np.float32(item[1]), item[0]), reverse=True)[:k]
        codes += [code] * len(ranked)
        docids += [doc for doc, _ in ranked]
    code_of = {qid: code for code, qid in enumerate(qids)}
    q_codes = [code_of[qid] for qid, grades in qrels.items() for _ in grades]
    q_docids = [doc for grades in qrels.values() for doc in grades]
    q_grades = [grade for grades in qrels.values() for grade in grades.values()]
    return (qids, np.array(codes), pa.array(docids),
            (np.array(q_codes), pa.array(q_docids), np.array(q_grades, dtype=float)))


def read_doc_dates(folder: Path, columns, k: int):
    """The doc-dates file, streamed, keeping the lines of the top-k and the judged documents."""
    import pyarrow as pa

    qids, codes, docids, qrels = columns
    wanted = pa.concat_arrays([top_docids(codes, docids, np.arange(len(qids)), k), qrels[1]])
    return read_id_dates(folder / "doc-dates.tsv", wanted=wanted)


def asof_scores(folder: Path, columns, k: int, doc_dates):
    qids, codes, docids, qrels = columns
    query_dates = read_id_dates(folder / "query-dates.tsv", kind="query")
    return run_asof_scores(codes, docids, np.arange(len(qids)), qids, k, doc_dates=doc_dates,
                           query_dates=query_dates, qrels=qrels)


def timed(function, repeat: int):
    best, result, peak = math.inf, None, 0
    for _ in range(repeat):
        pool = pa.default_memory_pool()
        before = pool.max_memory()
        tracemalloc.start()
        start = time.perf_counter()
        result = function()
        elapsed = time.perf_counter() - start
        _, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        best = min(best, elapsed)
        peak = max(peak, traced + max(0, pool.max_memory() - before))
    return best, result, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=7_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--doc-dates", type=int, default=8_800_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        run, qrels = make_data(args.queries, args.docs, args.doc_dates, folder)
        print(f"data: {args.queries} queries x {args.docs} docs, {args.doc_dates} doc dates "
              f"({time.perf_counter() - start:.1f}s to make)")
        ndcg_time, ndcg, ndcg_peak = timed(
            lambda: score_trec_runs({"run": run}, qrels, metrics=[f"ndcg@{args.k}"]).per_query["run"][f"ndcg@{args.k}"],
            args.repeat)
        columns = run_columns(run, qrels, args.k)
        read_time, read_docs, read_peak = timed(lambda: read_doc_dates(folder, columns, args.k), args.repeat)
        scores_time, scores, scores_peak = timed(
            lambda: asof_scores(folder, columns, args.k, read_docs), args.repeat)
        total = read_time + scores_time
    measured = int(np.count_nonzero(~np.isnan(scores["future_leak"])))
    print(f"ndcg@{args.k}: {ndcg_time:.2f}s, peak {ndcg_peak / 2**20:.0f} MiB "
          f"({sum(not math.isnan(v) for v in ndcg.values())} queries measured)")
    print(f"as-of@{args.k}: {total:.2f}s = reading doc-dates {read_time:.2f}s + the rest {scores_time:.2f}s; "
          f"peak {max(read_peak, scores_peak) / 2**20:.0f} MiB ({measured} queries measured, "
          f"mean future leak {np.nanmean(scores['future_leak']):.3f}, "
          f"mean Recency NDCG {np.nanmean(scores['recency_ndcg']):.3f})")
    print(f"ratio as-of / ndcg: {total / ndcg_time:.2f} (without reading doc-dates: {scores_time / ndcg_time:.2f})")
    print(f"memory ratio as-of / ndcg: {max(read_peak, scores_peak) / ndcg_peak:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
