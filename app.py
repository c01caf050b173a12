"""tempo-eval dashboard: `streamlit run app.py` from the repository root.

The entry declares the pages; each page is a thin script under views/ that starts with
`selection.page_setup(title)`, which draws the shared sidebar (which dataset, which runs), so a page also
runs on its own. It opens on the bundled sample data, no upload needed.

Why views/ and not pages/: Streamlit treats a folder named pages/ beside the entry script as the
old file-based navigation, and a server whose first request is a deep link (/claims?runs=3) then
runs the page without this script for the rest of the process. A link must reopen its view with
this navigation, so the folder has another name.
"""

from __future__ import annotations

import streamlit as st

from tempo_eval_app import errors, selection, serving, sign_in, widgets

st.set_page_config(page_title="tempo-eval", page_icon=selection.PAGE_ICON, layout="wide")
errors.configure_logging()
# before st.navigation: no page, download or job action runs for a session not let in (sign-in
# when [auth] is configured; without it, only a loopback server address)
sign_in.gate()

PAGES = [
    st.Page("views/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("views/datasets.py", title="Datasets", icon=":material/table_view:"),
    st.Page("views/evaluate.py", title="Evaluate", icon=":material/play_circle:"),
    st.Page("views/runs.py", title="Runs", icon=":material/leaderboard:"),
    st.Page("views/results.py", title="Results", icon=":material/table_rows:"),
    st.Page("views/compare.py", title="Compare runs", icon=":material/compare_arrows:"),
    st.Page("views/run_diff.py", title="Run diff", icon=":material/difference:"),
    st.Page("views/time.py", title="Scores over time", icon=":material/timeline:"),
    st.Page("views/claims.py", title="Claims", icon=":material/fact_check:"),
    st.Page("views/review.py", title="Review verdicts", icon=":material/rule:"),
    st.Page("views/conversation.py", title="Conversation", icon=":material/forum:"),
    st.Page("views/heatmaps.py", title="Temporal heatmaps", icon=":material/grid_on:"),
    st.Page("views/agreement.py", title="Agreement", icon=":material/join_inner:"),
]

# expanded: every page listed (past 12 pages Streamlit otherwise folds the last ones under "View more")
navigation = st.navigation(PAGES, expanded=True)
st.html(widgets.READABLE_CSS)
selection.keep_page_settings()
sign_in.sidebar()
with selection.shared_sidebar():  # drawn here, in the entry script, so its widgets keep state across pages
    navigation.run()
# reached when the page ran to its end (st.stop and reruns skip it: the next full run freezes)
title = getattr(navigation, "title", None)  # None when app.py is imported outside a Streamlit run
if title is not None:
    serving.freeze_heap_once(title)
