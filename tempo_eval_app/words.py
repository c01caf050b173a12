"""The words a user reads for the engine's names, in one place: metrics, result columns, verifiers.

Pages show `metric_label("temporal_faithfulness")` ("Temporal Faithfulness"), rename a table's
columns with `column_labels` ("ci_low" -> "95% CI low") and describe a verifier id with
`verifier_label` ("Lexical (offline), calibrated"; its full id goes in a tooltip). A name with no
entry is shown as it is. Verdicts are named by the engine's `verdict_label` ("Neutral (not
stated)" for NEUTRAL), the one vocabulary of every page, legend and export.
"""

from __future__ import annotations

from tempo_eval.verify.base import verdict_label

#: metric names as the pages say them
METRIC_LABELS = {
    "temporal_faithfulness": "Temporal Faithfulness",
    "temporal_ndcg": "Temporal NDCG@k",
    "factual_correctness": "Factual Correctness",
    "turn_faithfulness": "Turn Faithfulness",
}

#: result and run columns as the pages say them (a column not listed keeps its name)
COLUMN_LABELS = {
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "n_measurable": "rows measured",
    "n_total": "rows",
    "n_nan": "rows not measured",
    "nan_reasons": "why not measured",
    "reason_code": "why not measured",
    "tf_reason": "why not measured",
    "reason": "explanation",
    "query_id": "query id",
    "run_id": "run id",
    "dataset_id": "dataset id",
    "config": "settings",
    "finished_at": "finished",
    "started_at": "started",
    "run_name": "run",
    "created_at": "created",
    "n_rows": "rows",
    "n_results": "results",
    "p_value": "p-value",
    "p_holm": "p-value (Holm)",
    "p_adjusted": "p-value (adjusted)",
    "n_claims": "claims",
    # a pair of runs in a significance table (`PairComparison`)
    "run_a": "run A",
    "run_b": "run B",
    "mean_a": "mean A",
    "mean_b": "mean B",
    "wins": "A better",
    "losses": "A worse",
    "n_queries": "queries",
    # a ranked document of an NDCG result
    "doc": "document",
    "discounted_gain": "discounted gain",
    # a claim's verdicts: Turn Faithfulness' yes / no / idk counts, a human label
    "yes": verdict_label("yes"),
    "no": verdict_label("no"),
    "idk": verdict_label("idk"),
    "human": "human label",
    "label": "counts as",
}

#: verifier families (the part of a verifier id before ":")
VERIFIERS = {
    "lexical": "Lexical (offline)",
    "nli": "NLI model",
    "llm": "LLM judge",
}

#: pairs of runs, runs, rows, ...: the plural a count takes
_PLURALS = {"pair of runs": "pairs of runs", "query": "queries"}


def metric_label(name: object) -> str:
    """"Temporal Faithfulness" for temporal_faithfulness; a foreign metric ("ragas:faithfulness")
    as "RAGAS faithfulness"; anything else as it is."""
    text = str(name)
    if text in METRIC_LABELS:
        return METRIC_LABELS[text]
    tool, sep, rest = text.partition(":")
    if sep and tool in ("ragas", "deepeval"):
        return f"{'RAGAS' if tool == 'ragas' else 'DeepEval'} {rest}"
    base = next((m for m in METRIC_LABELS if text.startswith(m + "_")), None)
    if base is not None:  # factual_correctness_precision and the like
        return f"{METRIC_LABELS[base]} ({text[len(base) + 1:].replace('_', ' ')})"
    return text


def column_label(name: object) -> str:
    return COLUMN_LABELS.get(str(name), str(name))


def column_labels(columns) -> dict[str, str]:
    """{column: its label} for a DataFrame.rename(columns=...)."""
    return {c: column_label(c) for c in columns if column_label(c) != str(c)}


def verifier_label(verifier_id: object) -> str:
    """"Lexical (offline), calibrated" for "lexical:minilm-l6-v2+calibrated-v2", "NLI model
    (cross-encoder/nli-deberta)" for "nli:cross-encoder/nli-deberta", "LLM judge (gpt-4o-mini)";
    "—" for none. The full id is what `verifier_help` gives for a tooltip."""
    text = str(verifier_id or "").strip()
    if not text or text in ("None", "nan", "—"):
        return "—"
    family, _, rest = text.partition(":")
    label = VERIFIERS.get(family.lower())
    if label is None:
        return text
    calibrated = "+calibrated" in rest
    model = rest.split("+", 1)[0]
    if family.lower() == "lexical":
        return label + (", calibrated" if calibrated else "")
    return f"{label} ({model})" + (", calibrated" if calibrated else "") if model else label


def verifier_help(verifier_id: object) -> str:
    """The tooltip of a verifier label: its full id, version included."""
    return f"Verifier id and version: {verifier_id}"


def plural(count: int, noun: str) -> str:
    """"1 pair of runs", "2 pairs of runs", "1,204 rows": the count with thousands separators."""
    many = _PLURALS.get(noun, noun + "s")
    return f"{count:,} {noun if count == 1 else many}"


def columns_needed(columns) -> str:
    """"an answer column and a contexts column": what a metric lacks, in words."""
    return " and ".join(f"{'an' if str(c)[:1] in 'aeiou' else 'a'} {c} column" for c in columns)
