"""Measured accuracy of the verifiers, as written by `bench/verifier_accuracy.py --write`.

The app shows these figures next to each verifier, so the note on accuracy always comes from the
last bench run on tests/data/verifier_dev.jsonl, never from prose typed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ACCURACY_PATH = Path(__file__).with_name("verifier_accuracy.json")

#: what each verifier cannot judge, by design (the measured weak classes are added to it)
LIMITS = {
    "lexical": "paraphrase-heavy or reasoning claims (it compares words, years, numbers and names; it does not infer)",
    "nli": "claims that need facts outside the premises or arithmetic over them",
    "llm": "nothing by design; its accuracy depends on the judge model",
}


def verifier_accuracy(name: str, path: Path | None = None) -> dict[str, Any] | None:
    """The measured figures of verifier `name` (held-out split first), or None when not measured."""
    source = path or ACCURACY_PATH
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = data.get("verifiers", {}).get(name)
    if found is None:
        return None
    return {**found, "data": data.get("data"), "written_by": data.get("written_by")}


def accuracy_note(name: str, path: Path | None = None) -> str:
    """One line for the app: held-out macro-F1, accuracy and flag rate, and what it cannot judge."""
    measured = verifier_accuracy(name, path)
    limits = LIMITS.get(name, "")
    if measured is None:
        return f"Accuracy not measured on our labelled set. Cannot judge: {limits}." if limits else "Accuracy not measured."
    held = measured["heldout"]
    note = (
        f"Measured on {held['n']} held-out labelled claims: macro-F1 {held['macro_f1']:.2f}, "
        f"accuracy {held['accuracy']:.2f}, flags {held['flag_rate']:.0%} of claims (gold {held['gold_flag_rate']:.0%})."
    )
    weak = measured.get("weak_classes") or []
    if weak:
        note += " Weakest: " + ", ".join(f"{w['class'].replace('_', ' ')} {w['accuracy']:.0%}" for w in weak[:3]) + "."
    note += by_data_kind_note(measured.get("by_data_kind"))
    if limits:
        note += f" Cannot judge: {limits}."
    return note

#: the sentence of each kind of data, filled in with its measured figures
_KIND_NOTES = {
    "qa_answers": "QA answers with one invented name, number or date ({n} held-out answers): "
                  "balanced accuracy {balanced_accuracy:.2f}, against {rule_balanced_accuracy:.2f} "
                  "for the rule \"flag a capitalised name the contexts lack\".",
    "sample": "Bundled sample: Factual Correctness {correct_answers_fc:.2f} on its correct "
              "answers, {wrong_years_caught} of {wrong_years} wrong years contradicted.",
    "summaries": "News summaries, FaithBench-style ({n} held-out summaries, half with one "
                 "hallucination): flags {flag_rate:.0%} of summaries at balanced accuracy "
                 "{balanced_accuracy:.2f}.",
}


def by_data_kind_note(kinds: dict[str, Any] | None) -> str:
    """The measured figures per kind of data (QA answers, the sample, summaries), one sentence each."""
    if not kinds:
        return ""
    parts = [note.format(**kinds[kind]) for kind, note in _KIND_NOTES.items() if kinds.get(kind)]
    if "summaries" in kinds and not kinds["summaries"]:
        parts.append("Summaries: not measured (no labelled summary set).")
    return (" " + " ".join(parts)) if parts else ""
