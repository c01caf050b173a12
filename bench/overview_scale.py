"""The Overview page on a large dated dataset with a stored run of it: the time of its first draw.

    python bench/overview_scale.py [--rows 200000] [--home DIR]

A workspace (a temporary TEMPO_EVAL_HOME) gets a generated news-retrieval dataset of --rows rows
(weekly questions on a handful of topics, two retrievers, one of them over an old snapshot, three
dated documents per row, current and outdated answers: the shape of `data/asof/news_asof.jsonl`,
every text distinct), and a run of it evaluated by the engine (`tempo_eval.engine.runner.evaluate`:
focus-time Temporal Faithfulness and Temporal NDCG@10, and the five as-of metrics). Then the
Overview page is opened in Streamlit's AppTest with that dataset and run selected, as a user
opening it would, and the time of that first draw and of a second (a rerun: what the caches keep)
is printed. `--home DIR` keeps the workspace there and reuses it when it already holds the run (to
time the page before and after a change on the same data). Target: a few seconds at 200,000 rows
(issue 23).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOPICS = [
    ("fed", "What is the Federal Reserve's target range for the federal funds rate?",
     "The Federal Reserve's target range stands at {value}.",
     ["4.25 to 4.50 percent", "3.75 to 4 percent", "3 to 3.25 percent", "2.25 to 2.50 percent"]),
    ("twitter", "Who is the CEO of Twitter?", "{value} leads Twitter as its chief executive.",
     ["Elon Musk", "Parag Agrawal", "Jack Dorsey", "Dick Costolo"]),
    ("uk_pm", "Who is the prime minister of the United Kingdom?", "{value} is the prime minister.",
     ["Rishi Sunak", "Liz Truss", "Boris Johnson", "Theresa May"]),
    ("iphone", "What is Apple's newest iPhone?", "Apple's newest phone, the {value}, is selling well.",
     ["iPhone 14", "iPhone 13", "iPhone 12", "iPhone 11"]),
]


def generated_rows(n_rows: int, start: dt.date = dt.date(2015, 1, 2)) -> list[dict]:
    """`n_rows` dataset rows, two per (week, topic): the live retriever (documents of the week
    before the question, now and then one of the week after: a leak) and the snapshot one (the
    same documents a year and more older, answering with last year's value)."""
    rows = []
    for i in range(n_rows):
        pair, live = divmod(i, 2)
        week, topic = divmod(pair, len(TOPICS))
        slug, question, template, values = TOPICS[topic]
        asked = start + dt.timedelta(weeks=week % 2000, days=week // 2000)
        shift = (-3, -10, 2 if week % 7 == 0 else -17) if live == 0 else (-400, -430, -800)
        dates = [asked + dt.timedelta(days=d) for d in shift]
        value = values[0] if live == 0 else values[1 + week % 3]
        ids = [f"{slug}-{'live' if live == 0 else 'snap'}-{week}-{n}" for n in range(3)]
        rows.append({
            "query_id": f"w{week}-{slug}",
            "run": "live" if live == 0 else "snapshot",
            "query": f"{question} (week {week})",
            "reference_date": asked.isoformat(),
            "retrieved_ids": ids,
            "contexts": [f"{d:%d %B %Y}. " + template.format(value=value) + f" Report {week}-{n}."
                         for n, d in enumerate(dates)],
            "context_dates": [d.isoformat() for d in dates],
            "gold_ids": [f"{slug}-live-{week}-0", f"{slug}-live-{week}-1"],
            "answer": f"According to the reports of {asked.year}, {value}.",
            "reference": values[0],
            "outdated_references": values[1:],
        })
    return rows


def build_workspace(home: Path, n_rows: int) -> tuple[int, int, float]:
    """The generated dataset and an engine run of it in the workspace `home`: (dataset id, run id,
    seconds the evaluation took)."""
    os.environ["TEMPO_EVAL_HOME"] = str(home)
    import pandas as pd

    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import Dataset
    from tempo_eval.metrics.answer_currency import AnswerCurrency
    from tempo_eval.metrics.evidence_age import (
        FutureLeak,
        MedianEvidenceAge,
        RecencyNDCG,
        StaleEvidence,
    )
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.runs import RunStore, frame_content_hash

    frame = pd.DataFrame(generated_rows(n_rows), dtype=object)  # canonical columns: no mapping
    store = RunStore()
    dataset_id = store.save_dataset(Dataset(frame, f"generated news, {n_rows:,} rows", {},
                                            frame_content_hash(frame), "generated"))
    metrics = [TemporalFaithfulness(mode="focus_time"), TemporalNDCG(k=10, mode="focus_time"),
               FutureLeak(k=10), StaleEvidence(k=10), MedianEvidenceAge(k=10), RecencyNDCG(k=10),
               AnswerCurrency()]
    started = time.perf_counter()
    run = evaluate(store.get_dataset(dataset_id), metrics, store=store, run_name="generated news run")
    took = time.perf_counter() - started
    store.close()
    return dataset_id, run.run_id, took


def time_overview(dataset_id: int, run_id: int) -> tuple[float, float]:
    """(first draw, rerun) of the Overview page in AppTest, seconds."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
    at.query_params["dataset"] = str(dataset_id)
    at.query_params["runs"] = str(run_id)
    at.switch_page("views/overview.py")
    started = time.perf_counter()
    at.run()
    first = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"the page failed: {[e.value for e in at.exception]}")
    started = time.perf_counter()
    at.run()
    return first, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="dataset rows (default 200,000)")
    parser.add_argument("--home", type=Path, help="keep the workspace here (reused when it holds the run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="overview_scale_") as scratch:
        home = args.home or Path(scratch)
        home.mkdir(parents=True, exist_ok=True)
        marker = home / f"overview_scale_{args.rows}.txt"
        if marker.exists():
            os.environ["TEMPO_EVAL_HOME"] = str(home)
            dataset_id, run_id = (int(x) for x in marker.read_text().split())
            print(f"reusing the workspace {home}: dataset {dataset_id}, run {run_id}")
        else:
            dataset_id, run_id, took = build_workspace(home, args.rows)
            marker.write_text(f"{dataset_id} {run_id}")
            print(f"{args.rows:,} rows evaluated by the engine in {took:.1f} s (7 metrics)")
        first, again = time_overview(dataset_id, run_id)
        print(f"Overview, first draw: {first:.1f} s; rerun: {again:.1f} s  (load average "
              f"{os.getloadavg()[0]:.1f}; target: a few seconds)")


if __name__ == "__main__":
    main()
