"""Human review of verdicts: agreement between reviewers (Cohen's kappa per pair), the reviewers'
consensus (majority; ties have none), agreement between a verifier and the human labels, and a
run's scores recomputed with human labels overriding the verifier's verdicts.

Pure functions over plain lists and data frames; the labels themselves live in
`tempo_eval.store.labels`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import pandas as pd

from tempo_eval.metrics.factual_correctness import precision_recall_fbeta
from tempo_eval.metrics.temporal_faithfulness import claim_faithfulness

LABELS = ("SUPPORTED", "NEUTRAL", "CONTRADICTED")
#: a verifier's verdict on the three-way scale humans label with
THREE_WAY = {"SUPPORTED": "SUPPORTED", "PARTIALLY_SUPPORTED": "NEUTRAL", "NEUTRAL": "NEUTRAL",
             "NOT_SUPPORTED": "NEUTRAL", "CONTRADICTED": "CONTRADICTED"}


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's kappa of two raters over the same items: (p_o - p_e) / (1 - p_e), where p_o is the
    share of items they agree on and p_e the agreement expected from their label frequencies.
    NaN for no items, or when p_e = 1 (both always give the same single label)."""
    if len(first) != len(second):
        raise ValueError(f"the raters labelled {len(first)} and {len(second)} items")
    n = len(first)
    if n == 0:
        return math.nan
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    labels = set(first) | set(second)
    expected = sum((list(first).count(k) / n) * (list(second).count(k) / n) for k in labels)
    return math.nan if expected == 1.0 else (observed - expected) / (1.0 - expected)


def majority(labels: Sequence[str]) -> str | None:
    """The label most reviewers gave, or None when two or more labels tie for the most (or there is
    none): the consensus of one claim's reviewers."""
    counts = Counter(labels).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def consensus(labels: pd.DataFrame) -> pd.DataFrame:
    """Per item, the reviewers' consensus. `labels` has one row per (item, reviewer): columns
    claim, premises_hash, reviewer, label (`tempo_eval.store.labels.LabelStore.reviews`). Returns
    claim, premises_hash, reviewers (how many labelled it), consensus (`majority`; None on a tie)."""
    columns = ["claim", "premises_hash", "reviewers", "consensus"]
    if labels.empty:
        return pd.DataFrame(columns=columns)
    rows = [(claim, digest, len(group), majority(list(group["label"])))
            for (claim, digest), group in labels.groupby(["claim", "premises_hash"], sort=True)]
    frame = pd.DataFrame(rows, columns=columns)
    frame["consensus"] = pd.Series([row[3] for row in rows], dtype=object)  # a tie stays None
    return frame


def reviewer_agreement(labels: pd.DataFrame) -> pd.DataFrame:
    """Cohen's kappa of every pair of reviewers on the items both labelled. `labels` as for
    `consensus`. Returns one row per pair (names in sorted order): reviewer_a, reviewer_b, n (items
    both labelled), agreed (items they gave the same label), kappa (NaN with a `reason` when it
    cannot be computed: no shared item, or both gave one and the same label to every shared item,
    where chance agreement is 1)."""
    columns = ["reviewer_a", "reviewer_b", "n", "agreed", "kappa", "reason"]
    by_reviewer: dict[str, dict[tuple[str, str], str]] = {}
    for claim, digest, reviewer, label in labels[["claim", "premises_hash", "reviewer", "label"]].itertuples(index=False):
        by_reviewer.setdefault(str(reviewer), {})[(claim, digest)] = label
    rows = []
    for a, b in combinations(sorted(by_reviewer), 2):
        shared = sorted(by_reviewer[a].keys() & by_reviewer[b].keys())
        first = [by_reviewer[a][key] for key in shared]
        second = [by_reviewer[b][key] for key in shared]
        kappa = cohen_kappa(first, second)
        reason = ""
        if not shared:
            reason = "no claim labelled by both"
        elif math.isnan(kappa):
            reason = "both gave every shared claim the same single label: chance agreement is 1, kappa is undefined"
        rows.append((a, b, len(shared), sum(x == y for x, y in zip(first, second, strict=True)), kappa, reason))
    return pd.DataFrame(rows, columns=columns)


def agreement(human: Sequence[str], model: Sequence[str]) -> dict[str, Any]:
    """n, accuracy, per-class precision and recall of `model` against `human`, and Cohen's kappa.

    Model verdicts are mapped to the three-way scale (NOT_SUPPORTED and PARTIALLY_SUPPORTED count
    as NEUTRAL); pairs with an ERROR verdict are left out. A class nobody predicted has precision
    NaN; a class no human gave has recall NaN.
    """
    pairs = [(h, THREE_WAY[m]) for h, m in zip(human, model, strict=True) if m in THREE_WAY]
    gold = [h for h, _ in pairs]
    predicted = [m for _, m in pairs]
    per_class = {}
    for label in LABELS:
        tp = sum(1 for g, p in pairs if g == p == label)
        n_pred = predicted.count(label)
        n_gold = gold.count(label)
        per_class[label] = {"precision": tp / n_pred if n_pred else math.nan,
                            "recall": tp / n_gold if n_gold else math.nan, "n": n_gold}
    return {"n": len(pairs), "accuracy": (sum(g == p for g, p in pairs) / len(pairs)) if pairs else math.nan,
            "per_class": per_class, "kappa": cohen_kappa(gold, predicted)}


def _fc_score(group: pd.DataFrame, column: str) -> float:
    response = group[group["side"] == "response"]
    reference = group[group["side"] == "reference"]
    precision, recall, f1 = precision_recall_fbeta(
        int((response[column] == "SUPPORTED").sum()), len(response),
        int((reference[column] == "SUPPORTED").sum()), len(reference),
    )
    if len(response) and len(reference):
        return f1
    return precision if len(response) else recall


def _tf_score(group: pd.DataFrame, column: str) -> float:
    values = group[column]
    return claim_faithfulness(int((values == "SUPPORTED").sum()), int((values == "PARTIALLY_SUPPORTED").sum()), len(values))


_RESCORERS = {"factual_correctness": _fc_score, "temporal_faithfulness": _tf_score}


def rescore(claims: pd.DataFrame) -> pd.DataFrame:
    """Per (row, metric) of a run, the score from the verifier's verdicts and the score with human
    labels overriding them.

    `claims` has the columns of `RunStore.claims_frame` plus `human` (the human label or None).
    Factual Correctness is F1 of its sides (precision or recall when only one side was verified);
    Temporal Faithfulness is (supported + 0.5 partially supported) / claims, with a human NEUTRAL
    counting as not supported. Rows with an ERROR verdict and no human label stay NaN. Returns
    columns row, query_id, metric, claims, labelled, model_score, human_score.
    """
    out = []
    for (row, metric), group in claims.groupby(["row", "metric"], sort=True):
        scorer = _RESCORERS.get(metric)
        if scorer is None:
            continue
        group = group.copy()
        human = group["human"].where(group["human"].notna(), None)
        group["final"] = [h if isinstance(h, str) else v for h, v in zip(human, group["verdict"], strict=True)]
        model_score = math.nan if (group["verdict"] == "ERROR").any() else scorer(group, "verdict")
        human_score = math.nan if (group["final"] == "ERROR").any() else scorer(group, "final")
        out.append({
            "row": int(row), "query_id": group["query_id"].iloc[0], "metric": metric,
            "claims": len(group), "labelled": int(human.notna().sum()),
            "model_score": model_score, "human_score": human_score,
        })
    return pd.DataFrame(out, columns=["row", "query_id", "metric", "claims", "labelled", "model_score", "human_score"])
