"""Dashboard render time: the comparison page with 3 runs x 1,000 queries, the claims page with
5,000 claims, the Runs page with 200 runs and the Results page with a 100,000-row run, measured
with Streamlit's AppTest (the page script from first to last line, as the server runs it; the
browser's drawing is not included).

    python bench/dashboard.py [--queries 1000] [--claims 5000] [--runs 200] [--rows 100000] [--repeat 3]

The data are seeded and synthetic (this measures the dashboard, not the metrics): three retrieval
systems ranking 10 of 40 candidate documents per query with graded qrels, and one evaluation run
whose results carry 5 verified claims per answer, written through the run store as `evaluate`
writes them; 200 runs of 50 rows x 2 metrics each (through the run store), and one run of
100,000 rows x 2 metrics (bulk-inserted into the same tables, as the store writes them, to keep
the set-up short). Each page is timed three ways:
- first: the first page run in this process (pays one-time imports: plotly, scipy, pyarrow ...);
- new session: a fresh AppTest session with every st.cache_data cleared, in a process that has
  served the page before (what a new visitor of a running server waits for; the frames shared
  through st.cache_resource, read once per process, stay);
- cold: a fresh session with st.cache_data and st.cache_resource cleared (as after a server
  restart: everything is read from the store again);
- rerun: the same session again, as after a click (caches warm).
The references are an empty page and a page showing the same claims with a bare st.dataframe, in
the same process; the ratios are page time / budget. Targets: compare and claims < 2 s (new
session and rerun); Runs and Results < 2 s for a new session and < 1 s on rerun.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BUDGET = 2.0


def build_workspace(n_queries: int, n_claims: int, seed: int = 0) -> tuple[int, int, int]:
    """Fill TEMPO_EVAL_HOME; returns (runs dataset id, qa dataset id, claims run id)."""
    import pandas as pd

    from tempo_eval.io.dataset import Dataset
    from tempo_eval.metrics.base import MetricResult
    from tempo_eval.store.runs import RunStore, frame_content_hash
    from tempo_eval.verify.base import ClaimVerdict, Verdict

    rng = random.Random(seed)
    store = RunStore()
    rows = []
    for q in range(1, n_queries + 1):
        year = rng.randrange(1800, 2024)
        pool = [f"d{q}_{i}" for i in range(40)]
        grades = {d: rng.choice((1, 2, 3)) for d in rng.sample(pool, 5)}
        for system, skill in (("bm25", 0.3), ("dense", 0.5), ("hybrid", 0.6)):
            relevant = [d for d in pool if d in grades]
            ranked = sorted(pool, key=lambda d, s=skill: rng.random() - (s if d in relevant else 0))[:10]
            rows.append({
                "query_id": f"q{q}", "run": system, "query": f"What happened in {year}?",
                "contexts": [f"In {year + rng.randrange(-5, 6)} something happened to {d}." for d in ranked],
                "retrieved_ids": ranked, "gold_ids": grades,
            })
    frame = pd.DataFrame(rows, dtype=object)
    runs_id = store.save_dataset(Dataset(frame, "bench runs", {}, frame_content_hash(frame), "bench"))

    per_answer = 5
    n_rows = max(1, n_claims // per_answer)
    qa_rows = []
    for q in range(n_rows):
        year = rng.randrange(1800, 2024)
        sentences = [f"Event {q}.{i} happened in {year + i}." for i in range(per_answer)]
        qa_rows.append({
            "query_id": f"q{q + 1}", "query": f"When did event {q} happen?", "answer": " ".join(sentences),
            "contexts": [f"Event {q}.{i} happened in {year + i + rng.choice((0, 0, 0, 1))}." for i in range(per_answer)],
            "reference": sentences[0],
        })
    qa = pd.DataFrame(qa_rows, dtype=object)
    qa_id = store.save_dataset(Dataset(qa, "bench qa", {}, frame_content_hash(qa), "bench"))
    run_id, _ = store.create_or_resume_run(qa_id, {"bench": True}, name="bench claims")
    verdicts = [Verdict.SUPPORTED, Verdict.PARTIALLY_SUPPORTED, Verdict.NOT_SUPPORTED, Verdict.CONTRADICTED]
    for i, row in enumerate(qa_rows):
        claims = []
        for sentence, context in zip(row["answer"].split(". "), row["contexts"], strict=False):
            verdict = rng.choice(verdicts)
            p = rng.random()
            claims.append(ClaimVerdict(
                sentence.rstrip(".") + ".", verdict, evidence=context,
                probabilities={"entailment": p, "neutral": (1 - p) / 2, "contradiction": (1 - p) / 2},
                reason="bench",
            ).to_record())
        supported = sum(c["verdict"] == "SUPPORTED" for c in claims)
        result = MetricResult("temporal_faithfulness", supported / len(claims), "bench", None, {"claims": claims})
        store.record_row(run_id, i, row["query_id"], [result])
    store.set_status(run_id, "finished")
    store.close()
    return runs_id, qa_id, run_id


def build_runs_workspace(n_runs: int, n_rows: int, seed: int = 1) -> tuple[int, int, int]:
    """`n_runs` runs of 50 rows on one dataset, and one run of `n_rows` rows on another; returns
    (dataset of the many runs, dataset of the big run, big run id)."""
    import json

    import pandas as pd

    from tempo_eval.io.dataset import Dataset
    from tempo_eval.metrics.base import MetricResult, not_measurable
    from tempo_eval.store.runs import RunStore, frame_content_hash

    rng = random.Random(seed)
    store = RunStore()
    small = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(50)], "query": [f"What happened in {1900 + i}?" for i in range(50)],
        "answer": [f"It happened in {1900 + i}." for i in range(50)],
        "contexts": [[f"In {1900 + i} it happened."] for i in range(50)],
    }, dtype=object)
    many_id = store.save_dataset(Dataset(small, "bench many runs", {}, frame_content_hash(small), "bench"))
    for r in range(n_runs):
        run_id, _ = store.create_or_resume_run(many_id, {"bench": r, "metrics": [{"name": "tf", "settings": {"k": r % 7}}]},
                                               name=f"bench run {r}")
        for i in range(50):
            tf = (not_measurable("temporal_faithfulness", "no_temporal_claims", "none") if rng.random() < 0.1
                  else MetricResult("temporal_faithfulness", rng.random(), "bench"))
            store.record_row(run_id, i, f"q{i}", [tf, MetricResult("temporal_ndcg", rng.random(), "bench")])
        store.set_status(run_id, "finished")

    big = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_rows)], "query": [f"What happened in year {1000 + i % 1000}?" for i in range(n_rows)],
        "answer": [f"It happened in {1000 + i % 1000}." for i in range(n_rows)],
        "contexts": [[f"In {1000 + i % 1000} it happened."] for i in range(n_rows)],
        "run": [("bm25", "dense")[i % 2] for i in range(n_rows)],
    }, dtype=object)
    big_id = store.save_dataset(Dataset(big, "bench big run", {}, frame_content_hash(big), "bench"))
    big_run, _ = store.create_or_resume_run(big_id, {"bench": "big"}, name="bench big run")
    rows = []
    for i in range(n_rows):
        system = big["run"].iloc[i]
        for metric in ("temporal_faithfulness", "temporal_ndcg"):
            nan = rng.random() < 0.05
            rows.append((big_run, i, f"q{i}", system, metric, None if nan else rng.random(), "bench",
                         "no_temporal_claims" if nan else None, None, json.dumps({})))
    with store.connection:
        store.connection.executemany(
            "INSERT INTO results (run_id, row_idx, query_id, system, metric, score, reason, reason_code, success, details)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    store.set_status(big_run, "finished")
    store.close()
    return many_id, big_id, big_run


def time_page(script: str, params: dict[str, str], repeat: int) -> tuple[float, float, float, float]:
    """(first, new session, rerun, cold) seconds; the last three are the best of `repeat`."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    def fresh() -> tuple[AppTest, float]:
        at = AppTest.from_file(script, default_timeout=300)
        at.query_params.update(params)
        start = time.perf_counter()
        at.run()
        elapsed = time.perf_counter() - start
        if at.exception:
            raise RuntimeError(f"{script}: {[e.value for e in at.exception]}")
        return at, elapsed

    _, first = fresh()
    sessions, reruns, colds = [], [], []
    for _ in range(repeat):
        st.cache_data.clear()
        at, elapsed = fresh()
        sessions.append(elapsed)
        start = time.perf_counter()
        at.run()
        reruns.append(time.perf_counter() - start)
        st.cache_data.clear()
        st.cache_resource.clear()
        colds.append(fresh()[1])
    return first, min(sessions), min(reruns), min(colds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--claims", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="tempo_eval_bench_")
    os.environ["TEMPO_EVAL_HOME"] = home
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    runs_id, qa_id, run_id = build_workspace(args.queries, args.claims)
    many_id, big_id, big_run = build_runs_workspace(args.runs, args.rows)
    print(f"workspace {home}: {3 * args.queries} ranked rows, {args.claims} claims, {args.runs} runs, "
          f"a {args.rows:,}-row run; built in {time.perf_counter() - start:.1f}s")

    baseline_script = Path(home) / "baseline.py"
    baseline_script.write_text(
        "import pandas as pd, streamlit as st\n"
        "from tempo_eval.store.runs import RunStore\n"
        f"frame = RunStore().claims_frame({run_id})\n"
        "frame['probabilities'] = frame['probabilities'].astype(str)\n"
        "st.dataframe(frame)\n",
        encoding="utf-8",
    )
    empty_script = Path(home) / "empty.py"
    empty_script.write_text("import streamlit as st\nst.write('hello')\n", encoding="utf-8")

    measurements = [
        ("empty page (reference)", str(empty_script), {}),
        (f"bare st.dataframe of {args.claims} claims (reference)", str(baseline_script), {}),
        (f"compare: 3 runs x {args.queries} queries", str(ROOT / "views" / "compare.py"), {"dataset": str(runs_id)}),
        (f"claims: {args.claims} claims", str(ROOT / "views" / "claims.py"), {"dataset": str(qa_id), "runs": str(run_id)}),
        (f"runs: {args.runs} runs", str(ROOT / "views" / "runs.py"), {"dataset": str(many_id)}),
        (f"results: {args.rows:,} rows x 2 metrics", str(ROOT / "views" / "results.py"),
         {"dataset": str(big_id), "runs": str(big_run)}),
    ]
    #: (new session, rerun) budgets in seconds
    budgets = {"runs": (BUDGET, 1.0), "results": (BUDGET, 1.0)}
    print(f"{'page':42s} {'first s':>8s} {'session s':>9s} {'rerun s':>8s} {'cold s':>7s} "
          f"{'session/budget':>14s} {'rerun/budget':>12s}")
    over = []
    for label, script, params in measurements:
        first, session, rerun, cold = time_page(script, params, args.repeat)
        session_budget, rerun_budget = budgets.get(label.split(":")[0], (BUDGET, BUDGET))
        print(f"{label:42s} {first:8.2f} {session:9.2f} {rerun:8.2f} {cold:7.2f} "
              f"{session / session_budget:14.2f} {rerun / rerun_budget:12.2f}")
        if "reference" not in label and (session > session_budget or rerun > rerun_budget):
            over.append(label)
    print("every page within its budget" if not over else f"OVER budget: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
