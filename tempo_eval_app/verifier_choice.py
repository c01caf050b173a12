"""The verifier chosen on Evaluate (lexical, NLI model or LLM judge, with its settings), shared
with every page that checks claims (Conversation), so a choice is made once per session.

The Evaluate page's widgets are keyed "keep_ev_*" (kept across pages by
`selection.keep_page_settings`); this module reads them with the same defaults.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from tempo_eval_app import judge_keys

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


def build_verifier(settings: dict[str, Any], name: str | None = None) -> Any:
    """The verifier `name` (default: the chosen one) built with these settings."""
    from tempo_eval.verify import make_verifier

    name = name or settings["verifier"]
    if name == "lexical":
        return make_verifier("lexical")  # calibrated on data: no thresholds to set
    if name == "nli":
        return make_verifier("nli", model=settings["nli_model"])
    if name == "llm":
        if not settings["judge_model"]:
            raise ValueError("The LLM judge has no model: give the judge's model (and endpoint) on Evaluate.")
        # never None with a custom endpoint: the server's key must not follow a typed address
        api_key, _ = judge_keys.judge_api_key(settings["judge_url"], settings["api_key"])
        return make_verifier("llm", model=settings["judge_model"], base_url=settings["judge_url"] or None,
                             api_key=api_key)
    raise ValueError(f"unknown verifier {name!r}; expected one of {', '.join(VERIFIER_NAMES)}")
