"""Build data/sample/answers_over_time.csv: a run whose answers degrade after a year.

Synthetic and labelled so: 240 questions about the decisions of a fictional town council
(Harbourtown), asked once a week from January 2020 to August 2024 (`reference_date`). Each
question names the year of the decision, its one passage states the decision and its year and
is dated (`context_dates`) a few weeks after it. The answers restate the decision with a year:
until the end of 2022 the year is right in 9 answers of 10; from January 2023 on (the system's
knowledge "cutoff") only in 4 of 10, the others give the year before. Temporal faithfulness
(focus time, no model) then scores 1 for a right year and 0 for a wrong one, so the Time page
shows the level drop at 2023 by as-of date.

Run from the repository root:  python data/build_time_sample.py
Deterministic (a seeded generator); the CSV it writes is committed.
"""

from __future__ import annotations

import csv
import json
import random
from datetime import date, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parent / "sample" / "answers_over_time.csv"
#: the first as-of date whose answers are mostly wrong
BREAK = date(2023, 1, 1)
RIGHT_BEFORE, RIGHT_AFTER = 0.9, 0.4
N_ROWS = 240

PROJECTS = [
    "harbour wall repair", "new library wing", "tram line to the station", "flood barrier",
    "market hall roof", "cycle path along the canal", "school extension", "lighthouse museum",
    "fish market move", "park by the old quay", "bridge toll", "ferry timetable",
]
ACTIONS = ["approved", "postponed", "rejected", "funded"]


def rows() -> list[dict[str, str]]:
    rng = random.Random(39)
    out = []
    first = date(2020, 1, 6)  # a Monday
    for i in range(N_ROWS):
        asked = first + timedelta(weeks=i)
        project = PROJECTS[i % len(PROJECTS)]
        action = ACTIONS[(i // len(PROJECTS)) % len(ACTIONS)]
        year = asked.year - 1 - rng.randrange(2)  # a decision a year or two before the question
        decided = date(year, rng.randrange(1, 11), rng.randrange(1, 28))
        published = decided + timedelta(days=rng.randrange(7, 40))
        right = rng.random() < (RIGHT_BEFORE if asked < BREAK else RIGHT_AFTER)
        said = year if right else year - 1
        out.append({
            "query_id": f"t{i + 1:03d}",
            "query": f"What did the Harbourtown council decide about the {project} in {year}?",
            "contexts": json.dumps([f"On {decided.day} {decided:%B} {year}, the Harbourtown council "
                                    f"{action} the {project}."]),
            "answer": f"In {said}, the Harbourtown council {action} the {project}.",
            "reference": f"The council {action} the {project} on {decided.day} {decided:%B} {year}.",
            "reference_date": asked.isoformat(),
            "context_dates": json.dumps([published.isoformat()]),
        })
    return out


def main() -> None:
    data = rows()
    with OUT.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(data[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(data)
    print(f"wrote {OUT} ({len(data)} rows)")


if __name__ == "__main__":
    main()
