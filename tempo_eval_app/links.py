"""URL query parameters: a page mirrors its view in the address, so a link reopens it."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import streamlit as st


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
    params = st.query_params.to_dict()
    wanted = [n for n in dict.fromkeys([*SIDEBAR_PARAMS, *names]) if params.get(n) not in (None, "")]
    return "?" + urlencode([(n, params[n]) for n in wanted]) if wanted else ""


def view_url(query: str, base: str | None) -> str:
    """The full address of a view: the page's own address `base` (scheme, host, port and page
    path, without a query) followed by `query`; `query` alone when there is no usable base (no
    browser session, or an address that is not http or https)."""
    if not base:
        return query
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return query
    return parts._replace(query="", fragment="").geturl() + query


def view_link(*names: str) -> None:
    """Tell the user that this address reopens the view, with the page's own parameters `names`:
    the full link (the page's address from `st.context.url` and the query), clickable, and as
    plain text to copy (`st.code`, never markdown, so a value from the URL cannot end a code span
    and inject links or images). Values are URL-encoded, the link is HTML-escaped."""
    query = view_query(names)
    if not query:
        st.caption("")
        return
    url = view_url(query, getattr(st.context, "url", None))
    if url.startswith("http"):
        safe = html.escape(url, quote=True)
        st.html(f'<div style="font-size: 0.875rem; color: rgba(49, 51, 63, 0.6)">Link to this view: '
                f'<a href="{safe}" target="_self">open this view again</a> (copy the address below to share it)</div>')
    else:
        st.caption("Link to this view: the page address with this query reopens it.")
    st.code(url, language=None)
