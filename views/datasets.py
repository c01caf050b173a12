"""Datasets: upload a file (CSV, TSV, JSONL, JSON, Parquet) or TREC runs with qrels, check and fix
the column mapping, preview, and make it the active dataset. The bundled samples are one click away.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from tempo_eval_app import (
    downloads,
    errors,
    formatting,
    samples,
    selection,
    store_reads,
    uploads,
    widgets,
)

selection.page_setup("Datasets")

NONE = "— (none)"


def _preview(frame: pd.DataFrame, key: str) -> None:
    st.caption(f"{len(frame)} rows · columns: {formatting.md_escape(', '.join(map(str, frame.columns)))}")
    st.dataframe(downloads.jsonify_cells(frame.head(50)), hide_index=True, width="stretch", key=key)


with errors.page_guard("datasets"):
    sample_tab, file_tab, trec_tab, stored_tab = st.tabs(
        ["Sample data", "Upload a dataset", "TREC runs + qrels", "Stored datasets"]
    )

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
        from tempo_eval.io.dataset import CANONICAL_COLUMNS, detect_mapping, load_dataset

        # no `type=` filter: the loader's message for a wrong file ("save as CSV UTF-8") is clearer
        upload = st.file_uploader(
            "Dataset file", key="dataset_upload",
            help="CSV, TSV, JSONL, JSON or Parquet (optionally gzipped). List cells in CSV are JSON "
                 "lists; gold_ids may be a JSON object of graded relevance.",
        )
        if upload is not None:
            data = upload.getvalue()
            digest = hashlib.sha256(data).hexdigest()
            overrides = st.session_state.setdefault("mapping_overrides", {})
            columns = uploads.peek_columns(data, upload.name)
            mapping = overrides.get(digest)
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
                        mapping = overrides[digest] = {k: v for k, v in chosen.items() if v != NONE}
            else:
                st.caption("The file's columns could not be read; the message below says why.")
            dataset = None
            try:
                dataset = load_dataset(data, mapping=mapping, name=upload.name)
            except Exception as exc:  # the loader's message, readable, never a traceback
                errors.logger.info("upload %s: %s", upload.name, exc)
                conversations = uploads.conversation_count(data, upload.name)
                if conversations:
                    st.error(formatting.md_escape(
                        f"{upload.name} holds {conversations:,} conversation{'s' if conversations != 1 else ''}, "
                        "not dataset rows: open it on the Conversation page, which scores it with Turn Faithfulness."
                    ), icon=":material/forum:")
                    widgets.page_button("conversation")
                else:
                    errors.show_error(exc)
            if dataset is not None:
                for warning in dataset.warnings:
                    st.warning(formatting.md_escape(warning))
                st.success(f"Read {len(dataset.frame)} rows from **{formatting.md_escape(upload.name)}** ({formatting.md_escape(dataset.source_format)}).")
                st.dataframe(
                    pd.DataFrame(
                        [{"canonical column": c, "from file column": dataset.mapping.get(c, "—")} for c in CANONICAL_COLUMNS]
                    ),
                    hide_index=True, key="mapping_table",
                )
                st.subheader("Preview")
                _preview(dataset.frame, "upload_preview")
                if st.button("Use this dataset", key="use_upload", type="primary", icon=":material/check:"):
                    selection.select_dataset(store_reads.save_dataset(dataset))

    with trec_tab:
        st.caption(
            "Run files: `qid Q0 docid rank score tag`; qrels: `qid 0 docid grade`. Add the dataset "
            "holding the query texts and a corpus (JSONL doc_id/text) to see years in the comparison "
            "and the heatmaps."
        )
        run_files = st.file_uploader("Run files", accept_multiple_files=True, key="trec_runs")
        qrels_file = st.file_uploader("Qrels", key="trec_qrels")
        queries_file = st.file_uploader("Queries (a dataset file with query_id and query), optional",
                                        key="trec_queries")
        corpus_file = st.file_uploader("Corpus (JSONL doc_id/text or TSV), optional",
                                       type=["jsonl", "tsv", "txt"], key="trec_corpus")
        if st.button("Read the runs", key="read_runs", disabled=not (run_files and qrels_file)):
            from tempo_eval_app.retrieval import load_runs_dataset

            try:
                st.session_state["runs_dataset"] = load_runs_dataset(
                    [(f.name, f.getvalue()) for f in run_files],
                    (qrels_file.name, qrels_file.getvalue()),
                    queries=(queries_file.name, queries_file.getvalue()) if queries_file else None,
                    corpus=(corpus_file.name, corpus_file.getvalue()) if corpus_file else None,
                )
            except Exception as exc:
                st.session_state.pop("runs_dataset", None)
                errors.logger.info("runs upload: %s", exc)
                errors.show_error(exc)
        runs_dataset = st.session_state.get("runs_dataset")
        if runs_dataset is not None:
            for warning in runs_dataset.warnings:
                st.warning(formatting.md_escape(warning))
            _preview(runs_dataset.frame, "runs_preview")
            if st.button("Use these runs", key="use_runs", type="primary", icon=":material/check:"):
                st.session_state.pop("runs_dataset", None)
                selection.select_dataset(store_reads.save_dataset(runs_dataset))

    with stored_tab:
        stored = store_reads.store().list_datasets()
        if stored.empty:
            st.info("No dataset stored in this workspace yet.")
        else:
            st.dataframe(stored.drop(columns=["content_hash"]), hide_index=True, width="stretch", key="stored_table")
            active = selection.active_dataset_id()
            if active is not None:
                st.subheader("Active dataset")
                _preview(store_reads.dataset_frame(active), "active_preview")
