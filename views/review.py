"""Review: how far the reviewers agree with each other (Cohen's kappa per pair), how far each
verifier agrees with the reviewers' consensus of the labels given on Claims (n, accuracy,
per-class precision and recall, Cohen's kappa), the run's scores recomputed with the consensus
overriding the verifier, and label export / import. Each reviewer's labels are kept apart; the
current user's own are theirs."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from tempo_eval.common.identity import shown_user, user_name
from tempo_eval.compare.review import LABELS, agreement, rescore, reviewer_agreement
from tempo_eval.verify.base import verdict_label
from tempo_eval_app import errors, formatting, permissions, selection, store_reads, widgets, words
from tempo_eval_app import verifier_notes as notes
from tempo_eval_app.identity import current_user

selection.page_setup("Review verdicts")


def _fmt(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


with errors.page_guard("review"):
    store = notes.label_store()
    with st.expander("Export or import labels", expanded=False):
        c1, c2 = st.columns(2)
        c1.download_button("Labels as CSV", data=lambda: store.export("csv"), file_name="claim_labels.csv",
                           mime="text/csv", key="labels_csv", icon=":material/download:")
        c2.download_button("Labels as JSONL", data=lambda: store.export("jsonl"), file_name="claim_labels.jsonl",
                           mime="application/jsonl", key="labels_jsonl", icon=":material/download:")
        refused = permissions.blocked("label")
        upload = st.file_uploader("Import labels (CSV or JSONL with claim, premises or premises_hash, label, note; "
                                  "reviewer, else they are yours)",
                                  type=["csv", "jsonl"], key="labels_upload", disabled=bool(refused))
        permissions.explain(refused)
        if upload is not None and st.button("Import", key="labels_import", disabled=bool(refused)):
            permissions.require("label")
            try:
                count = store.import_labels(upload.getvalue(), upload.name, user=current_user())
            except ValueError as error:  # InputError names the file, row and field
                st.error(formatting.md_escape(str(error)))
            else:
                st.success(f"Imported {count:d} label(s).")

    dataset_id = selection.active_dataset_id()
    run_ids = selection.active_run_ids()
    if dataset_id is None or not run_ids:
        widgets.empty_state("Select one or more evaluation runs in the sidebar, or run one, to review their verdicts.",
                            "evaluate")
        st.stop()
    claims = store_reads.claims_of_runs(run_ids)
    if claims.empty:
        st.info("The selected runs have no claim-level verdicts to review.")
        st.stop()
    claims["verifier"] = [notes.verifier_of(r, m) for r, m in zip(claims["run_id"], claims["metric"], strict=True)]
    claims = notes.with_premises(claims)
    reviews = notes.label_reviews(claims)
    claims = notes.with_consensus(claims, reviews)
    labelled = claims[claims["human"].notna()]
    tied = claims[(claims["reviewers"] > 0) & claims["human"].isna()]
    mine = reviews[reviews["reviewer"] == (user_name(current_user()) or "")]
    st.caption(f"{int((claims['reviewers'] > 0).sum())} of {len(claims)} claims of the selected runs carry a human "
               f"label ({int(reviews['reviewer'].nunique())} reviewer(s); you labelled {len(mine)} of these claims). Confirm or correct "
               "verdicts on **Claims**; labels are kept per claim, premises and reviewer, so they apply to every run "
               "that checks the same claim against the same premises.")
    if reviews.empty:
        st.info("No claim of these runs has a human label yet: open **Claims**, select a claim and confirm or correct its verdict.")
        st.stop()

    st.subheader("Agreement between reviewers")
    pairs = reviewer_agreement(reviews)
    if pairs.empty:
        st.caption(f"One reviewer so far ({formatting.md_escape(shown_user(reviews['reviewer'].iloc[0]))}): "
                   "agreement needs the labels of two.")
    else:
        pairs = pairs.assign(reviewer_a=pairs["reviewer_a"].map(shown_user), reviewer_b=pairs["reviewer_b"].map(shown_user))
        st.dataframe(pairs, hide_index=True, width="stretch", key="review_reviewers",
                     column_config={"reviewer_a": "reviewer", "reviewer_b": "and reviewer",
                                    "n": st.column_config.NumberColumn("claims both labelled"),
                                    "agreed": st.column_config.NumberColumn("same label"),
                                    "kappa": st.column_config.NumberColumn("Cohen's kappa", format="%.2f"),
                                    "reason": "why no kappa"})
        st.caption("Cohen's kappa of each pair on the claims both labelled: 1 = perfect, 0 = what chance gives.")

    st.subheader("Agreement with the human labels (the reviewers' consensus)")
    st.caption("The consensus of a claim is the label most of its reviewers gave; a tie gives none"
               + (f": {len(tied)} claim(s) of these runs are tied and left out below." if len(tied) else "."))
    if labelled.empty:
        st.info("Every labelled claim of these runs is tied between its reviewers: no consensus to compare with.")
        st.stop()
    rows = []
    for verifier, group in labelled.groupby("verifier", sort=True):
        result = agreement(list(group["human"]), list(group["verdict"]))
        row = {"verifier": verifier, "n": result["n"], "ties left out": int((tied["verifier"] == verifier).sum()),
               "accuracy": result["accuracy"], "kappa": result["kappa"]}
        for label in LABELS:
            row[f"{verdict_label(label)} precision"] = result["per_class"][label]["precision"]
            row[f"{verdict_label(label)} recall"] = result["per_class"][label]["recall"]
        rows.append(row)
    table = pd.DataFrame(rows)
    st.dataframe(table, hide_index=True, width="stretch", key="review_agreement",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in table.columns
                                if c not in ("verifier", "n", "ties left out")})
    for verifier in table["verifier"]:
        st.caption(f"**{formatting.md_escape(verifier)}** — {formatting.md_escape(notes.accuracy_caption(verifier))}")
    st.caption(f"Verdicts are compared on three classes: {verdict_label('NOT_SUPPORTED')} and "
               f"{verdict_label('PARTIALLY_SUPPORTED')} count as {verdict_label('NEUTRAL')}; "
               "ERROR verdicts are left out. Kappa corrects the agreement for chance (1 = perfect, 0 = chance).")

    st.subheader("Scores with the consensus overriding the verifier")
    scores = rescore(claims)
    if scores.empty:
        st.info("None of these claims belongs to a claim-based score (Factual Correctness, Temporal Faithfulness).")
        st.stop()
    changed = scores[scores["labelled"] > 0]
    means = scores.groupby("metric")[["model_score", "human_score"]].mean()
    cols = st.columns(max(1, len(means)))
    for col, (metric, mean) in zip(cols, means.iterrows(), strict=False):
        col.metric(f"{formatting.md_escape(words.metric_label(metric))}: verifier → human", _fmt(mean["human_score"]),
                   delta=None if math.isnan(mean["human_score"] - mean["model_score"]) else f"{mean['human_score'] - mean['model_score']:+.3f}",
                   help=f"Mean with the verifier's verdicts: {_fmt(mean['model_score'])}")
    st.dataframe(changed if not changed.empty else scores, hide_index=True, width="stretch", key="review_scores",
                 column_config={"model_score": st.column_config.NumberColumn("verifier score", format="%.3f"),
                                "human_score": st.column_config.NumberColumn("with human labels", format="%.3f")})
    st.caption("Rows with at least one labelled claim." if not changed.empty else "No row has a labelled claim yet.")
