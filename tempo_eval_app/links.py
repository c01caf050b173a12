"""URL query parameters: a page mirrors its view in the address, so a link reopens it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st


def _param_ints(name: str) -> list[int]:
    raw = st.query_params.get(name, "")
    values = []
    for part in str(raw).split(","):
        with contextlib.suppress(ValueError):
            values.append(int(part))
    return values


def param(name: str, default: str | None = None) -> str | None:
    """A query parameter of the current URL (views reopen from links)."""
    value = st.query_params.get(name)
    return default if value in (None, "") else str(value)


def set_params(**values: Any) -> None:
    """Mirror a page's view state in the URL; None removes a parameter."""
    for name, value in values.items():
        if value is None or value == "" or value == []:
            if name in st.query_params:
                del st.query_params[name]
        else:
            text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            if st.query_params.get(name) != text:
                st.query_params[name] = text


def init_from_param(key: str, name: str, convert: Callable[[str], Any] = str, valid: Callable[[Any], bool] | None = None) -> None:
    """Seed a widget's session value from a query parameter on first render only."""
    if key in st.session_state:
        return
    raw = param(name)
    if raw is None:
        return
    try:
        value = convert(raw)
    except (TypeError, ValueError):
        return
    if valid is None or valid(value):
        st.session_state[key] = value

#: the query parameters of the shared sidebar, part of every page's link
SIDEBAR_PARAMS = ("dataset", "runs")


def view_query(names: Sequence[str]) -> str:
    """The URL query (``?dataset=3&runs=5``) of the sidebar's and the page's own parameters
    `names`, URL-encoded; other parameters of the address (stale or typed by anyone) are left out."""
    from urllib.parse import urlencode

    params = st.query_params.to_dict()
    wanted = [n for n in dict.fromkeys([*SIDEBAR_PARAMS, *names]) if params.get(n) not in (None, "")]
    return "?" + urlencode([(n, params[n]) for n in wanted]) if wanted else ""


def view_link(*names: str) -> None:
    """Tell the user that the address bar reopens this view, with the page's own parameters
    `names`: the query is shown with `st.code` (plain text, never markdown), so a value from the
    URL cannot end a code span and inject links or images."""
    query = view_query(names)
    if query:
        st.caption("Link to this view: the page address with this query reopens it.")
        st.code(query, language=None)
    else:
        st.caption("")
