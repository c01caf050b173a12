"""Small widgets shared by the pages: escaped HTML blocks, keyed multiselect defaults, what a
user selected, and the downloads of tables (CSV, JSONL, Parquet) and figures (HTML, JSON)."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from tempo_eval.io.export import to_csv_text
from tempo_eval.viz.highlight import text_block


def plain_html(text: object, *, muted: bool = False) -> str:
    """User text as an escaped HTML block (no markdown, no HTML of its own)."""
    style = "color: #555; font-size: 0.9em" if muted else ""
    return f'<div style="{style}; white-space: pre-wrap">{html.escape(str(text))}</div>'


def plain(text: object, *, muted: bool = False) -> None:
    """User text as escaped HTML (no markdown, no HTML of its own)."""
    st.html(plain_html(text, muted=muted))


def heading_html(text: str) -> str:
    """A bold line (page-written text, escaped here) over an HTML block, as "**Query**" drew it."""
    return f'<div style="font-weight: 600; margin-top: 0.5rem">{html.escape(text)}</div>'


def html_blocks(*blocks: str) -> None:
    """Several HTML blocks (already safe: built by `tempo_eval.viz.highlight`, `plain_html`,
    `card_html`) drawn as one element: each element is a message the server builds and sends and
    the browser draws, so a page draws what belongs together at once (issue 29). Nothing is drawn
    without a block."""
    if blocks:
        st.html("".join(blocks))


def card_html(title: str, body_html: str) -> str:
    """A bordered card: `title` (plain text, escaped here) as a small muted heading over the text
    block `body_html` (already safe), as a bordered container with a caption showed it, in one
    element instead of three."""
    return ('<div class="te-card" style="border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; '
            'padding: 0.75rem 1rem; margin-bottom: 0.5rem">'
            f'<div class="te-card-title" style="color: rgba(49, 51, 63, 0.6); font-size: 0.875rem; '
            f'margin-bottom: 0.25rem">{html.escape(title)}</div>{text_block(body_html)}</div>')


def selected(event: Any, what: str = "rows") -> list[Any]:
    """The rows (or, with "points", the points) a user selected in a dataframe or a chart drawn
    with `on_select="rerun"`: its event is an object or a dict, as Streamlit versions give it;
    [] when nothing is selected."""
    chosen = getattr(event, "selection", None)
    if chosen is None and isinstance(event, dict):
        chosen = event.get("selection")
    if chosen is None:
        return []
    return list(getattr(chosen, what, None) or (chosen.get(what, []) if isinstance(chosen, dict) else []))


def contains_text(frame: pd.DataFrame, text: str) -> pd.Series:
    """Which lines of `frame` hold `text` (stripped, any case, as typed: no pattern) in one of
    their cells; every line for an empty `text`."""
    needle = text.strip().lower()
    if not needle:
        return pd.Series(True, index=frame.index)
    return frame.astype(str).apply(lambda column: column.str.lower().str.contains(needle, regex=False)).any(axis=1)


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
    row = st.container(horizontal=True)  # one block, not columns: fewer elements to send and draw
    for action in actions:
        page_button(action, row)


def page_button(action: str, container: Any = st) -> None:
    """A link, drawn as a button, to the page that does `action` (`PAGES`). A page run on its own
    (outside the app's navigation) has no other page to link to: it names the page instead."""
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


def _jsonl(frame: pd.DataFrame) -> bytes:
    return frame.to_json(orient="records", lines=True, force_ascii=False, default_handler=str).encode("utf-8")


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    jsonify_cells(frame).to_parquet(buffer, index=False)
    return buffer.getvalue()


def jsonify_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with list and dict cells as JSON text (Parquet and table display need one type per
    column; gold_ids mixes lists and graded objects)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object and any(isinstance(v, (dict, list, tuple, set)) for v in out[column]):
            out[column] = [None if v is None else json.dumps(v, default=str, ensure_ascii=False) for v in out[column]]
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The CSV download of a table: list and dict cells as JSON, text cells that a spreadsheet
    would run as a formula (= + - @ ...) prefixed with a quote; read back exactly by
    `tempo_eval.io.export.read_csv_export`."""
    return to_csv_text(jsonify_cells(frame)).encode("utf-8")


def download_results(frame: pd.DataFrame | Callable[[], pd.DataFrame], stem: str, *, key: str) -> None:
    """CSV, JSONL and Parquet downloads of a results table; files are built only when clicked.
    `frame` may be a function that reads the table then (a page that does not hold it)."""
    read = frame if callable(frame) else lambda: frame
    # one horizontal container, not st.columns(3): 4 elements to build, send and draw instead of 7
    row = st.container(horizontal=True)
    row.download_button(
        "CSV", data=lambda: csv_bytes(read()), file_name=f"{stem}.csv",
        mime="text/csv", key=f"{key}_csv", icon=":material/download:",
    )
    row.download_button(
        "JSONL", data=lambda: _jsonl(read()), file_name=f"{stem}.jsonl", mime="application/jsonl",
        key=f"{key}_jsonl", icon=":material/download:",
    )
    row.download_button(
        "Parquet", data=lambda: _parquet(read()), file_name=f"{stem}.parquet",
        mime="application/vnd.apache.parquet", key=f"{key}_parquet", icon=":material/download:",
    )


def download_figure(fig: Any, stem: str, *, key: str) -> None:
    """The figure as standalone HTML (plotly.js embedded, works offline) and as plotly JSON."""
    row = st.container(horizontal=True)
    row.download_button(
        "Figure (HTML)", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8"),
        file_name=f"{stem}.html", mime="text/html", key=f"{key}_html", icon=":material/image:",
    )
    row.download_button(
        "Figure (JSON)", data=lambda: fig.to_json().encode("utf-8"), file_name=f"{stem}.json",
        mime="application/json", key=f"{key}_json", icon=":material/data_object:",
    )
