"""The calibration behind the lexical verifier and the measured-accuracy note the app shows."""

from __future__ import annotations

import json

import pytest

from tempo_eval.verify.accuracy import accuracy_note, verifier_accuracy
from tempo_eval.verify.calibration import fit_softmax, load_model, predict_proba
from tempo_eval.verify.lexical import CLASSES, FEATURES, MODEL_PATH
from tests.support.paths import ROOT


def test_softmax_regression_learns_a_separable_rule_with_calibrated_probabilities() -> None:
    rows = [[x / 10] for x in range(-10, 11)]
    labels = ["B" if row[0] > 0 else "A" for row in rows]
    model = fit_softmax(rows, labels, classes=("A", "B"), feature_names=("x",), l2=0.001, steps=2000)
    assert predict_proba(model, [0.9])["B"] > 0.9
    assert predict_proba(model, [-0.9])["A"] > 0.9
    assert predict_proba(model, [0.05])["B"] == pytest.approx(0.5, abs=0.2)  # the boundary lies between 0 and 0.1
    assert sum(predict_proba(model, [0.3]).values()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="labels not among the classes"):
        fit_softmax(rows, ["C"] * len(rows), classes=("A", "B"), feature_names=("x",))


def test_the_shipped_model_matches_the_verifier_features() -> None:
    model = load_model(MODEL_PATH)
    assert model["features"] == list(FEATURES) and model["classes"] == list(CLASSES)
    assert model["trained_on"]["data"].endswith("(split=train)")


def test_the_accuracy_note_comes_from_the_bench_output(tmp_path) -> None:
    measured = verifier_accuracy("lexical")
    assert measured is not None and measured["written_by"] == "bench/verifier_accuracy.py --write"
    note = accuracy_note("lexical")
    assert f"macro-F1 {measured['heldout']['macro_f1']:.2f}" in note and "paraphrase-heavy or reasoning" in note
    assert accuracy_note("nli").startswith("Accuracy not measured")
    fake = tmp_path / "acc.json"
    fake.write_text(json.dumps({"verifiers": {"lexical": {"heldout": {
        "n": 10, "accuracy": 0.5, "macro_f1": 0.42, "flag_rate": 0.1, "gold_flag_rate": 0.2}}}}))
    assert "macro-F1 0.42" in accuracy_note("lexical", fake)
    assert verifier_accuracy("lexical", tmp_path / "missing.json") is None


def test_the_accuracy_note_reports_each_data_kind(tmp_path) -> None:
    fake = tmp_path / "acc.json"
    fake.write_text(json.dumps({"verifiers": {"lexical": {
        "heldout": {"n": 10, "accuracy": 0.5, "macro_f1": 0.42, "flag_rate": 0.1, "gold_flag_rate": 0.2},
        "by_data_kind": {
            "qa_answers": {"n": 54, "balanced_accuracy": 0.91, "rule_balanced_accuracy": 0.63},
            "sample": {"correct_answers_fc": 0.67, "wrong_years_caught": 8, "wrong_years": 8},
            "summaries": None,
        }}}}))
    note = accuracy_note("lexical", fake)
    assert "balanced accuracy 0.91, against 0.63" in note
    assert "Factual Correctness 0.67 on its correct answers, 8 of 8 wrong years" in note
    assert "Summaries: not measured" in note
    data = json.loads(fake.read_text())
    data["verifiers"]["lexical"]["by_data_kind"]["summaries"] = {"n": 44, "flag_rate": 0.5, "balanced_accuracy": 0.796}
    fake.write_text(json.dumps(data))
    note = accuracy_note("lexical", fake)
    assert "News summaries, FaithBench-style (44 held-out summaries" in note
    assert "flags 50% of summaries at balanced accuracy 0.80" in note and "not measured" not in note


@pytest.mark.parametrize("doc", ["docs/index.md", "docs/metrics.md"])
def test_the_accuracy_the_docs_quote_is_the_published_one(doc: str) -> None:
    import re

    text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
    lexical = verifier_accuracy("lexical")
    kinds = lexical["by_data_kind"]
    quoted = {
        r"held-out macro-F1 (\d\.\d{3})": f"{lexical['heldout']['macro_f1']:.3f}",
        r"held-out balanced accuracy (\d\.\d{3})": f"{kinds['qa_answers']['balanced_accuracy']:.3f}",
        r"held-out news summaries: flags (\d+%)": f"{kinds['summaries']['flag_rate']:.0%}",
        r"held-out news summaries: flags \d+% at balanced accuracy (\d\.\d{3})": f"{kinds['summaries']['balanced_accuracy']:.3f}",
        r"Factual Correctness (\d\.\d{3}) on (?:the sample's|its) correct answers": f"{kinds['sample']['correct_answers_fc']:.3f}",
    }
    for pattern, published in quoted.items():
        found = re.findall(pattern, text)
        assert found and set(found) == {published}, (doc, pattern, found, published)
