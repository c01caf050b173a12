"""Benchmark: focus-time extraction against dateparser and a bare year regex, in one run.

    python bench/focus_time.py [--paragraphs 2000] [--dateparser-sample 100] [--repeats 15] [--seed 7]

Generates a seeded corpus of 88-word paragraphs of plain prose in which a fair share of
paragraphs carry years, decades, centuries, ranges, dates, relative phrases, named periods,
weekdays, month-days, month names, quarters, seasons and spelled-out years, and most carry
distractors (money, counts, measures, percentages, phone numbers, modal "may", the noun
"march", "the second half" of a game). Then it times, on the same machine and in the same run:

* ours: `FocusTimeExtractor(reference_date=...).extract(paragraph)` over every paragraph;
* dateparser: `dateparser.search.search_dates(paragraph, languages=['en'])` over a sample
  (it is ~1000x slower), scaled per paragraph;
* bare regex: `re.findall(r"\\b\\d{4}\\b", paragraph)` over every paragraph.

Targets (issue 12): ours at least 200x faster than dateparser, and at most 4x slower than the
bare regex.
Times are CPU times of this process. The two fast tools run interleaved, 15 times by
default, and the best run of each is reported (load from other processes only ever adds time);
garbage collection is off while they run, as `timeit` does. The extractor remembers which
kind of expression a matched text is; its first, cold pass over the corpus is printed too.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tempo_eval.core.extract import FocusTimeExtractor  # noqa: E402

WORDS_PER_PARAGRAPH = 88
REFERENCE_DATE = dt.date(2024, 6, 15)

FILLER = [
    "The committee reviewed the proposal in detail before sending it back for revisions.",
    "Analysts said the results were broadly in line with what the market had expected.",
    "Residents of the northern districts complained about the noise from the construction site.",
    "The report may be revised once the remaining surveys have been processed.",
    "Researchers measured the samples twice to rule out contamination in the laboratory.",
    "A spokesperson declined to comment on the details of the agreement.",
    "The new policy is intended to make the application process simpler for small firms.",
    "Critics argue that the plan does little to address the underlying problem.",
    "The museum reopened its east wing after a long period of renovation work.",
    "Several members of the board questioned whether the budget was realistic.",
    "Teachers welcomed the change but asked for more training and clearer guidance.",
    "The protesters began their march through the city centre shortly after noon.",
    "Engineers have not yet identified the cause of the failure in the cooling system.",
    "Demand for electric vehicles has grown faster than most forecasts predicted.",
    "The study found no significant difference between the two groups of patients.",
    "Local farmers say the weather has been unusually dry for the time of year.",
    "The company plans to hire additional staff to handle the growing number of orders.",
    "Officials stressed that the measures are temporary and will be reviewed regularly.",
    "Visitors can reach the island by ferry from the harbour on the western coast.",
    "The author describes a childhood spent moving between small towns in the south.",
    "Prices for basic goods rose sharply, putting pressure on household budgets.",
    "The court will hear arguments from both sides before reaching a decision.",
    "Volunteers distributed food and blankets to families affected by the flooding.",
    "Scientists hope the telescope will reveal more about the early universe.",
    "The orchestra performed a programme of works by lesser known composers.",
    "Negotiations stalled over the question of who would pay for the repairs.",
    "The bridge was closed to traffic while inspectors examined its foundations.",
    "Many of the original buildings were destroyed, and only a few walls remain.",
    "The airline said it would compensate passengers whose flights were cancelled.",
    "Supporters of the bill say it will protect consumers from hidden charges.",
    "You may want to check the settings before running the update on older machines.",
    "The team scored late in the second half to secure a narrow victory.",
]
DISTRACTORS = [
    "The project cost ${money} and employed {count} people across {small} sites.",
    "The trail is {dist} km long and climbs {height} metres above the valley.",
    "Sales rose by {pct}% to reach {count} units, worth about €{money} in total.",
    "For details call 555-{phone} or write to Room {room}, Building {small}.",
    "The factory produces {count} tons of steel and has {count2} employees.",
    "More than {count} households were without power for {small} hours.",
    "The ship carried {count} passengers and {count2} tonnes of cargo.",
    "See page {room} of the appendix and table {small} for the full figures.",
    "Tickets cost {small} dollars, and nearly {count} visitors attended the opening.",
    "The runners completed the {dist} meters in just under {small} minutes.",
]
TEMPORAL = [
    "The building was completed in {year} after years of delay.",
    "Between {year} and {year2}, the population of the region nearly doubled.",
    "The policy was in force from {year} to {year2}, when it was finally repealed.",
    "Records from the {decade}s show a steady decline in rainfall.",
    "The style became popular in the early {decade}s and faded by the late {decade2}s.",
    "Many families left the valley in the '{dd}s, looking for work in the cities.",
    "The treaty was signed on {day} {month} {year}, in the presence of both leaders.",
    "On {month} {day}, {year}, the company announced its first quarterly loss.",
    "The manuscript dates from the {ordinal} century and was restored in {year}.",
    "Trade collapsed during {period}, and it took decades to recover.",
    "The club won the title in the {year}-{yy} season under a new coach.",
    "Unemployment has fallen steadily over the past {n} years.",
    "Last year the festival attracted its largest crowd, and organisers expect more next year.",
    "The law was changed {n} years ago, but its effects are still debated.",
    "Recently, the council approved a plan to rebuild the old market hall.",
    "Historians compare the crisis to {period} and to the upheavals of the {ordinal} century.",
    "The data, published in {month} {year}, covers the period {year}–{year2}.",
    "The bridge was first built in {old} and rebuilt several times since.",
    "The last decade has seen a sharp rise in remote work across the sector.",
    "Output peaked in {year} and fell again in {year2}, according to the survey.",
    "The records were digitised on {iso} and made public a week later.",
    "The estate passed to his heirs in the {century}00s and was sold in {year}.",
    # resolved against the document date (issue 12)
    "The ministry said {weekday} that exports had slowed.",
    "Investigators are still examining the attacks {month} {day} in the capital.",
    "The summit in {fullmonth} will mark the alliance's anniversary.",
    "The company reported a {ordinal_q}-quarter loss, its first in a decade.",
    "The plant was closed last fall for repairs to the cooling system.",
    "Net income was $40 million, up from $31 million a year earlier.",
    "Sales rose 5 percent from the same period last year, the company said.",
    "The band first played together in nineteen ninety-six.",
]
PERIODS = [
    "World War II", "the First World War", "the Cold War", "the Great Depression",
    "the Victorian era", "the COVID-19 pandemic", "the Great Recession", "the Napoleonic Wars",
    "the Industrial Revolution", "the Vietnam War", "WWII", "the dot-com bubble",
]
MONTHS = ["January", "March", "May", "June", "Sept.", "October", "December", "April"]
FULL_MONTHS = ["January", "March", "May", "June", "September", "October", "December", "April"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ORDINALS = ["12th", "15th", "17th", "18th", "19th", "nineteenth", "twentieth"]


def _fill(template: str, rng: random.Random) -> str:
    year = rng.randint(1750, 2023)
    return template.format(
        year=year,
        year2=year + rng.randint(1, 15),
        yy=f"{(year + 1) % 100:02d}",
        decade=rng.randrange(1800, 2020, 10),
        decade2=rng.randrange(1900, 2020, 10),
        dd=rng.randrange(0, 100, 10) // 10 * 10 or 60,
        day=rng.randint(1, 28),
        month=rng.choice(MONTHS),
        fullmonth=rng.choice(FULL_MONTHS),
        weekday=rng.choice(WEEKDAYS),
        ordinal_q=rng.choice(["first", "second", "third", "fourth"]),
        ordinal=rng.choice(ORDINALS),
        century=rng.randint(15, 19),
        period=rng.choice(PERIODS),
        n=rng.choice(["two", "three", "5", "ten", "20"]),
        old=rng.randint(1100, 1699),
        iso=f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        money=f"{rng.randint(1, 999)},{rng.randint(0, 999):03d}",
        count=rng.randint(1000, 2099),
        count2=rng.randint(100, 9999),
        small=rng.randint(2, 60),
        dist=rng.randint(1000, 2099),
        height=rng.randint(100, 2500),
        pct=rng.randint(2, 40),
        phone=rng.randint(1000, 2099),
        room=rng.randint(1000, 2099),
    )


def make_corpus(paragraphs: int, seed: int) -> list[str]:
    """`paragraphs` paragraphs of exactly 88 words, reproducible from `seed`."""
    rng = random.Random(seed)
    corpus = []
    for _ in range(paragraphs):
        words: list[str] = []
        has_temporal = rng.random() < 0.7  # 30% of paragraphs carry no temporal expression
        while len(words) < WORDS_PER_PARAGRAPH:
            roll = rng.random()
            if has_temporal and roll < 0.3:
                sentence = _fill(rng.choice(TEMPORAL), rng)
            elif roll < 0.5:
                sentence = _fill(rng.choice(DISTRACTORS), rng)
            else:
                sentence = rng.choice(FILLER)
            words.extend(sentence.split())
        corpus.append(" ".join(words[:WORDS_PER_PARAGRAPH]))
    return corpus


def _best_seconds(tools: dict[str, Callable[[str], object]], corpus: list[str], repeats: int) -> dict[str, float]:
    """Best CPU time of each tool over the corpus, the tools interleaved in every repetition so
    that load from other processes hits them alike; garbage collection is off while timing,
    as `timeit` does."""
    best = dict.fromkeys(tools, float("inf"))
    gc.disable()
    try:
        for _ in range(repeats):
            for name, tool in tools.items():
                start = time.process_time()
                for paragraph in corpus:
                    tool(paragraph)
                best[name] = min(best[name], time.process_time() - start)
    finally:
        gc.enable()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=2000)
    parser.add_argument("--dateparser-sample", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    corpus = make_corpus(args.paragraphs, args.seed)
    assert all(len(p.split()) == WORDS_PER_PARAGRAPH for p in corpus)

    extractor = FocusTimeExtractor(reference_date=REFERENCE_DATE)
    extractor.extract("warm-up: compile the grammar in 1999")
    start = time.process_time()
    with_years = sum(1 for p in corpus if extractor.extract(p).years)
    cold = (time.process_time() - start) / len(corpus)
    print(f"corpus: {len(corpus)} paragraphs x {WORDS_PER_PARAGRAPH} words "
          f"(mean {statistics.mean(len(p) for p in corpus):.0f} chars); "
          f"{with_years} ({100 * with_years / len(corpus):.0f}%) have a focus time")

    best = _best_seconds(
        {"ours": extractor.extract, "bare": lambda p: re.findall(r"\b\d{4}\b", p)},
        corpus,
        args.repeats,
    )
    ours = best["ours"] / len(corpus)
    bare = best["bare"] / len(corpus)

    from dateparser.search import search_dates

    sample = corpus[: args.dateparser_sample]
    search_dates(sample[0], languages=["en"])  # warm-up: dateparser loads its data lazily
    start = time.process_time()
    for paragraph in sample:
        search_dates(paragraph, languages=["en"])
    slow = (time.process_time() - start) / len(sample)

    print(f"{'tool':<34}{'ms/paragraph':>14}{'paragraphs/s':>16}")
    for name, seconds in (
        ("tempo_eval FocusTimeExtractor", ours),
        ("  its first pass (compiles, caches)", cold),
        (f"dateparser search_dates (n={len(sample)})", slow),
        (r"re.findall(r'\b\d{4}\b')", bare),
    ):
        print(f"{name:<34}{seconds * 1e3:>14.4f}{1 / seconds:>16,.0f}")
    speedup = slow / ours
    slowdown = ours / bare
    print(f"speed-up over dateparser:  {speedup:8.1f}x  (target >= 200x)  "
          f"{'MET' if speedup >= 200 else 'NOT MET'}")
    print(f"cost relative to bare regex: {slowdown:6.2f}x  (target <= 4x)    "
          f"{'MET' if slowdown <= 4 else 'NOT MET'}")


if __name__ == "__main__":
    main()
