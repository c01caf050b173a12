"""Accuracy of the claim verifiers on the labelled set tests/data/verifier_dev.jsonl.

Prints, per split (train = what the lexical calibration was fitted on, heldout = topics it never
saw, all): per-class precision and recall, macro-F1, the confusion matrix, the flag rate (share of
claims called CONTRADICTED or NOT_SUPPORTED) against the gold flag rate, per-class-of-item accuracy,
and claims per second.

    python bench/verifier_accuracy.py                 # the lexical verifier
    python bench/verifier_accuracy.py --fit           # refit lexical_model.json on the train split first
    python bench/verifier_accuracy.py --write         # also write tempo_eval/verify/verifier_accuracy.json
    python bench/verifier_accuracy.py --nli MODEL_DIR_OR_ID   # the NLI verifier too

The JSON written by --write is what the app shows next to each verifier.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = ROOT / "tests" / "data" / "verifier_dev.jsonl"
LABELS = ("SUPPORTED", "NEUTRAL", "CONTRADICTED")


def load_items(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def fit_lexical(items: list[dict], rounds: int = 2) -> dict:
    """Fit the lexical softmax model on the train split: one row per single-part claim (and per part
    of a SUPPORTED compound claim, whose parts are all supported). The first round takes the most
    similar unit as evidence; later rounds the unit the previous model finds most decisive."""
    from tempo_eval.core.text import split_claims
    from tempo_eval.verify.calibration import fit_softmax
    from tempo_eval.verify.lexical import CLASSES, FEATURES, LexicalVerifier, _decisiveness

    train = [item for item in items if item["split"] == "train"]
    verifier = LexicalVerifier()
    examples = []  # (candidates, label)
    for item in train:
        parts = split_claims(item["claim"]) or [item["claim"]]
        if len(parts) > 1 and item["label"] != "SUPPORTED":
            continue
        for candidates in verifier.judgements(parts, item["premises"]):
            if candidates:
                examples.append((candidates, item["label"]))
    model = None
    for _ in range(rounds):
        rows, labels = [], []
        for candidates, label in examples:
            chosen = candidates[0] if model is None else max(candidates, key=lambda j: _decisiveness(model, j))
            rows.append(chosen.features)
            labels.append(label)
        model = fit_softmax(rows, labels, classes=CLASSES, feature_names=FEATURES, l2=0.01)
    model["trained_on"] = {"items": len(train), "rows": len(examples), "data": "tests/data/verifier_dev.jsonl (split=train)"}
    return model


def scores(gold: list[str], predicted: list[str]) -> dict:
    """Per-class precision / recall / F1, macro-F1, accuracy, confusion, flag rates."""
    per_class = {}
    for label in LABELS:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p == label)
        n_pred = sum(1 for p in predicted if p == label)
        n_gold = sum(1 for g in gold if g == label)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "n": n_gold}
    flagged = {"CONTRADICTED", "NOT_SUPPORTED"}
    return {
        "n": len(gold),
        "accuracy": sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold),
        "macro_f1": sum(c["f1"] for c in per_class.values()) / len(LABELS),
        "per_class": per_class,
        "confusion": {g: {p: sum(1 for a, b in zip(gold, predicted, strict=True) if a == g and b == p) for p in LABELS} for g in LABELS},
        "flag_rate": sum(p in flagged for p in predicted) / len(predicted),
        "gold_flag_rate": sum(g in flagged for g in gold) / len(gold),
    }


def run_verifier(verifier, items: list[dict]) -> tuple[list[str], list[float | None], float]:
    """Verdicts per item, their confidences, and the claims per second of the whole pass."""
    started = time.perf_counter()
    verdicts = [verifier.verify([item["claim"]], item["premises"])[0] for item in items]
    elapsed = time.perf_counter() - started
    predicted = [v.verdict.value if v.verdict.value in LABELS else "NEUTRAL" for v in verdicts]
    return predicted, [v.confidence for v in verdicts], len(items) / elapsed


def report(name: str, items: list[dict], predicted: list[str], confidences: list, rate: float) -> dict:
    out = {"claims_per_second": rate}
    for split in ("train", "heldout", "all"):
        chosen = [i for i, item in enumerate(items) if split == "all" or item["split"] == split]
        gold = [items[i]["label"] for i in chosen]
        pred = [predicted[i] for i in chosen]
        result = scores(gold, pred)
        by_kind = Counter(items[i]["class"] for i in chosen)
        right = Counter(items[i]["class"] for i in chosen if predicted[i] == items[i]["label"])
        result["by_item_class"] = {k: {"n": by_kind[k], "accuracy": right[k] / by_kind[k]} for k in sorted(by_kind)}
        confident = [c for i, c in zip(chosen, [confidences[i] for i in chosen], strict=True) if c is not None]
        result["mean_confidence"] = sum(confident) / len(confident) if confident else None
        out[split] = result
        print(f"\n== {name} · {split} (n={result['n']}) ==")
        print(f"accuracy {result['accuracy']:.3f} · macro-F1 {result['macro_f1']:.3f} · "
              f"flag rate {result['flag_rate']:.3f} (gold {result['gold_flag_rate']:.3f})")
        for label, c in result["per_class"].items():
            print(f"  {label:<13} precision {c['precision']:.3f}  recall {c['recall']:.3f}  F1 {c['f1']:.3f}  n={c['n']}")
        print("  confusion (rows gold, columns predicted: S N C):")
        for g in LABELS:
            print(f"    {g:<13} " + " ".join(f"{result['confusion'][g][p]:4d}" for p in LABELS))
        print("  accuracy by item class: " + ", ".join(f"{k} {v['accuracy']:.2f} ({v['n']})" for k, v in result["by_item_class"].items()))
    print(f"claims per second: {rate:.1f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="refit the lexical model on the train split")
    parser.add_argument("--write", action="store_true", help="write tempo_eval/verify/verifier_accuracy.json")
    parser.add_argument("--nli", metavar="MODEL_DIR_OR_ID", help="also measure the NLI verifier with this model")
    parser.add_argument("--misses", action="store_true", help="print the held-out items the lexical verifier got wrong")
    args = parser.parse_args()

    from tempo_eval.verify.accuracy import ACCURACY_PATH
    from tempo_eval.verify.calibration import save_model
    from tempo_eval.verify.lexical import MODEL_PATH, LexicalVerifier

    items = load_items()
    print(f"{len(items)} labelled items: " + ", ".join(f"{k} {v}" for k, v in Counter(i['label'] for i in items).items()))
    if args.fit:
        model = fit_lexical(items)
        save_model(model, MODEL_PATH)
        print(f"fitted the lexical model on {model['trained_on']['rows']} rows; wrote {MODEL_PATH.relative_to(ROOT)}")
        verifier = LexicalVerifier(model=model)
    else:
        verifier = LexicalVerifier()
    verifier.verify(["warm-up"], ["The model loads once."])
    predicted, confidences, rate = run_verifier(verifier, items)
    results = {"lexical": report("lexical", items, predicted, confidences, rate)}
    if args.misses:
        for item, p in zip(items, predicted, strict=True):
            if p != item["label"] and item["split"] == "heldout":
                print(f"  MISS {item['class']}: gold {item['label']} got {p}: {item['claim']}")
    if args.nli:
        from tempo_eval.verify.nli import NLIVerifier

        nli = NLIVerifier(model=args.nli)
        predicted, confidences, rate = run_verifier(nli, items)
        results["nli"] = report(f"nli ({args.nli})", items, predicted, confidences, rate)
    if args.write:
        lexical = results["lexical"]
        kinds = _by_data_kind(verifier)
        payload = {
            "data": "tests/data/verifier_dev.jsonl",
            "written_by": "bench/verifier_accuracy.py --write",
            "verifiers": {
                "lexical": {
                    "model_id": LexicalVerifier.model_id,
                    "heldout": _summary(lexical["heldout"]),
                    "train": _summary(lexical["train"]),
                    "claims_per_second": round(lexical["claims_per_second"], 1),
                    "weak_classes": _weak(lexical["heldout"]),
                    "by_data_kind": kinds,
                },
                **({"nli": {"model_id": args.nli, "heldout": _summary(results["nli"]["heldout"])}} if args.nli else {}),
            },
        }
        ACCURACY_PATH.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {ACCURACY_PATH.relative_to(ROOT)}")


def _by_data_kind(verifier) -> dict:
    """The verifier's figures per kind of data: QA answers (tests/data/qa_invented.jsonl, held-out
    topics, answer flagged when a sentence is not SUPPORTED), news summaries
    (tests/data/summaries_labelled.jsonl, held-out passages, flagged the same way) and the bundled
    sample (Factual Correctness of its correct answers; its wrong-year answers caught)."""
    import csv
    import importlib.util

    # bench/summaries.py by its path (it loads bench/qa_invented.py the same way): bench/ never
    # goes on sys.path, where its ray.py would shadow the ray package
    spec = importlib.util.spec_from_file_location("summaries", ROOT / "bench" / "summaries.py")
    summaries_bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("summaries", summaries_bench)
    spec.loader.exec_module(summaries_bench)
    load_summaries, measure_summaries = summaries_bench.load_items, summaries_bench.measure
    load_qa, measure_qa = summaries_bench._qa_invented.load_items, summaries_bench._qa_invented.measure

    from tempo_eval.metrics.factual_correctness import FactualCorrectness

    qa = measure_qa(load_qa(), verifier)["heldout"]
    summaries = measure_summaries(load_summaries(), verifier)["heldout"]
    metric = FactualCorrectness(verifier=verifier)
    correct, caught, wrong = [], 0, 0
    for row in csv.DictReader((ROOT / "data" / "sample" / "temporal_qa.csv").open(encoding="utf-8")):
        result = metric.measure(answer=row["answer"], reference=row["reference"])
        if row["query_id"] in SAMPLE_WRONG_YEARS:
            wrong += 1
            caught += wrong_year_caught(result.details["claims"], *SAMPLE_WRONG_YEARS[row["query_id"]])
        else:
            correct.append(result.score)
    print(f"QA answers (held-out): balanced accuracy {qa['verifier']['balanced_accuracy']:.3f}, "
          f"novel-name rule {qa['rule']['balanced_accuracy']:.3f}")
    print(f"summaries (held-out): flag rate {summaries['flag_rate']:.3f}, balanced accuracy {summaries['balanced_accuracy']:.3f}")
    print(f"sample: Factual Correctness of correct answers {sum(correct) / len(correct):.3f}; wrong years caught {caught}/{wrong}")
    return {
        "qa_answers": {
            "data": "tests/data/qa_invented.jsonl (heldout)", "n": qa["verifier"]["n"],
            "balanced_accuracy": round(qa["verifier"]["balanced_accuracy"], 3),
            "rule_balanced_accuracy": round(qa["rule"]["balanced_accuracy"], 3),
        },
        "sample": {
            "data": "data/sample/temporal_qa.csv", "correct_answers_fc": round(sum(correct) / len(correct), 3),
            "wrong_years_caught": caught, "wrong_years": wrong,
        },
        "summaries": {
            "data": "tests/data/summaries_labelled.jsonl (heldout)", "n": summaries["n"],
            "flag_rate": round(summaries["flag_rate"], 3),
            "balanced_accuracy": round(summaries["balanced_accuracy"], 3),
        },
    }


#: the bundled sample's answers with a deliberately wrong year: (year in the answer, right year)
#: (data/sample/README.md)
SAMPLE_WRONG_YEARS = {
    "q2": (1987, 1989), "q4": (2006, 2008), "q5": (1968, 1969), "q7": (1251, 1215),
    "q12": (1942, 1492), "q15": (1813, 1815), "q22": (1984, 1986), "q26": (2009, 2007),
}


def wrong_year_caught(claims: list[dict], wrong: int, right: int) -> bool:
    """True when an answer claim with the wrong year is CONTRADICTED on evidence with the right one."""
    return any(
        c["side"] == "response" and str(wrong) in c["claim"] and c["verdict"] == "CONTRADICTED"
        and str(right) in (c["evidence"] or "")
        for c in claims
    )


def _summary(result: dict) -> dict:
    return {
        "n": result["n"],
        "accuracy": round(result["accuracy"], 3),
        "macro_f1": round(result["macro_f1"], 3),
        "flag_rate": round(result["flag_rate"], 3),
        "gold_flag_rate": round(result["gold_flag_rate"], 3),
        "per_class": {k: {"precision": round(v["precision"], 3), "recall": round(v["recall"], 3)} for k, v in result["per_class"].items()},
    }


def _weak(result: dict) -> list[dict]:
    """The item classes the verifier gets most wrong on held-out data (accuracy below 0.8)."""
    return [
        {"class": k, "accuracy": round(v["accuracy"], 3), "n": v["n"]}
        for k, v in sorted(result["by_item_class"].items(), key=lambda kv: kv[1]["accuracy"])
        if v["accuracy"] < 0.8
    ]


if __name__ == "__main__":
    main()
