"""Which API key the LLM judge gets."""

from __future__ import annotations

import os
from collections.abc import Mapping

KEY_TYPED = "the key typed here (this session only)"
KEY_SERVER = "the server's OPENAI_API_KEY"
KEY_NONE = "no key"


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
