"""The verifier chosen on Evaluate (lexical, NLI model or LLM judge, with its settings), shared
with every page that checks claims (Conversation), so a choice is made once per session; which
API key the LLM judge gets (`judge_api_key`), and whether it answers (`check_judge`: one cheap
request before a run starts, so a wrong endpoint, model or key is reported at once instead of as
an error on every row).

The Evaluate page's widgets are keyed "keep_ev_*" (kept across pages by
`selection.keep_page_settings`); this module reads them with the same defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import streamlit as st

KEY_TYPED = "the key typed here (this session only)"
KEY_SERVER = "the server's OPENAI_API_KEY"
KEY_NONE = "no key"
PING_PROMPT = 'Reply with the JSON object {"ok": true} and nothing else.'
DEFAULT_NLI_MODEL = "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli"

#: session key -> default of every Evaluate setting the verifier depends on
_DEFAULTS = {
    "keep_ev_verifier": "lexical",
    "keep_ev_nli_model": DEFAULT_NLI_MODEL,
    "keep_ev_judge_url": "",
    "keep_ev_judge_model": "",
    "keep_ev_api_key": "",
}


def chosen_settings() -> dict[str, Any]:
    """The verifier settings of this session's Evaluate page (defaults where it was not opened):
    verifier, nli_model, judge_url, judge_model, api_key."""
    state = st.session_state
    value = {key: state.get(key, default) for key, default in _DEFAULTS.items()}
    return {
        "verifier": value["keep_ev_verifier"],
        "nli_model": str(value["keep_ev_nli_model"]).strip() or DEFAULT_NLI_MODEL,
        "judge_url": str(value["keep_ev_judge_url"]).strip(),
        "judge_model": str(value["keep_ev_judge_model"]).strip(),
        "api_key": str(value["keep_ev_api_key"]),
    }


def describe(settings: dict[str, Any]) -> str:
    """One line naming the verifier and its model, for captions."""
    name = settings["verifier"]
    if name == "nli":
        return f"NLI model {settings['nli_model']}"
    if name == "llm":
        return f"LLM judge {settings['judge_model'] or '(no model given)'} at {settings['judge_url'] or 'the default endpoint'}"
    return "lexical verifier (offline, calibrated on labelled claims)"


def judge_api_key(base_url: str, typed_key: str, env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The API key the LLM judge gets, and which key that is (one of KEY_TYPED, KEY_SERVER, KEY_NONE).

    - a key typed on the page is used as it is, with any endpoint;
    - a custom endpoint (`base_url`) with no typed key gets the placeholder "not-needed": the
      server's OPENAI_API_KEY must never go to an address a visitor typed;
    - the default endpoint with no typed key: None, so the provider reads the server's
      OPENAI_API_KEY (KEY_SERVER when it is set, KEY_NONE when not).
    """
    from tempo_eval.llm.provider import PLACEHOLDER_API_KEY

    env = os.environ if env is None else env
    if typed_key.strip():
        return typed_key.strip(), KEY_TYPED
    if base_url.strip():
        return PLACEHOLDER_API_KEY, KEY_NONE
    return None, KEY_SERVER if env.get("OPENAI_API_KEY") else KEY_NONE


def check_judge(base_url: str, model: str, api_key: str | None, *, timeout: float = 20.0) -> tuple[bool, str]:
    """(reachable, what happened): one tiny completion with no retries; any answer in the
    expected shape counts as reachable. The message names the endpoint and the failure, and ends
    with the provider's warning when there is one (a key sent over plain http to another machine)."""
    import pydantic

    from tempo_eval.llm.provider import OpenAIProvider

    class Ping(pydantic.BaseModel):
        ok: bool

    where = base_url.strip() or "the default endpoint"
    try:
        provider = OpenAIProvider(model=model, base_url=base_url.strip() or None, api_key=api_key,
                                  timeout=timeout, max_retries=0, max_concurrency=1)
    except ValueError as exc:
        return False, f"The judge cannot be set up: {exc}."
    reply = provider.judge(PING_PROMPT, Ping)
    warning = f" Warning: {provider.warning}" if provider.warning else ""
    if reply.ok:
        return True, f"The judge {model} at {where} answered a test request.{warning}"
    return False, f"The judge {model} at {where} did not answer a test request: {reply.error}.{warning}"
