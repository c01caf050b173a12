"""Human review: labels stored by claim + premises, export/import, agreement and kappa, rescoring."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from tempo_eval.compare.review import agreement, cohen_kappa, rescore
from tempo_eval.io.errors import InputError
from tempo_eval.store.labels import LabelStore, claim_premises, premises_hash


def test_kappa_matches_hand_computed_values() -> None:
    # 10 items: agree on 7. Rater A: S S S S S N N N C C; rater B: S S S S N N N S C N
    a = list("SSSSSNNNCC")
    b = list("SSSSNNNSCN")
    # p_o = 7/10; p_e = (5*5 + 3*4 + 2*1) / 100 = 0.39; kappa = (0.7 - 0.39) / 0.61
    assert cohen_kappa(a, b) == pytest.approx((0.7 - 0.39) / 0.61)
    assert cohen_kappa(list("SNC"), list("SNC")) == pytest.approx(1.0)
    # systematic disagreement on two balanced labels: p_o = 0, p_e = 0.5 -> -1
    assert cohen_kappa(list("SNSN"), list("NSNS")) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([], []))
    assert math.isnan(cohen_kappa(list("SS"), list("SS")))  # p_e = 1: undefined


def test_agreement_maps_verdicts_to_three_classes_and_skips_errors() -> None:
    human = ["SUPPORTED", "NEUTRAL", "CONTRADICTED", "NEUTRAL", "SUPPORTED"]
    model = ["SUPPORTED", "NOT_SUPPORTED", "CONTRADICTED", "SUPPORTED", "ERROR"]
    result = agreement(human, model)
    assert result["n"] == 4 and result["accuracy"] == pytest.approx(0.75)
    assert result["per_class"]["SUPPORTED"] == {"precision": 0.5, "recall": 1.0, "n": 1}
    assert result["per_class"]["NEUTRAL"]["recall"] == pytest.approx(0.5)
    assert result["kappa"] == pytest.approx(cohen_kappa(human[:4], ["SUPPORTED", "NEUTRAL", "CONTRADICTED", "SUPPORTED"]))


def test_labels_survive_reruns_and_round_trip_through_csv_and_jsonl(tmp_path) -> None:
    store = LabelStore()
    premises = ["The tower was completed in 1889."]
    store.set_label("Built in 1889.", premises, "supported", note="checked")
    store.set_label("Built in 1900.", premises, "CONTRADICTED")
    key = ("Built in 1889.", premises_hash(premises))
    assert store.lookup([key]) == {key: "SUPPORTED"}
    store.set_label("Built in 1889.", premises, "NEUTRAL")  # a correction replaces the label
    assert store.lookup([key]) == {key: "NEUTRAL"}
    with pytest.raises(ValueError, match="label must be one of"):
        store.set_label("x", premises, "maybe")

    for fmt in ("csv", "jsonl"):
        data = store.export(fmt)
        other = LabelStore(tmp_path / f"other-{fmt}.sqlite")
        assert other.import_labels(data, f"labels.{fmt}") == 2
        assert sorted(other.frame()["label"]) == ["CONTRADICTED", "NEUTRAL"]
        assert other.lookup([key]) == {key: "NEUTRAL"}


def test_a_bad_label_file_names_the_row_and_field_and_writes_nothing() -> None:
    store = LabelStore()
    good = json.dumps({"claim": "a", "premises": ["p"], "label": "SUPPORTED"})
    bad = json.dumps({"claim": "b", "premises": ["p"], "label": "PROBABLY"})
    with pytest.raises(InputError) as caught:
        store.import_labels(f"{good}\n{bad}\n".encode(), "mine.jsonl")
    assert "mine.jsonl, row 2, column 'label'" in str(caught.value) and "PROBABLY" in str(caught.value)
    assert store.frame().empty
    with pytest.raises(InputError, match="column 'premises_hash'"):
        store.import_labels(b"claim,label\nx,SUPPORTED\n", "l.csv")
    with pytest.raises(InputError, match="does not match"):
        store.import_labels(json.dumps({"claim": "a", "premises": ["p"], "premises_hash": "0" * 64, "label": "NEUTRAL"}).encode(), "l.jsonl")


def test_claim_premises_follow_the_metric() -> None:
    row = {"answer": "A.", "reference": "R.", "contexts": ["c1", "c2"]}
    assert claim_premises("factual_correctness", {"side": "response"}, row) == ["R."]
    assert claim_premises("factual_correctness", {"side": "reference"}, row) == ["A."]
    assert claim_premises("temporal_faithfulness", {}, row) == ["c1", "c2"]
    assert claim_premises("ndcg", {}, row) is None


def test_rescore_lets_human_labels_override_verdicts() -> None:
    claims = pd.DataFrame({
        "row": [0, 0, 0, 1, 1],
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "metric": ["factual_correctness"] * 3 + ["temporal_faithfulness"] * 2,
        "side": ["response", "response", "reference", None, None],
        "verdict": ["SUPPORTED", "NEUTRAL", "SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED"],
        "human": [None, "SUPPORTED", None, "SUPPORTED", None],
    })
    scores = rescore(claims).set_index("row")
    # FC: precision 1/2, recall 1 -> F1 2/3; with the label precision 1 -> F1 1
    assert scores.loc[0, "model_score"] == pytest.approx(2 / 3) and scores.loc[0, "human_score"] == pytest.approx(1.0)
    # TF: (0 + 0.5) / 2 -> with the label (1 + 0) / 2
    assert scores.loc[1, "model_score"] == pytest.approx(0.25) and scores.loc[1, "human_score"] == pytest.approx(0.5)
    assert scores.loc[0, "labelled"] == 1
