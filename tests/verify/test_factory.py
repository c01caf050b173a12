"""make_verifier / available_verifiers: building verifiers by name and saying which can run here."""

from __future__ import annotations

import pytest

from tempo_eval.verify import available_verifiers, make_verifier


def test_unknown_verifier_name_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="nli, llm, lexical"):
        make_verifier("bert")


def test_llm_verifier_needs_a_model_name():
    with pytest.raises(ValueError, match="model"):
        make_verifier("llm", base_url="http://127.0.0.1:9/v1")


def test_verifiers_are_cached_on_disk_unless_asked_not_to():
    from tempo_eval.verify.cache import CachedVerifier
    from tempo_eval.verify.lexical import LexicalVerifier

    assert isinstance(make_verifier("lexical"), CachedVerifier)
    assert isinstance(make_verifier("lexical", cache=False), LexicalVerifier)


def test_llm_verifier_settings_reach_the_provider():
    verifier = make_verifier("llm", model="judge", base_url="http://127.0.0.1:9/v1", temperature=0.3, cache=False)
    assert verifier.provider.temperature == 0.3
    assert verifier.model_id.endswith("judge")


def test_availability_without_the_nli_check_reports_lexical_and_llm():
    status = available_verifiers(check_nli=False, judge_configured=False)
    assert set(status) == {"lexical", "llm"}
    assert status["lexical"][0] is True
    assert status["llm"] == (False, status["llm"][1]) and "No judge configured" in status["llm"][1]


def test_an_nli_model_that_cannot_be_loaded_is_reported_in_one_sentence(tmp_path):
    status = available_verifiers(str(tmp_path / "no-such-model"), judge_configured=True)
    available, why = status["nli"]
    assert available is False
    assert "no-such-model" in why and "\n" not in why and "Traceback" not in why
    assert status["llm"][0] is True
