"""CachedVerifier: a re-run answers from the on-disk cache and asks the model nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from tempo_eval.store.verdict_cache import VerdictCache, verdict_key
from tempo_eval.verify.base import ClaimVerdict, Verdict, Verifier
from tempo_eval.verify.cache import CachedVerifier
from tempo_eval.verify.nli import NLIVerifier
from tests.support.tiny_nli import tiny_nli_dir  # noqa: F401

#: every test here runs on the workspace's SQLite file and on a PostgreSQL database (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("workspace_db")

PREMISES = ["Paris is the capital of France. The Eiffel Tower was completed in 1889."]
CLAIMS = ["Paris is the capital of France.", "The Eiffel Tower was built in 1500.", "It rained."]


class CountingVerifier:
    """Test double: SUPPORTED when the claim occurs in a premise, else NEUTRAL; records every call."""

    name = "counting"
    model_id = "test-double"

    def __init__(self, fail_on: frozenset[str] = frozenset()) -> None:
        self.calls: list[list[str]] = []
        self.fail_on = fail_on

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        self.calls.append(list(claims))
        verdicts = []
        for claim in claims:
            if claim in self.fail_on:
                verdicts.append(ClaimVerdict(claim, Verdict.ERROR, error="judge timed out"))
            elif any(claim in premise for premise in premises):
                verdicts.append(ClaimVerdict(claim, Verdict.SUPPORTED, evidence=claim, reason="found"))
            else:
                verdicts.append(ClaimVerdict(claim, Verdict.NEUTRAL, reason="not found"))
        return verdicts

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        return self.verify(claims, premises)


@pytest.fixture
def cache(tmp_path: Path) -> VerdictCache:
    return VerdictCache(tmp_path / "verdicts.sqlite")


def test_rerun_makes_no_inner_calls_and_returns_the_same_verdicts(cache: VerdictCache) -> None:
    inner = CountingVerifier()
    cached = CachedVerifier(inner, cache)
    first = cached.verify(CLAIMS, PREMISES)
    second = cached.verify(CLAIMS, PREMISES)
    assert inner.calls == [CLAIMS]
    assert second == first
    assert (cached.stats.hits, cached.stats.misses) == (3, 3)
    assert cached.stats.hit_rate == 0.5


def test_only_misses_go_to_the_inner_verifier_in_one_call_in_order(cache: VerdictCache) -> None:
    inner = CountingVerifier()
    cached = CachedVerifier(inner, cache)
    cached.verify([CLAIMS[1]], PREMISES)
    result = cached.verify(CLAIMS, PREMISES)
    assert inner.calls == [[CLAIMS[1]], [CLAIMS[0], CLAIMS[2]]]
    assert [v.claim for v in result] == CLAIMS
    assert [v.verdict for v in result] == [Verdict.SUPPORTED, Verdict.NEUTRAL, Verdict.NEUTRAL]


def test_a_claim_repeated_in_one_call_is_decided_once(cache: VerdictCache) -> None:
    inner = CountingVerifier()
    result = CachedVerifier(inner, cache).verify([CLAIMS[0], CLAIMS[0]], PREMISES)
    assert inner.calls == [[CLAIMS[0]]]
    assert [v.claim for v in result] == [CLAIMS[0], CLAIMS[0]]


def test_error_verdicts_are_not_cached(cache: VerdictCache) -> None:
    inner = CountingVerifier(fail_on=frozenset({CLAIMS[2]}))
    cached = CachedVerifier(inner, cache)
    assert cached.verify(CLAIMS, PREMISES)[2].verdict is Verdict.ERROR
    cached.verify(CLAIMS, PREMISES)
    assert inner.calls == [CLAIMS, [CLAIMS[2]]]


def test_premises_settings_and_model_are_part_of_the_key(cache: VerdictCache) -> None:
    inner = CountingVerifier()
    CachedVerifier(inner, cache).verify(CLAIMS[:1], PREMISES)
    CachedVerifier(inner, cache).verify(CLAIMS[:1], [PREMISES[0] + " More."])
    CachedVerifier(inner, cache, settings="top_k=5").verify(CLAIMS[:1], PREMISES)
    other_model = CountingVerifier()
    other_model.model_id = "another-model"
    CachedVerifier(other_model, cache).verify(CLAIMS[:1], PREMISES)
    assert len(inner.calls) == 3 and len(other_model.calls) == 1
    assert len(cache) == 4


def test_keys_are_the_shared_verdict_key(cache: VerdictCache) -> None:
    cached = CachedVerifier(CountingVerifier(), cache, settings="s")
    assert cached.key("c", ["p"]) == verdict_key("counting", "test-double", "c", ["p"], "s")


def test_cached_verdicts_survive_a_new_cache_object(tmp_path: Path) -> None:
    inner = CountingVerifier()
    CachedVerifier(inner, VerdictCache(tmp_path / "v.sqlite")).verify(CLAIMS, PREMISES)
    again = CachedVerifier(inner, VerdictCache(tmp_path / "v.sqlite")).verify(CLAIMS, PREMISES)
    assert len(inner.calls) == 1
    assert again[0].evidence == CLAIMS[0]


def test_default_cache_is_the_workspace_database() -> None:
    inner = CountingVerifier()
    CachedVerifier(inner).verify(CLAIMS, PREMISES)  # TEMPO_EVAL_HOME is a per-test directory
    CachedVerifier(inner).verify(CLAIMS, PREMISES)
    assert len(inner.calls) == 1


def test_averify_uses_the_cache_too(cache: VerdictCache) -> None:
    inner = CountingVerifier()
    cached = CachedVerifier(inner, cache)
    first = asyncio.run(cached.averify(CLAIMS, PREMISES))
    second = asyncio.run(cached.averify(CLAIMS, PREMISES))
    assert second == first
    assert inner.calls == [CLAIMS]


def test_wrapper_delegates_identity_and_is_a_verifier(cache: VerdictCache) -> None:
    cached = CachedVerifier(CountingVerifier(), cache)
    assert (cached.name, cached.model_id) == ("counting", "test-double")
    assert isinstance(cached, Verifier)


def test_real_nli_rerun_loads_no_model_and_gives_identical_verdicts(
    cache: VerdictCache, tiny_nli_dir: Path  # noqa: F811
) -> None:
    first_run = CachedVerifier(NLIVerifier(str(tiny_nli_dir), candidates="exhaustive"), cache)
    first = first_run.verify(CLAIMS, PREMISES)
    assert first_run.stats.misses == 3
    fresh_verifier = NLIVerifier(str(tiny_nli_dir), candidates="exhaustive")
    second_run = CachedVerifier(fresh_verifier, cache)
    second = second_run.verify(CLAIMS, PREMISES)
    assert second == first
    assert second_run.stats.hits == 3 and second_run.stats.misses == 0
    assert fresh_verifier._model is None  # never even loaded: no model call was made


def test_nli_settings_separate_cache_entries(cache: VerdictCache, tiny_nli_dir: Path) -> None:  # noqa: F811
    CachedVerifier(NLIVerifier(str(tiny_nli_dir), candidates="exhaustive"), cache).verify(CLAIMS, PREMISES)
    other = CachedVerifier(NLIVerifier(str(tiny_nli_dir), candidates="embedding", top_k=1), cache)
    assert other.settings != CachedVerifier(NLIVerifier(str(tiny_nli_dir), candidates="exhaustive"), cache).settings
    other.verify(CLAIMS[:1], PREMISES)
    assert other.stats.misses == 1
