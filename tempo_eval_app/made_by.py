"""Who made what, on the pages that list runs, datasets and uploads: the `by` column (the recorded
user, "unknown" for rows made before users were recorded or by code that named none) and the
filters by it, "Mine" (what the current user made) and "Made by" (any users chosen)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.common.identity import shown_user, user_name
from tempo_eval_app import formatting, links
from tempo_eval_app.identity import current_user


def by_column(values: Iterable[Any]) -> list[str]:
    """The `by` column of recorded users (`created_by`): each as the pages show it."""
    return [shown_user(value) for value in values]


def me() -> str:
    """The current user as the `by` column shows them."""
    return shown_user(user_name(current_user()))


def made_by(table: pd.DataFrame, *, mine: str | None = None, users: Iterable[str] = ()) -> pd.DataFrame:
    """The rows of `table` (with a `by` column) made by `mine` (None: anyone) and, when `users` is
    not empty, by one of them."""
    if mine is not None:
        table = table[table["by"] == mine]
    chosen = list(users)
    return table[table["by"].isin(chosen)] if chosen else table


def filter_widgets(table: pd.DataFrame, key: str, what: str) -> pd.DataFrame:
    """The "Mine" toggle and the "Made by" select for `table` (its `by` column), drawn side by side;
    returns the rows they keep. "Mine" is mirrored in the URL (`mine=1`) so a link reopens it."""
    left, right = st.columns([1, 3])
    links.init_from_param(f"{key}_mine", "mine", lambda v: v == "1")
    mine = left.toggle("Mine", key=f"{key}_mine", help=f"Only the {formatting.md_escape(what)} you made (as {formatting.md_escape(me())}).")
    users = sorted(set(table["by"]))
    chosen = right.multiselect("Made by", users, key=f"{key}_by", placeholder="anyone",
                               help=f"Only the {formatting.md_escape(what)} these users made; \"unknown\": made before users were recorded.")
    links.set_params(mine="1" if mine else None)
    return made_by(table, mine=me() if mine else None, users=chosen)
