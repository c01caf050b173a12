"""Conversation: paste a transcript or DeepEval-style JSON turns, get Turn Faithfulness per sliding
window as a timeline, with the claims of each window and their verdicts.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from tempo_eval_app import downloads, errors, formatting, samples, selection, widgets

selection.page_setup("Conversation")

SAMPLES = {
    "museum": ("Museum guide (JSON turns)", "conversation_museum.json"),
    "history": ("Space Race (pasted transcript)", "conversation_history.txt"),
}
TEXT_KEY = "conversation_text"


def _load_sample(name: str) -> None:
    st.session_state[TEXT_KEY] = (samples.SAMPLE_DIR / SAMPLES[name][1]).read_text(encoding="utf-8")
    st.session_state.pop("conversation_result", None)


@st.cache_data(show_spinner="Checking every window's claims…", max_entries=16)
def _evaluate(text: str, window_size: int, threshold: float, penalize: bool, verifier: str) -> dict:
    """Parse and score a conversation; the result as plain data (cached per text and settings)."""
    from tempo_eval.io.conversation import parse_conversation
    from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness
    from tempo_eval.verify import make_verifier

    turns = parse_conversation(text)
    metric = TurnFaithfulness(
        threshold=threshold, window_size=window_size, penalize_ambiguous_claims=penalize,
        verifier=make_verifier(verifier),
    )
    result = metric.measure(turns=turns)
    return {
        "turns": [{"role": t.role, "content": t.content, "retrieval_context": t.retrieval_context} for t in turns],
        **result.to_dict(),
    }


with errors.page_guard("conversation"):
    st.markdown("Paste a conversation: `User:` / `Assistant:` lines with `Context:` blocks before each answer, "
                "or JSON turns with `role`, `content` and `retrieval_context`.")
    b1, b2, _ = st.columns([1, 1, 2])
    b1.button(SAMPLES["museum"][0], key="conv_sample_museum", on_click=_load_sample, args=("museum",),
              icon=":material/museum:")
    b2.button(SAMPLES["history"][0], key="conv_sample_history", on_click=_load_sample, args=("history",),
              icon=":material/rocket_launch:")
    upload = st.file_uploader("…or upload a conversation file", type=["json", "txt", "md"], key="conversation_upload")
    if upload is not None:
        digest = hashlib.sha256(upload.getvalue()).hexdigest()
        if st.session_state.get("_conversation_upload") != digest:
            st.session_state["_conversation_upload"] = digest
            try:
                st.session_state[TEXT_KEY] = upload.getvalue().decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                st.error(formatting.md_escape(f"{upload.name}: the file is not UTF-8 text (byte {exc.start}); save it as UTF-8."))
    text = st.text_area("Conversation", height=260, key=TEXT_KEY,
                        placeholder="User: When did the Berlin Wall fall?\nContext:\n- On 9 November 1989 ...\nAssistant: ...")

    o1, o2, o3, o4 = st.columns(4)
    window_size = int(o1.number_input("Window size (interactions)", 1, 100,
                                      int(st.session_state.get("settings_window_size", 10)), key="conv_window"))
    st.session_state["settings_window_size"] = window_size
    threshold = float(o2.slider("Threshold", 0.0, 1.0, 0.5, 0.05, key="conv_threshold"))
    penalize = o3.checkbox("Count 'idk' as unfaithful", key="conv_penalize")
    verifier = o4.selectbox("Verifier", ["lexical", "nli"], key="conv_verifier",
                            help="Lexical runs offline; NLI needs a local model (see Evaluate).")

    if st.button("Evaluate the conversation", type="primary", key="conv_run", disabled=not text.strip(),
                 icon=":material/play_arrow:"):
        st.session_state["conversation_result"] = _evaluate(text, window_size, threshold, penalize, verifier)

    result = st.session_state.get("conversation_result")
    if result is None:
        st.caption("Load a sample or paste a conversation, then evaluate it.")
        st.stop()

    from tempo_eval.viz.highlight import claim_marks, legend_html, render_marks
    from tempo_eval.viz.timeline import turn_timeline, windows_frame

    score = result["score"]
    st.metric("Turn faithfulness", formatting.fmt_score(score))
    if result["reason"]:
        widgets.plain(result["reason"], muted=True)
    windows = result["details"].get("windows", [])
    table = windows_frame(windows)
    if table.empty:
        st.info("No user turn is answered by an assistant turn: there is no window to score.")
        st.stop()
    figure = turn_timeline(table, threshold=result["details"].get("settings", {}).get("threshold"))
    st.plotly_chart(figure, key="conv_timeline", width="stretch", on_select="rerun", selection_mode="points")
    downloads.download_figure(figure, "turn_faithfulness", key="conv_fig")
    st.dataframe(table, hide_index=True, width="stretch", key="conv_windows")
    claims = pd.DataFrame(result["details"].get("claims", []))
    if not claims.empty:
        downloads.download_results(claims, "conversation_claims", key="conv_dl")

    st.subheader("Claims of each window")
    st.html(legend_html(("SUPPORTED", "NEUTRAL", "CONTRADICTED")))
    turns = result["turns"]
    chosen = st.selectbox("Window", table["window"].tolist(), key="conv_window_pick",
                          format_func=lambda w: f"window {w} · score {formatting.fmt_score(table.loc[table['window'] == w, 'score'].iloc[0])}")
    window = windows[int(chosen) - 1]
    records = window.get("claims", [])
    for turn_index in window.get("turns", []):
        turn = turns[turn_index]
        with st.chat_message("user" if turn["role"] == "user" else "assistant"):
            if turn["role"] == "assistant":
                own = [r for r in records if r.get("turn") == turn_index]
                marks, _ = claim_marks(turn["content"], own)
                widgets.safe_html(render_marks(turn["content"], marks))
                for context in turn["retrieval_context"]:
                    widgets.plain(f"Context: {context}", muted=True)
            else:
                st.text(turn["content"])
    if records:
        st.dataframe(
            pd.DataFrame(records)[[c for c in ("turn", "claim", "label", "verdict", "evidence", "reason") if c in records[0]]],
            hide_index=True, width="stretch", key="conv_claims",
        )
