"""Claims: every verified claim of the selected runs with its verdict, evidence and confidence;
filters; the answer text with its claims highlighted by verdict colour.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval.verify.base import verdict_label
from tempo_eval.viz.highlight import claim_marks, legend_html, render_marks, text_block
from tempo_eval_app import (
    errors,
    formatting,
    links,
    permissions,
    selection,
    store_reads,
    widgets,
    words,
)
from tempo_eval_app import verifier_notes as notes
from tempo_eval_app.identity import current_user

selection.page_setup("Claims")

HALLUCINATED = ("NOT_SUPPORTED", "CONTRADICTED")
VERDICTS = ("SUPPORTED", "PARTIALLY_SUPPORTED", "NEUTRAL", "NOT_SUPPORTED", "CONTRADICTED", "ERROR")


def _probabilities_text(probabilities: object) -> str:
    if not isinstance(probabilities, dict):
        return ""
    return " · ".join(f"{label} {formatting.fmt_score(value)}" for label, value in probabilities.items())


@st.cache_data(show_spinner=False, max_entries=16)
def _claims_table(db: str, run_ids: tuple[int, ...], versions: tuple[int, ...]) -> pd.DataFrame:
    claims = store_reads.claims_of_runs(run_ids)
    if claims.empty:
        return claims
    claims["probabilities"] = [_probabilities_text(p) for p in claims["probabilities"]]
    claims["key"] = [
        f"{r}:{row}:{m}:{i}" for r, row, m, i in zip(claims["run_id"], claims["row"], claims["metric"], claims["idx"], strict=True)
    ]
    return claims


with errors.page_guard("claims"):
    dataset_id = selection.active_dataset_id()
    run_ids = selection.active_run_ids()
    if dataset_id is None or not run_ids:
        widgets.empty_state("Select one or more evaluation runs in the sidebar, or run one, to see their claims.", "evaluate")
        st.stop()
    claims = _claims_table(store_reads.db_path(), tuple(run_ids), tuple(store_reads.n_results(r) for r in run_ids))
    if claims.empty:
        widgets.empty_state(
            "The selected runs have no claim-level verdicts. Focus-time scores compare years, not "
            "claims: evaluate with Temporal Faithfulness in claims or LLM mode, or Factual Correctness.", "evaluate"
        )
        st.stop()
    claims = notes.with_human_labels(notes.with_premises(claims))

    st.subheader("Filters")
    f1, f2, f3 = st.columns([1, 2, 2])
    links.init_from_param("claims_hallucinated", "hallucinated", lambda v: v == "1")
    hallucinated = f1.toggle("Hallucinated only", key="claims_hallucinated",
                             help=f"{verdict_label('NOT_SUPPORTED')} and {verdict_label('CONTRADICTED')} claims.")
    metrics = sorted(claims["metric"].unique())
    chosen_metrics = f2.multiselect("Metric", metrics, format_func=words.metric_label, default=widgets.multiselect_default("claims_metrics", metrics), key="claims_metrics")
    eval_runs = list(dict.fromkeys(claims["eval_run"]))
    chosen_runs = f3.multiselect("Evaluation run", eval_runs, default=widgets.multiselect_default("claims_runs", eval_runs), key="claims_runs")
    g1, g2, g3 = st.columns([2, 2, 1])
    # the Verdict filter offers only what the switch keeps (its own key: switching back restores the choice)
    verdicts = [v for v in VERDICTS if v in set(claims["verdict"]) and (not hallucinated or v in HALLUCINATED)]
    verdict_key = "claims_verdicts_hallucinated" if hallucinated else "claims_verdicts"
    links.init_from_param(verdict_key, "verdict", lambda v: [x for x in v.split(",") if x in verdicts])
    chosen_verdicts = g1.multiselect("Verdict", verdicts, default=widgets.multiselect_default(verdict_key, verdicts),
                                     key=verdict_key, format_func=verdict_label)
    systems = [s for s in dict.fromkeys(claims["run"].dropna())]
    chosen_systems = g2.multiselect("System (dataset run column)", systems, default=widgets.multiselect_default("claims_systems", systems), key="claims_systems",
                                    disabled=not systems)
    min_confidence = g3.slider("Min. confidence", 0.0, 1.0, 0.0, 0.05, key="claims_confidence",
                               help="The verifier's stored confidence in its verdict: the lexical verifier's "
                                  "calibrated probability, the NLI model's probability of the chosen label, "
                                  "the judge's own figure when it gives one. Claims without a confidence "
                                  "are hidden once this is above 0.")
    links.set_params(hallucinated="1" if hallucinated else None,
                  verdict=chosen_verdicts if set(chosen_verdicts) != set(verdicts) else None)

    mask = claims["metric"].isin(chosen_metrics) & claims["eval_run"].isin(chosen_runs) & claims["verdict"].isin(chosen_verdicts)
    if hallucinated:
        mask &= claims["verdict"].isin(HALLUCINATED)
    if systems:
        mask &= claims["run"].isin(chosen_systems) | claims["run"].isna()
    if min_confidence > 0:
        mask &= claims["confidence"] >= min_confidence
    shown = claims[mask].reset_index(drop=True)

    if hallucinated:
        st.caption(
            f"Showing {verdict_label('NOT_SUPPORTED')} and {verdict_label('CONTRADICTED')} claims only"
            + (f", with confidence ≥ {min_confidence:.2f}." if min_confidence > 0 else ", at any confidence.")
        )
    counts = shown["verdict"].value_counts()  # the counters follow the filters
    cols = st.columns(5)
    cols[0].metric("Claims", f"{formatting.fmt_count(len(shown))} of {formatting.fmt_count(len(claims))}")
    for column, verdict in zip(cols[1:], ("SUPPORTED", "NEUTRAL", "NOT_SUPPORTED", "CONTRADICTED"), strict=True):
        column.metric(verdict_label(verdict), formatting.fmt_count(int(counts.get(verdict, 0))),
                      help=f"Claims with the verdict {verdict_label(verdict)}")

    # the columns an analyst reads first, then the narrow identifiers
    shown["reason"] = [
        f"Error: {error}" if isinstance(error, str) and error else reason
        for error, reason in zip(shown["error"], shown["reason"], strict=True)
    ]
    table_columns = ["verdict", "claim", "evidence", "reason", "confidence", "human", "query_id", "run", "metric",
                     "eval_run", "probabilities"]
    if not systems:
        table_columns.remove("run")
    table = shown[table_columns].copy()
    table["metric"] = [words.metric_label(m) for m in table["metric"]]
    table["verdict"] = [verdict_label(v) for v in table["verdict"]]
    table["human"] = [verdict_label(v) if isinstance(v, str) else None for v in table["human"]]
    event = st.dataframe(
        table, hide_index=True, width="stretch", height=min(360, 40 + 35 * max(len(shown), 1)),
        key="claims_table",
        on_select="rerun", selection_mode="single-row",
        column_config={
            "verdict": st.column_config.TextColumn("verdict", width=150),  # "Neutral (not stated)" in full
            "claim": st.column_config.TextColumn("claim", width="medium"),
            "evidence": st.column_config.TextColumn("evidence", width="medium"),
            "reason": st.column_config.TextColumn("reason", width="medium"),
            "confidence": st.column_config.NumberColumn("confidence", format="%.3f", width="small"),
            "human": st.column_config.TextColumn("your label", width="small"),
            "query_id": st.column_config.TextColumn("query", width="small"),
            "run": st.column_config.TextColumn("system", width="small"),
            "metric": st.column_config.TextColumn("metric", width="medium"),
            "eval_run": st.column_config.TextColumn("evaluation run", width="small"),
            "probabilities": st.column_config.TextColumn("probabilities", width="small"),
        },
    )
    selected_rows = widgets.selected(event)
    if selected_rows and selected_rows[0] < len(shown):
        st.session_state["claims_focus"] = shown.loc[selected_rows[0], "key"]
    widgets.download_results(shown.drop(columns=["key", "premises"]), "claims", key="claims_dl")

    if shown.empty:
        st.info("No claim matches the filters.")
        st.stop()
    focus = st.session_state.get("claims_focus")
    if focus not in set(shown["key"]):
        focus = shown.loc[0, "key"]
    claim = shown[shown["key"] == focus].iloc[0]

    st.subheader(formatting.md_escape(f"Query {claim['query_id']} · {words.metric_label(claim['metric'])} · {claim['eval_run']}"))
    frame = store_reads.dataset_frame(store_reads.store().run_info(int(claim["run_id"]))["dataset_id"])
    row = frame.iloc[int(claim["row"])]
    same = claims[(claims["run_id"] == claim["run_id"]) & (claims["row"] == claim["row"]) & (claims["metric"] == claim["metric"])]
    records = same[["claim", "verdict", "evidence"]].to_dict(orient="records")
    # the legend, the question, the marked answer (and reference): one element
    blocks = [legend_html()]
    if isinstance(row.get("query"), str):
        blocks += [widgets.heading_html("Question"), widgets.plain_html(row["query"])]
    answer = row.get("answer") if isinstance(row.get("answer"), str) else ""
    marks, missing = claim_marks(answer, records)
    blocks += [widgets.heading_html("Answer, claims coloured by verdict"), text_block(render_marks(answer, marks))]
    leftover = [records[i] for i in missing]
    reference = row.get("reference") if isinstance(row.get("reference"), str) else ""
    if leftover and reference:
        ref_marks, still_missing = claim_marks(reference, leftover)
        if ref_marks:
            blocks += [widgets.heading_html("Reference, claims checked against the answer"),
                       text_block(render_marks(reference, ref_marks))]
        leftover = [leftover[i] for i in still_missing]
    widgets.html_blocks(*blocks)
    if leftover:
        st.caption(f"{len(leftover)} claim(s) are paraphrases the judge wrote; they are listed in the table.")

    with st.container(border=True):
        # the claim and what the verifier said about it: one element (user and model text escaped)
        verdict = verdict_label(claim["verdict"])
        parts = [widgets.heading_html(f"Selected claim — {verdict}"), widgets.plain_html(claim["claim"])]
        if isinstance(claim["evidence"], str) and claim["evidence"]:
            parts += [widgets.heading_html("Evidence sentence"), widgets.plain_html(claim["evidence"])]
        if isinstance(claim["error"], str) and claim["error"]:
            parts += [widgets.heading_html("Error"), widgets.plain_html(claim["error"])]
        if claim["confidence"] == claim["confidence"]:  # not NaN
            parts.append(widgets.heading_html(f"Confidence: {formatting.fmt_score(claim['confidence'])}"))
        if claim["probabilities"]:
            parts.append(widgets.heading_html(f"Probabilities: {claim['probabilities']}"))
        if isinstance(claim["reason"], str) and claim["reason"]:
            parts += [widgets.heading_html("Reason"), widgets.plain_html(claim["reason"])]
        widgets.html_blocks(*parts)
        verifier = notes.verifier_of(int(claim["run_id"]), claim["metric"])
        st.caption(f"Verifier {formatting.md_escape(words.verifier_label(verifier))}: "
                   f"{formatting.md_escape(notes.accuracy_caption(verifier))}", help=formatting.md_escape(words.verifier_help(verifier)))

    with st.container(border=True):
        st.markdown("**Your verdict** — confirm or correct it; the label is kept for this claim and its premises in every run")
        if claim["premises"] is None:
            st.caption("The premises of this claim cannot be rebuilt from the dataset row, so it cannot be labelled.")
        else:
            current = claim["human"] if isinstance(claim["human"], str) else None
            options = ["SUPPORTED", "NEUTRAL", "CONTRADICTED"]
            suggested = current or {"NOT_SUPPORTED": "NEUTRAL", "PARTIALLY_SUPPORTED": "NEUTRAL"}.get(claim["verdict"], claim["verdict"])
            l1, l2 = st.columns([3, 1])
            label = l1.radio("Human label", options, horizontal=True, key=f"label_{claim['key']}", format_func=verdict_label,
                             index=options.index(suggested) if suggested in options else 1)
            refused = permissions.blocked("label")
            if l2.button("Save label", key="claims_save_label", icon=":material/check:", disabled=bool(refused),
                         help=formatting.md_escape(refused) if refused else None):
                permissions.require("label")
                notes.label_store().set_label(claim["claim"], list(claim["premises"]), label, user=current_user())
                st.rerun()
            permissions.explain(refused)
            if current:
                st.caption(f"Stored human label (yours): {formatting.md_escape(verdict_label(current))}. Other "
                           "reviewers' labels are kept apart; **Review verdicts** shows how far reviewers agree.")
            others = notes.others_labels(claim["claim"], claim["premises_hash"])
            if others:
                st.caption("Other reviewers: " + "; ".join(f"{formatting.md_escape(who)}: "
                                                             f"{formatting.md_escape(verdict_label(said))}" for who, said in others))
    links.view_link("hallucinated", "verdict")
