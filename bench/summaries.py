"""The lexical verifier on FaithBench-style news summaries: flag rate and balanced accuracy.

    python bench/summaries.py            # dev and held-out parts, and all
    python bench/summaries.py --misses   # also the summaries it judged wrong, with their verdicts

Data: tests/data/summaries_labelled.jsonl, written by hand for issue 25 (not generated from the
verifier's rules): 22 short news-like passages on varied topics (a council vote, a mill fire, a new
gecko, a cup final, inflation, a tunnel, a clinical trial, a painting on loan, a storm, company
results, a school phone ban, ...), each with 4 summaries. About half are faithful (a paraphrase
or a compression of the passage) and half carry one hallucination of the FaithBench kinds: an
invented entity, a wrong number, a wrong date or year, an unsupported addition, or swapped roles
(the winner and the loser, the judge and the lawyer). Each summary is labelled `consistent` or
`hallucinated`. The split was fixed when the file was written, before any measuring: odd-numbered
passages are "dev", even-numbered ones "heldout"; nothing was tuned on the held-out half.

A summary is flagged when any of its sentences is not SUPPORTED by the passage (CONTRADICTED or
NEUTRAL), as bench/qa_invented.py flags an answer. Flag rate = share of summaries flagged;
balanced accuracy = (share of hallucinated summaries flagged + share of faithful ones passed) / 2.
The issue's held figure for this kind of data: flag rate <= 0.60 at balanced accuracy >= 0.55.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _sibling(name: str):
    """bench/NAME.py as a module, without putting bench/ on sys.path (its ray.py would shadow ray)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


_qa_invented = _sibling("qa_invented")
balanced_accuracy, verifier_flags = _qa_invented.balanced_accuracy, _qa_invented.verifier_flags

DATA = ROOT / "tests" / "data" / "summaries_labelled.jsonl"
KINDS = ("paraphrase", "compression", "invented_entity", "wrong_number", "wrong_date", "unsupported_addition", "swapped_roles")


def load_items(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(items: list[dict], verifier) -> dict:
    """Per part (dev, heldout, all): flag rate, balanced accuracy and the right calls per kind."""
    rows = []
    for item in items:
        flagged, verdicts = verifier_flags(verifier, item["summary"], [item["source"]])
        rows.append((item, flagged, verdicts))
    out = {}
    for part in ("dev", "heldout", "all"):
        chosen = [r for r in rows if part == "all" or r[0]["split"] == part]
        gold = [r[0]["label"] == "hallucinated" for r in chosen]
        out[part] = {
            **balanced_accuracy(gold, [r[1] for r in chosen]),
            "by_kind": {
                kind: {
                    "n": sum(1 for r in chosen if r[0]["kind"] == kind),
                    "right": sum(1 for r in chosen if r[0]["kind"] == kind and r[1] == (r[0]["label"] == "hallucinated")),
                }
                for kind in KINDS
            },
        }
    out["rows"] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--misses", action="store_true", help="print the summaries the verifier judged wrong")
    args = parser.parse_args()
    from tempo_eval.verify.lexical import LexicalVerifier

    result = measure(load_items(), LexicalVerifier())
    for part in ("dev", "heldout", "all"):
        f = result[part]
        print(f"== {part} (n={f['n']}) ==")
        print(f"  flag rate {f['flag_rate']:.3f}  balanced accuracy {f['balanced_accuracy']:.3f}  "
              f"(hallucinated flagged {f['tpr']:.3f}, faithful passed {f['tnr']:.3f})")
        print("  right per kind: " + ", ".join(f"{k} {v['right']}/{v['n']}" for k, v in f["by_kind"].items() if v["n"]))
    if args.misses:
        for item, flagged, verdicts in result["rows"]:
            if flagged != (item["label"] == "hallucinated"):
                print(f"\nMISS [{item['split']}] {item['id']} ({item['label']}, {item['kind']}): {item['summary']}")
                for v in verdicts:
                    print(f"   {v.verdict.value} {v.confidence:.2f}: {v.claim} | {v.reason} | evidence: {v.evidence}")


if __name__ == "__main__":
    main()
