"""A run is named the same short way wherever it appears, and the label says how runs differ
(issue 41: two runs cut to the same prefix looked alike on every page)."""

from __future__ import annotations

from datetime import datetime

from tempo_eval.common.run_names import run_label
from tempo_eval.engine.scoring import default_run_name, run_config
from tempo_eval.metrics import TemporalFaithfulness, TemporalNDCG
from tempo_eval.verify import make_verifier

WHEN = datetime(2026, 11, 24, 14, 5)


def _config(*metrics):
    return run_config(list(metrics))


def test_a_claims_run_with_the_automatic_mode_is_named_claims_not_focus_time():
    verifier = make_verifier("lexical")
    name = default_run_name("temporal_qa.csv", [TemporalFaithfulness(verifier=verifier)], WHEN)
    assert name == "temporal_qa · claims TF · lexical · 24 Nov 14:05"
    assert default_run_name("temporal_qa.csv", [TemporalFaithfulness()], WHEN) == "temporal_qa · focus-time TF · 24 Nov 14:05"


def test_the_label_leads_with_the_id_and_what_ran_and_drops_a_default_name():
    verifier = make_verifier("lexical")
    claims = _config(TemporalFaithfulness(verifier=verifier))
    focus = _config(TemporalFaithfulness(), TemporalNDCG(k=10))
    assert run_label(2, default_run_name("temporal_qa.csv", [TemporalFaithfulness(verifier=verifier)], WHEN),
                     claims) == "#2 · claims TF · lexical"
    assert run_label(1, "temporal_qa · focus-time TF + NDCG@10 · 24 Nov 14:01", focus) == "#1 · focus-time TF + NDCG@10"


def test_a_name_of_its_own_is_kept_and_cut_after_the_id_and_settings():
    verifier = make_verifier("lexical")
    claims = _config(TemporalFaithfulness(verifier=verifier))
    long_a = "retriever comparison, prompt version A, November"
    long_b = "retriever comparison, prompt version A, December"
    a, b = run_label(3, long_a, claims), run_label(4, long_b, claims)
    assert a.startswith("#3 · claims TF · lexical · retriever comparison")
    assert a.endswith("…") and len(a) < len("#3 · claims TF · lexical · ") + len(long_a)
    assert a != b  # cut names: the ids still tell them apart
    assert run_label(5, "prompt v2", claims) == "#5 · claims TF · lexical · prompt v2"


def test_a_run_without_a_readable_config_is_labelled_by_id_and_name():
    assert run_label(8, "imported ragas", None) == "#8 · imported ragas"
    assert run_label(9, "", {"metrics": []}) == "#9"
