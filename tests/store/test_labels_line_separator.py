"""Exported review labels with a Unicode line separator in a claim import again (issue 28)."""

from __future__ import annotations


def test_exported_labels_with_a_line_separator_in_a_claim_import_again() -> None:
    from tempo_eval.store.labels import LabelStore

    labels = LabelStore()
    claim = "The tower\u2028was built in 1889.\u2029"
    labels.set_label(claim, ["It was completed in 1889."], "SUPPORTED")
    exported = labels.export("jsonl")
    assert "\u2028".encode() in exported  # written raw (ensure_ascii=False)
    fresh = labels
    assert fresh.import_labels(exported, "labels.jsonl") == 1
    assert list(fresh.frame()["claim"]) == [claim]

