"""Our sentence splitter (`tempo_eval.core.text.split_sentences`) against pysbd, a maintained
rule-based library, on labelled paragraphs written for this project, as written and lower-cased.

Prints, per splitter and casing: boundary precision / recall / F1 (a boundary = the offset where a
gold sentence starts, after the first), the share of paragraphs split exactly right, and the time.

    python bench/sentence_splitters.py        # pysbd is optional: pip install pysbd
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: paragraphs as lists of their gold sentences (joined with one space)
GOLD: list[list[str]] = [
    ["The Great Fire of London began on 2 September 1666.", "It burned until 6 September 1666."],
    ["Reactor No. 4 exploded on 26 April 1986.", "Pripyat was evacuated the next day."],
    ["Dr. Smith arrived at 10 a.m. on Monday.", "She left at noon."],
    ["The U.S. entered the war in 1941.", "The war ended in 1945."],
    ["It cost $2.5 million in 1998.", "By 2005 the price had doubled."],
    ["J. R. R. Tolkien wrote The Hobbit.", "It was published in 1937."],
    ["The company, Acme Inc., was founded in 1990.", "It employs 12,000 people."],
    ["He asked, \"Is it true?\"", "Nobody answered."],
    ["Prices rose by 3.5% in Jan. 2020.", "They fell in March."],
    ["The treaty was signed in Paris, e.g. at Versailles.", "It ended the war."],
    ["Mt. Everest is 8,849 m high.", "It was first climbed in 1953."],
    ["The population was c. 5,000 in 1800.", "It grew quickly after that."],
    ["Apollo 11 landed in 1969!", "What a moment it was."],
    ["The vote was 51.9 vs. 48.1 per cent.", "Leave won."],
    ["See Fig. 3 for details.", "The trend is clear."],
    ["St. Paul's Cathedral was rebuilt by Wren.", "Work ended in 1710."],
    ["Washington D.C. is the capital.", "It lies on the Potomac."],
    ["The meeting ended at 5 p.m.", "Everyone went home."],
    ["Gen. Eisenhower led the landings.", "They began on 6 June 1944."],
    ["The firm (est. 1902) makes glass.", "Its main plant is in Ohio."],
    ["Wait...", "Then it happened."],
    ["The ship sank in 1912.", "More than 1,500 people died.", "Only 706 survived."],
    ["The Berlin Wall fell in 1989.", "Germany reunified in 1990.", "The Soviet Union ended in 1991."],
    ["He studied at Oxford Univ. until 1950.", "Then he moved to London."],
    ["Version 2.0 was released in 2010.", "Version 3.1 followed in 2014."],
]


def boundaries(sentences: list[str]) -> set[int]:
    starts, position = set(), 0
    for k, sentence in enumerate(sentences):
        if k:
            starts.add(position)
        position += len(sentence) + 1
    return starts


def predicted_boundaries(text: str, sentences: list[str]) -> set[int]:
    """Start offsets of the predicted sentences after the first (located in order in `text`)."""
    starts, position = set(), 0
    for k, sentence in enumerate(sentences):
        found = text.find(sentence.strip(), position)
        if found < 0:
            continue
        if k:
            starts.add(found)
        position = found + len(sentence.strip())
    return starts


def evaluate(split, lower: bool) -> dict[str, float]:
    tp = n_pred = n_gold = exact = 0
    started = time.perf_counter()
    for sentences in GOLD:
        gold = [s.lower() for s in sentences] if lower else sentences
        text = " ".join(gold)
        predicted = predicted_boundaries(text, split(text))
        wanted = boundaries(gold)
        tp += len(predicted & wanted)
        n_pred += len(predicted)
        n_gold += len(wanted)
        exact += predicted == wanted
    elapsed = time.perf_counter() - started
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "exact": exact / len(GOLD), "seconds": elapsed}


def main() -> None:
    from tempo_eval.core.text import split_sentences

    splitters = {"tempo_eval": split_sentences}
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        splitters["pysbd"] = segmenter.segment
    except ImportError:
        print("pysbd is not installed (pip install pysbd); measuring ours only")
    print(f"{len(GOLD)} labelled paragraphs, {sum(len(g) for g in GOLD)} sentences")
    for name, split in splitters.items():
        for lower in (False, True):
            r = evaluate(split, lower)
            casing = "lower-cased" if lower else "as written"
            print(f"{name:<11} {casing:<12} boundary P {r['precision']:.3f} R {r['recall']:.3f} F1 {r['f1']:.3f} · "
                  f"exact paragraphs {r['exact']:.2f} · {r['seconds'] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
