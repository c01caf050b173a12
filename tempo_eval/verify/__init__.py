"""Verifiers: who decides SUPPORTED / NEUTRAL / CONTRADICTED for a claim.

- ``nli``: the local DeBERTa NLI model (`NLIVerifier`),
- ``llm``: an OpenAI-compatible judge (`LLMVerifier`),
- ``lexical``: offline MiniLM similarity plus a calibrated model of word coverage and year / date /
  number / name / negation agreement (`LexicalVerifier`).

`make_verifier(name, ...)` builds one by name (wrapped in the on-disk verdict cache unless
`cache=False`); `available_verifiers()` says which can run here and, if not, why.
Implementations are imported lazily: importing this package loads no model library.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import Any

from tempo_eval.verify.base import (
    HALLUCINATED,
    VERDICT_LABELS,
    ClaimVerdict,
    Verdict,
    Verifier,
    VerifierUnavailable,
    missing_extra,
    verdict_label,
)

VERIFIER_NAMES = ("nli", "llm", "lexical")
DEFAULT_NLI_MODEL = "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli"

__all__ = [
    "HALLUCINATED",
    "VERDICT_LABELS",
    "CachedVerifier",
    "VERIFIER_NAMES",
    "ClaimVerdict",
    "LLMVerifier",
    "LexicalVerifier",
    "NLIVerifier",
    "Verdict",
    "Verifier",
    "VerifierUnavailable",
    "available_verifiers",
    "default_lexical_verifier",
    "default_nli_verifier",
    "make_verifier",
    "missing_extra",
    "verdict_label",
]


def make_verifier(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    cache: bool = True,
    **settings: Any,
) -> Verifier:
    """Build the verifier called `name`.

    `model` is the NLI checkpoint (hub id or local directory) for "nli" and the judge model for
    "llm"; `base_url`/`api_key` are for "llm" only. Extra `settings` go to the verifier's
    constructor (e.g. `device`, `batch_size` for nli). With `cache=True` (default) verdicts are
    kept in the workspace's verdict cache, so a re-run asks no model again.
    """
    if name == "nli":
        from tempo_eval.verify.nli import NLIVerifier

        verifier: Verifier = NLIVerifier(model=model or DEFAULT_NLI_MODEL, **settings)
    elif name == "llm":
        if not model:
            raise ValueError("the llm verifier needs model=... (the judge model name)")
        from tempo_eval.llm.provider import OpenAIProvider
        from tempo_eval.verify.llm import LLMVerifier

        provider_settings = {k: settings.pop(k) for k in list(settings) if k in _PROVIDER_SETTINGS}
        provider = OpenAIProvider(model=model, base_url=base_url, api_key=api_key, **provider_settings)
        verifier = LLMVerifier(provider, **settings)
    elif name == "lexical":
        from tempo_eval.verify.lexical import LexicalVerifier

        verifier = LexicalVerifier(**settings)
    else:
        raise ValueError(f"unknown verifier {name!r}; choose one of {', '.join(VERIFIER_NAMES)}")
    if not cache:
        return verifier
    from tempo_eval.verify.cache import CachedVerifier

    return CachedVerifier(verifier)


def default_lexical_verifier() -> Verifier:
    """The offline verifier metrics use when none is given, behind the workspace's verdict cache."""
    from tempo_eval.store.db import database_location

    return _cached_default("lexical", database_location())


def default_nli_verifier() -> Verifier:
    """The default NLI verifier (DeBERTa, loaded on first use), behind the verdict cache."""
    from tempo_eval.store.db import database_location

    return _cached_default("nli", database_location())


@functools.cache
def _cached_default(name: str, db_path: str) -> Verifier:
    # keyed by the database path so a changed TEMPO_EVAL_HOME gets its own cache
    from tempo_eval.store.verdict_cache import VerdictCache
    from tempo_eval.verify.cache import CachedVerifier

    return CachedVerifier(make_verifier(name, cache=False), VerdictCache(db_path))


_PROVIDER_SETTINGS = frozenset(
    {"timeout", "max_retries", "max_concurrency", "temperature", "seed", "response_format"}
)


def available_verifiers(
    nli_model: str | None = None, *, judge_configured: bool | None = None, check_nli: bool = True
) -> dict[str, tuple[bool, str]]:
    """Which verifiers can run here: name -> (available, one sentence saying why or why not).

    The NLI check tries to load the checkpoint (cached per model by `NLIVerifier`), which takes
    seconds; `check_nli=False` leaves "nli" out so a caller can run that check in the background.
    """
    status: dict[str, tuple[bool, str]] = {}
    if check_nli:
        from tempo_eval.verify.nli import NLIVerifier

        status["nli"] = NLIVerifier(model=nli_model or DEFAULT_NLI_MODEL).check_available()
    from tempo_eval.verify.lexical import LexicalVerifier

    status["lexical"] = LexicalVerifier().check_available()  # the extra looked up, nothing loaded
    if judge_configured is None:
        judge_configured = bool(os.environ.get("OPENAI_API_KEY"))
    status["llm"] = (
        (True, "A judge endpoint and model are set.")
        if judge_configured
        else (False, "No judge configured: give an endpoint and a model (and a key if it needs one).")
    )
    return status


#: the module of each implementation, imported the first time it is asked for
_LAZY = {"NLIVerifier": "nli", "LLMVerifier": "llm", "LexicalVerifier": "lexical",
         "CachedVerifier": "cache"}


def __getattr__(name: str) -> Any:
    # Lazy access to the implementations keeps `import tempo_eval.verify` light.
    if name in _LAZY:
        return getattr(importlib.import_module(f"tempo_eval.verify.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'tempo_eval.verify' has no attribute {name!r}")
