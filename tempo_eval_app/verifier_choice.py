"""The verifier chosen on Evaluate (lexical, NLI model or LLM judge, with its settings), shared
with every page that checks claims (Conversation), so a choice is made once per session.

The Evaluate page's widgets are keyed "keep_ev_*" (kept across pages by
`selection.keep_page_settings`); this module reads them with the same defaults.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

DEFAULT_NLI_MODEL = "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli"
VERIFIER_NAMES = {"lexical": "Lexical (offline)", "nli": "NLI model", "llm": "LLM judge"}

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
