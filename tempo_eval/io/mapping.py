"""Which source column becomes which canonical column: alias detection and explicit mappings.

Columns are mapped automatically from our names, RAGAS names and DeepEval names (`ALIASES`; the
match ignores case, spaces and hyphens); an explicit mapping wins over the automatic choice.
A dataset needs a query or query id column and one of answer, contexts or retrieved_ids.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from tempo_eval.common.schema import CANONICAL_COLUMNS
from tempo_eval.io.errors import InputError, list_columns

#: source column names recognised for each canonical column, in order of preference:
#: ours, then RAGAS (user_input, retrieved_contexts, response, reference, retrieved_context_ids,
#: reference_context_ids; legacy question, ground_truth), then DeepEval (input, actual_output,
#: expected_output, retrieval_context).
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "id", "qid", "question_id"),
    "query": ("query", "user_input", "input", "question"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context"),
    "answer": ("answer", "response", "actual_output"),
    "reference": ("reference", "expected_output", "ground_truth"),
    "retrieved_ids": ("retrieved_ids", "retrieved_context_ids"),
    "gold_ids": ("gold_ids", "reference_context_ids"),
    "run": ("run", "run_name"),
    "reference_date": ("reference_date", "as_of", "question_date", "query_date"),
    "context_dates": (
        "context_dates", "published", "publish_dates", "published_dates", "retrieved_dates", "doc_dates",
    ),
    "outdated_references": ("outdated_references", "outdated_answers", "previous_answers"),
}


_EVALUABLE = ("answer", "contexts", "retrieved_ids")


def detect_mapping(columns: Sequence[str]) -> dict[str, str]:
    """The automatic mapping {canonical name: source column} for these source column names.

    A column matches when its name, lower-cased with spaces and hyphens turned into underscores,
    is one of `ALIASES[canonical]`; the earlier alias wins when several columns match, and a
    source column is used at most once.
    """
    by_normal: dict[str, str] = {}
    for column in columns:
        by_normal.setdefault(_normal(column), column)
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for canonical, aliases in ALIASES.items():
        for alias in aliases:
            column = by_normal.get(alias)
            if column is not None and column not in used:
                mapping[canonical] = column
                used.add(column)
                break
    return mapping


def _normal(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def _resolve_mapping(
    columns: list[str], explicit: Mapping[str, str] | None, source: str, warnings: list[str]
) -> dict[str, str]:
    if not explicit:
        resolved = detect_mapping(columns)
    else:
        for canonical, column in explicit.items():
            if canonical not in CANONICAL_COLUMNS:
                raise InputError(
                    f"mapping key {canonical!r} is not a canonical column; expected one of "
                    f"{', '.join(CANONICAL_COLUMNS)}",
                    source=source,
                )
            if column not in columns:
                raise InputError(
                    f"mapping={{{canonical!r}: {column!r}}} names a column that does not exist; "
                    f"expected one of the columns found: {list_columns(columns)}",
                    source=source,
                )
        targets = list(explicit.values())
        twice = next((c for c in targets if targets.count(c) > 1), None)
        if twice is not None:
            keys = [k for k, v in explicit.items() if v == twice]
            raise InputError(
                f"the mapping uses column {twice!r} for {', '.join(map(repr, keys))}; expected each "
                "source column for one canonical column",
                source=source,
            )
        resolved = dict(explicit)
        # the automatic mapping fills in the rest, from the columns the mapping left free
        for canonical, column in detect_mapping([c for c in columns if c not in targets]).items():
            resolved.setdefault(canonical, column)
    used = set(resolved.values())
    for canonical, aliases in ALIASES.items():
        if canonical not in resolved:
            continue
        for column in columns:
            if column not in used and _normal(column) in aliases:
                warnings.append(
                    f"{source}: column {column!r} also looks like {canonical!r}; used "
                    f"{resolved[canonical]!r} and kept {column!r} unchanged"
                )
    _require(resolved, columns, source)
    return {c: resolved[c] for c in CANONICAL_COLUMNS if c in resolved}


def _require(mapping: Mapping[str, str], columns: list[str], source: str) -> None:
    if "query" not in mapping and "query_id" not in mapping:
        raise InputError(_missing_message(["query", "query_id"], columns), source=source)
    if not any(name in mapping for name in _EVALUABLE):
        raise InputError(_missing_message(list(_EVALUABLE), columns), source=source)


def _missing_message(wanted: list[str], columns: list[str]) -> str:
    if wanted[0] == "query":
        head = "no column for 'query'; expected the query text or a query id"
    else:
        head = (
            "no column for 'answer', 'contexts' or 'retrieved_ids'; expected at least one of them, "
            "or there is nothing to evaluate"
        )
    recognised = ", ".join(alias for name in wanted for alias in ALIASES[name])
    message = f"{head} (recognised names: {recognised}); found columns: {list_columns(columns)}"
    known = {alias: canonical for canonical in wanted for alias in ALIASES[canonical]}
    for column in columns:
        close = difflib.get_close_matches(_normal(column), list(known), n=1, cutoff=0.75)
        if close:
            return f"{message}; did you mean mapping={{{known[close[0]]!r}: {column!r}}}?"
    return f"{message}; map one with mapping={{{wanted[0]!r}: '...'}}"

