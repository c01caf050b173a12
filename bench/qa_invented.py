"""The lexical verifier against the "novel capitalised name" rule on hand-written QA answers.

    python bench/qa_invented.py            # dev and held-out parts, and all
    python bench/qa_invented.py --misses   # also the answers each judged wrong

Data: tests/data/qa_invented.jsonl, written by hand for issue 25 (not generated from the
verifier's rules): 28 topics, each with its retrieved contexts, three faithful paraphrases
(other word order, other number formats, partial names, aliases the contexts introduce, no
diacritics) and three answers with one invented name, number or date. Every third topic is
"heldout": the rules were written on the other topics. Its first run gave 0.907; two of its
faithful misses showed general bugs (a day of a month, "April 17", read as a missing number; "50.5
km" not matching "50.46-kilometre"), fixed after that run, so it is no longer fully held out.

An answer is flagged when any of its sentences is not SUPPORTED (CONTRADICTED or NEUTRAL): that
is what Factual Correctness and Temporal Faithfulness count against an answer. The rule flags an
answer that writes a capitalised word, other than a sentence's first, that the contexts lack.
Balanced accuracy = (share of hallucinated answers flagged + share of faithful ones passed) / 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = ROOT / "tests" / "data" / "qa_invented.jsonl"
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z'’-]*")


def load_items(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def novel_name_rule(answer: str, premises: list[str]) -> bool:
    """True (flag) when the answer writes a capitalised word, not opening a sentence, that no
    premise contains as a word (case-insensitive, a possessive 's dropped)."""
    known = {word.lower() for word in re.findall(r"[A-Za-z'’-]+", " ".join(premises))}
    for match in _CAPITALISED.finditer(answer):
        word = re.sub(r"['’]s$", "", match.group(0)).lower()
        if word not in known:
            return True
    return False


def verifier_flags(verifier, answer: str, premises: list[str]) -> tuple[bool, list]:
    """(flagged, verdicts): the answer's sentences verified against its premises."""
    from tempo_eval.core.text import split_sentences

    verdicts = verifier.verify(split_sentences(answer) or [answer], premises)
    return any(v.verdict.value != "SUPPORTED" for v in verdicts), verdicts


def balanced_accuracy(gold: list[bool], flagged: list[bool]) -> dict:
    positives = [f for g, f in zip(gold, flagged, strict=True) if g]
    negatives = [f for g, f in zip(gold, flagged, strict=True) if not g]
    tpr = sum(positives) / len(positives) if positives else float("nan")
    tnr = sum(not f for f in negatives) / len(negatives) if negatives else float("nan")
    return {"n": len(gold), "tpr": tpr, "tnr": tnr, "balanced_accuracy": (tpr + tnr) / 2,
            "flag_rate": sum(flagged) / len(flagged)}


def measure(items: list[dict], verifier) -> dict:
    """Per part (dev, heldout, all) and per answer kind: the verifier's and the rule's figures."""
    rows = []
    for item in items:
        flagged, verdicts = verifier_flags(verifier, item["answer"], item["premises"])
        rows.append((item, flagged, novel_name_rule(item["answer"], item["premises"]), verdicts))
    out = {}
    for part in ("dev", "heldout", "all"):
        chosen = [r for r in rows if part == "all" or r[0]["split"] == part]
        gold = [r[0]["label"] == "hallucinated" for r in chosen]
        out[part] = {
            "verifier": balanced_accuracy(gold, [r[1] for r in chosen]),
            "rule": balanced_accuracy(gold, [r[2] for r in chosen]),
            "by_kind": {
                kind: {
                    "n": sum(1 for r in chosen if r[0]["kind"] == kind),
                    "verifier_right": sum(1 for r in chosen if r[0]["kind"] == kind and r[1] == (kind != "paraphrase")),
                    "rule_right": sum(1 for r in chosen if r[0]["kind"] == kind and r[2] == (kind != "paraphrase")),
                }
                for kind in ("paraphrase", "name", "number", "date")
            },
        }
    out["rows"] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--misses", action="store_true", help="print the answers the verifier judged wrong")
    args = parser.parse_args()
    from tempo_eval.verify.lexical import LexicalVerifier

    items = load_items()
    result = measure(items, LexicalVerifier())
    for part in ("dev", "heldout", "all"):
        figures = result[part]
        print(f"== {part} (n={figures['verifier']['n']}) ==")
        for name in ("verifier", "rule"):
            f = figures[name]
            print(f"  {name:<9} balanced accuracy {f['balanced_accuracy']:.3f}  (hallucinated flagged {f['tpr']:.3f}, "
                  f"faithful passed {f['tnr']:.3f}, flag rate {f['flag_rate']:.3f})")
        print("  right per kind (verifier / rule / n): " + ", ".join(
            f"{k} {v['verifier_right']}/{v['rule_right']}/{v['n']}" for k, v in figures["by_kind"].items()))
    if args.misses:
        for item, flagged, _, verdicts in result["rows"]:
            if flagged != (item["label"] == "hallucinated"):
                print(f"\nMISS [{item['split']}] {item['id']} ({item['label']}): {item['answer']}")
                for v in verdicts:
                    print(f"   {v.verdict.value} {v.confidence:.2f}: {v.claim} | {v.reason} | evidence: {v.evidence}")


if __name__ == "__main__":
    main()
