"""Agreement: a foreign metric (imported RAGAS / DeepEval scores) against one of ours, row by row.

A scatter of the two scores, Spearman's rho and Kendall's tau over the rows both scored, and the
rows where they disagree most (`tempo_eval.compare.agreement`). Foreign scores come from the import box
at the top, `tempo-eval import FILE` or `tempo_eval.io.foreign.import_foreign_results`; our scores
from any run of the same dataset.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval.compare.agreement import agreement_pairs, rank_correlations
from tempo_eval.viz.agreement import agreement_scatter
from tempo_eval_app import (
    errors,
    formatting,
    permissions,
    selection,
    store_reads,
    widgets,
    words,
    worker_jobs,
)

selection.page_setup("Agreement")


@st.cache_data(show_spinner=False, max_entries=8)
def _queries(db: str, dataset_id: int, content_hash: str) -> list | None:
    """The dataset's query column alone (`RunStore.dataset_column`), keyed by its content too: the
    page never holds the dataset's frame (every column of every row, kept for the process)."""
    return store_reads.store_for(db).dataset_column(dataset_id, "query")


def _p_text(p: float) -> str:
    """"< 0.001" or "= 0.042"."""
    text = formatting.fmt_p(p)
    return text if text.startswith("<") else f"= {text}"


def _metric_options(dataset_id: int) -> list[tuple[int, str]]:
    """(run id, metric) for every metric of every run of the dataset, foreign ones first."""
    # the runs and their metrics from reads cached per run and size: a run being written elsewhere
    # is not counted and grouped again on every rerun
    options = [(int(run_id), str(metric)) for run_id in store_reads.runs_table(dataset_id)["id"].tolist()
               for metric in store_reads.metric_counts(int(run_id))["metric"]]
    return sorted(options, key=lambda o: (":" not in o[1], o[0], o[1]))


def _label(option: tuple[int, str]) -> str:
    return f"{words.metric_label(option[1])} · {store_reads.run_label(option[0])}"


with errors.page_guard("agreement-import"), st.expander("Import RAGAS or DeepEval scores"):
    st.caption(
        "A RAGAS `EvaluationResult.to_pandas()` file (CSV, JSONL, JSON or Parquet, one numeric column "
        "per metric) or a DeepEval test run JSON. Its scores become a run of the dataset it describes."
    )
    refused = permissions.blocked("upload")
    upload = st.file_uploader("Results file", key="agreement_upload", disabled=bool(refused),
                              type=["csv", "tsv", "jsonl", "json", "parquet", "gz"])
    permissions.explain(refused)
    if upload is not None and st.button("Import", key="agreement_import", disabled=bool(refused)):
        # a worker reads and stores the file (`tempo_eval.jobs.uploads`), not the app process
        arguments = {"path": str(worker_jobs.save_upload(upload)), "name": upload.name}
        st.session_state["agreement_import_job"] = worker_jobs.page_job(
            "foreign_import", arguments, f"Import {upload.name}", again=True)["id"]
    imported = worker_jobs.job(st.session_state.get("agreement_import_job"))
    if imported is not None and imported["active"]:
        worker_jobs.show_pending(imported)
    elif imported is not None:
        del st.session_state["agreement_import_job"]
        if imported["status"] == "finished":
            for warning in imported["result"]["warnings"]:
                st.warning(formatting.md_escape(warning))
            selection.select_dataset(imported["dataset_id"], [imported["run_id"]])
        elif imported["status"] == "cancelled":
            st.warning(formatting.md_escape(f"{imported['label']}: cancelled; nothing of it was stored."),
                       icon=":material/stop_circle:")
        else:
            st.error(formatting.md_escape(errors.in_app_terms(imported["error"] or imported["status"])),
                     icon=":material/error:")

with errors.page_guard("agreement"):
    dataset_id = selection.require_dataset_id()
    options = _metric_options(dataset_id)
    foreign = [o for o in options if ":" in o[1]]
    ours = [o for o in options if ":" not in o[1]]
    if not foreign or not ours:
        widgets.empty_state(
            "This view sets a foreign metric against one of ours. It needs, on the active dataset, "
            "a run imported from RAGAS or DeepEval (a RAGAS results file or a DeepEval test run, in the "
            "import box above) and a run of our metrics on the same file. This dataset has "
            f"{len(foreign)} foreign and {len(ours)} of our metrics.", "evaluate"
        )
        st.stop()
    left, right = st.columns(2)
    theirs_choice = left.selectbox("Foreign metric", foreign, format_func=_label, key="agreement_theirs")
    ours_choice = right.selectbox("Our metric", ours, format_func=_label, key="agreement_ours")

    pairs = agreement_pairs(
        store_reads.results_frame(ours_choice[0]), store_reads.results_frame(theirs_choice[0]),
        ours_metric=ours_choice[1], theirs_metric=theirs_choice[1],
    )
    stats = rank_correlations(pairs["ours"], pairs["theirs"])
    queries = _queries(store_reads.db_path(), int(dataset_id), store_reads.dataset_info(dataset_id)["content_hash"])
    if queries is not None:
        pairs.insert(2, "query", [queries[i] if 0 <= i < len(queries) else None for i in pairs["row"]])

    columns = st.columns(3)
    columns[0].metric("Rows scored by both", formatting.fmt_count(stats["n"]))
    columns[1].metric("Spearman ρ", formatting.fmt_score(stats["spearman"]),
                      help="Rank correlation of the two scores over the rows both scored (— when fewer than 3 rows, "
                           f"or one side constant). p {_p_text(stats['spearman_p'])}")
    columns[2].metric("Kendall τ-b", formatting.fmt_score(stats["kendall"]),
                      help=f"Share of row pairs ordered alike minus ordered oppositely, ties corrected. "
                           f"p {_p_text(stats['kendall_p'])}")

    fig = agreement_scatter(pairs, ours=ours_choice[1], theirs=theirs_choice[1])
    st.plotly_chart(fig, key="agreement_scatter")

    st.subheader("Rows where they disagree most")
    st.caption("Ordered by the gap between the two percentile ranks (the scales of two tools differ; their orders can be compared).")
    shown = pairs.head(20).rename(columns={"ours": words.metric_label(ours_choice[1]),
                                           "theirs": words.metric_label(theirs_choice[1])})
    st.dataframe(formatting.display_table(pd.DataFrame(shown)), hide_index=True, width="stretch", key="agreement_table")
    widgets.download_results(pairs, f"agreement_{dataset_id}", key="agreement_dl")
