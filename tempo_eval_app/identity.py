"""Who uses this browser session, and as what role; who made each run and dataset.

With sign-in configured (an `[auth]` section in `.streamlit/secrets.toml`) the user is the
signed-in e-mail from Streamlit's OIDC login (`st.user`), or nobody before sign-in; without it
the app is a local single-user tool and acts as the operating-system user that started it.

The role (`current_role`, `tempo_eval.common.access`): without sign-in, the local user is an admin (the
app's user owns the workspace's files anyway); signed in, the role the workspace's users table
gives the e-mail (`tempo_eval.store.users.UserStore.role_of`: TEMPO_EVAL_ADMIN is an admin, a
user not listed a viewer); nobody signed in has none.

On the pages that list runs, datasets and uploads: the `by` column (the recorded user, "unknown"
for rows made before users were recorded or by code that named none) and the filters by it,
"Mine" (what the current user made) and "Made by" (any users chosen): `by_column`,
`filter_widgets`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.common.access import LOCAL_ROLE
from tempo_eval.common.identity import os_user, shown_user, user_name
from tempo_eval.store.db import default_db_path
from tempo_eval.store.users import UserStore
from tempo_eval_app import formatting, links


def sign_in_configured() -> bool:
    """True when `.streamlit/secrets.toml` has an `[auth]` section, and when a settings file is
    there but cannot be read (`settings_unreadable`): whether it configures sign-in is unknown, so
    the app does not fall back to the local single-user tool, whose user is an admin."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, KeyError, OSError, ValueError):
        return settings_unreadable() is not None


def settings_unreadable() -> str | None:
    """Why a settings file (`.streamlit/secrets.toml`, or another of Streamlit's `secrets.files`)
    that is there cannot be read (Streamlit's message: the file, the line and column), or None
    when the settings are read or there is no such file."""
    try:
        _ = "auth" in st.secrets
    except (FileNotFoundError, KeyError, OSError, ValueError) as error:
        files = st.get_option("secrets.files") or []
        if any(os.path.exists(str(path)) for path in files):
            return str(error).strip() or type(error).__name__
    return None


def signed_in() -> bool:
    """True when this session has signed in through `st.login` (False before, and where the
    session carries no sign-in state at all)."""
    return bool(st.user.get("is_logged_in", False))


def unverified_email() -> bool:
    """True when the provider says the signed-in e-mail is not verified (its `email_verified`
    claim is false): a provider that lets an account name any e-mail, unchecked, would otherwise
    let it act as whoever owns that address, an admin too. A provider that sends no such claim
    (Microsoft Entra ID, some others) is taken at its word."""
    value = st.user.get("email_verified")
    return value is False or str(value).strip().lower() in ("false", "0", "no")


def current_user() -> str:
    """The acting user's name: the signed-in e-mail, "" when sign-in is configured and nobody has
    signed in (or the provider says the e-mail is not verified), else the operating-system user."""
    if not sign_in_configured():
        return os_user()
    if not signed_in() or unverified_email():
        return ""
    return str(st.user.get("email") or "").strip().lower()


@st.cache_resource(show_spinner=False)
def _users_for(db_path: str) -> UserStore:
    return UserStore(db_path)


def users() -> UserStore:
    """The users of the current workspace (one connection per process and workspace)."""
    return _users_for(str(default_db_path()))


def current_role() -> str | None:
    """The acting user's role: LOCAL_ROLE (admin) without sign-in, None before sign-in, else the
    signed-in e-mail's role, read from the workspace at each call (a role changed by an admin
    holds from the user's next click)."""
    if not sign_in_configured():
        return LOCAL_ROLE
    user = current_user()
    return users().role_of(user) if user else None


def by_column(values: Iterable[Any]) -> list[str]:
    """The `by` column of recorded users (`created_by`): each as the pages show it."""
    return [shown_user(value) for value in values]


def me() -> str:
    """The current user as the `by` column shows them."""
    return shown_user(user_name(current_user()))


def filter_widgets(table: pd.DataFrame, key: str, what: str) -> pd.DataFrame:
    """The "Mine" toggle and the "Made by" select for `table` (its `by` column), drawn side by side;
    returns the rows they keep. "Mine" is mirrored in the URL (`mine=1`) so a link reopens it."""
    left, right = st.columns([1, 3])
    links.init_from_param(f"{key}_mine", "mine", lambda v: v == "1")
    mine = left.toggle("Mine", key=f"{key}_mine", help=f"Only the {formatting.md_escape(what)} you made (as {formatting.md_escape(me())}).")
    makers = sorted(set(table["by"]))
    chosen = right.multiselect("Made by", makers, key=f"{key}_by", placeholder="anyone",
                               help=f"Only the {formatting.md_escape(what)} these users made; \"unknown\": made before users were recorded.")
    links.set_params(mine="1" if mine else None)
    if mine:
        table = table[table["by"] == me()]
    return table[table["by"].isin(chosen)] if chosen else table
