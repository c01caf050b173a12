"""Evaluate: pick metrics and a verifier, set the options, run in a worker process with a progress
bar (rows per second, time left) and a cancel button. The page only queues the job and reads it
from the workspace (tempo_eval_app/worker_jobs.py): a reload, another tab, a restart of the app or
another app process on the same workspace finds it again. Every finished row is in the run store
at once; running the same configuration again resumes it. A job belongs to the browser session
that queued it: another session sees it running in the workspace (no Cancel) and may start its
own; an interrupted evaluation of the workspace is listed with Resume to every session.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os

import pandas as pd
import streamlit as st

from tempo_eval.common.identity import shown_user
from tempo_eval.engine.scoring import aggregate_frame, metric_needs
from tempo_eval.verify import available_verifiers
from tempo_eval.verify.accuracy import accuracy_note
from tempo_eval.verify.lexical import SUMMARY as LEXICAL_SUMMARY
from tempo_eval_app import (
    errors,
    formatting,
    paths,
    permissions,
    selection,
    store_reads,
    verifier_choice,
    widgets,
    words,
    worker_jobs,
)

selection.page_setup("Evaluate")

VERIFIER_HELP = {
    "lexical": LEXICAL_SUMMARY,
    "nli": "Local NLI model (DeBERTa-v3 or any 3-way NLI checkpoint, hub id or local directory).",
    "llm": "An OpenAI-compatible judge (any endpoint); the key stays in this browser session.",
}
TF_MODES = {
    "focus_time": "Focus time (no model)",
    "nli": "Claims, by the verifier",
    "llm": "LLM judge",
}
#: what each mode does, in the Mode box's help
TF_MODE_HELP = ("Focus time: the share of the answer's years found in the contexts (no model). Claims: each "
                "temporal sentence of the answer checked against the contexts by the verifier below. LLM judge: "
                "the judge extracts the temporal claims and labels each; the score is computed from its labels.")
#: the as-of metrics (docs/metrics.md, "As-of evaluation"): name -> label on the page
ASOF_METRICS = {
    "future_leak": "Future leak@k",
    "stale_evidence": "Stale evidence@k",
    "median_evidence_age": "Median evidence age@k",
    "recency_ndcg": "Recency NDCG@k",
    "answer_currency": "Answer currency",
}
#: how answer currency decides that an answer matches a reference (asof-spec)
CURRENCY_MATCH = {"words": "Word match (no model)", "verifier": "The verifier below"}
NDCG_MODES = {
    "gold": "Gold ids (trec_eval)",
    "focus_time": "Focus time (no model)",
    "llm": "LLM judge",
}
#: what each mode does, in the Mode box's help
NDCG_MODE_HELP = ("Gold: retrieved_ids ranked against gold_ids, as trec_eval's ndcg_cut. Focus time: relevance from "
                  "the query's years against each context's years (no model). LLM judge: the judge grades each "
                  "context 0-4.")


def _availability(nli_model: str, judge_ready: bool) -> dict[str, tuple[bool | None, str]]:
    # the NLI model is loaded by a worker process, never here: this answers what it last found
    status: dict[str, tuple[bool | None, str]] = {"nli": worker_jobs.nli_status(nli_model)}
    status.update(available_verifiers(check_nli=False, judge_configured=judge_ready))
    if judge_ready:  # set is not reachable: the judge is asked once when a run starts
        status["llm"] = (None, "Set; it gets one test request when the run starts.")
    return status


SOURCES = {
    "stored": "The dataset chosen in the sidebar",
    "path": "A file on this machine (path)",
    "upload": "A file uploaded here (up to 2 GB)",
}


def _dataset_source() -> tuple[str, object, str | None]:
    """Which dataset the run evaluates: (source, the file's path or None, why there is none).
    A typed path must lie in the folders the app may read (tempo_eval_app/paths.py); an upload
    is written to the workspace; either way a worker reads the file, not this process."""
    source = st.radio("Evaluate", list(SOURCES), format_func=SOURCES.get, key="keep_ev_source", horizontal=True)
    if source == "stored":
        return source, None, None
    if source == "upload":
        refused = permissions.blocked("upload")
        upload = st.file_uploader("Dataset file: CSV, TSV, JSON Lines, JSON or Parquet; .gz and .zst too",
                                  key="ev_upload", disabled=bool(refused))
        permissions.explain(refused)
        if upload is None:
            return source, None, "Upload the dataset file to evaluate."
        # written again when a run starts, if a worker removed it after an earlier run
        return source, worker_jobs.save_upload(upload, rewrite=False), None
    typed = st.text_input("Path of the dataset file on the app's machine", key="keep_ev_path",
                          placeholder="/data/logs/answers.jsonl.gz")
    roots = ", ".join(str(root) for root in paths.allowed_roots())
    st.caption(formatting.md_escape(f"The app reads files under: {roots} (more with the environment variable "
                                    f"{paths.ALLOWED_ENV} when it starts). CSV, TSV, JSON Lines, JSON, Parquet; "
                                    ".gz and .zst too."))
    if not typed.strip():
        return source, None, "Type the path of the dataset file."
    try:
        found = paths.files_named(typed, limit=1)
    except paths.PathRefused as refused:
        if isinstance(refused, paths.TooManyFiles):
            refused = f"{typed.strip()!r} is a folder of several files: name one file"
        st.error(formatting.md_escape(f"Refused: {refused}"), icon=":material/block:")
        return source, None, "The path was refused (see above)."
    size = found[0].stat().st_size
    st.caption(formatting.md_escape(f"{found[0]} · {size / 1e6:,.1f} MB"))
    return source, found[0], None


def _show_job(job: dict, api_key: str) -> None:
    if worker_jobs.show_active(job):  # queued or running: its place or its progress, and Cancel
        return
    outcome = None
    # a run deleted since (Runs): the job's line is all there is to show
    with contextlib.suppress(KeyError):
        if job["run_id"] is not None:
            outcome = _outcome(store_reads.db_path(), int(job["run_id"]), store_reads.run_version(job["run_id"]))
    failures = outcome[1] if outcome is not None else None
    if job["status"] == "failed":
        st.error(formatting.md_escape(f"The evaluation failed: {errors.in_app_terms(job['error'] or '')} (details in the workspace's logs/workers.log)."))
    elif job["status"] == "interrupted":
        st.warning(formatting.md_escape(
            f"{job['label']}: the worker stopped after {job['done']:,} of {job['total']:,} rows (the machine or "
            "the worker was stopped). Every finished row is stored; resuming computes only the rest."))
        refused = permissions.blocked("evaluate")
        if st.button("Resume", key=f"resume_{job['id']}", icon=":material/play_arrow:", disabled=bool(refused),
                     help=formatting.md_escape(refused) if refused else None):
            typed, _ = verifier_choice.judge_api_key(job["arguments"].get("judge_url", ""), api_key)
            if worker_jobs.resume(job, typed):
                st.session_state["eval_job_id"] = st.session_state["eval_job_watched"] = job["id"]
            st.rerun()
    elif job["status"] == "cancelled" and not job["total"]:  # cancelled while it waited
        st.warning(formatting.md_escape(f"{job['label']}: cancelled before it started; nothing was evaluated."))
    elif job["status"] == "cancelled":
        st.warning(f"Cancelled after {formatting.md_escape(job['done'])} of {formatting.md_escape(job['total'])} rows. Run it again to resume where it stopped.")
    elif failures is not None:
        failed, total, reason = failures
        st.warning(formatting.md_escape(
            f"Finished with errors: {failed} of {total} results failed and have no score (run #{job['run_id']}). "
            f"First reason: {reason}"
        ))
    else:
        st.success(f"Finished: {formatting.fmt_count(job['done'])} rows evaluated and stored (run #{formatting.md_escape(job['run_id'])}).")
    if outcome is not None and outcome[0] is not None:
        st.dataframe(formatting.display_table(outcome[0]), hide_index=True, width="stretch", key=f"summary_{job['id']}")
        run_id = int(job["run_id"])
        # the files are built from the store when a button is clicked: the page holds no results
        widgets.download_results(lambda: store_reads.store().results_frame(run_id), f"run_{run_id}_results",
                                   key=f"dl_{job['id']}")


def _workspace_jobs(own: int | None, api_key: str) -> None:
    """The evaluations of the workspace that are not this session's: another session's running
    ones (their progress, no Cancel: they are not this session's to stop) and the interrupted
    ones, any session's, each with Resume (a reload or another browser can finish them)."""
    interrupted = [j for j in worker_jobs.interrupted_evaluations() if j["id"] != own]
    for job in interrupted:
        _show_job(job, api_key)

    @st.fragment(run_every=1.0 if worker_jobs.others_evaluating() else None)
    def others() -> None:
        with errors.page_guard("evaluate workspace jobs"):
            for job in worker_jobs.others_evaluating():
                line = (f"{job['label']}: waiting in the queue" if job["status"] == "queued"
                        else worker_jobs.progress_line(job))
                st.info(formatting.md_escape(f"Another session is evaluating in this workspace: {line}, started by "
                                             f"{shown_user(job.get('created_by'))}. "
                                             "It is not this session's to cancel; you can run your own."),
                        icon=":material/group:")

    others()


@st.cache_data(show_spinner="Summarising the run…", max_entries=16)
def _outcome(db: str, run_id: int, version: tuple) -> tuple[pd.DataFrame | None, tuple[int, int, str] | None]:
    """An ended run's summary (`aggregate_frame`: mean and 95% CI per metric; None when it has no
    results) and its failures (`formatting.error_summary`), computed once per run and
    `run_version`, from its scores alone: the page never holds the run's results (a 200,000-row
    run's results frame is hundreds of MB, and every rerun of this page used to read it and
    resample its CI again). The reasons are read only when some result failed."""
    store = store_reads.store_for(db)
    scores = store.run_scores([run_id])
    if scores.empty:
        return None, None
    failed = scores["reason_code"].astype(str).str.endswith("_error")
    failures = formatting.error_summary(store.results_frame(run_id)) if failed.any() else None
    return aggregate_frame(scores).reset_index(), failures


with errors.page_guard("evaluate"):
    dataset_id = selection.require_dataset_id()
    info = store_reads.dataset_info(dataset_id)
    columns = [str(c) for c in store_reads.dataset_head(dataset_id, 0).columns]
    st.caption(f"Dataset **{formatting.md_escape(info['name'])}** · {formatting.md_escape(info['n_rows'])} rows · columns {formatting.md_escape(', '.join(columns))}")

    source, file_path, file_problem = _dataset_source()

    st.subheader("Metrics")
    # exactly the metrics that apply to these columns (the engine's rule); the others say what they need
    needs = metric_needs(columns)
    c1, c2, c3 = st.columns(3)
    use_tf = use_ndcg = use_fc = use_turn = False
    tf_mode, ndcg_mode = "focus_time", "gold"
    if not needs["temporal_faithfulness"]:
        use_tf = c1.checkbox("Temporal Faithfulness", value=True, key="keep_ev_tf")
        tf_mode = c1.selectbox("Mode", list(TF_MODES), format_func=TF_MODES.get, key="keep_ev_tf_mode", disabled=not use_tf,
                               help=TF_MODE_HELP)
    if not needs["temporal_ndcg"]:
        use_ndcg = c2.checkbox("Temporal NDCG@k", value="retrieved_ids" in columns, key="keep_ev_ndcg")
        ndcg_mode = c2.selectbox("Mode ", list(NDCG_MODES), format_func=NDCG_MODES.get, key="keep_ev_ndcg_mode",
                                 disabled=not use_ndcg, help=NDCG_MODE_HELP)
    if not needs["factual_correctness"]:
        use_fc = c3.checkbox("Factual Correctness", value=False, key="keep_ev_fc",
                             help="Claims of the answer against the reference, and back (precision, recall, F1).")
    if not needs["turn_faithfulness"]:
        use_turn = c1.checkbox("Turn Faithfulness", value=True, key="keep_ev_turn",
                               help="Each assistant turn's claims against its retrieval context, per sliding window "
                                    "(the window size is under Settings).")
    unavailable = [f"**{words.metric_label(name)}** needs {words.columns_needed(lacking)}"
                   for name, lacking in needs.items() if lacking]
    if unavailable:
        st.caption("Not offered for this dataset: " + "; ".join(unavailable) + ".")

    asof_default = [name for name in ASOF_METRICS if name != "answer_currency"] if "context_dates" in columns else []
    if "outdated_references" in columns:
        asof_default.append("answer_currency")
    use_asof = st.multiselect(
        "As-of: when the evidence was published against when the question was asked", list(ASOF_METRICS),
        default=asof_default, format_func=ASOF_METRICS.get, key="keep_ev_asof",
        help="Read the row's reference_date (the as-of date) and context_dates (publication dates); answer "
             "currency reads reference and outdated_references. docs/metrics.md, 'As-of evaluation'.",
    )
    # the as-of settings only when an as-of metric is chosen (their values are kept meanwhile)
    max_age = int(st.session_state.get("keep_ev_max_age", 365))
    half_life = int(st.session_state.get("keep_ev_half_life", 365))
    currency_match = st.session_state.get("keep_ev_currency_match", "words")
    if use_asof:
        a1, a2, a3 = st.columns(3)
        max_age = a1.number_input("Stale after (days, max_age)", 0, 36500, max_age, key="keep_ev_max_age",
                                  disabled="stale_evidence" not in use_asof)
        half_life = a2.number_input("Recency half-life (days)", 1, 36500, half_life, key="keep_ev_half_life",
                                    disabled="recency_ndcg" not in use_asof)
        # the spec's two ways to match an answer to a reference; the word match needs no model, as
        # `evaluate` without --verifier
        currency_match = a3.radio(
            "Answer currency matches by", list(CURRENCY_MATCH), format_func=CURRENCY_MATCH.get,
            key="keep_ev_currency_match", disabled="answer_currency" not in use_asof,
            help="Word match: the normalised reference occurs in the normalised answer (SQuAD-style). "
                 "Verifier: the verifier chosen below says the answer supports the reference.",
        )
    currency_by_verifier = "answer_currency" in use_asof and currency_match == "verifier"

    st.subheader("Settings")
    s1, s2, _ = st.columns(3)
    k = s1.number_input("k (cutoff)", 1, 1000, 10, key="keep_ev_k")
    use_date = s2.checkbox("Reference date", key="keep_ev_use_date",
                           help="Resolves relative expressions such as 'last year' for rows without their own.")
    reference_date = s2.date_input("Reference date", dt.date(2024, 1, 1), key="keep_ev_date", disabled=not use_date,
                                   label_visibility="collapsed")
    window = int(st.session_state.get("settings_window_size", 10))
    if use_turn:
        window = s1.number_input("Conversation window size", 1, 100, window, key="keep_ev_window",
                                 help="Turn Faithfulness: how many turns each sliding window holds.")
        st.session_state["settings_window_size"] = int(window)

    st.subheader("Verifier")
    names = list(words.VERIFIERS)
    verifier = st.radio("Who decides whether a claim is supported", names, key="keep_ev_verifier", horizontal=True,
                        format_func=words.VERIFIERS.get)
    # what only one verifier or the judge needs, folded away unless it is the one in use: the
    # page stays short for the offline default (the fields keep their values when folded)
    judge_used = verifier == "llm" or (use_tf and tf_mode == "llm") or (use_ndcg and ndcg_mode == "llm")
    with st.expander("NLI model", expanded=verifier == "nli"):
        nli_model = st.text_input("NLI model (hub id or local path)", "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli",
                                  key="keep_ev_nli_model")
    with st.expander("LLM judge: endpoint, model and API key", expanded=judge_used):
        j1, j2 = st.columns(2)
        judge_url = j1.text_input("Judge endpoint (base URL)", "", key="keep_ev_judge_url",
                                  placeholder="https://api.openai.com/v1 or http://localhost:8000/v1")
        judge_model = j2.text_input("Judge model", "", key="keep_ev_judge_model", placeholder="gpt-4o-mini")
        api_key = j1.text_input("API key (kept in this session only, never stored)", "", type="password",
                                key="keep_ev_api_key")
        _, key_source = verifier_choice.judge_api_key(judge_url, api_key)
        endpoint = formatting.md_escape(judge_url.strip()) if judge_url.strip() else "the default endpoint (OpenAI or OPENAI_BASE_URL)"
        note = " The server's OPENAI_API_KEY is only ever sent to the default endpoint." if judge_url.strip() else ""
        j2.caption(f"Judge API key: {key_source}. Endpoint: {endpoint}.{note}")

    judge_ready = bool(judge_model.strip())
    nli_id = nli_model.strip() or verifier_choice.DEFAULT_NLI_MODEL
    status = _availability(nli_id, judge_ready)

    # a fragment that polls while the NLI model is being loaded in the background, so its status
    # turns from "Checking" to the answer without the user touching the page
    @st.fragment(run_every=1.0 if status["nli"][0] is None else None)
    def verifier_status() -> None:
        current = _availability(nli_id, judge_ready)

        def icon(name: str) -> str:
            ok = current[name][0]
            return "✅" if ok else "❌" if ok is False else "⏳" if name == "nli" else "❔"

        # the chosen verifier in full (what it is, and why not when it is not available), the
        # others by their availability alone
        ok, why = current[verifier]
        line = f"{icon(verifier)} **{verifier}** — {VERIFIER_HELP[verifier]}"
        if ok is not True and why:
            line += f" *{formatting.md_escape(why)}*"
        st.markdown(line)
        st.caption("Also here: " + formatting.md_escape(" · ".join(f"{icon(name)} {name}" for name in names
                                                                 if name != verifier)))
        if status["nli"][0] is None and current["nli"][0] is not None:
            st.rerun()  # the whole page, so "still being checked" problems go away

    verifier_status()
    # measured accuracy and what the chosen verifier cannot judge, from bench/verifier_accuracy.py --write
    with st.expander(f"How accurate is {formatting.md_escape(verifier)}? What can it not judge?"):
        st.caption(formatting.md_escape(accuracy_note(verifier)))

    needs_verifier = (use_tf and tf_mode == "nli") or use_fc or use_turn or currency_by_verifier
    needs_judge = (use_tf and tf_mode == "llm") or (use_ndcg and ndcg_mode == "llm") or (needs_verifier and verifier == "llm")
    problems = []
    if source != "stored" and file_path is None:
        problems.append(file_problem or "Give the dataset file to evaluate.")
    if not (use_tf or use_ndcg or use_fc or use_turn or use_asof):
        problems.append("Pick at least one metric.")
    if needs_verifier and status[verifier][0] is False:
        problems.append(f"The {verifier} verifier is not available here: {status[verifier][1]}")
    if needs_verifier and verifier == "nli" and status["nli"][0] is None:
        problems.append("The NLI model is still being checked.")
    if needs_judge and not judge_ready:
        problems.append("These settings need a judge: give its endpoint and model.")
    if needs_judge and key_source == verifier_choice.KEY_NONE and not judge_url.strip() and not os.environ.get("OPENAI_BASE_URL"):
        problems.append("The judge has no API key and no endpoint: type an API key, or the base URL of an "
                        "OpenAI-compatible server.")
    for problem in problems:
        st.warning(formatting.md_escape(problem))

    run_name = st.text_input("Run name", "", key="keep_ev_run_name",
                             placeholder="named after what ran, e.g. temporal_qa · claims TF · lexical · 24 Nov 14:05",
                             help="Leave empty to name the run after what ran (the same dataset and settings then resume "
                                  "the newest such run); a name no run of these settings has makes a new run, the "
                                  "same name resumes it. Rename runs on Runs.")
    found = worker_jobs.job(st.session_state.get("eval_job_id"))
    if (found is None or found["session"] != worker_jobs.session_id()
            or (found.get("dataset_id") != dataset_id and not found["arguments"].get("path"))):
        found = worker_jobs.latest_evaluation(dataset_id)  # this browser's, started before a reload or elsewhere
    running = found is not None and found["active"]
    refused = permissions.blocked("evaluate")
    start = st.button("Run evaluation", type="primary", key="run_evaluation",
                      disabled=bool(problems or running or refused), icon=":material/play_arrow:", help=formatting.md_escape(refused) if refused else None)
    permissions.explain(refused)
    if start:  # checked before anything is asked of the judge; start_evaluation checks again
        permissions.require("evaluate")
    typed_key, _ = verifier_choice.judge_api_key(judge_url, api_key)
    if start and needs_judge:
        with st.spinner("Asking the judge one test question…"):
            reachable, why = verifier_choice.check_judge(judge_url, judge_model.strip(), typed_key)
        if not reachable:
            st.error(formatting.md_escape(why + " The run was not started."), icon=":material/error:")
            start = False
        else:
            st.caption(formatting.md_escape(why))
    if start:
        settings = {
            "tf": use_tf, "tf_mode": tf_mode, "ndcg": use_ndcg, "ndcg_mode": ndcg_mode, "fc": use_fc,
            "turn": use_turn, "window_size": int(window),
            "k": int(k), "reference_date": reference_date.isoformat() if use_date else None,
            "asof": list(use_asof), "max_age": int(max_age), "half_life": int(half_life),
            "currency_by_verifier": currency_by_verifier, "verifier": verifier,
            "nli_model": nli_model.strip(), "judge_url": judge_url.strip(), "judge_model": judge_model.strip(),
            "run_name": run_name.strip(),
        }
        label = run_name.strip() or ", ".join(
            [n for n, used in (("faithfulness", use_tf), ("ndcg", use_ndcg), ("factual correctness", use_fc),
                               ("turn faithfulness", use_turn)) if used]
            + [ASOF_METRICS[name] for name in use_asof]
        )
        if file_path is not None:
            label = f"{file_path.name}: {label}"
        if source == "upload" and st.session_state.get("ev_upload") is not None:
            worker_jobs.save_upload(st.session_state["ev_upload"])  # removed after an earlier run: again
        job_id = worker_jobs.start_evaluation(settings, dataset_id, label, typed_key if needs_judge else None,
                                              path=file_path)
        st.session_state["eval_job_id"] = st.session_state["eval_job_watched"] = job_id
        found = worker_jobs.job(job_id)

    if found is not None:
        job_id = found["id"]
        if found["active"]:
            st.session_state["eval_job_watched"] = job_id  # seen running here: its run is selected when it ends

        @st.fragment(run_every=1.0 if found["active"] else None)
        def progress_panel() -> None:
            with errors.page_guard("evaluate progress"):
                current = worker_jobs.job(job_id) or found
                _show_job(current, api_key)
                if current["active"]:
                    return
                if (current["run_id"] is not None and st.session_state.get("eval_job_watched") == job_id
                        and st.session_state.get("eval_job_adopted") != job_id):
                    st.session_state["eval_job_adopted"] = job_id
                    selection.select_runs([current["run_id"], *[r for r in selection.active_run_ids() if r != current["run_id"]]])
                if found["active"]:
                    st.rerun()  # the whole page: the button and the runs table below

        progress_panel()

    _workspace_jobs(None if found is None else found["id"], api_key)

    st.subheader("Runs of this dataset")
    runs = store_reads.runs_table(dataset_id)
    if runs.empty:
        st.caption("None yet.")
    else:
        st.dataframe(formatting.display_table(runs.drop(columns=["config_hash"]), keep=("id",)), hide_index=True,
                     width="stretch", key="runs_table")
