"""Details held packed: a layout's values without their keys, expanded into the details dict.

Temporal Faithfulness and Temporal NDCG in focus-time mode build their details as a layout name
and a list of values (`PackedDetails`); `expand` turns them into the details dict, the same keys,
order and values for every caller. `metric.measure(...)` returns that dict. Rows scored to be
stored (`tempo_eval.engine.scoring.measure_batch`, under `packing_details`) keep the values packed: the
store writes them as they are and its readers expand them (`tempo_eval.store.packing`), so no
dict of dicts is built, keyed and compressed per result (most of a worker's time on these rows).

Only what cannot be recomputed exactly is a value (texts, floats, years as computed); what the
expansion derives is integer bookkeeping (ranks, indices, set membership). A layout's values and
expansion never change once stored: a new shape is a new layout name.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from typing import Any

#: set by `packing_details`: metrics then return `PackedDetails` instead of the expanded dict
_PACKING = contextvars.ContextVar("tempo_eval_packing_details", default=False)


@contextlib.contextmanager
def packing_details() -> Iterator[None]:
    """Metrics scored inside give their details packed (only the store reads them)."""
    token = _PACKING.set(True)
    try:
        yield
    finally:
        _PACKING.reset(token)


class PackedDetails(Mapping):
    """A read-only mapping equal to `expand(layout, values)`, expanded on first read."""

    __slots__ = ("layout", "values", "_expanded")

    def __init__(self, layout: str, values: list[Any]) -> None:
        if layout not in _EXPANDERS:
            raise ValueError(f"unknown details layout {layout!r}")
        self.layout = layout
        self.values = values
        self._expanded: dict[str, Any] | None = None

    def _dict(self) -> dict[str, Any]:
        if self._expanded is None:
            self._expanded = expand(self.layout, self.values)
        return self._expanded

    def __getitem__(self, key: str) -> Any:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __repr__(self) -> str:
        return repr(self._dict())

    def __reduce__(self) -> Any:
        return (PackedDetails, (self.layout, self.values))


def details(layout: str, values: list[Any]) -> PackedDetails | dict[str, Any]:
    """What a metric puts in `MetricResult.details`: packed under `packing_details`, else the
    expanded dict."""
    if _PACKING.get():
        return PackedDetails(layout, values)
    return expand(layout, values)


def expand(layout: str, values: list[Any]) -> dict[str, Any]:
    """The details dict of a layout's values (ValueError for a layout this version lacks)."""
    expander = _EXPANDERS.get(layout)
    if expander is None:
        raise ValueError(f"stored details in layout {layout!r}, which this version cannot read")
    return expander(*values)


def _temporal_faithfulness_1(
    reference_date: str | None, aft: list[int], dfts: list[list[int]],
    answer_spans: list[list[str]], context_spans: list[list[list[str]]],
) -> dict[str, Any]:
    """Temporal Faithfulness, focus-time mode: per answer year the contexts that hold it (from
    `dfts`) and its spans (`context_spans` has one list per such context, in order)."""
    context_sets = [set(years) for years in dfts]
    grounding = []
    for year, own_spans, spans in zip(aft, answer_spans, context_spans, strict=True):
        holders = [i for i, years in enumerate(context_sets) if year in years]
        grounding.append({
            "year": year,
            "grounded": bool(holders),
            "contexts": holders,
            "answer_spans": own_spans,
            "context_spans": [{"context": i, "spans": found} for i, found in zip(holders, spans, strict=True)],
        })
    return {"mode": "focus_time", "reference_date": reference_date, "aft": aft, "dfts": dfts, "years": grounding}


def _temporal_ndcg_focus_1(
    reference_date: list[str | None], qft_from_query: int, docs_name: str | None, k: int, gain: str,
    curve: list[float], curve_length: int, relevances: list[float], gains: list[float] | None,
    discounted_gains: list[float], years: list[list[int]], dcg: float, idcg: float, qft_runs: list[int],
    ideal_from_pool: int, retrieved: int,
) -> dict[str, Any]:
    """Temporal NDCG, focus-time mode. `reference_date` is [] when no text was given (the key is
    then absent); `docs_name` None when the focus times were given; `curve` the values to where it
    turns flat (repeated to `curve_length`); `gains` None when equal to `relevances`; one
    relevance, gain, discounted gain and years list per rank (document i at rank i + 1); the
    query's years as runs of consecutive years, first and last of each (`year_runs`)."""
    qft = [year for first, last in zip(qft_runs[::2], qft_runs[1::2], strict=True) for year in range(first, last + 1)]
    query = set(qft)
    gains = relevances if gains is None else gains
    out: dict[str, Any] = {"reference_date": reference_date[0]} if reference_date else {}
    ranks = [
        {"rank": i + 1, "doc": i, "relevance": relevance, "gain": doc_gain, "discounted_gain": discounted,
         "years": doc_years, "overlap": [year for year in doc_years if year in query]}
        for i, (relevance, doc_gain, discounted, doc_years)
        in enumerate(zip(relevances, gains, discounted_gains, years, strict=True))
    ]
    out.update(qft_source="extracted from query" if qft_from_query else "given",
               dfts_source="given" if docs_name is None else f"extracted from {docs_name}",
               mode="focus_time", k=k, gain=gain,
               curve=curve + curve[-1:] * (curve_length - len(curve)), ranks=ranks, dcg=dcg,
               idcg=idcg, qft=qft,
               ideal_from="candidate_pool" if ideal_from_pool else "retrieved documents",
               retrieved=retrieved)
    return out


def year_runs(years: list[int]) -> list[int]:
    """Sorted distinct years as runs of consecutive years: [first, last, first, last, ...]
    (a period of 45 years is two numbers)."""
    if years and years[-1] - years[0] == len(years) - 1:  # one run (a decade, a single year): most queries
        return [years[0], years[-1]]
    runs: list[int] = []
    for year in years:
        if runs and runs[-1] == year - 1:
            runs[-1] = year
        else:
            runs += (year, year)
    return runs


_EXPANDERS = {
    "tf/1": _temporal_faithfulness_1,
    "ndcg_ft/1": _temporal_ndcg_focus_1,
}

#: every key an expansion writes, for `tempo_eval.store.packing`'s secret check
EXPANDED_KEYS = (
    "mode", "reference_date", "aft", "dfts", "years", "year", "grounded", "contexts", "answer_spans",
    "context_spans", "context", "spans", "focus_time", "qft_source", "dfts_source", "k", "gain", "curve",
    "ranks", "rank", "doc", "relevance", "discounted_gain", "overlap", "dcg", "idcg", "qft",
    "ideal_from", "retrieved", "true", "false", "null",
)
