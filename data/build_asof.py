"""Build data/asof/: a small dated news-retrieval fixture for the as-of metrics (issue 23).

    python data/build_asof.py

Weekly questions (every Friday of the first half of 2023) about four facts that change over time
(the Fed's target range, Twitter's CEO, the UK prime minister, the newest iPhone), answered by two
retrievers over one corpus of weekly news articles (2021-06 .. 2023-09) and an undated
encyclopedia page per topic:

- `live`: a news index kept current. It retrieves the latest articles on or before the question
  date; about one question in four also gets an article published a few days after it (a
  backtest leak: the index was not cut at the question date).
- `snapshot`: the same retriever over a snapshot of the index frozen on 2022-09-30: its evidence
  grows stale, and its answers become outdated after every change.

Written (deterministic, seed 23):
- `news_asof.jsonl`: one row per (question, retriever), with alias column names as users have
  them: question_date (-> reference_date), published (-> context_dates, mixed date formats and
  nulls), outdated_answers (-> outdated_references), run, retrieved_ids, contexts, gold_ids,
  answer, reference;
- `run_live.trec`, `run_snapshot.trec` (depth 20), `qrels.txt`, `doc-dates.tsv` (every
  document, blank for the encyclopedia pages) and `query-dates.tsv`.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent / "asof"
SNAPSHOT = dt.date(2022, 9, 30)
FIRST_ARTICLE, LAST_ARTICLE = dt.date(2021, 6, 4), dt.date(2023, 9, 29)

#: topic -> (question, [(from date, value)], how an article states the value)
FACTS = {
    "fed": ("What is the Federal Reserve's target range for the federal funds rate?", [
        (dt.date(2021, 1, 1), "0 to 0.25 percent"),
        (dt.date(2022, 3, 16), "0.25 to 0.50 percent"),
        (dt.date(2022, 5, 4), "0.75 to 1 percent"),
        (dt.date(2022, 6, 15), "1.50 to 1.75 percent"),
        (dt.date(2022, 7, 27), "2.25 to 2.50 percent"),
        (dt.date(2022, 9, 21), "3 to 3.25 percent"),
        (dt.date(2022, 11, 2), "3.75 to 4 percent"),
        (dt.date(2022, 12, 14), "4.25 to 4.50 percent"),
        (dt.date(2023, 2, 1), "4.50 to 4.75 percent"),
        (dt.date(2023, 3, 22), "4.75 to 5 percent"),
        (dt.date(2023, 5, 3), "5 to 5.25 percent"),
        (dt.date(2023, 7, 26), "5.25 to 5.50 percent"),
    ], "The Federal Reserve's target range for the federal funds rate stands at {value}."),
    "twitter": ("Who is the CEO of Twitter?", [
        (dt.date(2021, 1, 1), "Parag Agrawal"),
        (dt.date(2022, 10, 27), "Elon Musk"),
        (dt.date(2023, 6, 5), "Linda Yaccarino"),
    ], "{value} leads Twitter as its chief executive."),
    "uk_pm": ("Who is the prime minister of the United Kingdom?", [
        (dt.date(2021, 1, 1), "Boris Johnson"),
        (dt.date(2022, 9, 6), "Liz Truss"),
        (dt.date(2022, 10, 25), "Rishi Sunak"),
    ], "Prime Minister {value} addressed Parliament this week."),
    "iphone": ("What is Apple's newest iPhone?", [
        (dt.date(2021, 1, 1), "iPhone 12"),
        (dt.date(2021, 9, 24), "iPhone 13"),
        (dt.date(2022, 9, 16), "iPhone 14"),
        (dt.date(2023, 9, 22), "iPhone 15"),
    ], "Apple's newest phone, the {value}, is selling well."),
}
OUTLETS = ("reuters", "apnews", "bbc", "ft")


def value_on(topic: str, day: dt.date) -> str:
    return [value for start, value in FACTS[topic][1] if start <= day][-1]


def previous_values(topic: str, day: dt.date) -> list[str]:
    current = value_on(topic, day)
    values = [value for start, value in FACTS[topic][1] if start <= day]
    return list(dict.fromkeys(v for v in reversed(values) if v != current))


def date_text(day: dt.date, rng: random.Random) -> str:
    """How a feed or a scraper writes a date: ISO mostly, sometimes RFC 2822 or spelled out."""
    kind = rng.random()
    if kind < 0.7:
        return day.isoformat()
    if kind < 0.85:
        return f"{day:%a}, {day.day:02d} {day:%b %Y} 14:00:00 +0000"
    return f"{day.day} {day:%B %Y}"


def build_corpus(rng: random.Random) -> dict[str, dict]:
    docs: dict[str, dict] = {}
    for topic, (_, _, template) in FACTS.items():
        docs[f"wiki-{topic}"] = {"topic": topic, "day": None, "date": None,
                                 "text": template.format(value=value_on(topic, dt.date(2021, 1, 1)))}
        day = FIRST_ARTICLE + dt.timedelta(days=rng.randrange(5))
        while day <= LAST_ARTICLE:
            outlet = rng.choice(OUTLETS)
            doc_id = f"{outlet}-{topic}-{day:%Y%m%d}"
            docs[doc_id] = {"topic": topic, "day": day, "date": date_text(day, rng),
                            "text": f"{day:%d %B %Y}. " + template.format(value=value_on(topic, day))}
            day += dt.timedelta(days=7 + rng.randrange(-2, 3))
    return docs


def retrieve(docs: dict[str, dict], topic: str, as_of: dt.date, cutoff: dt.date | None,
             leak: bool, rng: random.Random, depth: int = 20) -> list[str]:
    """The topic's articles newest first up to the cut (the index's last day), the encyclopedia
    page third, other topics' articles below; a leaked article from after the question first."""
    last = min(as_of, cutoff) if cutoff else as_of
    on_topic = sorted((d for d, doc in docs.items() if doc["topic"] == topic and doc["day"] and doc["day"] <= last),
                      key=lambda d: docs[d]["day"], reverse=True)
    ranked = on_topic[:2] + [f"wiki-{topic}"] + on_topic[2:8]
    if leak:
        after = [d for d, doc in docs.items() if doc["topic"] == topic and doc["day"]
                 and as_of < doc["day"] <= as_of + dt.timedelta(days=12)]
        if after:
            ranked.insert(rng.randrange(2), min(after, key=lambda d: docs[d]["day"]))
    others = [d for d, doc in docs.items() if doc["topic"] != topic and doc["day"] and doc["day"] <= last]
    ranked += rng.sample(others, depth - len(ranked))
    return ranked[:depth]


def answer(docs: dict[str, dict], ranked: list[str], topic: str) -> str:
    """The reader answers from the top-ranked article's value."""
    top = next(d for d in ranked if docs[d]["topic"] == topic)
    day = docs[top]["day"] or dt.date(2021, 1, 1)
    return f"According to the latest reports, {value_on(topic, day)}."


def main() -> None:
    rng = random.Random(23)
    OUT.mkdir(exist_ok=True)
    docs = build_corpus(rng)
    topics = list(FACTS)
    fridays = [dt.date(2023, 1, 6) + dt.timedelta(weeks=w) for w in range(26)]
    rows, runs, qrels, query_dates = [], {"live": [], "snapshot": []}, [], []
    for week, as_of in enumerate(fridays):
        topic = topics[week % len(topics)]
        qid = f"w{week + 1:02d}-{topic}"
        query_dates.append(f"{qid}\t{as_of.isoformat()}")
        current = value_on(topic, as_of)
        since = max(start for start, _ in FACTS[topic][1] if start <= as_of)
        gold = [d for d, doc in docs.items() if doc["topic"] == topic and doc["day"] and since <= doc["day"] <= as_of]
        gold = sorted(gold, key=lambda d: docs[d]["day"], reverse=True)[:4]
        qrels += [f"{qid} 0 {d} 1" for d in gold]
        leak = rng.random() < 0.25
        for run, cutoff in (("live", None), ("snapshot", SNAPSHOT)):
            ranked = retrieve(docs, topic, as_of, cutoff, leak and run == "live", rng)
            runs[run] += [f"{qid} Q0 {d} {rank} {20 - rank + rng.random():.4f} {run}"
                          for rank, d in enumerate(ranked, 1)]
            top = ranked[:10]
            rows.append({
                "query_id": qid, "run": run, "question": FACTS[topic][0],
                "question_date": as_of.isoformat(),
                "retrieved_ids": top,
                "contexts": [docs[d]["text"] for d in top],
                "published": [docs[d]["date"] for d in top],
                "gold_ids": gold,
                "answer": answer(docs, ranked, topic),
                "reference": current,
                "outdated_answers": previous_values(topic, as_of),
            })
    with open(OUT / "news_asof.jsonl", "w") as handle:
        handle.write("".join(json.dumps(row) + "\n" for row in rows))
    for run, lines in runs.items():
        (OUT / f"run_{run}.trec").write_text("\n".join(lines) + "\n")
    (OUT / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (OUT / "query-dates.tsv").write_text("\n".join(query_dates) + "\n")
    (OUT / "doc-dates.tsv").write_text("".join(f"{d}\t{doc['date'] or ''}\n" for d, doc in docs.items()))
    print(f"wrote {OUT}: {len(rows)} rows, {len(docs)} documents")


if __name__ == "__main__":
    main()
