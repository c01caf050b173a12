"""Who uses this browser session.

With sign-in configured (an `[auth]` section in `.streamlit/secrets.toml`) the user is the
signed-in e-mail from Streamlit's OIDC login (`st.user`), or nobody before sign-in; without it
the app is a local single-user tool and acts as the operating-system user that started it.
"""

from __future__ import annotations

import streamlit as st

from tempo_eval.common.identity import os_user


def sign_in_configured() -> bool:
    """True when `.streamlit/secrets.toml` has an `[auth]` section."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, KeyError, OSError, ValueError):
        return False


def current_user() -> str:
    """The acting user's name: the signed-in e-mail, "" when sign-in is configured and nobody has
    signed in, else the operating-system user."""
    if not sign_in_configured():
        return os_user()
    if not st.user.is_logged_in:
        return ""
    return str(st.user.get("email") or "").strip().lower()
