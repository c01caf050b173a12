"""Small widgets shared by the pages: escaped HTML blocks and keyed multiselect defaults."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st


def safe_html(body_html: str) -> None:
    """Render HTML built by `tempo_eval.viz.highlight` (user text already escaped there)."""
    from tempo_eval.viz.highlight import text_block

    st.html(text_block(body_html))


def plain(text: object, *, muted: bool = False) -> None:
    """User text as escaped HTML (no markdown, no HTML of its own)."""
    import html

    style = "color: #555; font-size: 0.9em" if muted else ""
    st.html(f'<div style="{style}; white-space: pre-wrap">{html.escape(str(text))}</div>')


def multiselect_default(key: str, options: Sequence[Any], default: Sequence[Any] | None = None) -> list[Any] | None:
    """The `default` to pass to a keyed multiselect: None when the session already holds a value
    (after dropping values no longer among the options), else `default` (all options if None)."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]
        return None
    return list(options if default is None else default)


#: the pages an empty page can send the user to, by the action that fills it
PAGES = {
    "evaluate": ("views/evaluate.py", "Run an evaluation", ":material/play_circle:"),
    "datasets": ("views/datasets.py", "Upload or open a dataset", ":material/table_view:"),
    "conversation": ("views/conversation.py", "Open the Conversation page", ":material/forum:"),
}


def empty_state(message: str, *actions: str) -> None:
    """An empty page's note and the buttons that fill it (`PAGES`: "evaluate", "datasets", ...),
    never a command to type. `message` is markdown written by the page, not user text."""
    st.info(message)
    columns = st.columns(max(len(actions), 1) + 1)
    for column, action in zip(columns, actions, strict=False):
        page_button(action, column)


def page_button(action: str, container: Any = st) -> None:
    """A link, drawn as a button, to the page that does `action` (`PAGES`). A page run on its own
    (outside the app's navigation) has no other page to link to: it names the page instead."""
    from streamlit.errors import StreamlitAPIException

    path, label, icon = PAGES[action]
    try:
        container.page_link(path, label=label, icon=icon)
    except StreamlitAPIException:
        container.caption(f"{label}: the page is in the app's menu.")


#: nothing cut off at 1280 px: dropdown entries, chosen tags, metric labels and values wrap onto a
#: second line instead of ending in an ellipsis (the tables' headers have their text on hover)
READABLE_CSS = """<style>
[data-baseweb="popover"] li, [data-baseweb="popover"] li *, [role="option"], [role="option"] *,
[data-baseweb="select"] [title], [data-baseweb="select"] div {
  white-space: normal !important; overflow-wrap: anywhere; overflow: visible !important;
  text-overflow: clip !important; height: auto !important;
}
[data-baseweb="tag"], [data-baseweb="tag"] span { max-width: none !important; overflow: visible !important;
  text-overflow: clip !important; white-space: normal !important; height: auto !important; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *, [data-testid="stMetricValue"],
[data-testid="stMetricValue"] * { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; }
</style>"""


def readable_css() -> None:
    """Draw READABLE_CSS once per script run (app.py, before the page)."""
    st.html(READABLE_CSS)
