"""Where each row of a dataset falls in time: its as-of date, the years its query is about (the
focus-time extractor), or the publication dates of its top-k documents, as (row, bin start) pairs.

A row with several focus years or documents of several dates counts once in each bin they fall
in; a row with none is unplaced, with its reason. Pure functions of the dataset's columns; the
store's reads and a small cache per dataset are in `row_bins_of_dataset`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from tempo_eval.core.pubdates import EPOCH, DateError, parse_date, parse_day_column
from tempo_eval.slices.stats import bin_starts, day_iso

BY = ("as_of", "focus_year", "evidence_year")
#: why a row has no place on the time axis
UNPLACED = {"as_of": "no as-of date (reference_date)", "focus_year": "no year in the query",
            "evidence_year": "no dated document in the top k"}
UNREADABLE_AS_OF = "as-of date that cannot be read"


@dataclass(frozen=True)
class RowBins:
    """(row, bin start day) pairs, sorted by bin then row, and the rows with no bin by reason."""

    rows: np.ndarray
    starts: np.ndarray
    n_rows: int
    unplaced: dict[str, int] = field(default_factory=dict)

    def bins(self) -> list[tuple[str, slice]]:
        """Each bin's first day (ISO) and the slice of `rows` in it, in order."""
        starts, first = np.unique(self.starts, return_index=True)
        bounds = np.append(first, self.rows.size)
        return [(day_iso(start), slice(bounds[i], bounds[i + 1]))
                for i, start in enumerate(starts.tolist())]


def _read_days(values: list[Any], column: str) -> tuple[np.ndarray, int]:
    """Days of date values (NaN where missing or unreadable) and how many were unreadable."""
    known: dict[Any, float] = {}
    days = np.full(len(values), np.nan)
    unreadable = 0
    for index, value in enumerate(values):
        key = (type(value), value) if isinstance(value, (str, int, float)) else None
        if key is not None and key in known:
            day = known[key]
        else:
            try:
                parsed = parse_date(value, column=column)
                day = math.nan if parsed is None else float(parsed.day)
            except (DateError, TypeError):
                day = -math.inf
            if key is not None:
                known[key] = day
        if day == -math.inf:
            unreadable += 1
        else:
            days[index] = day
    return days, unreadable


def as_of_bins(dates: list[Any], bin: str) -> RowBins:
    """Each row in the bin of its as-of date."""
    import pyarrow as pa

    try:  # ISO dates in one pass of pyarrow; a value it cannot read sends the column the slow way
        try:
            column: Any = pa.array(dates, type=pa.string())  # texts and None: no per-value check
        except (pa.ArrowException, TypeError):
            column = dates
        days, unreadable = parse_day_column(column, column="reference_date"), 0
    except (DateError, TypeError, ValueError):
        days, unreadable = _read_days(dates, "reference_date")
    starts = bin_starts(days, bin)
    placed = np.flatnonzero(~np.isnan(starts))
    missing = len(dates) - placed.size - unreadable
    unplaced = {k: n for k, n in ((UNREADABLE_AS_OF, unreadable), (UNPLACED["as_of"], missing)) if n}
    return _sorted(placed, starts[placed], len(dates), unplaced)


def year_bins(years_of_rows: list[list[int]], reason: str) -> RowBins:
    """Each row in the bin of every year it has (distinct years; bins are whole years)."""
    rows = [row for row, row_years in enumerate(years_of_rows) for _ in set(row_years)]
    years = [year for row_years in years_of_rows for year in sorted(set(row_years))]
    placed_rows = len(set(rows))
    starts = np.array([date(y, 1, 1).toordinal() - EPOCH if 1 <= y <= 9999 else math.nan for y in years],
                      dtype=np.float64)
    keep = ~np.isnan(starts)
    unplaced = {reason: len(years_of_rows) - placed_rows} if len(years_of_rows) > placed_rows else {}
    return _sorted(np.asarray(rows, dtype=np.int64)[keep], starts[keep], len(years_of_rows), unplaced)


def focus_years(queries: list[Any], dates: list[Any]) -> list[list[int]]:
    """The years each query is about (the focus-time extractor, relative phrases read against
    the row's as-of date); each distinct (query, date) extracted once."""
    from tempo_eval.core.extract import extract_qft

    known: dict[tuple[str, Any], list[int]] = {}
    out = []
    for query, as_of in zip(queries, dates, strict=True):
        if not isinstance(query, str) or not query.strip():
            out.append([])
            continue
        ref = as_of if isinstance(as_of, str) and as_of.strip() else None
        key = (query, ref)
        if key not in known:
            try:
                known[key] = sorted(extract_qft(query, reference_date=ref).years)
            except ValueError:  # an as-of date the extractor cannot read: the query alone
                known[key] = sorted(extract_qft(query).years)
        out.append(known[key])
    return out


def evidence_years(frame: Any, k: int) -> list[list[int]]:
    """The publication years of each row's top-k documents, as the evidence metrics read them
    (`tempo_eval.metrics.evidence_rows.evidence_table`)."""
    from tempo_eval.metrics.evidence_rows import evidence_table

    table = evidence_table(frame, k)
    out: list[list[int]] = [[] for _ in range(len(frame))]
    for row, year in zip(table["row"].tolist(), table["year"].tolist(), strict=True):
        if year is not None and not (isinstance(year, float) and math.isnan(year)):
            out[row].append(int(year))
    return out


def _sorted(rows: np.ndarray, starts: np.ndarray, n_rows: int, unplaced: dict[str, int]) -> RowBins:
    order = np.lexsort((rows, starts))
    return RowBins(np.asarray(rows, dtype=np.int64)[order], np.asarray(starts)[order].astype(np.int64),
                   n_rows, dict(Counter(unplaced)))


#: the row bins of the last few (dataset, by, bin, k): the focus years of a large dataset cost
#: an extraction per distinct query
_CACHE: OrderedDict[tuple[Any, ...], RowBins] = OrderedDict()
_CACHE_SIZE = 8


def row_bins_of_dataset(store: Any, dataset_id: int, by: str, bin: str, k: int = 10) -> RowBins:
    """`RowBins` of a stored dataset, kept for the same dataset content, by, bin and k."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, got {by!r}")
    if by != "as_of" and bin != "year":
        raise ValueError(f"--by {by} places rows by year: use --bin year (got {bin!r})")
    info = store.dataset_info(dataset_id)
    key = (info["content_hash"], repr(info["mapping"]), int(info["n_rows"]), by, bin, k)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    saved = _saved_path(store, key)
    bins = _load(saved) if saved is not None else None
    if bins is not None:
        _remember(key, bins)
        return bins
    n_rows = int(info["n_rows"])
    dates = store.dataset_column(dataset_id, "reference_date") or [None] * n_rows
    if by == "as_of":
        bins = as_of_bins(dates, bin)
    elif by == "focus_year":
        queries = store.dataset_column(dataset_id, "query") or [None] * n_rows
        bins = year_bins(focus_years(queries, dates), UNPLACED["focus_year"])
    else:
        bins = year_bins(evidence_years(store.dataset_frame(dataset_id), k), UNPLACED["evidence_year"])
    _remember(key, bins)
    if saved is not None:
        _save(saved, bins)
    return bins


def _remember(key: tuple[Any, ...], bins: RowBins) -> None:
    _CACHE[key] = bins
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)


def _saved_path(store: Any, key: tuple[Any, ...]) -> Any:
    """Where the row bins of `key` are kept in the workspace (`cache/slices/`), so that another
    process (a new app server, the command line) finds them without decoding the dataset again:
    1,000,000 rows decode in seconds, load in milliseconds. None for a store without a folder."""
    folder = store.folder() if hasattr(store, "folder") else None
    if folder is None:
        return None
    name = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:32]
    return folder / "cache" / "slices" / f"{name}.npz"


def _load(path: Any) -> RowBins | None:
    """The saved row bins, None when there are none or they cannot be read (computed again)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            return RowBins(saved["rows"].astype(np.int64), saved["starts"].astype(np.int64), int(saved["n_rows"]),
                           {str(k): int(v) for k, v in json.loads(str(saved["unplaced"])).items()})
    except (OSError, ValueError, KeyError):
        return None


def _save(path: Any, bins: RowBins) -> None:
    """Keep the row bins for other processes; a failure to write (a read-only or full disk) only
    means they are computed again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        with open(partial, "wb") as handle:
            np.savez(handle, rows=bins.rows.astype(np.int32), starts=bins.starts.astype(np.int32),
                     n_rows=np.int64(bins.n_rows), unplaced=np.array(json.dumps(bins.unplaced)))
        os.replace(partial, path)
    except OSError:
        return
