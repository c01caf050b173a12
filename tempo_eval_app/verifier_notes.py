"""App-side helpers for verdict review: human labels joined to stored claims (the current user's
own, or the reviewers' consensus), each run's verifier, and the measured-accuracy note shown next
to a verifier."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.common.identity import shown_user, user_name
from tempo_eval.compare.review import consensus
from tempo_eval.store.labels import LabelStore, claim_premises, premises_hash
from tempo_eval.verify.accuracy import accuracy_note
from tempo_eval_app import store_reads
from tempo_eval_app.identity import current_user

_DEFAULT_VERIFIER = {"factual_correctness": "lexical", "temporal_faithfulness": "nli"}


@st.cache_resource(show_spinner=False)
def _label_store(db: str) -> LabelStore:
    return LabelStore(db)


def label_store() -> LabelStore:
    return _label_store(store_reads.db_path())


def verifier_of(run_id: int, metric: str) -> str:
    """The verifier a run used for `metric`: its name and model, from the stored run config."""
    config = store_reads.store().run_info(int(run_id)).get("config") or {}
    for entry in config.get("metrics", []):
        if entry.get("name") == metric:
            verifier = (entry.get("settings") or {}).get("verifier")
            if isinstance(verifier, dict) and verifier.get("name"):
                return f"{verifier['name']}:{verifier.get('model_id', '')}".rstrip(":")
            mode = (entry.get("settings") or {}).get("mode")
            if metric == "temporal_faithfulness" and mode == "llm":
                return "llm (judge)"
    default = _DEFAULT_VERIFIER.get(metric)
    return f"{default} (default)" if default else "unknown"


def with_premises(claims: pd.DataFrame) -> pd.DataFrame:
    """`claims` (with run_id, row, metric, side) plus `premises` (list or None) and `premises_hash`,
    rebuilt from each run's dataset rows."""
    claims = claims.copy()
    premises: list[Any] = []
    frames: dict[int, pd.DataFrame] = {}
    for run_id, row, metric, side in zip(claims["run_id"], claims["row"], claims["metric"], claims["side"], strict=True):
        if run_id not in frames:
            frames[run_id] = store_reads.dataset_frame(store_reads.store().run_info(int(run_id))["dataset_id"])
        frame = frames[run_id]
        record = frame.iloc[int(row)].to_dict() if int(row) < len(frame) else {}
        premises.append(claim_premises(metric, {"side": side}, record))
    claims["premises"] = pd.Series(premises, dtype=object, index=claims.index)
    claims["premises_hash"] = [premises_hash(p) if p is not None else None for p in premises]
    return claims


def _keys(claims: pd.DataFrame) -> list[tuple[str, str]]:
    return [(c, h) for c, h in zip(claims["claim"], claims["premises_hash"], strict=True) if h]


def with_human_labels(claims: pd.DataFrame) -> pd.DataFrame:
    """`claims` (after `with_premises`) plus `human`: the current user's own label
    (`identity.current_user`) or None; other reviewers' labels are not theirs."""
    found = label_store().lookup(_keys(claims), user=current_user())
    claims = claims.copy()
    claims["human"] = pd.Series(
        [found.get((c, h)) if h else None for c, h in zip(claims["claim"], claims["premises_hash"], strict=True)],
        dtype=object, index=claims.index,
    )
    return claims


def label_reviews(claims: pd.DataFrame) -> pd.DataFrame:
    """Every reviewer's label of the claims (after `with_premises`): claim, premises_hash, reviewer
    ('' unknown), label (`LabelStore.reviews`)."""
    return label_store().reviews(_keys(claims))


def others_labels(claim: str, digest: str | None) -> list[tuple[str, str]]:
    """(reviewer as shown, label) of the other reviewers' labels of one claim: every label but the
    current user's, by reviewer name ("unknown": labels from before reviewers were recorded)."""
    if not digest:
        return []
    me = user_name(current_user()) or ""
    found = label_store().reviews([(claim, digest)])
    return sorted((shown_user(r), label) for r, label in zip(found["reviewer"], found["label"], strict=True) if r != me)


def with_consensus(claims: pd.DataFrame, reviews: pd.DataFrame) -> pd.DataFrame:
    """`claims` (after `with_premises`) plus `reviewers` (how many labelled the claim) and `human`:
    the reviewers' consensus (`tempo_eval.compare.review.consensus`; None on a tie or without labels)."""
    agreed = consensus(reviews)
    by_key = {(c, h): (n, label) for c, h, n, label in agreed.itertuples(index=False)}
    keys = list(zip(claims["claim"], claims["premises_hash"], strict=True))
    claims = claims.copy()
    claims["reviewers"] = [by_key.get(key, (0, None))[0] for key in keys]
    claims["human"] = pd.Series([by_key.get(key, (0, None))[1] for key in keys], dtype=object, index=claims.index)
    return claims


def accuracy_caption(verifier: str) -> str:
    """The measured accuracy and limits of a verifier, from bench/verifier_accuracy.py's output."""
    return accuracy_note(verifier.split(":")[0].split(" ")[0])
