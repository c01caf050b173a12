"""The Compare page's run-file inputs: run files, qrels, corpus, doc-dates and query-dates files
named by a path on the app's machine (confined by `tempo_eval_app.paths`), a folder, or uploads;
the as-of options; then the worker's job (`tempo_eval_app.run_files`) until its comparison is
saved. A bad file is said in the page's words (the reader's file, line and value), never a
traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from tempo_eval.compare import saved as saved_comparisons
from tempo_eval.compare.statistics import LABELS
from tempo_eval_app import formatting, links, paths, permissions, run_files, worker_jobs

#: the most run files a comparison takes (its runs are labelled a-z)
MAX_RUNS = len(LABELS)
#: session keys of the inputs a reopened comparison fills in
_PATH_KEYS = {"runs": "compare_run_paths", "qrels": "compare_qrels_path", "doc_dates": "compare_doc_dates_path",
              "query_dates": "compare_query_dates_path"}


def reopen(files_source: str) -> None:
    """On a session's first run: fill the inputs from the comparison in the address (`cmp`, and
    show the run files then) or, when the inputs are empty, from the newest one of the workspace,
    so a reload or another browser session finds a finished comparison again."""
    if st.session_state.get("compare_reopened"):
        return
    st.session_state["compare_reopened"] = True
    if any(st.session_state.get(key) for key in _PATH_KEYS.values()):
        return
    raw = links.param("cmp")
    job_id = int(raw) if raw is not None and raw.isdigit() else None
    args = run_files.reopened(job_id)
    if args is None:
        return
    st.session_state["compare_run_paths"] = "\n".join(args["runs"])
    st.session_state["compare_qrels_path"] = args["qrels"]
    st.session_state["compare_missing"] = args.get("missing", "zero")
    if args.get("doc_dates"):
        st.session_state["compare_doc_dates_path"] = args["doc_dates"]
        st.session_state["compare_query_dates_path"] = args["query_dates"]
        st.session_state["compare_k"] = int(args["k"])
        st.session_state["compare_max_age"] = int(args["max_age"])
        st.session_state["compare_half_life"] = int(args["half_life"])
    if job_id is not None and args["job"] == job_id:
        st.session_state["compare_source"] = files_source


def _one_file(text: str, label: str) -> Path | None:
    """The one file a path (or a folder holding one file) names; None for an empty input."""
    if not text.strip():
        return None
    try:
        return paths.files_named(text, limit=1)[0]
    except paths.TooManyFiles:
        raise paths.PathRefused(f"{label}: {text.strip()} holds several files; name one file") from None


def _runs_named(typed: str, uploads: int) -> list[Path]:
    """The run files the typed lines name (files or folders), refused at once when they and the
    `uploads` are more than Compare takes (`MAX_RUNS`): a folder's files are counted before any
    is checked or read (`paths.files_named`)."""
    runs: list[Path] = []
    for line in (line for line in typed.splitlines() if line.strip()):
        try:
            runs += paths.files_named(line, limit=MAX_RUNS)
        except paths.TooManyFiles:
            raise paths.PathRefused(f"Compare takes at most {MAX_RUNS} runs: the folder {line.strip()} holds more "
                                    f"than {MAX_RUNS} files; name the run files, or a folder of at most "
                                    f"{MAX_RUNS}") from None
        if len(runs) + uploads > MAX_RUNS:
            break
    if len(runs) + uploads > MAX_RUNS:
        raise paths.PathRefused(f"Compare takes at most {MAX_RUNS} runs; the paths and uploads name more")
    return runs


def _inputs() -> tuple[list[Any], Any, Any, Any]:
    """The widgets; (runs, qrels, doc dates, query dates): paths or uploads, None where absent."""
    roots = ", ".join(str(root) for root in paths.allowed_roots())
    st.caption(formatting.md_escape(
        f"Paths are read on the machine that runs the app, inside {roots} (more with the environment "
        f"variable {paths.ALLOWED_ENV}). Compressed runs (.gz, .bz2, .zst) are welcome. Uploads are saved "
        "to the workspace; a worker process scores the runs."
    ))
    p1, p2 = st.columns(2)
    typed = p1.text_area("Run files or folders of runs (one path per line)", key="compare_run_paths", height=100)
    qrels_typed = p2.text_input("Qrels file (path)", key="compare_qrels_path")
    corpus_typed = st.text_input(
        "Corpus (path, optional: JSONL or doc_id<TAB>text)", key="compare_corpus_path",
        help="Only the documents of the query you open are read from it.",
    )
    d1, d2 = st.columns(2)
    doc_typed = d1.text_input("Doc-dates file (path, optional: doc_id<TAB>date)", key="compare_doc_dates_path",
                              help="The publication date of each document, for the as-of metrics.")
    query_typed = d2.text_input("Query-dates file (path, optional: query_id<TAB>date)",
                                key="compare_query_dates_path",
                                help="When each question was asked (its as-of date), for the as-of metrics.")
    refused = permissions.blocked("compare_files")
    u1, u2 = st.columns(2)
    uploads = u1.file_uploader("…or upload run files", accept_multiple_files=True, key="compare_run_uploads",
                               disabled=bool(refused))
    qrels_upload = u2.file_uploader("…or upload the qrels", key="compare_qrels_upload", disabled=bool(refused))
    u3, u4 = st.columns(2)
    doc_upload = u3.file_uploader("…or upload the doc-dates file", key="compare_doc_dates_upload",
                                  disabled=bool(refused))
    query_upload = u4.file_uploader("…or upload the query-dates file", key="compare_query_dates_upload",
                                    disabled=bool(refused))
    permissions.explain(refused)
    try:
        runs = _runs_named(typed, len(uploads or []))
        qrels = _one_file(qrels_typed, "Qrels") if qrels_typed.strip() else None
        doc_dates = _one_file(doc_typed, "Doc-dates file")
        query_dates = _one_file(query_typed, "Query-dates file")
        st.session_state["compare_corpus_file"] = (
            str(_one_file(corpus_typed, "Corpus")) if corpus_typed.strip() else None
        )
    except paths.PathRefused as refused:
        st.error(formatting.md_escape(str(refused)))
        st.stop()
    runs += list(uploads or [])
    return runs, qrels or qrels_upload, doc_dates or doc_upload, query_dates or query_upload


#: how often the progress of a running comparison is read (s)
WATCH_EVERY_S = 0.5


def _watch(job: dict[str, Any]) -> None:
    """The running job's progress and its Cancel button, in a fragment that reads the job every
    WATCH_EVERY_S and reruns the whole page once it has ended: the page above it (inputs, file
    checks) is not rerun every half second meanwhile, only this."""
    job_id = job["id"]

    @st.fragment(run_every=WATCH_EVERY_S)
    def progress() -> None:
        current = worker_jobs.job(job_id) or job
        if not current["active"]:
            st.rerun()  # the whole page: the comparison is saved (or the job failed)
        fraction = current["done"] / current["total"] if current["total"] else 0.0
        st.progress(min(1.0, fraction), text=formatting.md_escape(run_files.progress_text(current)))
        worker_jobs.cancel_button(job_id, "compare_cancel")  # the worker reads it within a second

    progress()


def scores(missing: str, k: int) -> saved_comparisons.StoredComparison:
    """The inputs, then the saved comparison of a worker's job (the page shows its progress and
    reruns until it ends; a refused path or a bad file is said and stops the page)."""
    runs, qrels, doc_dates, query_dates = _inputs()
    o1, o2 = st.columns(2)
    max_age = o1.number_input("Stale after (days, max_age)", 1, 36500, 365, key="compare_max_age",
                              help="Stale evidence@k: a document older than this at the as-of date is stale.")
    half_life = o2.number_input("Recency half-life (days)", 1, 36500, 365, key="compare_half_life",
                                help="Recency NDCG@k: a document's gain halves every this many days of age.")
    if not runs or qrels is None:
        st.info("Name two or more run files (or a folder of runs) and the qrels, by path or by upload. "
                "Add a doc-dates and a query-dates file for the as-of metrics (future leak, stale evidence, "
                "median age, Recency NDCG).")
        st.stop()
    if (doc_dates is None) != (query_dates is None):
        st.warning("The as-of metrics need both date files: the publication dates of the documents and the "
                   "as-of dates of the queries. Comparing on NDCG only.")
        doc_dates = query_dates = None
    names: dict[str, str] = {}
    saved = []
    for source in [*runs, qrels, doc_dates, query_dates]:
        if source is None:
            saved.append(None)
            continue
        path = run_files.saved(source)
        if not isinstance(source, Path):
            names[str(path)] = f"{source.name} (uploaded)"
        saved.append(path)
    *run_paths, qrels_path, doc_path, query_path = saved
    args = run_files.arguments(run_paths, qrels_path, doc_dates=doc_path, query_dates=query_path, missing=missing,
                               k=k, max_age=max_age, half_life=half_life)
    job = run_files.request(args, again=bool(st.session_state.pop("compare_again", False)))
    links.set_params(cmp=job["id"])
    if job["active"] and st.session_state.get("compare_waited") != job["id"]:
        # a job new to this session: a small comparison ends within a moment and is shown at once
        st.session_state["compare_waited"] = job["id"]
        job = worker_jobs.wait(job)
    if job["active"]:
        _watch(job)
        st.stop()  # the rest of the page needs the comparison; the watch reruns it once there
    found = run_files.stored(job) if job["status"] == "finished" else None
    if found is None:
        if job["status"] != "failed":
            message = f"The comparison ended without a result ({job['status']})."
        elif (job.get("error") or "").startswith("DateError:"):
            message = f"A date file could not be read: {run_files.error_text(job, names)}"
        else:
            message = f"The run files could not be compared: {run_files.error_text(job, names)}"
        st.error(formatting.md_escape(message))
        if st.button("Compare again", key="compare_again_button"):
            st.session_state["compare_again"] = True
            st.rerun()
        st.stop()
    return found
