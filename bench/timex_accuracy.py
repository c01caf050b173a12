"""Accuracy of focus-time extraction on the labelled news/report set (issue 12).

    python bench/timex_accuracy.py [--data tests/data/timex_labelled.tsv]

Every sentence is extracted with its document date as the reference date. Per sentence, the
predicted years P and the expected years G give TP = |P & G|, FP = |P - G|, FN = |G - P|;
precision, recall and F1 are micro-averaged over the sentences of a kind or group. For the
sentences that carry no time expression (durations, hard negatives, plain sentences) the figure
is the share of sentences that get any year at all. Figures are printed for the dev part (the
rules were tuned on it), the two held-out parts (never tuned on) and all together.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tempo_eval.core.extract import FocusTimeExtractor  # noqa: E402

DEFAULT_DATA = ROOT / "tests" / "data" / "timex_labelled.tsv"

#: kind -> group; the targets are set per group
GROUPS = {
    "digit-year": "digit years",
    "weekday": "date-relative",
    "month-day": "date-relative",
    "month": "date-relative",
    "quarter": "date-relative",
    "season": "date-relative",
    "relative": "date-relative",
    "spelled-year": "date-relative",
    "period": "named periods",
    "duration": "no time expression",
    "hard-negative": "no time expression",
    "no-time": "no time expression",
}
NEGATIVE_GROUP = "no time expression"
#: dev was tuned on; heldout and heldout2 (hard negatives) were written before their rules
SPLITS = ("dev", "heldout", "heldout2")
TARGETS = {"digit years": 0.95, "date-relative": 0.85}
MAX_FALSE_YEAR_RATE = 0.01


@dataclass(frozen=True)
class Row:
    line: int
    split: str
    kind: str
    date: str
    years: frozenset[int]
    sentence: str


def parse_years(field: str) -> frozenset[int]:
    """ "-" -> {}, "1990,1991" -> {1990, 1991}, "1980-1988" -> 1980..1988."""
    if field.strip() == "-":
        return frozenset()
    years: set[int] = set()
    for part in field.split(","):
        first, _, last = part.strip().partition("-")
        years.update(range(int(first), int(last or first) + 1))
    return frozenset(years)


def load(path: Path = DEFAULT_DATA) -> list[Row]:
    """The labelled rows; raises ValueError naming the line of a malformed row."""
    rows: list[Row] = []
    header_seen = False
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = raw.split("\t")
        if not header_seen:
            header_seen = True
            continue
        if len(fields) != 5:
            raise ValueError(f"{path}:{number}: expected 5 tab-separated fields, got {len(fields)}")
        split, kind, date, years, sentence = fields
        if split not in SPLITS or kind not in GROUPS:
            raise ValueError(f"{path}:{number}: unknown split {split!r} or kind {kind!r}")
        try:
            parsed = parse_years(years)
        except ValueError:
            raise ValueError(f"{path}:{number}: years must be '-' or years/ranges, got {years!r}") from None
        rows.append(Row(number, split, kind, date, parsed, sentence))
    return rows


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    sentences: int = 0
    with_years: int = 0

    def add(self, predicted: set[int], expected: frozenset[int]) -> None:
        self.tp += len(predicted & expected)
        self.fp += len(predicted - expected)
        self.fn += len(expected - predicted)
        self.sentences += 1
        self.with_years += bool(predicted)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_year_rate(self) -> float:
        return self.with_years / self.sentences if self.sentences else 0.0


def score(rows: list[Row], extractor: FocusTimeExtractor | None = None) -> dict[str, Score]:
    """Scores keyed by kind and by group name."""
    extractor = extractor or FocusTimeExtractor()
    scores: dict[str, Score] = {}
    for row in rows:
        predicted = extractor.extract(row.sentence, row.date).years
        for key in (row.kind, GROUPS[row.kind]):
            scores.setdefault(key, Score()).add(predicted, row.years)
    return scores


def misses(rows: list[Row], extractor: FocusTimeExtractor | None = None) -> list[str]:
    extractor = extractor or FocusTimeExtractor()
    out = []
    for row in rows:
        predicted = extractor.extract(row.sentence, row.date).years
        if predicted != row.years:
            out.append(f"  line {row.line} [{row.split} {row.kind} {row.date}] {row.sentence!r}: "
                       f"got {sorted(predicted)}, expected {sorted(row.years)}")
    return out


def report(title: str, scores: dict[str, Score]) -> None:
    print(f"\n{title}")
    print(f"  {'kind':<22}{'n':>5}{'P':>8}{'R':>8}{'F1':>8}   false-year rate")
    kinds = [k for k in GROUPS if k in scores]
    groups = [g for g in dict.fromkeys(GROUPS.values()) if g in scores]
    for key in kinds + groups:
        s = scores[key]
        label = key if key in GROUPS else f"[{key}]"
        if key == NEGATIVE_GROUP or GROUPS.get(key) == NEGATIVE_GROUP:
            print(f"  {label:<22}{s.sentences:>5}{'':>24}   {s.false_year_rate:6.1%}"
                  f" ({s.with_years}/{s.sentences})")
        else:
            target = TARGETS.get(key)
            mark = "" if target is None else f"  target >= {target}: {'MET' if s.f1 >= target else 'NOT MET'}"
            print(f"  {label:<22}{s.sentences:>5}{s.precision:8.3f}{s.recall:8.3f}{s.f1:8.3f}{mark}")
    if NEGATIVE_GROUP in scores:
        rate = scores[NEGATIVE_GROUP].false_year_rate
        print(f"  false years in sentences without a time expression: {rate:.1%} "
              f"(target <= {MAX_FALSE_YEAR_RATE:.0%}: {'MET' if rate <= MAX_FALSE_YEAR_RATE else 'NOT MET'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--misses", action="store_true", help="list every sentence scored wrong")
    args = parser.parse_args()
    rows = load(args.data)
    extractor = FocusTimeExtractor()
    print(f"{len(rows)} sentences from {args.data.name}")
    for title, part in (
        ("dev (tuned on)", [r for r in rows if r.split == "dev"]),
        ("held-out (never tuned on)", [r for r in rows if r.split == "heldout"]),
        ("held-out 2, hard negatives (never tuned on)", [r for r in rows if r.split == "heldout2"]),
        ("all", rows),
    ):
        report(f"{title}: {len(part)} sentences", score(part, extractor))
    if args.misses:
        print("\nmisses:")
        print("\n".join(misses(rows, extractor)) or "  none")


if __name__ == "__main__":
    main()
