"""The Compare page's TREC run files: the inputs (run files, qrels, corpus, doc-dates and
query-dates files named by a path on the app's machine, confined by `tempo_eval_app.paths`, a
folder, or uploads) and the as-of options; the worker's job until its comparison is saved; and the
as-of sections of a comparison with dates (`show_asof`). A bad file is said in the page's words
(the reader's file, line and value), never a traceback.

The page never reads the runs itself: it queues a `compare_runs` job in the workspace
(`tempo_eval.store.jobs`, through `tempo_eval_app.worker_jobs`) with the files' paths (uploads
are first saved to the workspace's uploads/ folder, as data) and the settings, and starts a
worker (`python -m tempo_eval job run`). The worker writes the per-query values to a folder of
the workspace keyed by the SHA-256 of the files and settings (`tempo_eval.compare.saved`);
the page reads that folder. A job is found again by its arguments (paths, each file's size and
modification time, settings), so a rerun, a reload (the job id is in the address), another
browser session or another app process shows the same comparison without scoring again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from tempo_eval.compare import saved as saved_comparisons
from tempo_eval.compare.statistics import LABELS
from tempo_eval.viz.evidence_age import age_histogram
from tempo_eval_app import formatting, links, paths, permissions, widgets, worker_jobs
from tempo_eval_app.identity import current_user

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
    args = reopened(job_id)
    if args is None:
        return
    st.session_state.update(compare_run_paths="\n".join(args["runs"]), compare_qrels_path=args["qrels"],
                            compare_missing=args.get("missing", "zero"))
    if args.get("doc_dates"):
        st.session_state.update(compare_doc_dates_path=args["doc_dates"], compare_query_dates_path=args["query_dates"],
                                compare_k=int(args["k"]), compare_max_age=int(args["max_age"]),
                                compare_half_life=int(args["half_life"]))
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
        st.progress(min(1.0, fraction), text=formatting.md_escape(progress_text(current)))
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
    sources = [*runs, qrels, doc_dates, query_dates]
    written = [None if source is None else saved(source) for source in sources]
    # messages name an upload by its file name, not by the path it was saved to
    names = {str(path): f"{source.name} (uploaded)" for source, path in zip(sources, written, strict=True)
             if source is not None and not isinstance(source, Path)}
    *run_paths, qrels_path, doc_path, query_path = written
    args = arguments(run_paths, qrels_path, doc_dates=doc_path, query_dates=query_path, missing=missing,
                     k=k, max_age=max_age, half_life=half_life)
    job = request(args, again=bool(st.session_state.pop("compare_again", False)))
    links.set_params(cmp=job["id"])
    if job["active"] and st.session_state.get("compare_waited") != job["id"]:
        # a job new to this session: a small comparison ends within a moment and is shown at once
        st.session_state["compare_waited"] = job["id"]
        job = worker_jobs.wait(job)
    if job["active"]:
        _watch(job)
        st.stop()  # the rest of the page needs the comparison; the watch reruns it once there
    found = stored(job) if job["status"] == "finished" else None
    if found is None:
        if job["status"] != "failed":
            message = f"The comparison ended without a result ({job['status']})."
        elif (job.get("error") or "").startswith("DateError:"):
            message = f"A date file could not be read: {error_text(job, names)}"
        else:
            message = f"The run files could not be compared: {error_text(job, names)}"
        st.error(formatting.md_escape(message))
        if st.button("Compare again", key="compare_again_button"):
            st.session_state["compare_again"] = True
            st.rerun()
        st.stop()
    return found


KIND = "compare_runs"
#: the largest k the page offers: every saved comparison holds NDCG up to it
MAX_K = saved_comparisons.MAX_K


def saved(source: Any) -> Path:
    """A path as it is; an upload written to the workspace's uploads/ folder (once)."""
    return source if isinstance(source, Path) else worker_jobs.save_upload(source, action="compare_files")


def _stamp(path: Path) -> list[int]:
    info = path.stat()
    return [info.st_size, info.st_mtime_ns]


def arguments(runs: list[Path], qrels: Path, *, doc_dates: Path | None = None, query_dates: Path | None = None,
              missing: str = "zero", k: int = 10, max_age: float = 365, half_life: float = 365,
              precision: str = "float32") -> dict[str, Any]:
    """The job's arguments: the paths, each file's size and modification time (an edited file
    is a new job), and the settings that decide the result (k, max_age and half_life only with
    both date files: without them every k is a slice of the saved curves)."""
    files = [*runs, qrels]
    out: dict[str, Any] = {"runs": [str(p) for p in runs], "qrels": str(qrels), "missing": missing,
                           "precision": precision}
    if doc_dates is not None and query_dates is not None:
        files += [doc_dates, query_dates]
        out.update(doc_dates=str(doc_dates), query_dates=str(query_dates), k=int(k), max_age=float(max_age),
                   half_life=float(half_life))
    out["stamps"] = [_stamp(p) for p in files]
    return out


def request(args: dict[str, Any], *, again: bool = False) -> dict[str, Any]:
    """The job for these arguments: the newest one asked before (running, queued, finished with
    its folder still there, or failed: a bad file fails the same way again), else a new one,
    with a worker started for it. `again` queues a new one whatever was found."""
    queue = worker_jobs.queue()
    found = queue.latest(KIND, args)
    if found is not None and not again:
        found = worker_jobs.job(found["id"])
        usable = found["active"] or found["status"] == "failed" or (
            found["status"] == "finished" and saved_comparisons.is_saved(str((found["result"] or {}).get("key"))))
        if usable:
            return found
    permissions.require("compare_files")
    job_id = queue.submit(KIND, args, label="compare run files", user=current_user())
    worker_jobs.spawn_worker()
    return worker_jobs.job(job_id)


def stored(job: dict[str, Any]) -> saved_comparisons.StoredComparison | None:
    """The saved comparison a finished job wrote (None when its folder is gone)."""
    key = (job.get("result") or {}).get("key")
    return load(str(key)) if key and saved_comparisons.is_saved(str(key)) else None


@st.cache_resource(show_spinner="Reading the saved comparison…", max_entries=8)
def load(key: str) -> saved_comparisons.StoredComparison:
    """The saved comparison `key` (`saved_comparisons.is_saved(key)`), read once per app process."""
    found = saved_comparisons.load(key)
    if found is None:
        raise FileNotFoundError(f"no saved comparison {key!r} in this workspace")
    return found


def reopened(job_id: int | None) -> dict[str, Any] | None:
    """The arguments of job `job_id` (from the address) or, without one, of the newest run-file
    comparison of the workspace, when all its files are still there: what a new session shows."""
    queue = worker_jobs.queue()
    found = queue.get(int(job_id)) if job_id is not None else None
    if found is None:
        newest = queue.jobs(kind=KIND, limit=1)
        found = newest[0] if newest else None
    if found is None or found["kind"] != KIND:
        return None
    args = found["arguments"]
    files = [*args.get("runs", []), args.get("qrels"), args.get("doc_dates"), args.get("query_dates")]
    if not all(Path(p).is_file() for p in files if p):
        return None
    return {**args, "job": found["id"]}


def error_text(job: dict[str, Any], names: dict[str, str]) -> str:
    """The job's error in the page's words: the reader's message (file, line, value) without the
    exception's name, uploads called by their names rather than their saved paths."""
    message = job.get("error") or "the run files could not be read"
    head, sep, rest = message.partition(": ")
    if sep and head.isidentifier():
        message = rest
    for path, name in names.items():
        message = message.replace(path, name)
    return message


def progress_text(job: dict[str, Any]) -> str:
    """'Scoring the run files in a worker… 40%', or its place in the queue."""
    if job["status"] == "queued":
        place = worker_jobs.queue().place(job["id"])
        return "Waiting for a free worker" + (f" (place {place} in the queue)" if place else "") + "…"
    fraction = job["done"] / job["total"] if job["total"] else 0.0
    return f"Scoring the run files in a worker… {fraction:.0%}"


#: the columns of an opened query's documents, in this order
DOCUMENT_COLUMNS = ["rank", "doc_id", "date", "age", "flag", "grade"]


def show_asof(found: saved_comparisons.StoredComparison) -> None:
    """The as-of sections, or a line saying which files would add them."""
    if not found.as_of:
        st.caption("Add a doc-dates and a query-dates file above for the as-of metrics: future leak, stale "
                   "evidence, median evidence age and Recency NDCG, the age of the evidence and the queries that leak.")
        return
    k = int(found.settings["k"])
    st.subheader("As-of: when the evidence was published")
    st.caption(formatting.md_escape(
        f"Stale after {found.settings['max_age']:g} days; Recency NDCG half-life {found.settings['half_life']:g} days. "
        "Future leak, stale evidence and median age cover every query with an as-of date, judged or not; "
        "Recency NDCG the judged ones."))
    figure = _age_figure(found.key, k)
    st.plotly_chart(figure, key="compare_age_chart", width="stretch")
    widgets.download_figure(figure, "evidence_age", key="age_fig")
    for note in found.notes:
        st.caption(formatting.md_escape(f"Note: {note}"))

    st.subheader("Queries that leak")
    columns = st.columns(min(len(found.runs), 3))
    for i, run in enumerate(found.runs):
        with columns[i % len(columns)]:
            _leaks(found, run, i, k)


@st.cache_resource(show_spinner=False, max_entries=16)
def _age_figure(key: str, k: int):
    """The age histogram of a saved comparison, built once (a saved comparison never changes;
    plotly validates a figure as it is built); shared, do not modify."""
    return age_histogram(load(key).ages(), title=f"Age of the top {k} documents at the as-of date")


def _leaks(found: saved_comparisons.StoredComparison, run: str, i: int, k: int) -> None:
    table = found.leaking(run)
    dated = int(found.values[(found.values["run"] == run) & (found.values["metric"] == found.as_of[0])]["value"].notna().sum())
    st.markdown(formatting.md_escape(
        f"{run}: {len(table)} of {dated} queries have a document from after their as-of date in the top {k}"))
    if table.empty:
        return
    st.dataframe(table, hide_index=True, key=f"compare_leaks_{i}", width="stretch")
    query = st.selectbox("Open a leaking query", table["query_id"].tolist(), key=f"compare_leak_query_{i}",
                         index=None, placeholder="Choose a query")
    if query is not None:
        documents = found.ranked(run, query, k)
        shown = documents.reindex(columns=DOCUMENT_COLUMNS)
        shown = shown.assign(date=shown["date"].fillna(formatting.MISSING), age=[formatting.fmt_count(a) for a in shown["age"]])
        st.dataframe(shown.rename(columns={"age": "age (days)"}), hide_index=True, key=f"compare_leak_docs_{i}",
                     width="stretch")
        flags = documents["flag"].value_counts()
        st.caption(formatting.md_escape(
            f"{query}, as of {documents['as_of'].dropna().iloc[0] if documents['as_of'].notna().any() else 'unknown'}: "
            + ", ".join(f"{int(flags.get(f, 0))} {f}" for f in ("future", "stale", "undated"))))

