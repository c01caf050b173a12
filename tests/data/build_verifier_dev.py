"""Build tests/data/verifier_dev.jsonl, the labelled set of the offline verifier, from the
hand-written topics in `verifier_topics.py`: `python tests/data/build_verifier_dev.py`.

Each item is {"id", "topic", "class", "claim", "premises", "label", "split"}. Labels are the
hand labels of `verifier_topics.py`, or hold by construction for the mechanical variants (a
changed year, day or quantity contradicts; another topic's premise is unrelated). A quarter of the
topics (every fourth) are "heldout": calibration never sees them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from verifier_topics import DISTRACTORS, TOPICS  # noqa: E402

S, N, C = "SUPPORTED", "NEUTRAL", "CONTRADICTED"
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_DATE = re.compile(
    r"\b(\d{1,2}) (January|February|March|April|May|June|July|August|September|October|November|December) (\d{4})\b"
)
_QUANTITY = re.compile(
    r"(\$?)(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?= (?:houses|people|metres|per|kilometres|years|seconds|countries|"
    r"copies|events|nations|works|troops|soldiers|parish|GB|degrees|independent|million)\b|\b(?=\s|\.|,)(?<=\$\d{3}))"
)
_YEAR_SHIFTS = [3, -2, 11, -7, 5, -13, 1, 21, -4, 8]

#: hand-written items for the failure classes the issue names (premise, claim, label, class)
EXTRA: list[tuple[str, str, str, str]] = [
    ("Perth, the West Australian capital, has about 2.1 million residents.", "Perth is the capital of Western Australia.", S, "word_forms"),
    ("Perth, the West Australian capital, has about 2.1 million residents.", "Perth is the capital of South Australia.", C, "entity_swap"),
    ("The French government announced the new rail plan in 2019.", "France announced the new rail plan in 2019.", S, "word_forms"),
    ("The Spanish parliament approved the budget in March 2021.", "Spain's parliament passed the budget in 2021.", S, "word_forms"),
    ("The German chancellor visited Japan in 2019.", "The chancellor of Germany travelled to Japan in 2019.", S, "word_forms"),
    ("Chelsea Football Club beat Arsenal 3-1 at Stamford Bridge.", "Chelsea FC beat Arsenal at Stamford Bridge.", S, "word_forms"),
    ("Norwegian explorer Roald Amundsen reached the South Pole in December 1911.", "Roald Amundsen of Norway reached the South Pole in 1911.", S, "word_forms"),
    ("Police said a man and a woman were arrested at the scene on Friday.", "Two individuals were arrested at the scene.", S, "number_words"),
    ("Three firefighters were injured while tackling the blaze.", "Two firefighters were hurt while fighting the fire.", C, "number_conflict"),
    ("The company's two founders met at university in 1998.", "The company was founded by two people who met at university.", S, "number_words"),
    ("Jane Ward (September 1, 1933 - September 13, 2006) was an American poet.", "Jane Ward was born in 1950.", C, "year_conflict"),
    ("Jane Ward (September 1, 1933 - September 13, 2006) was an American poet.", "Jane Ward died in 2006.", S, "year_range"),
    ("Jane Ward (September 1, 1933 - September 13, 2006) was an American poet.", "The poet Jane Ward was born in 1933.", S, "year_range"),
    ("Ward, 1933 -- 2006, wrote six collections of poems.", "Ward was born in 1933.", S, "year_range"),
    ("He played for the club during the 2007-08 season.", "He played for the club in 2008.", S, "year_range"),
    ("He played for the club during the 2007-08 season.", "He played for the club in 2011.", C, "year_conflict"),
    ("Reactor No. 4 at the plant exploded during a test in 1986.", "The plant's reactor exploded in 1986.", S, "negation"),
    ("No. 10 Downing Street has been the prime minister's residence since 1735.", "The prime minister has lived at Downing Street since 1735.", S, "negation"),
    ("The bridge was not finished until 1932.", "The bridge was finished in 1932.", S, "negation"),
    ("The museum has no record of the painting before 1850.", "The painting was recorded by the museum in 1820.", N, "negation"),
    ("The treaty was never ratified by the senate.", "The senate ratified the treaty.", C, "negation"),
    ("The river does not freeze in winter.", "The river freezes every winter.", C, "negation"),
    # reference answers are often bare fragments: the date is all they state
    ("On 3 March 1931.", "The song became the national anthem on 3 March 1931.", S, "short_answer"),
    ("On 3 March 1931.", "The song became the national anthem on 3 March 1913.", C, "short_answer"),
    ("In 1869.", "The first transcontinental railroad in the US was completed in 1869.", S, "short_answer"),
    ("In 1869.", "The first transcontinental railroad in the US was completed in 1872.", C, "short_answer"),
    ("21 July 1969.", "Armstrong stepped onto the Moon on 21 July 1969 (UTC).", S, "short_answer"),
    ("21 July 1969.", "The crew splashed down in the Pacific Ocean.", N, "short_answer"),
    ("About 8,000 runners.", "Around 8,000 runners took part in the first race.", S, "short_answer"),
    ("About 8,000 runners.", "Around 3,000 runners took part in the first race.", C, "short_answer"),
    ("It opened in May 1883.", "The Brooklyn Bridge opened to traffic in May 1883.", S, "short_answer"),
    ("It opened in May 1883.", "The Brooklyn Bridge opened to traffic in 1890.", C, "short_answer"),
    ("It opened in May 1883.", "The bridge was designed by John Roebling.", N, "short_answer"),
    ("She was elected in 1979.", "Margaret Thatcher became prime minister in 1979.", S, "short_answer"),
]


def _shift_year(text: str, k: int, avoid: set[int]) -> str | None:
    match = _YEAR.search(text)
    if not match:
        return None
    year = int(match.group(1))
    for step in range(len(_YEAR_SHIFTS)):
        new = year + _YEAR_SHIFTS[(k + step) % len(_YEAR_SHIFTS)]
        if new not in avoid:
            return text[: match.start()] + str(new) + text[match.end():]
    return None


def _shift_day(text: str, premise: str) -> str | None:
    match = _DATE.search(text)
    if not match:
        return None
    day = int(match.group(1))
    new = day + 3 if day <= 25 else day - 5
    if f"{new} {match.group(2)}" in premise:
        new = day + 1 if day < 28 else day - 2
    return text[: match.start(1)] + str(new) + text[match.end(1):]


def _change_quantity(text: str) -> str | None:
    match = _QUANTITY.search(text)
    if not match:
        return None
    raw = match.group(2)
    value = float(raw.replace(",", ""))
    new = value * 3 if value < 50 else value * 0.6
    if "." in raw:
        formatted = f"{new:.1f}"
    elif "," in raw:
        formatted = f"{round(new, -2):,.0f}"
    else:
        formatted = f"{round(new):d}"
    return text[: match.start(2)] + formatted + text[match.end(2):]


def _long_lowercase(premise: str, k: int) -> str:
    """The premise lower-cased inside one run-on 'sentence' of distractors (no full stops)."""
    before = [DISTRACTORS[(k + i) % len(DISTRACTORS)] for i in range(3)]
    after = [DISTRACTORS[(k + 5 + i) % len(DISTRACTORS)] for i in range(3)]
    parts = [p.rstrip(".") for p in (*before, *premise.split(". "), *after)]
    return (" and ".join(parts)).lower().replace(".", "")


def build() -> list[dict]:
    items: list[dict] = []

    def add(topic: str, kind: str, claim: str | None, premises: list[str], label: str, split: str) -> None:
        if claim is None:
            return
        items.append({
            "id": f"{topic}-{len([i for i in items if i['topic'] == topic]) + 1:02d}",
            "topic": topic, "class": kind, "claim": claim, "premises": premises, "label": label, "split": split,
        })

    for k, topic in enumerate(TOPICS):
        split = "heldout" if k % 4 == 3 else "train"
        tid, premise = topic["id"], topic["premise"]
        years = {int(y) for y in _YEAR.findall(premise)}
        for j, claim in enumerate(topic["s"]):
            add(tid, "exact" if j == 0 else "paraphrase", claim, [premise], S, split)
        add(tid, "compound", topic["k"], [premise], S, split)
        add(tid, "compound", _shift_year(topic["k"], k + 1, years), [premise], C, split)
        for claim in topic["n"]:
            add(tid, "related_not_stated", claim, [premise], N, split)
        add(tid, "entity_swap", topic["e"], [premise], C, split)
        add(tid, "negation", topic["neg"], [premise], C, split)
        add(tid, "year_conflict", _shift_year(topic["s"][0], k, years), [premise], C, split)
        dated = next((c for c in (*topic["s"], topic["k"]) if _DATE.search(c)), None)
        add(tid, "date_conflict", dated and _shift_day(dated, premise), [premise], C, split)
        counted = next((c for c in topic["s"] if _QUANTITY.search(c)), None)
        add(tid, "number_conflict", counted and _change_quantity(counted), [premise], C, split)
        other = TOPICS[(k + 7) % len(TOPICS)]["premise"]
        add(tid, "unrelated", topic["s"][0], [other], N, split)
        add(tid, "unrelated", topic["s"][1], [DISTRACTORS[k % len(DISTRACTORS)]], N, split)
        long_text = _long_lowercase(premise, k)
        add(tid, "long_lowercase", topic["s"][1], [long_text], S, split)
        add(tid, "long_lowercase", topic["n"][0], [long_text], N, split)
        add(tid, "long_lowercase", _shift_year(topic["s"][0], k + 3, years), [long_text], C, split)
    for j, (premise, claim, label, kind) in enumerate(EXTRA):
        add("issue", kind, claim, [premise], label, "heldout" if j % 4 == 3 else "train")
    return items


def main() -> None:
    items = build()
    out = HERE / "verifier_dev.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"wrote {len(items)} items to {out}")


if __name__ == "__main__":
    main()
