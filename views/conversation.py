"""Conversation: paste or upload a conversation (or load a sample), get Turn Faithfulness per
sliding window as a timeline, with the claims of each window and their verdicts.

A conversation is stored as a dataset (one row: `conversation_id`, `turns`) and its evaluation as
an ordinary run, so the Runs page lists it and a refresh or a link (`?dataset=..&runs=..`)
reopens it. The verifier is the one chosen on Evaluate (lexical, NLI model or LLM judge). The
evaluation is a worker job, as Evaluate's are (`tempo_eval_app.worker_jobs`): the verifier's model
loads in the worker process, never in the app's; the page shows the job's progress and, once it
ends, its run.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from tempo_eval.io.conversation import load_conversations
from tempo_eval.metrics.turn_faithfulness import as_turns
from tempo_eval.viz.highlight import claim_marks, legend_html, render_marks, text_block
from tempo_eval.viz.timeline import turn_timeline, windows_frame
from tempo_eval_app import (
    errors,
    formatting,
    links,
    permissions,
    samples,
    selection,
    store_reads,
    verifier_choice,
    widgets,
    words,
    worker_jobs,
)

selection.page_setup("Conversation")

#: name -> (button label, file in data/sample, button icon)
SAMPLES = {
    "museum": ("Museum guide (JSON turns)", "conversation_museum.json", ":material/museum:"),
    "history": ("Space Race (pasted transcript)", "conversation_history.txt", ":material/rocket_launch:"),
}
TEXT_KEY = "conversation_text"
METRIC = "turn_faithfulness"
JOB_KEY = "conv_job_id"  # the evaluation queued from this page


def _load_sample(name: str) -> None:
    st.session_state[TEXT_KEY] = (samples.SAMPLE_DIR / SAMPLES[name][1]).read_text(encoding="utf-8")


FILE_KEY = "_conversation_file"  # (file name, bytes, the text put in the text area or None)
PASTED = "pasted conversation"


def conversation_dataset(text: str, upload: tuple[str, bytes, str | None] | None = None):
    """The conversations to evaluate, read by the command line's loader (`load_conversations`):
    the uploaded file while the text area still holds what it put there (or it is Parquet), else
    the pasted text (a transcript, JSON turns, DeepEval or RAGAS JSON / JSON Lines). A single pasted
    conversation is named after its first user turn."""
    if upload is not None and (upload[2] is None or upload[2] == text):
        return load_conversations(upload[1], name=upload[0])
    dataset = load_conversations(text.encode("utf-8"), name=PASTED)
    if len(dataset.frame) == 1:
        turns = dataset.frame["turns"].iloc[0]
        first = next((t["content"] for t in turns if t["role"] == "user"), turns[0]["content"])
        dataset.name = "Conversation: " + (first[:60] + "…" if len(first) > 60 else first)
    return dataset


def _start(text: str, upload: tuple[str, bytes, str | None] | None, window_size: int, threshold: float,
           penalize: bool) -> int:
    """Store the conversations as a dataset and queue their evaluation with the verifier chosen
    on Evaluate: an `evaluate` job run by a worker process, as Evaluate's are (the verifier's
    model loads there, never in the app's process); returns the job id. The same conversation
    with the same settings resumes its stored run."""
    permissions.require("evaluate")  # before the conversation is stored as a dataset
    chosen = verifier_choice.chosen_settings()
    if chosen["verifier"] == "llm" and not chosen["judge_model"]:
        raise ValueError("The LLM judge has no model: give the judge's model (and endpoint) on Evaluate.")
    dataset_id = store_reads.save_dataset(conversation_dataset(text, upload))
    settings = {
        "tf": False, "tf_mode": "focus_time", "ndcg": False, "ndcg_mode": "gold", "fc": False, "k": 10,
        "turn": True, "window_size": window_size, "turn_threshold": threshold, "turn_penalize": penalize,
        "asof": [], "reference_date": None, "run_name": "", "verifier": chosen["verifier"],
        "nli_model": chosen["nli_model"], "judge_url": chosen["judge_url"], "judge_model": chosen["judge_model"],
    }
    api_key = verifier_choice.judge_api_key(chosen["judge_url"], chosen["api_key"])[0] if chosen["verifier"] == "llm" else None
    return worker_jobs.start_evaluation(settings, dataset_id, "turn faithfulness of the conversation", api_key)


def _job_panel(found: dict) -> None:
    """The evaluation's job while it waits or runs (progress, Cancel), how it failed; once it
    has finished, its dataset and run are selected and shown below."""

    @st.fragment(run_every=1.0 if found["active"] else None)
    def panel() -> None:
        with errors.page_guard("conversation progress"):
            current = worker_jobs.job(found["id"]) or found
            if worker_jobs.show_active(current):
                return
            if current["status"] == "failed":
                st.error(formatting.md_escape(f"The evaluation failed: {errors.in_app_terms(current['error'] or '')} "
                                              "(details in the workspace's logs/workers.log)."))
            elif current["status"] in ("cancelled", "interrupted"):
                st.warning(formatting.md_escape(f"{current['label']}: {current['status']} after {current['done']:,} "
                                                "rows; evaluate again to resume where it stopped."))
            elif current["run_id"] is not None and current["dataset_id"] is not None:
                st.session_state.pop(JOB_KEY, None)
                st.session_state.pop("conv_window_pick", None)
                selection.select_dataset(int(current["dataset_id"]), [int(current["run_id"])])  # reruns the page
            elif found["active"]:
                st.rerun()

    panel()


def _stored_run(dataset_id: int) -> int | None:
    """The first selected run of the active dataset that holds Turn Faithfulness results."""
    for run_id in selection.active_run_ids():
        long = store_reads.results_frame(run_id)
        if not long.empty and (long["metric"] == METRIC).any():
            return run_id
    return None


def _show(dataset_id: int, run_id: int) -> None:
    frame = store_reads.dataset_frame(dataset_id)
    long = store_reads.results_frame(run_id)
    rows = [int(r) for r in long.loc[long["metric"] == METRIC, "row"]]
    ids = frame["conversation_id"].astype(str).tolist() if "conversation_id" in frame.columns else [str(r) for r in rows]
    row = rows[0]
    if len(rows) > 1:
        links.init_from_param("conv_row", "conv", int, lambda v: v in rows)
        row = st.selectbox("Conversation", rows, key="conv_row", format_func=lambda r: ids[r] if r < len(ids) else str(r))
        links.set_params(conv=row)
    result = store_reads.store().get_result(run_id, row, METRIC)
    turns = as_turns(frame["turns"].iloc[row] if "turns" in frame.columns else [])
    details = result.details
    verifier = details.get("verifier")
    st.caption(f"Run **{formatting.md_escape(store_reads.run_label(run_id))}** · verifier "
               f"{formatting.md_escape(words.verifier_label(verifier))}", help=formatting.md_escape(words.verifier_help(verifier)))
    st.metric("Turn faithfulness", formatting.fmt_score(result.score))
    if result.reason:
        widgets.plain(result.reason, muted=True)
    windows = details.get("windows", [])
    table = windows_frame(windows)
    if table.empty:
        st.info("No user turn is answered by an assistant turn: there is no window to score.")
        return
    figure = turn_timeline(table, threshold=details.get("settings", {}).get("threshold"))
    st.plotly_chart(figure, key="conv_timeline", width="stretch")
    widgets.download_figure(figure, "turn_faithfulness", key="conv_fig")
    st.dataframe(formatting.display_table(table), hide_index=True, width="stretch", key="conv_windows")
    claims = pd.DataFrame(details.get("claims", []))
    if not claims.empty:
        st.caption("Downloads of the claims: windows numbered from 1, as in the table and the chart.")
        widgets.download_results(claims, f"conversation_run_{run_id}_claims", key="conv_dl")

    st.subheader("Claims of each window")
    st.html(legend_html(("SUPPORTED", "NEUTRAL", "CONTRADICTED")))
    numbers = table["window"].tolist()
    links.init_from_param("conv_window_pick", "window", int, lambda v: v in numbers)
    chosen = st.selectbox("Window", numbers, key="conv_window_pick",
                          format_func=lambda w: f"window {w} · score {formatting.fmt_score(table.loc[table['window'] == w, 'score'].iloc[0])}")
    links.set_params(window=chosen)
    window = next(w for w in windows if int(w.get("index", 0)) == int(chosen))
    records = window.get("claims", [])
    for turn_index in window.get("turns", []):
        turn = turns[turn_index]
        with st.chat_message("user" if turn.role == "user" else "assistant"):
            if turn.role == "assistant":
                own = [r for r in records if r.get("turn") == turn_index]
                marks, _ = claim_marks(turn.content, own)
                st.html(text_block(render_marks(turn.content, marks)))  # user text escaped there
                for context in turn.retrieval_context:
                    widgets.plain(f"Context: {context}", muted=True)
            else:
                st.text(turn.content)
    if records:
        st.dataframe(
            formatting.display_table(pd.DataFrame(records)[[c for c in ("turn", "claim", "verdict", "label", "evidence", "reason")
                                                            if c in records[0]]]),
            hide_index=True, width="stretch", key="conv_claims",
        )
    links.view_link("conv", "window")


with errors.page_guard("conversation"):
    st.markdown("Paste a conversation: `User:` / `Assistant:` lines with `Context:` blocks before each answer, "
                "or JSON turns with `role`, `content` and `retrieval_context`.")
    for column, (name, (label, _, icon)) in zip(st.columns([1, 1, 2]), SAMPLES.items(), strict=False):
        column.button(formatting.md_escape(label), key=f"conv_sample_{name}", on_click=_load_sample, args=(name,), icon=icon)
    upload = st.file_uploader(
        "…or upload a conversation file", type=["json", "jsonl", "ndjson", "csv", "tsv", "parquet", "pq", "txt", "md", "gz"],
        key="conversation_upload",
        help="One conversation (JSON turns or a transcript), DeepEval conversational goldens or test cases "
             "(JSON, JSON Lines, CSV), or RAGAS multi-turn samples (JSON Lines, CSV, Parquet): what "
             "`tempo-eval evaluate --metrics turn_faithfulness` reads.",
    )
    if upload is None:
        st.session_state.pop(FILE_KEY, None)
    else:
        data = upload.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        if st.session_state.get("_conversation_upload") != digest:
            st.session_state["_conversation_upload"] = digest
            shown = None
            if not upload.name.lower().endswith((".parquet", ".pq", ".gz")):
                try:
                    shown = data.decode("utf-8-sig")
                except UnicodeDecodeError as exc:
                    st.error(formatting.md_escape(f"{upload.name}: the file is not UTF-8 text (byte {exc.start}); save it as UTF-8."))
                    st.stop()
                st.session_state[TEXT_KEY] = shown
            st.session_state[FILE_KEY] = (upload.name, data, shown)
        upload_file = st.session_state.get(FILE_KEY)
        if upload_file is not None and upload_file[2] is None:
            st.caption(f"**{formatting.md_escape(upload.name)}** is read as a file; the text below is not used.")
    text = st.text_area("Conversation", height=260, key=TEXT_KEY,
                        placeholder="User: When did the Berlin Wall fall?\nContext:\n- On 9 November 1989 ...\nAssistant: ...")

    o1, o2, o3 = st.columns(3)
    window_size = int(o1.number_input("Window size (interactions)", 1, 100,
                                      int(st.session_state.get("settings_window_size", 10)), key="conv_window"))
    st.session_state["settings_window_size"] = window_size
    threshold = float(o2.slider("Threshold", 0.0, 1.0, 0.5, 0.05, key="conv_threshold"))
    penalize = o3.checkbox("Count Neutral (not stated) claims as unfaithful", key="conv_penalize",
                           help="Claims that are neither supported nor contradicted (Neutral, Partly or Not supported).")
    chosen_verifier = verifier_choice.chosen_settings()
    st.caption(f"Verifier: {formatting.md_escape(verifier_choice.describe(chosen_verifier))} — chosen on **Evaluate**.")

    found = worker_jobs.job(st.session_state.get(JOB_KEY))
    refused = permissions.blocked("evaluate")
    if st.button("Evaluate the conversation", type="primary", key="conv_run", icon=":material/play_arrow:", help=formatting.md_escape(refused) if refused else None,
                 disabled=not (text.strip() or st.session_state.get(FILE_KEY)) or bool(found and found["active"] or refused)):
        st.session_state[JOB_KEY] = _start(text, st.session_state.get(FILE_KEY), window_size, threshold, penalize)
        found = worker_jobs.job(st.session_state[JOB_KEY])
    permissions.explain(refused)
    if found is not None:
        _job_panel(found)

    dataset_id = selection.active_dataset_id()
    run_id = _stored_run(dataset_id) if dataset_id is not None else None
    if run_id is None:
        st.caption("Load a sample or paste a conversation, then evaluate it. Stored conversations are listed on "
                   "**Runs** (turn on All datasets) and reopen here.")
        st.stop()
    _show(dataset_id, run_id)
