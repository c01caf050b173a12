"""Datasets: upload a file (CSV, TSV, JSONL, JSON, Parquet) or TREC runs with qrels, check and fix
the column mapping, preview, and make it the active dataset. The bundled samples are one click away.

Reading a file (and storing it) is a worker's job, not the app process's
(`tempo_eval.jobs.uploads`): the page saves the upload to the workspace, queues the read and
shows what the worker found; the reads of every session show under "Uploads read by workers".
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval.common.identity import shown_user
from tempo_eval.io.dataset import CANONICAL_COLUMNS, detect_mapping
from tempo_eval.store.jobs import READ_KINDS
from tempo_eval_app import (
    errors,
    formatting,
    identity,
    permissions,
    samples,
    selection,
    store_reads,
    uploads,
    widgets,
    worker_jobs,
)

selection.page_setup("Datasets")

NONE = "— (none)"


def _preview(dataset_id: int, key: str) -> None:
    info = store_reads.dataset_info(dataset_id)
    head = store_reads.dataset_head(dataset_id, 50)
    st.caption(f"{formatting.fmt_count(info['n_rows'])} rows · columns: {formatting.md_escape(', '.join(map(str, head.columns)))}")
    st.dataframe(widgets.jsonify_cells(head), hide_index=True, width="stretch", key=key)


def _preview_read(result: dict, key: str) -> None:
    """The preview a worker read (`upload_jobs`): its first rows, the row count and the columns."""
    st.caption(f"{formatting.md_escape(result['rows'])} rows · columns: {formatting.md_escape(', '.join(result['columns']))}")
    frame = pd.DataFrame(result["preview"], columns=result["columns"])
    st.dataframe(frame, hide_index=True, width="stretch", key=key)


def _refused(found: dict, name: str) -> None:
    """A read that failed: the loader's message in the page's words (it names the file, row and
    field), or, for a conversation file, where it opens."""
    conversations = (found["result"] or {}).get("conversations") or 0
    if conversations:
        st.error(formatting.md_escape(
            f"{name} holds {conversations:,} conversation{'s' if conversations != 1 else ''}, "
            "not dataset rows: open it on the Conversation page, which scores it with Turn Faithfulness."
        ), icon=":material/forum:")
        widgets.page_button("conversation")
    else:
        st.error(formatting.md_escape(errors.in_app_terms(found["error"] or "the worker gave no reason")),
                 icon=":material/error:")


def _ended(found: dict | None, name: str) -> dict | None:
    """The result of an ended read; None (after saying why) while it runs, or when it failed."""
    if found is None:
        return None
    if found["active"]:
        worker_jobs.show_pending(found)
        return None
    if found["status"] != "finished":
        if found["status"] == "failed":
            _refused(found, name)
        elif found["status"] == "cancelled":
            st.warning(formatting.md_escape(f"{found['label']}: cancelled; nothing of it was stored."),
                       icon=":material/stop_circle:")
        else:
            st.warning(formatting.md_escape(f"{found['label']}: {found['status']}."))
        return None
    return found["result"]


def _store(kind: str, arguments: dict, label: str, session_key: str, ensure=None) -> None:
    """Queue the read that also stores the dataset (the "Use" buttons), remembered in the session."""
    st.session_state[session_key] = worker_jobs.page_job(kind, {**arguments, "store": True}, label, again=True,
                                                         ensure=ensure)["id"]


def _adopt_stored(session_key: str, name: str) -> None:
    """Once the storing job of this session has ended: select its dataset (or say why not)."""
    found = worker_jobs.job(st.session_state.get(session_key))
    if found is None:
        return
    if found["status"] == "finished" and found["dataset_id"] is not None:
        del st.session_state[session_key]
        selection.select_dataset(found["dataset_id"])
    _ended(found, name)
    if not found["active"]:
        st.session_state.pop(session_key, None)


def _column_peek(upload, saved_name: str) -> list[str]:
    """The file's columns for the mapping editor, read once per upload (kept in the session)
    from a bounded start of it (`uploads.peek_columns`: a few MB, decompressed as read), so a
    big or compressed upload is never copied or decompressed whole in the app's process."""
    key = f"_columns_{saved_name}"
    if key not in st.session_state:
        st.session_state[key] = uploads.peek_columns(upload, upload.name)
    return st.session_state[key]


def _stored_table(stored: pd.DataFrame, storing: list[dict]) -> pd.DataFrame:
    """The stored datasets, a dataset still being stored (its row count is set once all its rows
    are in) shown as "storing…" with the rows so far, not as 0 rows; one a stopped job left part
    way as "incomplete" (`worker_jobs.partial_label`)."""
    table = stored.drop(columns=["content_hash", "created_by"]).assign(by=identity.by_column(stored["created_by"]))
    partial = worker_jobs.partial_label(storing)
    table["n_rows"] = [f"{int(n):,}" if n else partial for n in table["n_rows"]]
    return table.rename(columns={"n_rows": "rows"})


def _recent_reads() -> None:
    """The latest reads of uploads in this workspace, from any session or app process. Drawn
    below the tabs: an element appearing above them would reopen the first tab."""
    found = sorted((j for kind in READ_KINDS for j in worker_jobs.queue().jobs(kind=kind, limit=5)),
                   key=lambda j: -j["id"])[:5]
    with st.expander("Uploads read by workers"):
        if not found:
            st.caption("None yet.")
            return
        st.dataframe(pd.DataFrame([{
            "job": j["id"], "what": j["label"], "status": j["status"],
            "rows": (j["result"] or {}).get("rows"), "dataset": j["dataset_id"], "by": shown_user(j.get("created_by")),
            "error": errors.in_app_terms(j["error"] or ""),
        } for j in found]), hide_index=True, width="stretch", key="upload_jobs_table")


with errors.page_guard("datasets"):
    sample_tab, file_tab, trec_tab, stored_tab = st.tabs(
        ["Sample data", "Upload a dataset", "TREC runs + qrels", "Stored datasets"]
    )
    refused = permissions.blocked("upload")  # the upload boxes (the bundled samples are for every role)

    with sample_tab:
        st.markdown(
            "Bundled with tempo-eval, written for it: 30 temporal questions from the end of the "
            "Western Roman Empire to ChatGPT (eight answers carry a wrong year), and two real "
            "retriever runs over the same passages."
        )
        left, right = st.columns(2)
        if left.button("Open the temporal QA sample", key="load_sample_qa", type="primary", icon=":material/quiz:"):
            selection.select_dataset(samples.load_sample_qa())
        if right.button("Open the BM25 vs dense runs", key="load_sample_runs", icon=":material/compare_arrows:"):
            selection.select_dataset(samples.load_sample_runs())

    with file_tab:
        # no `type=` filter: the loader's message for a wrong file ("save as CSV UTF-8") is clearer
        permissions.explain(refused)
        upload = st.file_uploader(
            "Dataset file", key="dataset_upload", disabled=bool(refused),
            help="CSV, TSV, JSONL, JSON or Parquet (optionally gzipped). List cells in CSV are JSON "
                 "lists; gold_ids may be a JSON object of graded relevance. A worker process reads it.",
        )
        if upload is not None:
            saved = worker_jobs.save_upload(upload, rewrite=False)  # again when a job reads it: ensure

            def ensure(upload=upload) -> None:
                worker_jobs.save_upload(upload)

            overrides = st.session_state.setdefault("mapping_overrides", {})
            columns = _column_peek(upload, saved.name)
            mapping = overrides.get(saved.name)
            st.subheader("Column mapping")
            if columns:
                current = dict(mapping) if mapping is not None else detect_mapping(columns)
                with st.form("mapping_form"):
                    st.caption("Which column of the file holds each canonical column (detected automatically; fix it here).")
                    chosen = {}
                    grid = st.columns(3)
                    for i, canonical in enumerate(CANONICAL_COLUMNS):
                        options = [NONE, *columns]
                        default = current.get(canonical)
                        chosen[canonical] = grid[i % 3].selectbox(
                            canonical, options, index=options.index(default) if default in options else 0,
                            key=f"map_{canonical}",
                        )
                    if st.form_submit_button("Apply mapping"):
                        mapping = overrides[saved.name] = {k: v for k, v in chosen.items() if v != NONE}
            else:
                st.caption("The file's columns could not be read; the message below says why.")
            arguments = {"path": str(saved), "name": upload.name, "mapping": mapping}
            reading = worker_jobs.page_job("dataset_upload", {**arguments, "store": False}, f"Read {upload.name}",
                                           ensure=ensure)
            read = _ended(reading, upload.name)
            if reading["status"] == "cancelled" and st.button("Read it again", key="reread_upload",
                                                              icon=":material/refresh:"):
                worker_jobs.page_job("dataset_upload", {**arguments, "store": False}, f"Read {upload.name}",
                                     again=True, ensure=ensure)
                st.rerun()  # the new read is the newest: the page shows it
            if read is not None:
                for warning in read["warnings"]:
                    st.warning(formatting.md_escape(warning))
                st.success(f"Read {formatting.md_escape(read['rows'])} rows from **{formatting.md_escape(upload.name)}** "
                           f"({formatting.md_escape(read['source_format'])}).")
                st.dataframe(
                    pd.DataFrame(
                        [{"canonical column": c, "from file column": read["mapping"].get(c, "—")} for c in CANONICAL_COLUMNS]
                    ),
                    hide_index=True, key="mapping_table",
                )
                st.subheader("Preview")
                _preview_read(read, "upload_preview")
                if st.button("Use this dataset", key="use_upload", type="primary", icon=":material/check:"):
                    _store("dataset_upload", arguments, f"Store {upload.name}", "upload_store_job", ensure)
            _adopt_stored("upload_store_job", upload.name)

    with trec_tab:
        st.caption(
            "Run files: `qid Q0 docid rank score tag`; qrels: `qid 0 docid grade`. Add the dataset "
            "holding the query texts and a corpus (JSONL doc_id/text) to see years in the comparison "
            "and the heatmaps."
        )
        permissions.explain(refused)
        run_files = st.file_uploader("Run files", accept_multiple_files=True, key="trec_runs", disabled=bool(refused))
        qrels_file = st.file_uploader("Qrels", key="trec_qrels", disabled=bool(refused))
        queries_file = st.file_uploader("Queries (a dataset file with query_id and query), optional",
                                        key="trec_queries", disabled=bool(refused))
        corpus_file = st.file_uploader("Corpus (JSONL doc_id/text or TSV), optional",
                                       type=["jsonl", "tsv", "txt"], key="trec_corpus", disabled=bool(refused))

        def save_runs() -> dict:
            """The boxes' files written to the workspace (again when a worker removed them)."""
            return {
                "runs": worker_jobs.save_uploads(run_files), "qrels": worker_jobs.save_uploads([qrels_file])[0],
                "queries": worker_jobs.save_uploads([queries_file])[0] if queries_file else None,
                "corpus": worker_jobs.save_uploads([corpus_file])[0] if corpus_file else None,
            }

        if st.button("Read the runs", key="read_runs", disabled=not (run_files and qrels_file) or bool(refused)):
            arguments = save_runs()
            label = f"Read the runs {', '.join(f.name for f in run_files)}"
            st.session_state["runs_read"] = (arguments, label)
            st.session_state["runs_read_job"] = worker_jobs.page_job("trec_runs", {**arguments, "store": False},
                                                                     label, again=True)["id"]
        runs_read = _ended(worker_jobs.job(st.session_state.get("runs_read_job")), "the runs")
        if runs_read is not None:
            for warning in runs_read["warnings"]:
                st.warning(formatting.md_escape(warning))
            _preview_read(runs_read, "runs_preview")
            if st.button("Use these runs", key="use_runs", type="primary", icon=":material/check:"):
                arguments, label = st.session_state["runs_read"]
                st.session_state.pop("runs_read_job", None)
                # the preview's files, written again if the sweep removed them since (boxes still full)
                ensure = save_runs if run_files and qrels_file else None
                _store("trec_runs", arguments, label.replace("Read", "Store", 1), "runs_store_job", ensure)
        _adopt_stored("runs_store_job", "the runs")

    with stored_tab:
        stored = store_reads.store().list_datasets()
        if stored.empty:
            st.info("No dataset stored in this workspace yet.")
        else:
            table = identity.filter_widgets(_stored_table(stored, worker_jobs.storing()), "datasets", "datasets")
            st.dataframe(table, hide_index=True, width="stretch", key="stored_table")
            active = selection.active_dataset_id()
            if active is not None:
                st.subheader("Active dataset")
                _preview(active, "active_preview")
    _recent_reads()
